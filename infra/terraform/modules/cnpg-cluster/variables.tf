variable "namespace" {
  type        = string
  description = "Namespace the CloudNativePG Cluster, Poolers and backups live in (must already exist)."
}

variable "cluster_name" {
  type        = string
  description = "Name of the CloudNativePG Cluster. Services are derived from it: <name>-rw, <name>-ro, <name>-app (secret)."

  validation {
    condition     = can(regex("^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$", var.cluster_name))
    error_message = "cluster_name must be a lowercase DNS label of at most 40 characters."
  }
}

variable "labels" {
  type        = map(string)
  description = "Labels added to every object this module creates."
  default     = {}
}

variable "operator_namespace" {
  type        = string
  description = "Namespace the CloudNativePG operator runs in; its pods are allowed to reach the instance manager (port 8000)."
}

# --- instances and image -------------------------------------------------------------------------

variable "instances" {
  type        = number
  description = "Number of PostgreSQL instances (1 primary + N-1 streaming replicas)."

  validation {
    condition     = var.instances >= 1 && var.instances <= 9 && floor(var.instances) == var.instances
    error_message = "instances must be a whole number between 1 and 9."
  }
}

variable "pgvector_mode" {
  type        = string
  description = "How pgvector reaches the server: image-volume (PG 18 minimal image + pgvector extension image) or bundled-image (postgres_image already contains pgvector)."

  validation {
    condition     = contains(["image-volume", "bundled-image"], var.pgvector_mode)
    error_message = "pgvector_mode must be image-volume or bundled-image."
  }
}

variable "postgres_image" {
  type        = string
  description = "PostgreSQL operand image (imageName of the Cluster)."
}

variable "pgvector_extension_image" {
  type        = string
  description = "OCI image mounted as an image volume holding the pgvector extension files (used when pgvector_mode = image-volume)."
}

variable "pod_anti_affinity_type" {
  type        = string
  description = "required = never co-locate two instances on one node; preferred = try to spread but allow it."

  validation {
    condition     = contains(["required", "preferred"], var.pod_anti_affinity_type)
    error_message = "pod_anti_affinity_type must be required or preferred."
  }
}

# --- storage and resources -----------------------------------------------------------------------

variable "storage_size" {
  type        = string
  description = "PGDATA volume size per instance."
}

variable "storage_class" {
  type        = string
  description = "StorageClass for PGDATA volumes; null uses the cluster default."
  default     = null
}

variable "wal_storage_size" {
  type        = string
  description = "Separate WAL (pg_wal) volume size per instance."
}

variable "wal_storage_class" {
  type        = string
  description = "StorageClass for WAL volumes; null uses the cluster default."
  default     = null
}

variable "resources" {
  type = object({
    requests = object({ cpu = string, memory = string })
    limits   = object({ cpu = string, memory = string })
  })
  description = "CPU/memory requests and limits of each PostgreSQL instance pod."
}

# --- PostgreSQL parameters -----------------------------------------------------------------------

variable "shared_buffers" {
  type        = string
  description = "PostgreSQL shared_buffers (about 25% of the memory limit)."
}

variable "maintenance_work_mem" {
  type        = string
  description = "PostgreSQL maintenance_work_mem; HNSW index builds are much faster when the graph fits in it."
}

variable "max_parallel_maintenance_workers" {
  type        = number
  description = "PostgreSQL max_parallel_maintenance_workers; parallel workers for (HNSW) index builds."
}

variable "work_mem" {
  type        = string
  description = "PostgreSQL work_mem per sort/hash operation."
}

variable "effective_cache_size" {
  type        = string
  description = "PostgreSQL effective_cache_size planner hint (about 50-75% of the memory limit)."
}

variable "max_connections" {
  type        = number
  description = "PostgreSQL max_connections; must exceed the sum of pooler pool sizes plus migration/replication headroom."
}

variable "extra_parameters" {
  type        = map(string)
  description = "Additional PostgreSQL parameters, merged over the ones above."
  default     = {}
}

# --- application database -------------------------------------------------------------------------

variable "database_name" {
  type        = string
  description = "Application database created at bootstrap."
}

