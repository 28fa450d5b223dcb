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
