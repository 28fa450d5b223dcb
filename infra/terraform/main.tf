# Memoria on Kubernetes: CloudNativePG (PostgreSQL + pgvector, HA, backups), PgBouncer poolers in
# transaction mode, and the API with its migration Job.
#
#   API pods ──writes──> <cluster>-pooler-rw ──> primary
#            └─recall──> <cluster>-pooler-ro ──> replicas (<cluster>-ro; the rw pooler when instances = 1)
#   migration Job ─────> <cluster>-rw (direct, session semantics for CREATE INDEX CONCURRENTLY)

locals {
  labels = merge(var.labels, {
    "app.kubernetes.io/part-of"    = "memoria"
    "app.kubernetes.io/managed-by" = "terraform"
  })

  # Selector labels, shared by the app module (which puts them on its pods) and the database module
  # (whose NetworkPolicies admit exactly these pods).
  api_pod_labels = {
    "app.kubernetes.io/name"      = "memoria"
    "app.kubernetes.io/instance"  = var.app_name
    "app.kubernetes.io/component" = "api"
  }
  migration_pod_labels = {
    "app.kubernetes.io/name"      = "memoria"
    "app.kubernetes.io/instance"  = var.app_name
    "app.kubernetes.io/component" = "migrate"
  }

  # asyncpg's statement cache only survives transaction pooling when PgBouncer tracks prepared
  # statements; with max_prepared_statements = 0 the app must not cache any.
  statement_cache_size = var.pgbouncer_max_prepared_statements == 0 ? 0 : var.app_statement_cache_size

  namespace = var.create_namespace ? kubernetes_namespace_v1.memoria[0].metadata[0].name : var.namespace
}

resource "kubernetes_namespace_v1" "memoria" {
  count = var.create_namespace ? 1 : 0

  metadata {
    name = var.namespace
    labels = merge(local.labels, {
      # The API pods meet "restricted"; CNPG instance pods mount image volumes, so enforce baseline
      # and only warn/audit on restricted.
      "pod-security.kubernetes.io/enforce" = "baseline"
      "pod-security.kubernetes.io/warn"    = "restricted"
      "pod-security.kubernetes.io/audit"   = "restricted"
    })
  }
}

# --- operator and backup plugin (optional) ---------------------------------------------------------

resource "helm_release" "cnpg_operator" {
  count = var.install_cnpg_operator ? 1 : 0

  name             = "cnpg"
  repository       = "https://cloudnative-pg.github.io/charts"
  chart            = "cloudnative-pg"
  version          = var.cnpg_operator_chart_version
  namespace        = var.cnpg_operator_namespace
  create_namespace = true
  atomic           = true
  wait             = true
  timeout          = 600
}

resource "helm_release" "barman_cloud_plugin" {
  count = var.install_barman_cloud_plugin && var.backup_enabled && var.backup_method == "plugin" ? 1 : 0

  name             = "plugin-barman-cloud"
  repository       = "https://cloudnative-pg.github.io/charts"
  chart            = "plugin-barman-cloud"
  version          = var.barman_cloud_plugin_chart_version
  namespace        = var.cnpg_operator_namespace
  create_namespace = true
  atomic           = true
  wait             = true
  timeout          = 600

  depends_on = [helm_release.cnpg_operator]
}

# --- database -------------------------------------------------------------------------------------

module "database" {
  source = "./modules/cnpg-cluster"

  namespace          = local.namespace
  cluster_name       = var.cluster_name
  labels             = local.labels
  operator_namespace = var.cnpg_operator_namespace

  instances                = var.instances
  pgvector_mode            = var.pgvector_mode
  postgres_image           = var.postgres_image
  pgvector_extension_image = var.pgvector_extension_image
  pod_anti_affinity_type   = var.pod_anti_affinity_type

  storage_size      = var.storage_size
  storage_class     = var.storage_class
  wal_storage_size  = var.wal_storage_size
  wal_storage_class = var.wal_storage_class
  resources         = var.postgres_resources

  shared_buffers                   = var.shared_buffers
  effective_cache_size             = var.effective_cache_size
  maintenance_work_mem             = var.maintenance_work_mem
  max_parallel_maintenance_workers = var.max_parallel_maintenance_workers
  work_mem                         = var.work_mem
  max_connections                  = var.max_connections
  extra_parameters                 = var.postgres_extra_parameters

  database_name       = var.database_name
  database_owner      = var.database_owner
  database_extensions = var.database_extensions

  pooler_rw_instances         = var.pooler_rw_instances
  pooler_ro_instances         = var.pooler_ro_instances
  pooler_rw_default_pool_size = var.pooler_rw_default_pool_size
  pooler_ro_default_pool_size = var.pooler_ro_default_pool_size
  pooler_max_client_conn      = var.pooler_max_client_conn
  max_prepared_statements     = var.pgbouncer_max_prepared_statements
  pooler_resources            = var.pooler_resources

