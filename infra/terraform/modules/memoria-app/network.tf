# API pods: ingress on 8080 only; egress to DNS, the PgBouncer poolers and (for a remote embedding
# provider) HTTPS. Migration pods: no ingress; egress to DNS and the PostgreSQL instances.

locals {
  remote_embeddings = contains(["voyage", "openai-compatible"], var.embeddings_provider)
}

resource "kubernetes_network_policy_v1" "api" {
  metadata {
    name      = var.name
    namespace = var.namespace
    labels    = local.labels
  }

  spec {
    pod_selector {
      match_labels = var.api_pod_labels
    }

    policy_types = ["Ingress", "Egress"]

    # Callers: the listed namespaces, or every namespace when none are listed.
    dynamic "ingress" {
      for_each = length(var.api_ingress_namespaces) == 0 ? [true] : []
      content {
        from {
          namespace_selector {}
        }
        ports {
          port     = tostring(local.http_port)
          protocol = "TCP"
        }
      }
    }
    dynamic "ingress" {
      for_each = length(var.api_ingress_namespaces) == 0 ? [] : [true]
      content {
        from {
          namespace_selector {
            match_expressions {
              key      = "kubernetes.io/metadata.name"
              operator = "In"
              values   = var.api_ingress_namespaces
            }
          }
        }
        ports {
          port     = tostring(local.http_port)
          protocol = "TCP"
        }
      }
    }

    # DNS.
    egress {
      to {
        namespace_selector {
          match_labels = { "kubernetes.io/metadata.name" = var.dns_namespace }
        }
        pod_selector {
          match_labels = var.dns_pod_labels
        }
      }
      ports {
        port     = "53"
        protocol = "UDP"
      }
      ports {
        port     = "53"
        protocol = "TCP"
      }
    }

    # PgBouncer poolers (rw and ro). The API never talks to the instances directly.
    egress {
      to {
        pod_selector {
          match_expressions {
            key      = "cnpg.io/poolerName"
            operator = "In"
            values   = var.pooler_names
          }
        }
      }
      ports {
        port     = tostring(var.database_port)
        protocol = "TCP"
      }
    }

    # The Voyage (or OpenAI-compatible) embeddings API over HTTPS, only when that provider is used.
    dynamic "egress" {
      for_each = local.remote_embeddings ? [true] : []
      content {
        to {
          ip_block {
            cidr   = var.external_egress_cidr
            except = var.external_egress_except
          }
        }
        ports {
          port     = "443"
          protocol = "TCP"
        }
      }
    }
  }
}

resource "kubernetes_network_policy_v1" "migrate" {
  metadata {
    name      = "${var.name}-migrate"
    namespace = var.namespace
    labels    = local.labels
  }

  spec {
    pod_selector {
      match_labels = var.migration_pod_labels
    }

    policy_types = ["Ingress", "Egress"]

    egress {
      to {
        namespace_selector {
          match_labels = { "kubernetes.io/metadata.name" = var.dns_namespace }
        }
        pod_selector {
          match_labels = var.dns_pod_labels
        }
      }
      ports {
        port     = "53"
        protocol = "UDP"
      }
      ports {
        port     = "53"
        protocol = "TCP"
      }
    }

    # Straight to the PostgreSQL instances (the <cluster>-rw service resolves to the primary pod).
    egress {
      to {
        pod_selector {
          match_labels = var.database_pod_labels
        }
      }
      ports {
        port     = tostring(var.database_port)
        protocol = "TCP"
      }
    }
  }
}
