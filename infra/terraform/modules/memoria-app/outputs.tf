output "service_name" {
  description = "ClusterIP Service of the API (port 80 -> 8080)."
  value       = kubernetes_service_v1.api.metadata[0].name
}

output "service_url" {
  description = "In-cluster URL of the API."
  value       = "http://${kubernetes_service_v1.api.metadata[0].name}.${var.namespace}.svc"
}

output "deployment_name" {
  description = "Name of the API Deployment."
  value       = kubernetes_deployment_v1.api.metadata[0].name
}

output "migration_job_name" {
  description = "Name of the migration Job for the current image."
  value       = kubernetes_job_v1.migrate.metadata[0].name
}

output "settings_config_map" {
  description = "ConfigMap holding the non-secret MEMORIA_* settings."
  value       = kubernetes_config_map_v1.settings.metadata[0].name
}

output "secret_name" {
  description = "Secret holding VOYAGE_API_KEY and other secret environment variables."
  value       = kubernetes_secret_v1.memoria.metadata[0].name
}

output "ingress_host" {
  description = "Host served by the Ingress, when enabled."
  value       = var.ingress_enabled ? var.ingress_host : null
}
