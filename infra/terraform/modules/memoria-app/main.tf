# The Memoria API on Kubernetes: settings, secrets, the migration Job and the Deployment.
#
# Settings are environment variables with the MEMORIA_ prefix and `__` between nested sections
# (MEMORIA_DATABASE__URL). Unknown MEMORIA_* names are rejected by the app at startup, so only real
# settings go into the ConfigMap.

locals {
  labels = merge(var.labels, {
    "app.kubernetes.io/name"       = "memoria"
    "app.kubernetes.io/part-of"    = "memoria"
    "app.kubernetes.io/managed-by" = "terraform"
  })
  api_labels       = merge(local.labels, var.api_pod_labels)
  migration_labels = merge(local.labels, var.migration_pod_labels)

  http_port       = 8080
  model_cache_dir = "/var/cache/memoria"
  url_query       = "?sslmode=${var.database_sslmode}"

  # Credentials come from the CNPG-generated secret through $(VAR) expansion, so the password never
  # passes through Terraform state. DB_USERNAME/DB_PASSWORD are declared before the URLs that use them.
  write_url  = "postgresql://$(DB_USERNAME):$(DB_PASSWORD)@${var.database_write_host}:${var.database_port}/${var.database_name}${local.url_query}"
  read_url   = "postgresql://$(DB_USERNAME):$(DB_PASSWORD)@${coalesce(var.database_read_host, var.database_write_host)}:${var.database_port}/${var.database_name}${local.url_query}"
  direct_url = "postgresql://$(DB_USERNAME):$(DB_PASSWORD)@${var.database_direct_host}:${var.database_port}/${var.database_name}${local.url_query}"

  # HF_HOME and the ONNX export of the local model live on an emptyDir: the root filesystem is
  # read-only.
  core_settings = {
    MEMORIA_SERVER__HOST                   = "0.0.0.0"
    MEMORIA_SERVER__PORT                   = tostring(local.http_port)
    MEMORIA_SERVER__LOG_LEVEL              = var.log_level
    MEMORIA_DATABASE__STATEMENT_CACHE_SIZE = tostring(var.statement_cache_size)
    MEMORIA_DATABASE__POOL_MAX_SIZE        = tostring(var.pool_max_size)
    MEMORIA_EMBEDDINGS__PROVIDER           = var.embeddings_provider
    HF_HOME                                = "${local.model_cache_dir}/huggingface"
    MEMORIA_EMBEDDINGS__ONNX_CACHE_DIR     = "${local.model_cache_dir}/onnx"
  }

  settings = merge(
    local.core_settings,
    { for k, v in { MEMORIA_EMBEDDINGS__MODEL = var.embeddings_model } : k => v if v != null },
    { for k, v in { MEMORIA_EMBEDDINGS__DIMENSION = var.embeddings_dimension } : k => tostring(v) if v != null },
    { for k, v in { MEMORIA_EMBEDDINGS__BASE_URL = var.embeddings_base_url } : k => v if v != null },
    # The lag bound matters only when reads have a replica to go to.
    { for k, v in { MEMORIA_DATABASE__REPLICA_MAX_LAG_S = var.replica_max_lag_s } : k => tostring(v) if var.database_read_host != null },
    # Not secret, so it belongs here; unset (the app's default) when the list is empty.
    { for k, v in { MEMORIA_AUTH__TRUSTED_PROXIES = var.trusted_proxies } : k => jsonencode(v) if length(v) > 0 },
    var.extra_env,
  )

  # The voyage client reads VOYAGE_API_KEY; Memoria's own setting is embeddings.voyage_api_key.
  # The encryption keys go into the Secret too, never the ConfigMap; the active key id rides along
  # so that a rotation (new key + new active id) changes one object and rolls the pods once.
  secret_env = merge(
    {
      for k, v in {
        VOYAGE_API_KEY                     = var.voyage_api_key
        MEMORIA_EMBEDDINGS__VOYAGE_API_KEY = var.voyage_api_key
      } : k => v if v != null
    },
    { for k, v in { MEMORIA_SECRETS__KEYS = var.secrets_encryption_keys } : k => jsonencode(v) if length(v) > 0 },
    { for k, v in { MEMORIA_SECRETS__ACTIVE_KEY_ID = var.secrets_active_key_id } : k => v if v != null },
    var.extra_secret_env,
  )

  # With secrets_keys_existing_secret the keys come from a Secret Terraform does not manage, read
  # entry by entry (name => optional): the keys must be there, the active key id may be.
  existing_secret_env = var.secrets_keys_existing_secret == null ? {} : {
    MEMORIA_SECRETS__KEYS          = false
    MEMORIA_SECRETS__ACTIVE_KEY_ID = true
  }

  # A new image gets a new migration Job (Jobs are immutable), which runs before the Deployment rolls.
  migration_job_name = "${var.name}-migrate-${substr(sha256(var.image), 0, 10)}"
}

