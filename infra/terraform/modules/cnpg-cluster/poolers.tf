# PgBouncer in transaction mode in front of the primary (rw) and the replicas (ro).
#
# Transaction pooling hands a server connection to a client only for one transaction, so the API's
# many asyncpg connections share few PostgreSQL backends. asyncpg prepares every statement; PgBouncer
# >= 1.21 tracks protocol-level prepared statements per server connection when
# max_prepared_statements > 0, which lets the app keep its statement cache (see the root module's
# statement_cache_size wiring). With max_prepared_statements = 0 the app must use cache size 0.

locals {
  poolers = {
    rw = {
      name              = local.pooler_rw_name
      instances         = var.pooler_rw_instances
      default_pool_size = var.pooler_rw_default_pool_size
    }
    ro = {
      name              = local.pooler_ro_name
      instances         = var.pooler_ro_instances
      default_pool_size = var.pooler_ro_default_pool_size
    }
  }
}

resource "kubernetes_manifest" "pooler_rw" {
  manifest = {
    apiVersion = "postgresql.cnpg.io/v1"
    kind       = "Pooler"
    metadata = {
      name      = local.pooler_rw_name
      namespace = var.namespace
      labels    = local.labels
    }
    spec = {
      cluster   = { name = var.cluster_name }
      instances = var.pooler_rw_instances
      type      = "rw"
      pgbouncer = {
        poolMode = "transaction"
        parameters = {
          default_pool_size       = tostring(var.pooler_rw_default_pool_size)
          max_client_conn         = tostring(var.pooler_max_client_conn)
          max_prepared_statements = tostring(var.max_prepared_statements)
          server_lifetime         = "3600"
          query_wait_timeout      = "30"
        }
      }
      template = local.pooler_pod_templates.rw
    }
  }

  depends_on = [kubernetes_manifest.cluster]
}

resource "kubernetes_manifest" "pooler_ro" {
  manifest = {
    apiVersion = "postgresql.cnpg.io/v1"
    kind       = "Pooler"
    metadata = {
      name      = local.pooler_ro_name
      namespace = var.namespace
      labels    = local.labels
    }
    spec = {
      cluster   = { name = var.cluster_name }
      instances = var.pooler_ro_instances
      type      = "ro"
      pgbouncer = {
        poolMode = "transaction"
        parameters = {
          default_pool_size       = tostring(var.pooler_ro_default_pool_size)
          max_client_conn         = tostring(var.pooler_max_client_conn)
          max_prepared_statements = tostring(var.max_prepared_statements)
          server_lifetime         = "3600"
          query_wait_timeout      = "30"
        }
      }
      template = local.pooler_pod_templates.ro
    }
  }

  depends_on = [kubernetes_manifest.cluster]
}

locals {
  # Pod template overrides merged by the operator into its PgBouncer pods: resources for the
  # pgbouncer container and a soft spread of each pooler's pods over nodes.
  pooler_pod_templates = {
    for role, pooler in local.poolers : role => {
      metadata = { labels = local.labels }
      spec = {
        containers = [{
          name      = "pgbouncer"
          resources = var.pooler_resources
        }]
        affinity = {
          podAntiAffinity = {
            preferredDuringSchedulingIgnoredDuringExecution = [{
              weight = 100
              podAffinityTerm = {
                topologyKey   = "kubernetes.io/hostname"
                labelSelector = { matchLabels = { "cnpg.io/poolerName" = pooler.name } }
              }
            }]
          }
        }
      }
    }
  }
}