variable "database_owner" {
  type        = string
  description = "Owner role of the application database; its credentials land in the <cluster>-app secret."
}

variable "database_extensions" {
  type        = list(string)
  description = "Extensions created declaratively in the application database through a CNPG Database resource."

  validation {
    condition     = contains(var.database_extensions, "vector")
    error_message = "database_extensions must include vector (pgvector): the schema needs it."
  }
}

# --- poolers --------------------------------------------------------------------------------------

variable "pooler_rw_instances" {
  type        = number
  description = "PgBouncer pods in the read-write pooler."
}

variable "pooler_ro_instances" {
  type        = number
  description = "PgBouncer pods in the read-only pooler."
}

variable "pooler_rw_default_pool_size" {
  type        = number
  description = "PgBouncer default_pool_size (server connections per user/database) of the read-write pooler."
}

variable "pooler_ro_default_pool_size" {
  type        = number
  description = "PgBouncer default_pool_size of the read-only pooler."
}

variable "pooler_max_client_conn" {
  type        = number
  description = "PgBouncer max_client_conn of each pooler."
}

variable "max_prepared_statements" {
  type        = number
  description = "PgBouncer max_prepared_statements (protocol-level prepared statements tracked per server connection); 0 disables."
}

variable "pooler_resources" {
  type = object({
    requests = object({ cpu = string, memory = string })
    limits   = object({ cpu = string, memory = string })
  })
  description = "CPU/memory of each PgBouncer container."
}

# --- who may connect ------------------------------------------------------------------------------

variable "client_pod_labels" {
  type        = map(string)
  description = "Labels of the application pods allowed to reach the poolers."
}

variable "migration_pod_labels" {
  type        = map(string)
  description = "Labels of the migration Job pods allowed to reach the database instances directly."
}

variable "monitoring_namespace" {
  type        = string
  description = "Namespace of Prometheus; when set, it may scrape the metrics ports. null = no metrics ingress rule."
  default     = null
}

# --- monitoring -----------------------------------------------------------------------------------

variable "enable_pod_monitor" {
  type        = bool
  description = "Create Prometheus Operator PodMonitors for the instances and poolers (needs the monitoring.coreos.com CRDs)."
}

# --- backups --------------------------------------------------------------------------------------

variable "backup_enabled" {
  type        = bool
  description = "Continuous WAL archiving plus scheduled base backups to an object store."
}

variable "backup_method" {
  type        = string
  description = "plugin = Barman Cloud CNPG-I plugin (ObjectStore resource); barmanObjectStore = the in-tree .spec.backup.barmanObjectStore."

  validation {
    condition     = contains(["plugin", "barmanObjectStore"], var.backup_method)
    error_message = "backup_method must be plugin or barmanObjectStore."
  }
}

variable "backup_destination_path" {
  type        = string
  description = "Object store URL the WAL archive and base backups go to, e.g. s3://bucket/memoria."
}

variable "backup_s3_endpoint_url" {
  type        = string
  description = "Custom S3 endpoint (MinIO, Ceph, R2...). null = AWS S3."
  default     = null
}

variable "backup_s3_inherit_iam_role" {
  type        = bool
  description = "Use the pod's cloud identity (IRSA / workload identity) instead of static keys."
}

variable "backup_s3_access_key_id" {
  type        = string
  description = "S3 access key id (ignored when backup_s3_inherit_iam_role is true)."
  sensitive   = true
  default     = null
}

variable "backup_s3_secret_access_key" {
  type        = string
  description = "S3 secret access key (ignored when backup_s3_inherit_iam_role is true)."
  sensitive   = true
  default     = null
}

variable "backup_retention_policy" {
  type        = string
  description = "Barman retention policy, e.g. 30d."
}

variable "backup_schedule" {
  type        = string
  description = "ScheduledBackup cron expression with seconds (6 fields), e.g. \"0 0 3 * * *\"."
}

variable "recovery_source_cluster_name" {
  type        = string
  description = "When set, bootstrap this cluster by recovering the named cluster's backups from the same object store instead of initdb."
  default     = null
}
