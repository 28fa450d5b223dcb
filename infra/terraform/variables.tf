# Inputs of the root module. Only `image` has no default; backups additionally need
# backup_destination_path and credentials (or backup_enabled = false). See examples/.

# --- cluster access -------------------------------------------------------------------------------

variable "kubeconfig_path" {
  type        = string
  description = "Path to the kubeconfig both providers use."
  default     = "~/.kube/config"
}

variable "kube_context" {
  type        = string
  description = "kubeconfig context to use; null = the current context."
  default     = null
}

variable "namespace" {
  type        = string
  description = "Namespace for the database, poolers and API."
  default     = "memoria"

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.namespace))
    error_message = "namespace must be a valid DNS label."
  }
}

variable "create_namespace" {
  type        = bool
  description = "Create the namespace (with Pod Security labels); false = it already exists."
  default     = true
}

variable "labels" {
  type        = map(string)
  description = "Extra labels for every object."
  default     = {}
}

# --- CloudNativePG operator -----------------------------------------------------------------------

variable "install_cnpg_operator" {
  type        = bool
  description = "Install the CloudNativePG operator with Helm. false = it is already installed (cluster-wide)."
  default     = true
}

variable "cnpg_operator_namespace" {
  type        = string
  description = "Namespace of the CloudNativePG operator (and of the Barman Cloud plugin)."
  default     = "cnpg-system"
}

variable "cnpg_operator_chart_version" {
  type        = string
  description = "Version of the cloudnative-pg Helm chart. Image-volume extensions need operator 1.27+ (chart 0.26+)."
  default     = "0.26.0"

  validation {
    condition     = can(regex("^[0-9]+\\.[0-9]+\\.[0-9]+$", var.cnpg_operator_chart_version))
    error_message = "Pin an exact chart version (x.y.z)."
  }
}

variable "install_barman_cloud_plugin" {
  type        = bool
  description = "Install the Barman Cloud CNPG-I plugin with Helm (needs cert-manager) when backup_method = plugin."
  default     = true
}

variable "barman_cloud_plugin_chart_version" {
  type        = string
  description = "Version of the plugin-barman-cloud Helm chart."
  default     = "0.8.1"

  validation {
    condition     = can(regex("^[0-9]+\\.[0-9]+\\.[0-9]+$", var.barman_cloud_plugin_chart_version))
    error_message = "Pin an exact chart version (x.y.z)."
  }
}

# --- PostgreSQL cluster ---------------------------------------------------------------------------

variable "cluster_name" {
  type        = string
  description = "Name of the CloudNativePG Cluster; services <name>-rw/-ro, poolers <name>-pooler-rw/-ro, secret <name>-app."
  default     = "memoria-db"

  validation {
    condition     = can(regex("^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$", var.cluster_name))
    error_message = "cluster_name must be a lowercase DNS label of at most 40 characters."
  }
}

variable "instances" {
  type        = number
  description = "PostgreSQL instances: one primary plus streaming replicas (3 = survives the loss of a node with a synchronous-capable replica left)."
  default     = 3

  validation {
    condition     = var.instances >= 1 && var.instances <= 9 && floor(var.instances) == var.instances
    error_message = "instances must be a whole number between 1 and 9."
  }
}

variable "replica_max_lag_s" {
  type        = number
  description = "Seconds a replica may lag behind the primary before the API stops reading recall from it and reads from the primary instead (MEMORIA_DATABASE__REPLICA_MAX_LAG_S). The -ro service and its pooler keep a lagging replica in rotation; this bound is the API's. Used only when instances > 1."
  default     = 5

  validation {
    condition     = var.replica_max_lag_s > 0 && var.replica_max_lag_s <= 300
    error_message = "replica_max_lag_s must be more than 0 and at most 300 seconds."
  }
}

variable "pgvector_mode" {
  type        = string
  description = "image-volume: PostgreSQL 18 minimal image + the pgvector extension image mounted as an ImageVolume (CNPG 1.27+, Kubernetes 1.33+ with ImageVolume). bundled-image: postgres_image already ships pgvector (e.g. a CNPG standard image)."
  default     = "image-volume"

  validation {
    condition     = contains(["image-volume", "bundled-image"], var.pgvector_mode)
    error_message = "pgvector_mode must be image-volume or bundled-image."
  }
}