resource "kubernetes_service_account_v1" "memoria" {
  metadata {
    name      = var.name
    namespace = var.namespace
    labels    = local.labels
  }

  # Memoria never calls the Kubernetes API.
  automount_service_account_token = false
}

resource "kubernetes_config_map_v1" "settings" {
  metadata {
    name      = "${var.name}-settings"
    namespace = var.namespace
    labels    = local.labels
  }

  data = local.settings
}

resource "kubernetes_secret_v1" "memoria" {
  metadata {
    name      = "${var.name}-secrets"
    namespace = var.namespace
    labels    = local.labels
  }

  type = "Opaque"
  data = local.secret_env

  lifecycle {
    precondition {
      condition     = var.embeddings_provider != "voyage" || var.voyage_api_key != null
      error_message = "embeddings_provider = voyage needs voyage_api_key."
    }
    precondition {
      condition     = var.secrets_keys_existing_secret == null || (length(var.secrets_encryption_keys) == 0 && var.secrets_active_key_id == null)
      error_message = "secrets_keys_existing_secret excludes secrets_encryption_keys and secrets_active_key_id: put MEMORIA_SECRETS__KEYS and MEMORIA_SECRETS__ACTIVE_KEY_ID into that Secret."
    }
    precondition {
      condition     = var.secrets_active_key_id == null ? length(var.secrets_encryption_keys) <= 1 : contains(keys(var.secrets_encryption_keys), var.secrets_active_key_id)
      error_message = "secrets_active_key_id must be one of the ids in secrets_encryption_keys, and is required when there are several."
    }
  }
}

# `memoria migrate` = alembic upgrade head, then exit. It connects to <cluster>-rw directly, never
# through PgBouncer: CREATE INDEX CONCURRENTLY and advisory locks need one session for the whole run,
# which transaction pooling does not give.
resource "kubernetes_job_v1" "migrate" {
  metadata {
    name      = local.migration_job_name
    namespace = var.namespace
    labels    = local.migration_labels
  }

  spec {
    backoff_limit           = 3
    active_deadline_seconds = var.migration_timeout_minutes * 60

    template {
      metadata {
        labels = local.migration_labels
      }

      spec {
        restart_policy                  = "Never"
        service_account_name            = kubernetes_service_account_v1.memoria.metadata[0].name
        automount_service_account_token = false

        security_context {
          run_as_non_root = true
          run_as_user     = 10001
          run_as_group    = 10001
          fs_group        = 10001
          seccomp_profile {
            type = "RuntimeDefault"
          }
        }

        container {
          name              = "migrate"
          image             = var.image
          image_pull_policy = var.image_pull_policy
          command           = ["memoria"]
          args              = ["migrate"]

          # Same embedding settings as the API: the migration fixes the vector dimension.
          env_from {
            config_map_ref {
              name = kubernetes_config_map_v1.settings.metadata[0].name
            }
          }

          env {
            name = "DB_USERNAME"
            value_from {
              secret_key_ref {
                name = var.database_credentials_secret
                key  = "username"
              }
            }
          }
          env {
            name = "DB_PASSWORD"
            value_from {
              secret_key_ref {
                name = var.database_credentials_secret
                key  = "password"
              }
            }
          }
          env {
            name  = "MEMORIA_DATABASE__URL"
            value = local.direct_url
          }

          resources {
            requests = var.resources.requests
            limits   = var.resources.limits
          }

          security_context {
            allow_privilege_escalation = false
            privileged                 = false
            read_only_root_filesystem  = true
            run_as_non_root            = true
            run_as_user                = 10001
            run_as_group               = 10001
            capabilities {
              drop = ["ALL"]
            }
            seccomp_profile {
              type = "RuntimeDefault"
            }
          }

          volume_mount {
            name       = "tmp"
            mount_path = "/tmp"
          }
          volume_mount {
            name       = "model-cache"
            mount_path = local.model_cache_dir
          }
        }

        volume {
          name = "tmp"
          empty_dir {
            size_limit = "256Mi"
          }
        }
        volume {
          name = "model-cache"
          empty_dir {
            size_limit = var.model_cache_size_limit
          }
        }
      }
    }
  }

  wait_for_completion = true

  timeouts {
    create = "${var.migration_timeout_minutes}m"
    update = "${var.migration_timeout_minutes}m"
  }
}

