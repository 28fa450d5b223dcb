variable "namespace" {
  type        = string
  description = "Namespace the API runs in (the same one as the database)."
}

variable "name" {
  type        = string
  description = "Base name of the Deployment, Service, ConfigMap, Secret and friends."

  validation {
    condition     = can(regex("^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$", var.name))
    error_message = "name must be a lowercase DNS label of at most 40 characters."
  }
}

variable "labels" {
  type        = map(string)
  description = "Labels added to every object this module creates."
  default     = {}
}

variable "api_pod_labels" {
  type        = map(string)
  description = "Selector labels of the API pods (the database module allows these pods into the poolers)."
}

variable "migration_pod_labels" {
  type        = map(string)
  description = "Selector labels of the migration Job pods (the database module allows these pods into the instances)."
}

# --- image and sizing -----------------------------------------------------------------------------

variable "image" {
  type        = string
  description = "Memoria container image, pinned by tag or digest."
}

variable "image_pull_policy" {
  type        = string
  description = "imagePullPolicy of the API and migration containers."

  validation {
    condition     = contains(["Always", "IfNotPresent"], var.image_pull_policy)
    error_message = "image_pull_policy must be Always or IfNotPresent."
  }
}

variable "replicas" {
  type        = number
  description = "Initial API replicas; the HorizontalPodAutoscaler owns the count afterwards."
}

variable "hpa_min_replicas" {
  type        = number
  description = "HorizontalPodAutoscaler minimum replicas."
}

variable "hpa_max_replicas" {
  type        = number
  description = "HorizontalPodAutoscaler maximum replicas."
}

variable "hpa_cpu_utilization" {
  type        = number
  description = "Target average CPU utilisation (percent of requests) for the HorizontalPodAutoscaler."
}

variable "resources" {
  type = object({
    requests = object({ cpu = string, memory = string })
    limits   = object({ cpu = string, memory = string })
  })
  description = "CPU/memory requests and limits of each API pod (the local embedding model runs in-process)."
}

variable "model_cache_size_limit" {
  type        = string
  description = "sizeLimit of the emptyDir mounted as the Hugging Face cache (HF_HOME)."
}

# --- database wiring ------------------------------------------------------------------------------

variable "database_write_host" {
  type        = string
  description = "Host the API writes through (the read-write PgBouncer pooler service)."
}

variable "database_read_host" {
  type        = string
  description = "Host recall reads go through (the read-only PgBouncer pooler service); null = reads use the write host."
  default     = null
}

variable "replica_max_lag_s" {
  type        = number
  description = "Lag bound of the read replicas in seconds (MEMORIA_DATABASE__REPLICA_MAX_LAG_S): beyond it recall reads from the primary. Set only when database_read_host is."

  validation {
    condition     = var.replica_max_lag_s > 0 && var.replica_max_lag_s <= 300
    error_message = "replica_max_lag_s must be more than 0 and at most 300 seconds."
  }
}

variable "database_direct_host" {
  type        = string
  description = "Host of the primary's own service (<cluster>-rw); the migration Job connects here, bypassing PgBouncer, because CREATE INDEX CONCURRENTLY needs a real session."
}

variable "database_port" {
  type        = number
  description = "PostgreSQL/PgBouncer port."
}

variable "database_name" {
  type        = string
  description = "Application database name."
}

variable "database_credentials_secret" {
  type        = string
  description = "Secret with keys username and password of the application role (CloudNativePG's <cluster>-app)."
}

variable "database_sslmode" {
  type        = string
  description = "libpq sslmode appended to the database URLs."

  validation {
    condition     = contains(["disable", "prefer", "require"], var.database_sslmode)
    error_message = "database_sslmode must be disable, prefer or require."
  }
}

variable "statement_cache_size" {
  type        = number
  description = "asyncpg statement cache size (MEMORIA_DATABASE__STATEMENT_CACHE_SIZE); must be 0 when PgBouncer's max_prepared_statements is 0."
}

variable "pool_max_size" {
  type        = number
  description = "Per-pod asyncpg pool size (MEMORIA_DATABASE__POOL_MAX_SIZE)."
}

variable "pooler_names" {
  type        = list(string)
  description = "Names of the Poolers the API pods may reach (matched on the cnpg.io/poolerName pod label)."
}

variable "database_pod_labels" {
  type        = map(string)
  description = "Labels of the PostgreSQL instance pods the migration Job may reach."
}

variable "migration_timeout_minutes" {
  type        = number
  description = "How long Terraform waits for the migration Job (concurrent HNSW builds on a large table take a while)."
}

# --- application settings -------------------------------------------------------------------------

variable "log_level" {
  type        = string
  description = "MEMORIA_SERVER__LOG_LEVEL."
}

variable "embeddings_provider" {
  type        = string
  description = "MEMORIA_EMBEDDINGS__PROVIDER: local, voyage or openai-compatible."

  validation {
    condition     = contains(["local", "voyage", "openai-compatible"], var.embeddings_provider)
    error_message = "embeddings_provider must be local, voyage or openai-compatible."
  }
}