variable "postgres_image" {
  type        = string
  description = "PostgreSQL operand image. image-volume mode: a PG 18+ minimal image; bundled-image mode: an image containing pgvector (e.g. ghcr.io/cloudnative-pg/postgresql:17-standard-bookworm). Pin by digest in production."
  default     = "ghcr.io/cloudnative-pg/postgresql:18-minimal-trixie"

  validation {
    condition     = can(regex("^[^@\\s]+(:[A-Za-z0-9_][A-Za-z0-9_.-]*|@sha256:[a-f0-9]{64})$", var.postgres_image)) && !endswith(var.postgres_image, ":latest")
    error_message = "postgres_image must be pinned by tag or digest, and not :latest."
  }
}

variable "pgvector_extension_image" {
  type        = string
  description = "pgvector extension image for image-volume mode; its PostgreSQL major and distribution must match postgres_image."
  default     = "ghcr.io/cloudnative-pg/pgvector:0.8.1-18-trixie"

  validation {
    condition     = can(regex("^[^@\\s]+(:[A-Za-z0-9_][A-Za-z0-9_.-]*|@sha256:[a-f0-9]{64})$", var.pgvector_extension_image)) && !endswith(var.pgvector_extension_image, ":latest")
    error_message = "pgvector_extension_image must be pinned by tag or digest, and not :latest."
  }
}

variable "pod_anti_affinity_type" {
  type        = string
  description = "required = one PostgreSQL instance per node (needs at least `instances` nodes); preferred = spread when possible."
  default     = "required"

  validation {
    condition     = contains(["required", "preferred"], var.pod_anti_affinity_type)
    error_message = "pod_anti_affinity_type must be required or preferred."
  }
}

variable "storage_size" {
  type        = string
  description = "PGDATA volume per instance (CNPG can grow it later if the StorageClass allows expansion)."
  default     = "20Gi"

  validation {
    condition     = can(regex("^[0-9]+(Mi|Gi|Ti)$", var.storage_size))
    error_message = "storage_size must be a quantity such as 20Gi."
  }
}

variable "storage_class" {
  type        = string
  description = "StorageClass of the PGDATA volumes; null = cluster default."
  default     = null
}

variable "wal_storage_size" {
  type        = string
  description = "Separate pg_wal volume per instance, so a WAL burst cannot fill the data volume."
  default     = "5Gi"

  validation {
    condition     = can(regex("^[0-9]+(Mi|Gi|Ti)$", var.wal_storage_size))
    error_message = "wal_storage_size must be a quantity such as 5Gi."
  }
}

variable "wal_storage_class" {
  type        = string
  description = "StorageClass of the WAL volumes; null = cluster default."
  default     = null
}

variable "postgres_resources" {
  type = object({
    requests = object({ cpu = string, memory = string })
    limits   = object({ cpu = string, memory = string })
  })
  description = "CPU/memory of each PostgreSQL pod. Keep the memory request equal to the limit (Guaranteed QoS) and size shared_buffers from it."
  default = {
    requests = { cpu = "1", memory = "4Gi" }
    limits   = { cpu = "2", memory = "4Gi" }
  }
}

variable "shared_buffers" {
  type        = string
  description = "PostgreSQL shared_buffers (~25% of the memory limit)."
  default     = "1GB"
}

variable "effective_cache_size" {
  type        = string
  description = "PostgreSQL effective_cache_size (~50-75% of the memory limit)."
  default     = "3GB"
}

variable "maintenance_work_mem" {
  type        = string
  description = "PostgreSQL maintenance_work_mem. An HNSW build is much faster while its graph fits here (about 1.4 GB per million 384-d memories, docs/operate/scaling.md); leave room in the memory limit."
  default     = "1GB"
}

variable "max_parallel_maintenance_workers" {
  type        = number
  description = "PostgreSQL max_parallel_maintenance_workers: parallel workers for HNSW index builds (at most the CPU limit minus one)."
  default     = 2

  validation {
    condition     = var.max_parallel_maintenance_workers >= 0 && var.max_parallel_maintenance_workers <= 64
    error_message = "max_parallel_maintenance_workers must be between 0 and 64."
  }
}

variable "work_mem" {
  type        = string
  description = "PostgreSQL work_mem per sort/hash node (hybrid ranking sorts candidate sets)."
  default     = "16MB"
}

variable "max_connections" {
  type        = number
  description = "PostgreSQL max_connections; must cover the poolers' server connections plus migration and replication headroom."
  default     = 200

  validation {
    condition     = var.max_connections >= 50
    error_message = "max_connections must be at least 50."
  }
}

