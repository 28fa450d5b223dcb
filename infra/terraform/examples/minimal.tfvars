# Smallest useful install: local embeddings, in-tree backups to MinIO, no Ingress.
# For a kind/minikube test cluster also set instances = 1 (recall then reads the primary) or pod_anti_affinity_type = "preferred".

image                  = "registry.example.com/memoria:0.1.0"
pod_anti_affinity_type = "preferred"

backup_method           = "barmanObjectStore"
backup_destination_path = "s3://memoria-backups/dev"
backup_s3_endpoint_url  = "http://minio.minio.svc:9000"
# backup_s3_access_key_id / backup_s3_secret_access_key: export TF_VAR_... instead of writing them here.
