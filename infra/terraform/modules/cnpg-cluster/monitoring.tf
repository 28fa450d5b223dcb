# Prometheus Operator PodMonitors for the PostgreSQL exporter built into every instance (port
# "metrics", 9187) and the PgBouncer exporter of every pooler pod (port "metrics", 9127).
# Created here rather than through .spec.monitoring.enablePodMonitor, which CNPG deprecates.

resource "kubernetes_manifest" "pod_monitor_instances" {
  count = var.enable_pod_monitor ? 1 : 0

  manifest = {
    apiVersion = "monitoring.coreos.com/v1"
    kind       = "PodMonitor"
    metadata = {
      name      = var.cluster_name
      namespace = var.namespace
      labels    = local.labels
    }
    spec = {
      selector = {
        matchLabels = {
          "cnpg.io/cluster" = var.cluster_name
          "cnpg.io/podRole" = "instance"
        }
      }
      podMetricsEndpoints = [{ port = "metrics" }]
    }
  }
}

resource "kubernetes_manifest" "pod_monitor_poolers" {
  count = var.enable_pod_monitor ? 1 : 0

  manifest = {
    apiVersion = "monitoring.coreos.com/v1"
    kind       = "PodMonitor"
    metadata = {
      name      = "${var.cluster_name}-poolers"
      namespace = var.namespace
      labels    = local.labels
    }
    spec = {
      selector = {
        matchExpressions = [{
          key      = "cnpg.io/poolerName"
          operator = "In"
          values   = [local.pooler_rw_name, local.pooler_ro_name]
        }]
      }
      podMetricsEndpoints = [{ port = "metrics" }]
    }
  }
}