variable "postgres_extra_parameters" {
  type        = map(string)
  description = "More PostgreSQL parameters, merged over the ones above (e.g. { \"hnsw.ef_search\" = \"100\" })."
  default     = {}
}

variable "database_name" {
  type        = string
  description = "Application database."
  default     = "memoria"
}

variable "database_owner" {
  type        = string
  description = "Application role owning the database (its credentials are in the <cluster>-app secret)."
  default     = "memoria"
}

variable "database_extensions" {
  type        = list(string)
  description = "Extensions the operator creates in the application database (as superuser, before migrations run)."
  default     = ["vector"]

  validation {
    condition     = contains(var.database_extensions, "vector")
    error_message = "database_extensions must include vector."
  }
}

# --- PgBouncer poolers ----------------------------------------------------------------------------

variable "pooler_rw_instances" {
  type        = number
  description = "PgBouncer pods of the read-write pooler (2+ for availability)."
  default     = 2

  validation {
    condition     = var.pooler_rw_instances >= 1
    error_message = "pooler_rw_instances must be at least 1."
  }
}

variable "pooler_ro_instances" {
  type        = number
  description = "PgBouncer pods of the read-only pooler (2+ for availability)."
  default     = 2

  validation {
    condition     = var.pooler_ro_instances >= 1
    error_message = "pooler_ro_instances must be at least 1."
  }
}

variable "pooler_rw_default_pool_size" {
  type        = number
  description = "Server connections per PgBouncer pod of the read-write pooler (default_pool_size)."
  default     = 20

  validation {
    condition     = var.pooler_rw_default_pool_size >= 1
    error_message = "pooler_rw_default_pool_size must be at least 1."
  }
}

variable "pooler_ro_default_pool_size" {
  type        = number
  description = "Server connections per PgBouncer pod of the read-only pooler (default_pool_size)."
  default     = 20

  validation {
    condition     = var.pooler_ro_default_pool_size >= 1
    error_message = "pooler_ro_default_pool_size must be at least 1."
  }
}

variable "pooler_max_client_conn" {
  type        = number
  description = "Client connections each PgBouncer pod accepts (max_client_conn); must exceed API replicas x app_pool_max_size."
  default     = 1000

  validation {
    condition     = var.pooler_max_client_conn >= 10
    error_message = "pooler_max_client_conn must be at least 10."
  }
}

variable "pgbouncer_max_prepared_statements" {
  type        = number
  description = "PgBouncer max_prepared_statements. > 0 keeps asyncpg's statement cache working in transaction mode (PgBouncer 1.21+); 0 forces the app's statement cache to 0."
  default     = 200

  validation {
    condition     = var.pgbouncer_max_prepared_statements >= 0
    error_message = "pgbouncer_max_prepared_statements must be 0 or more."
  }
}

variable "pooler_resources" {
  type = object({
    requests = object({ cpu = string, memory = string })
    limits   = object({ cpu = string, memory = string })
  })
  description = "CPU/memory of each PgBouncer container."
  default = {
    requests = { cpu = "100m", memory = "64Mi" }
    limits   = { cpu = "500m", memory = "256Mi" }
  }
}

# --- monitoring -----------------------------------------------------------------------------------

variable "enable_pod_monitor" {
  type        = bool
  description = "Create PodMonitors for PostgreSQL and PgBouncer metrics (needs the Prometheus Operator CRDs)."
  default     = false
}

variable "monitoring_namespace" {
  type        = string
  description = "Namespace of Prometheus, allowed through the NetworkPolicies to the metrics ports; null = none."
  default     = null
}

# --- backups --------------------------------------------------------------------------------------

variable "backup_enabled" {
  type        = bool
  description = "Continuous WAL archiving + scheduled base backups to an object store (strongly recommended)."
  default     = true
}

variable "backup_method" {
  type        = string
  description = "plugin = Barman Cloud CNPG-I plugin (ObjectStore CRD; needs cert-manager); barmanObjectStore = CNPG's in-tree backup (deprecated upstream, no plugin needed)."
  default     = "plugin"

  validation {
    condition     = contains(["plugin", "barmanObjectStore"], var.backup_method)
    error_message = "backup_method must be plugin or barmanObjectStore."
  }
}