variable "embeddings_model" {
  type        = string
  description = "MEMORIA_EMBEDDINGS__MODEL; null = the provider's default."
  default     = null
}

variable "embeddings_dimension" {
  type        = number
  description = "MEMORIA_EMBEDDINGS__DIMENSION for models Memoria does not know; null = derived from the model."
  default     = null
}

variable "embeddings_base_url" {
  type        = string
  description = "MEMORIA_EMBEDDINGS__BASE_URL of an OpenAI-compatible endpoint."
  default     = null
}

variable "voyage_api_key" {
  type        = string
  description = "Voyage AI API key, stored in the app Secret as VOYAGE_API_KEY."
  sensitive   = true
  default     = null
}

# Random keys are not valid UTF-8, so base64decode() (which returns a string) fails on them;
# textdecodebase64(..., "ISO-8859-1") maps each byte to one character, so its length is the byte
# count. The regex holds the key to the form the app's strict decoder takes (standard alphabet,
# padded), which base64 of exactly 32 bytes always has.
variable "secrets_encryption_keys" {
  type        = map(string)
  description = "MEMORIA_SECRETS__KEYS: key id -> base64 of a 32-byte AES-256 key that seals the originals of redacted credentials, stored in the app Secret. Empty = the originals are kept nowhere."
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
  description = "MEMORIA_SECRETS__ACTIVE_KEY_ID: the key new originals are sealed under; null = the only key. Required with several keys."
  default     = null

  validation {
    condition     = var.secrets_active_key_id == null || can(regex("^[A-Za-z0-9._-]{1,64}$", var.secrets_active_key_id))
    error_message = "secrets_active_key_id must be 1-64 characters of A-Z a-z 0-9 . _ -"
  }
}

variable "secrets_keys_existing_secret" {
  type        = string
  description = "Name of an existing Secret in the namespace holding MEMORIA_SECRETS__KEYS (and optionally MEMORIA_SECRETS__ACTIVE_KEY_ID), so the keys never pass through Terraform state. Excludes secrets_encryption_keys and secrets_active_key_id."
  default     = null

  validation {
    condition     = var.secrets_keys_existing_secret == null || can(regex("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", var.secrets_keys_existing_secret))
    error_message = "secrets_keys_existing_secret must be a Kubernetes object name (lowercase DNS subdomain)."
  }
}

variable "trusted_proxies" {
  type        = list(string)
  description = "MEMORIA_AUTH__TRUSTED_PROXIES: CIDRs of the proxies in front of the API (the ingress controller's pods); requests from them count against the X-Forwarded-For address. Empty = not set (the peer address counts)."
  nullable    = false
  default     = []

  validation {
    condition     = alltrue([for cidr in var.trusted_proxies : can(cidrhost(cidr, 0))])
    error_message = "trusted_proxies must be CIDRs such as 10.244.0.0/16 (a single address is 10.0.0.7/32)."
  }
}

variable "extra_env" {
  type        = map(string)
  description = "Extra non-secret environment variables for the ConfigMap (MEMORIA_* names must be real settings: unknown ones are rejected at startup)."
  default     = {}
}

variable "extra_secret_env" {
  type        = map(string)
  description = "Extra secret environment variables for the app Secret."
  sensitive   = true
  default     = {}
}

# --- network --------------------------------------------------------------------------------------

variable "api_ingress_namespaces" {
  type        = list(string)
  description = "Namespaces allowed to call the API on port 8080 (add your ingress controller's). Empty = every namespace."
}

variable "dns_namespace" {
  type        = string
  description = "Namespace of the cluster DNS pods (egress on port 53 is allowed to them)."
}

variable "dns_pod_labels" {
  type        = map(string)
  description = "Labels of the cluster DNS pods."
}

variable "external_egress_cidr" {
  type        = string
  description = "CIDR the API may reach on 443 when the embedding provider is remote (voyage or openai-compatible). NetworkPolicy cannot match host names, so this is an address range."
}

variable "external_egress_except" {
  type        = list(string)
  description = "CIDRs carved out of external_egress_cidr (the private ranges by default); each must lie inside it."
}

# --- ingress --------------------------------------------------------------------------------------

variable "ingress_enabled" {
  type        = bool
  description = "Create an Ingress for the API."
}

variable "ingress_host" {
  type        = string
  description = "Host name of the Ingress rule."
  default     = null
}

variable "ingress_class_name" {
  type        = string
  description = "IngressClass of the Ingress; null = the cluster default."
  default     = null
}

variable "ingress_tls_secret_name" {
  type        = string
  description = "TLS secret for the Ingress host; null = plain HTTP at the ingress."
  default     = null
}

variable "ingress_annotations" {
  type        = map(string)
  description = "Annotations of the Ingress (cert-manager issuer, body size limits...)."
  default     = {}
}
