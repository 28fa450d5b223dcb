resource "kubernetes_service_v1" "api" {
  metadata {
    name      = var.name
    namespace = var.namespace
    labels    = local.labels
  }

  spec {
    type     = "ClusterIP"
    selector = var.api_pod_labels

    port {
      name        = "http"
      port        = 80
      target_port = "http"
      protocol    = "TCP"
    }
  }
}

resource "kubernetes_ingress_v1" "api" {
  count = var.ingress_enabled ? 1 : 0

  metadata {
    name        = var.name
    namespace   = var.namespace
    labels      = local.labels
    annotations = var.ingress_annotations
  }

  spec {
    ingress_class_name = var.ingress_class_name

    rule {
      host = var.ingress_host
      http {
        path {
          path      = "/"
          path_type = "Prefix"
          backend {
            service {
              name = kubernetes_service_v1.api.metadata[0].name
              port {
                name = "http"
              }
            }
          }
        }
      }
    }

    dynamic "tls" {
      for_each = var.ingress_tls_secret_name == null ? [] : [var.ingress_tls_secret_name]
      content {
        hosts       = [var.ingress_host]
        secret_name = tls.value
      }
    }
  }

  lifecycle {
    precondition {
      condition     = var.ingress_host != null
      error_message = "ingress_enabled = true needs ingress_host."
    }
  }
}

resource "kubernetes_horizontal_pod_autoscaler_v2" "api" {
  metadata {
    name      = var.name
    namespace = var.namespace
    labels    = local.labels
  }

  spec {
    min_replicas = var.hpa_min_replicas
    max_replicas = var.hpa_max_replicas

    scale_target_ref {
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = kubernetes_deployment_v1.api.metadata[0].name
    }

    metric {
      type = "Resource"
      resource {
        name = "cpu"
        target {
          type                = "Utilization"
          average_utilization = var.hpa_cpu_utilization
        }
      }
    }

    behavior {
      scale_down {
        stabilization_window_seconds = 300
        select_policy                = "Max"
        policy {
          type           = "Pods"
          value          = 1
          period_seconds = 60
        }
      }
    }
  }

  lifecycle {
    precondition {
      condition     = var.hpa_min_replicas <= var.hpa_max_replicas
      error_message = "hpa_min_replicas must not exceed hpa_max_replicas."
    }
  }
}

# At most one API pod down at a time during node drains and upgrades.
resource "kubernetes_pod_disruption_budget_v1" "api" {
  metadata {
    name      = var.name
    namespace = var.namespace
    labels    = local.labels
  }

  spec {
    max_unavailable = "1"
    selector {
      match_labels = var.api_pod_labels
    }
  }
}