variable "backup_destination_path" {
  type        = string
  description = "s3:// URL for the WAL archive and base backups, e.g. s3://my-bucket/memoria. Required when backup_enabled."
  default     = ""

  validation {
    condition     = var.backup_destination_path == "" || can(regex("^s3://[^/]+", var.backup_destination_path))
    error_message = "backup_destination_path must be an s3:// URL."
  }
}

variable "backup_s3_endpoint_url" {
  type        = string
  description = "Custom S3 endpoint for S3-compatible stores (MinIO, Ceph RGW, R2...); null = AWS."
  default     = null
}

variable "backup_s3_inherit_iam_role" {
  type        = bool
  description = "Authenticate to S3 with the pods' cloud identity (IRSA / workload identity) instead of static keys."
  default     = false
}

variable "backup_s3_access_key_id" {
  type        = string
  description = "S3 access key id for backups (static-key mode)."
  sensitive   = true
  default     = null
}

variable "backup_s3_secret_access_key" {
  type        = string
  description = "S3 secret access key for backups (static-key mode)."
  sensitive   = true
  default     = null
}

variable "backup_retention_policy" {
  type        = string
  description = "How long backups and WAL are kept (Barman retention, e.g. 30d, 4w, 3m)."
  default     = "30d"

  validation {
    condition     = can(regex("^[1-9][0-9]*[dwm]$", var.backup_retention_policy))
    error_message = "backup_retention_policy must look like 30d, 4w or 3m."
  }
}

variable "backup_schedule" {
  type        = string
  description = "Base backup schedule: cron with a leading seconds field (6 fields), e.g. \"0 0 3 * * *\" = daily 03:00."
  default     = "0 0 3 * * *"

  validation {
    condition     = length(split(" ", trimspace(var.backup_schedule))) == 6
    error_message = "backup_schedule must have 6 space-separated fields (seconds first)."
  }
}

variable "recovery_source_cluster_name" {
  type        = string
  description = "Disaster recovery: bootstrap a NEW cluster (different cluster_name) from this cluster's backups in the same object store. null = fresh initdb."
  default     = null
}

# --- API ------------------------------------------------------------------------------------------

variable "app_name" {
  type        = string
  description = "Base name of the API objects."
  default     = "memoria"
}

variable "image" {
  type        = string
  description = "Memoria image, e.g. registry.example.com/memoria:0.1.0 or ...@sha256:<digest>. A new value runs the migration Job, then rolls the Deployment."

  validation {
    condition     = can(regex("^[^@\\s]+(:[A-Za-z0-9_][A-Za-z0-9_.-]*|@sha256:[a-f0-9]{64})$", var.image)) && !endswith(var.image, ":latest")
    error_message = "image must be pinned by tag or digest, and not :latest."
  }
}

variable "image_pull_policy" {
  type        = string
  description = "imagePullPolicy of the API and migration containers. Always (default) re-checks registry credentials on every pod start; IfNotPresent is fine for digests."
  default     = "Always"

  validation {
    condition     = contains(["Always", "IfNotPresent"], var.image_pull_policy)
    error_message = "image_pull_policy must be Always or IfNotPresent."
  }
}

variable "replicas" {
  type        = number
  description = "API replicas at first apply; the HPA manages the count afterwards."
  default     = 2

  validation {
    condition     = var.replicas >= 1
    error_message = "replicas must be at least 1."
  }
}

variable "hpa_min_replicas" {
  type        = number
  description = "HPA minimum API replicas (2+ keeps the PodDisruptionBudget satisfiable during drains)."
  default     = 2

  validation {
    condition     = var.hpa_min_replicas >= 1
    error_message = "hpa_min_replicas must be at least 1."
  }
}

variable "hpa_max_replicas" {
  type        = number
  description = "HPA maximum API replicas. Also bounds client connections: hpa_max_replicas x app_pool_max_size per pooler."
  default     = 6

  validation {
    condition     = var.hpa_max_replicas >= 1
    error_message = "hpa_max_replicas must be at least 1."
  }
}

variable "hpa_cpu_utilization" {
  type        = number
  description = "HPA target CPU utilisation in percent of the CPU request."
  default     = 70

  validation {
    condition     = var.hpa_cpu_utilization > 0 && var.hpa_cpu_utilization <= 100
    error_message = "hpa_cpu_utilization must be between 1 and 100."
  }
}