resource "kubernetes_deployment_v1" "api" {
  # The image is an input: the root module's validation rejects an untagged or :latest image, and a
  # digest is recommended in the README but left to the operator.
  #checkov:skip=CKV_K8S_14:image comes from var.image, which validation forces to carry a tag or digest (never :latest)
  #checkov:skip=CKV_K8S_43:tag or digest is the operator's choice (var.image); the README recommends a digest for production
  # The app reads its settings from the environment (pydantic-settings), and the database URL is
  # assembled from the CNPG secret by $(VAR) expansion, which only works for env vars.
  #checkov:skip=CKV_K8S_35:settings are env-only (pydantic-settings) and $(DB_PASSWORD) URL expansion needs env vars
  metadata {
    name      = var.name
    namespace = var.namespace
    labels    = local.api_labels
  }

  spec {
    replicas = var.replicas

    selector {
      match_labels = var.api_pod_labels
    }

    strategy {
      type = "RollingUpdate"
      rolling_update {
        max_surge       = "1"
        max_unavailable = "0"
      }
    }

    template {
      metadata {
        labels = local.api_labels
        annotations = {
          # Roll the pods when settings or secrets change.
          "checksum/settings" = sha256(jsonencode(local.settings))
          "checksum/secrets"  = sha256(jsonencode(local.secret_env))
        }
      }

      spec {
        service_account_name             = kubernetes_service_account_v1.memoria.metadata[0].name
        automount_service_account_token  = false
        termination_grace_period_seconds = 30

        security_context {
          run_as_non_root = true
          run_as_user     = 10001
          run_as_group    = 10001
          fs_group        = 10001
          seccomp_profile {
            type = "RuntimeDefault"
          }
        }

        topology_spread_constraint {
          max_skew           = 1
          topology_key       = "kubernetes.io/hostname"
          when_unsatisfiable = "ScheduleAnyway"
          label_selector {
            match_labels = var.api_pod_labels
          }
        }

        container {
          name              = "memoria"
          image             = var.image
          image_pull_policy = var.image_pull_policy
          # The migration Job owns the schema: pods never migrate on start (that would race
          # across replicas, through the transaction pooler). /readyz stays red until the schema
          # is at head.
          args = ["serve", "--no-migrate"]

          port {
            name           = "http"
            container_port = local.http_port
            protocol       = "TCP"
          }

          env_from {
            config_map_ref {
              name = kubernetes_config_map_v1.settings.metadata[0].name
            }
          }
          env_from {
            secret_ref {
              name = kubernetes_secret_v1.memoria.metadata[0].name
            }
          }
          dynamic "env" {
            for_each = local.existing_secret_env
            content {
              name = env.key
              value_from {
                secret_key_ref {
                  name     = var.secrets_keys_existing_secret
                  key      = env.key
                  optional = env.value
                }
              }
            }
          }

          env {
            name = "DB_USERNAME"
            value_from {
              secret_key_ref {
                name = var.database_credentials_secret
                key  = "username"
              }
            }
          }
          env {
            name = "DB_PASSWORD"
            value_from {
              secret_key_ref {
                name = var.database_credentials_secret
                key  = "password"
              }
            }
          }
          # Writes go through the read-write pooler...
          env {
            name  = "MEMORIA_DATABASE__URL"
            value = local.write_url
          }
          # ...and recall reads through the read-only pooler, which spreads them over the replicas.
          env {
            name  = "MEMORIA_DATABASE__READ_URL"
            value = local.read_url
          }

          resources {
            requests = var.resources.requests
            limits   = var.resources.limits
          }

          # Ready = can serve traffic (database reachable, model loaded).
          readiness_probe {
            http_get {
              path = "/readyz"
              port = "http"
            }
            period_seconds    = 10
            timeout_seconds   = 3
            failure_threshold = 3
          }

          # Alive = the process answers; never checks the database, so a database outage does not
          # restart every pod.
          liveness_probe {
            http_get {
              path = "/healthz"
              port = "http"
            }
            period_seconds    = 20
            timeout_seconds   = 3
            failure_threshold = 3
          }

          # Loading the local embedding model can take a while on a cold node.
          startup_probe {
            http_get {
              path = "/healthz"
              port = "http"
            }
            period_seconds    = 5
            failure_threshold = 36
          }

          security_context {
            allow_privilege_escalation = false
            privileged                 = false
            read_only_root_filesystem  = true
            run_as_non_root            = true
            run_as_user                = 10001
            run_as_group               = 10001
            capabilities {
              drop = ["ALL"]
            }
            seccomp_profile {
              type = "RuntimeDefault"
            }
          }

          volume_mount {
            name       = "tmp"
            mount_path = "/tmp"
          }
          volume_mount {
            name       = "model-cache"
            mount_path = local.model_cache_dir
          }
        }

        volume {
          name = "tmp"
          empty_dir {
            size_limit = "256Mi"
          }
        }
        volume {
          name = "model-cache"
          empty_dir {
            size_limit = var.model_cache_size_limit
          }
        }
      }
    }
  }

  # The HPA owns the replica count after the first apply.
  lifecycle {
    ignore_changes = [spec[0].replicas]
  }

  # Schema first, then new pods.
  depends_on = [kubernetes_job_v1.migrate]
}
