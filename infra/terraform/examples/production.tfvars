# Worked example: three-node HA Memoria with Voyage embeddings, S3 backups and an Ingress.
#
#   cd infra/terraform
#   cp examples/production.tfvars memoria.auto.tfvars      # edit, keep it out of git
#   export TF_VAR_voyage_api_key=...                        # secrets via env, not in the file
#   export TF_VAR_backup_s3_access_key_id=...
#   export TF_VAR_backup_s3_secret_access_key=...
#   kubectl -n memoria create secret generic memoria-encryption-keys ...   # see README
#   terraform init
#   terraform apply -target=helm_release.cnpg_operator -target=helm_release.barman_cloud_plugin
#   terraform apply

kube_context = "prod-eu-1"
namespace    = "memoria"

# Operator + Barman Cloud plugin (the plugin needs cert-manager in the cluster).
install_cnpg_operator       = true
install_barman_cloud_plugin = true

# Image built from the repository Dockerfile and pushed to your registry; pin by digest if you can.
image = "registry.example.com/memoria:0.1.0"

# PostgreSQL 18 + pgvector as an image volume (CNPG >= 1.27, Kubernetes >= 1.33 with ImageVolume).
cluster_name             = "memoria-db"
instances                = 3
replica_max_lag_s        = 5 # beyond it, recall reads from the primary
pgvector_mode            = "image-volume"
postgres_image           = "ghcr.io/cloudnative-pg/postgresql:18-minimal-trixie"
pgvector_extension_image = "ghcr.io/cloudnative-pg/pgvector:0.8.1-18-trixie"
# On older clusters without ImageVolume use an image that bundles pgvector instead:
#   pgvector_mode  = "bundled-image"
#   postgres_image = "ghcr.io/cloudnative-pg/postgresql:17-standard-bookworm"

storage_class    = "premium-rwo"
storage_size     = "100Gi"
wal_storage_size = "20Gi"

postgres_resources = {
  requests = { cpu = "2", memory = "8Gi" }
  limits   = { cpu = "4", memory = "8Gi" }
}
shared_buffers                   = "2GB"
effective_cache_size             = "6GB"
maintenance_work_mem             = "2GB"
max_parallel_maintenance_workers = 3
work_mem                         = "32MB"
max_connections                  = 300

# PgBouncer: transaction mode; prepared statements tracked so asyncpg keeps its cache (100).
pooler_rw_instances               = 2
pooler_ro_instances               = 2
pooler_rw_default_pool_size       = 40
pooler_ro_default_pool_size       = 40
pgbouncer_max_prepared_statements = 200
app_statement_cache_size          = 100

# Backups: WAL archive + daily base backup, 30 days.
backup_enabled          = true
backup_method           = "plugin"
backup_destination_path = "s3://example-memoria-backups/prod"
backup_retention_policy = "30d"
backup_schedule         = "0 0 3 * * *"

# API
replicas            = 3
hpa_min_replicas    = 3
hpa_max_replicas    = 10
app_pool_max_size   = 10
embeddings_provider = "voyage"
embeddings_model    = "voyage-3.5"
app_resources = {
  requests = { cpu = "250m", memory = "512Mi" }
  limits   = { cpu = "1", memory = "1Gi" }
}

ingress_enabled         = true
ingress_class_name      = "nginx"
ingress_host            = "memoria.example.com"
ingress_tls_secret_name = "memoria-tls"
ingress_annotations = {
  "cert-manager.io/cluster-issuer" = "letsencrypt"
}
api_ingress_namespaces = ["ingress-nginx", "agents"]
# The ingress controller's pod network: failed-auth limits then count the X-Forwarded-For client,
# not the controller (else one client with a wrong key locks out everyone behind the ingress).
trusted_proxies = ["10.244.0.0/16"]

# Encryption keys of redacted credentials, from a Secret created outside Terraform (README,
# "Encryption keys"), so they never land in the Terraform state.
secrets_keys_existing_secret = "memoria-encryption-keys"

enable_pod_monitor   = true
monitoring_namespace = "monitoring"