variable "app_resources" {
  type = object({
    requests = object({ cpu = string, memory = string })
    limits   = object({ cpu = string, memory = string })
  })
  description = "CPU/memory of each API pod; the local embedding model runs in-process, so give it room."
  default = {
    requests = { cpu = "500m", memory = "1Gi" }
    limits   = { cpu = "2", memory = "2Gi" }
  }
}

variable "model_cache_size_limit" {
  type        = string
  description = "Size limit of the emptyDir used as the Hugging Face cache."
  default     = "2Gi"
}

variable "embeddings_provider" {
  type        = string
  description = "Embedding provider: local (in-process model), voyage (needs voyage_api_key) or openai-compatible (needs embeddings_base_url)."
  default     = "local"

  validation {
    condition     = contains(["local", "voyage", "openai-compatible"], var.embeddings_provider)
    error_message = "embeddings_provider must be local, voyage or openai-compatible."
  }
}

variable "embeddings_model" {
  type        = string
  description = "Embedding model (e.g. voyage-3.5); null = the provider's default. Changing it after the first migration changes the vector dimension the schema was built for."
  default     = null
}

variable "embeddings_dimension" {
  type        = number
  description = "Vector dimension for models Memoria does not know; null = derived from the model."
  default     = null

  validation {
    condition     = var.embeddings_dimension == null || (coalesce(var.embeddings_dimension, 1) >= 1 && coalesce(var.embeddings_dimension, 1) <= 16000)
    error_message = "embeddings_dimension must be between 1 and 16000."
  }
}

variable "embeddings_base_url" {
  type        = string
  description = "Base URL of the OpenAI-compatible embeddings endpoint."
  default     = null
}

variable "voyage_api_key" {
  type        = string
  description = "Voyage AI API key (VOYAGE_API_KEY); required when embeddings_provider = voyage."
  sensitive   = true
  default     = null
}

variable "app_statement_cache_size" {
  type        = number
  description = "asyncpg statement cache per connection when PgBouncer tracks prepared statements; forced to 0 when pgbouncer_max_prepared_statements = 0."
  default     = 100

  validation {
    condition     = var.app_statement_cache_size >= 0
    error_message = "app_statement_cache_size must be 0 or more."
  }
}

variable "app_pool_max_size" {
  type        = number
  description = "asyncpg pool size per API pod (client connections to each pooler)."
  default     = 10

  validation {
    condition     = var.app_pool_max_size >= 1
    error_message = "app_pool_max_size must be at least 1."
  }
}

variable "log_level" {
  type        = string
  description = "API log level."
  default     = "info"

  validation {
    condition     = contains(["debug", "info", "warning", "error"], var.log_level)
    error_message = "log_level must be debug, info, warning or error."
  }
}

variable "database_sslmode" {
  type        = string
  description = "sslmode on the app's database URLs (CNPG and its poolers serve TLS by default)."
  default     = "require"

  validation {
    condition     = contains(["disable", "prefer", "require"], var.database_sslmode)
    error_message = "database_sslmode must be disable, prefer or require."
  }
}

variable "migration_timeout_minutes" {
  type        = number
  description = "Deadline of the migration Job (and how long Terraform waits for it)."
  default     = 30

  validation {
    condition     = var.migration_timeout_minutes >= 1
    error_message = "migration_timeout_minutes must be at least 1."
  }
}

variable "extra_env" {
  type        = map(string)
  description = "Extra non-secret env vars for the API (MEMORIA_* names must be real settings)."
  default     = {}
}

variable "extra_secret_env" {
  type        = map(string)
  description = "Extra secret env vars for the API, stored in its Secret."
  sensitive   = true
  default     = {}
}

# --- trust: encryption keys of redacted credentials, proxies in front of the API -------------------