  client_pod_labels    = local.api_pod_labels
  migration_pod_labels = local.migration_pod_labels
  monitoring_namespace = var.monitoring_namespace
  enable_pod_monitor   = var.enable_pod_monitor

  backup_enabled               = var.backup_enabled
  backup_method                = var.backup_method
  backup_destination_path      = var.backup_destination_path
  backup_s3_endpoint_url       = var.backup_s3_endpoint_url
  backup_s3_inherit_iam_role   = var.backup_s3_inherit_iam_role
  backup_s3_access_key_id      = var.backup_s3_access_key_id
  backup_s3_secret_access_key  = var.backup_s3_secret_access_key
  backup_retention_policy      = var.backup_retention_policy
  backup_schedule              = var.backup_schedule
  recovery_source_cluster_name = var.recovery_source_cluster_name

  depends_on = [
    helm_release.cnpg_operator,
    helm_release.barman_cloud_plugin,
  ]
}

# --- API ------------------------------------------------------------------------------------------

module "memoria" {
  source = "./modules/memoria-app"

  namespace            = local.namespace
  name                 = var.app_name
  labels               = local.labels
  api_pod_labels       = local.api_pod_labels
  migration_pod_labels = local.migration_pod_labels

  image                  = var.image
  image_pull_policy      = var.image_pull_policy
  replicas               = var.replicas
  hpa_min_replicas       = var.hpa_min_replicas
  hpa_max_replicas       = var.hpa_max_replicas
  hpa_cpu_utilization    = var.hpa_cpu_utilization
  resources              = var.app_resources
  model_cache_size_limit = var.model_cache_size_limit

  # Writes through the rw pooler, recall through the ro pooler, migrations straight to the primary.
  # With one instance the -ro service behind the ro pooler has no endpoint (it selects replicas
  # only), so reads then go through the rw pooler too (null: the read URL is the write URL).
  database_write_host         = module.database.pooler_rw_host
  database_read_host          = var.instances > 1 ? module.database.pooler_ro_host : null
  replica_max_lag_s           = var.replica_max_lag_s
  database_direct_host        = module.database.rw_service_host
  database_port               = 5432
  database_name               = module.database.database_name
  database_credentials_secret = module.database.app_secret_name
  database_sslmode            = var.database_sslmode
  statement_cache_size        = local.statement_cache_size
  pool_max_size               = var.app_pool_max_size
  pooler_names                = module.database.pooler_names
  database_pod_labels         = module.database.instance_pod_labels
  migration_timeout_minutes   = var.migration_timeout_minutes

  log_level            = var.log_level
  embeddings_provider  = var.embeddings_provider
  embeddings_model     = var.embeddings_model
  embeddings_dimension = var.embeddings_dimension
  embeddings_base_url  = var.embeddings_base_url
  voyage_api_key       = var.voyage_api_key
  extra_env            = var.extra_env
  extra_secret_env     = var.extra_secret_env

  secrets_encryption_keys      = var.secrets_encryption_keys
  secrets_active_key_id        = var.secrets_active_key_id
  secrets_keys_existing_secret = var.secrets_keys_existing_secret
  trusted_proxies              = var.trusted_proxies

  api_ingress_namespaces = var.api_ingress_namespaces
  dns_namespace          = var.dns_namespace
  dns_pod_labels         = var.dns_pod_labels
  external_egress_cidr   = var.external_egress_cidr
  external_egress_except = var.external_egress_except

  ingress_enabled         = var.ingress_enabled
  ingress_host            = var.ingress_host
  ingress_class_name      = var.ingress_class_name
  ingress_tls_secret_name = var.ingress_tls_secret_name
  ingress_annotations     = var.ingress_annotations

  # The cluster must be Ready and the vector extension created before the migration Job runs.
  depends_on = [module.database]
}

# --- sanity checks (warnings at plan time) --------------------------------------------------------

check "pooler_connections_fit_max_connections" {
  assert {
    condition = (
      var.pooler_rw_instances * var.pooler_rw_default_pool_size
      + var.pooler_ro_instances * var.pooler_ro_default_pool_size
      + 20
    ) <= var.max_connections
    error_message = "The poolers may open more server connections than max_connections allows (worst case: every ro pooler connection lands on one replica). Raise max_connections or shrink the pools."
  }
}

check "client_connections_fit_poolers" {
  assert {
    condition     = var.hpa_max_replicas * var.app_pool_max_size <= var.pooler_max_client_conn
    error_message = "hpa_max_replicas x app_pool_max_size exceeds pooler_max_client_conn."
  }
}

check "statement_cache_within_pgbouncer_tracking" {
  assert {
    condition     = var.pgbouncer_max_prepared_statements == 0 || var.app_statement_cache_size <= var.pgbouncer_max_prepared_statements
    error_message = "app_statement_cache_size is larger than pgbouncer_max_prepared_statements; PgBouncer would keep evicting and re-preparing statements."
  }
}
