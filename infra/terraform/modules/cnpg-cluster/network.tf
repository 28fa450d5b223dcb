# Ingress rules for the database tier. Only ingress is restricted: instance pods need egress to the
# object store and the Kubernetes API (backups, leader election), which varies per cloud.
#
#   API pods      --5432-->  pooler pods   --5432-->  instance pods
#   migration Job --5432-------------------------->  instance pods (the -rw service, no pooler)
#   operator      --8000-->  instance pods (instance manager status endpoint)
#   cluster pods  --5432/8000--> instances (streaming replication, join Jobs, instance manager)

locals {
  pooler_names = [local.pooler_rw_name, local.pooler_ro_name]
}

resource "kubernetes_network_policy_v1" "instances" {
  metadata {
    name      = "${var.cluster_name}-instances"
    namespace = var.namespace
    labels    = local.labels
  }

  spec {
    pod_selector {
      match_labels = {
        "cnpg.io/cluster" = var.cluster_name
        "cnpg.io/podRole" = "instance"
      }
    }

    policy_types = ["Ingress"]

    # Replication and instance-manager traffic inside this cluster: the instances themselves and the
    # operator's bootstrap Jobs (initdb, join = pg_basebackup of a new replica, recovery), which
    # carry the cnpg.io/cluster label but not cnpg.io/podRole=instance.
    ingress {
      from {
        pod_selector {
          match_labels = {
            "cnpg.io/cluster" = var.cluster_name
          }
        }
      }
      ports {
        port     = "5432"
        protocol = "TCP"
      }
      ports {
        port     = "8000"
        protocol = "TCP"
      }
    }

    # PgBouncer pods of both poolers.
    ingress {
      from {
        pod_selector {
          match_expressions {
            key      = "cnpg.io/poolerName"
            operator = "In"
            values   = local.pooler_names
          }
        }
      }
      ports {
        port     = "5432"
        protocol = "TCP"
      }
    }

    # The migration Job connects straight to the primary (<cluster>-rw).
    ingress {
      from {
        pod_selector {
          match_labels = var.migration_pod_labels
        }
      }
      ports {
        port     = "5432"
        protocol = "TCP"
      }
    }

    # The operator polls the instance manager and runs declarative Database/Role reconciliation.
    ingress {
      from {
        namespace_selector {
          match_labels = { "kubernetes.io/metadata.name" = var.operator_namespace }
        }
      }
      ports {
        port     = "8000"
        protocol = "TCP"
      }
      ports {
        port     = "5432"
        protocol = "TCP"
      }
    }

    dynamic "ingress" {
      for_each = var.monitoring_namespace == null ? [] : [var.monitoring_namespace]
      content {
        from {
          namespace_selector {
            match_labels = { "kubernetes.io/metadata.name" = ingress.value }
          }
        }
        ports {
          port     = "9187"
          protocol = "TCP"
        }
      }
    }
  }
}

resource "kubernetes_network_policy_v1" "poolers" {
  metadata {
    name      = "${var.cluster_name}-poolers"
    namespace = var.namespace
    labels    = local.labels
  }

  spec {
    pod_selector {
      match_expressions {
        key      = "cnpg.io/poolerName"
        operator = "In"
        values   = local.pooler_names
      }
    }

    policy_types = ["Ingress"]

    # Only the API pods use the poolers.
    ingress {
      from {
        pod_selector {
          match_labels = var.client_pod_labels
        }
      }
      ports {
        port     = "5432"
        protocol = "TCP"
      }
    }

    dynamic "ingress" {
      for_each = var.monitoring_namespace == null ? [] : [var.monitoring_namespace]
      content {
        from {
          namespace_selector {
            match_labels = { "kubernetes.io/metadata.name" = ingress.value }
          }
        }
        ports {
          port     = "9127"
          protocol = "TCP"
        }
      }
    }
  }
}