# Random keys are not valid UTF-8, so base64decode() (which returns a string) fails on them;
# textdecodebase64(..., "ISO-8859-1") maps each byte to one character, so its length is the byte
# count. The regex holds the key to the form the app's strict decoder takes (standard alphabet,
# padded), which base64 of exactly 32 bytes always has.
variable "secrets_encryption_keys" {
  type        = map(string)
  description = "Key id -> base64 of a 32-byte AES-256 key (`memoria secrets new-key`) sealing the originals of redacted credentials; stored in the app Secret as MEMORIA_SECRETS__KEYS, and in Terraform state. Empty (default) = the originals are kept nowhere. Prefer secrets_keys_existing_secret."
  sensitive   = true
  nullable    = false
  default     = {}

  validation {
    condition     = alltrue([for id in keys(var.secrets_encryption_keys) : can(regex("^[A-Za-z0-9._-]{1,64}$", id))])
    error_message = "secrets_encryption_keys: every key id must be 1-64 characters of A-Z a-z 0-9 . _ -"
  }

  validation {
    condition = alltrue([
      for key in values(var.secrets_encryption_keys) :
      can(regex("^[A-Za-z0-9+/]{43}=$", key)) && try(length(textdecodebase64(key, "ISO-8859-1")), -1) == 32
    ])
    error_message = "secrets_encryption_keys: every key must be the base64 of 32 random bytes (`memoria secrets new-key` prints one)."
  }
}

variable "secrets_active_key_id" {
  type        = string
  description = "Id of the key in secrets_encryption_keys that new originals are sealed under (MEMORIA_SECRETS__ACTIVE_KEY_ID); null = the only key. Required with several keys."
  default     = null

  validation {
    condition     = var.secrets_active_key_id == null || can(regex("^[A-Za-z0-9._-]{1,64}$", var.secrets_active_key_id))
    error_message = "secrets_active_key_id must be 1-64 characters of A-Z a-z 0-9 . _ -"
  }
}

variable "secrets_keys_existing_secret" {
  type        = string
  description = "Name of a Secret you create in the namespace with the entries MEMORIA_SECRETS__KEYS (JSON map of key id -> base64 key) and optionally MEMORIA_SECRETS__ACTIVE_KEY_ID; keeps the keys out of Terraform state. Excludes secrets_encryption_keys and secrets_active_key_id."
  default     = null

  validation {
    condition     = var.secrets_keys_existing_secret == null || can(regex("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", var.secrets_keys_existing_secret))
    error_message = "secrets_keys_existing_secret must be a Kubernetes object name (lowercase DNS subdomain)."
  }
}

variable "trusted_proxies" {
  type        = list(string)
  description = "CIDRs of the proxies in front of the API, i.e. the ingress controller's pod network (MEMORIA_AUTH__TRUSTED_PROXIES): the failed-authentication limit then counts the X-Forwarded-For client, not the proxy. Empty (default) = not set."
  nullable    = false
  default     = []

  validation {
    condition     = alltrue([for cidr in var.trusted_proxies : can(cidrhost(cidr, 0))])
    error_message = "trusted_proxies must be CIDRs such as 10.244.0.0/16 (a single address is 10.0.0.7/32)."
  }
}

# --- network --------------------------------------------------------------------------------------

variable "api_ingress_namespaces" {
  type        = list(string)
  description = "Namespaces allowed to call the API (include the ingress controller's). Empty = all namespaces."
  default     = []
}

variable "dns_namespace" {
  type        = string
  description = "Namespace of the cluster DNS pods."
  default     = "kube-system"
}

variable "dns_pod_labels" {
  type        = map(string)
  description = "Labels of the cluster DNS pods (CoreDNS keeps k8s-app=kube-dns on most distributions)."
  default     = { "k8s-app" = "kube-dns" }
}

variable "external_egress_cidr" {
  type        = string
  description = "Where the API may connect on 443 when the embedding provider is remote. NetworkPolicy cannot match the Voyage host name, so this is the public internet minus external_egress_except by default."
  default     = "0.0.0.0/0"

  validation {
    condition     = can(cidrhost(var.external_egress_cidr, 0))
    error_message = "external_egress_cidr must be a CIDR."
  }
}

variable "external_egress_except" {
  type        = list(string)
  description = "Ranges excluded from external_egress_cidr (private, link-local and CGNAT ranges by default)."
  default     = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10"]
}

variable "ingress_enabled" {
  type        = bool
  description = "Expose the API through an Ingress."
  default     = false
}

variable "ingress_host" {
  type        = string
  description = "Ingress host name (required when ingress_enabled)."
  default     = null
}

variable "ingress_class_name" {
  type        = string
  description = "IngressClass name; null = the cluster default."
  default     = null
}

variable "ingress_tls_secret_name" {
  type        = string
  description = "TLS secret for ingress_host; null = no TLS at the Ingress."
  default     = null
}

variable "ingress_annotations" {
  type        = map(string)
  description = "Ingress annotations (e.g. cert-manager.io/cluster-issuer)."
  default     = {}
}
