# CloudNativePG Cluster + declarative Database for Memoria.
#
# The CRD objects are applied with kubernetes_manifest, which needs the CRDs to exist at *plan*
# time: install the operator first (see the root README, "First apply").

locals {
  labels = merge(var.labels, {
    "app.kubernetes.io/part-of"    = "memoria"
    "app.kubernetes.io/managed-by" = "terraform"
  })

  # Names of everything the operator derives from the cluster name.
  rw_service_name    = "${var.cluster_name}-rw"
  ro_service_name    = "${var.cluster_name}-ro"
  app_secret_name    = "${var.cluster_name}-app"
  pooler_rw_name     = "${var.cluster_name}-pooler-rw"
  pooler_ro_name     = "${var.cluster_name}-pooler-ro"
  object_store_name  = "${var.cluster_name}-object-store"
  backup_secret_name = "${var.cluster_name}-backup-s3"
  service_domain     = "${var.namespace}.svc"

  barman_plugin_name = "barman-cloud.cloudnative-pg.io"
  use_image_volume   = var.pgvector_mode == "image-volume"
  use_plugin_backup  = var.backup_enabled && var.backup_method == "plugin"
  use_intree_backup  = var.backup_enabled && var.backup_method == "barmanObjectStore"
  recovering         = var.recovery_source_cluster_name != null

  # Parameters tuned for pgvector. maintenance_work_mem and max_parallel_maintenance_workers drive
  # HNSW build time; work_mem covers the sorts in hybrid (vector + full-text) ranking.
  postgres_parameters = merge({
    shared_buffers                   = var.shared_buffers
    effective_cache_size             = var.effective_cache_size
    maintenance_work_mem             = var.maintenance_work_mem
    max_parallel_maintenance_workers = tostring(var.max_parallel_maintenance_workers)
    work_mem                         = var.work_mem
    max_connections                  = tostring(var.max_connections)
  }, var.extra_parameters)

  # Image-volume extensions (CNPG >= 1.27, PostgreSQL >= 18, Kubernetes ImageVolume): the pgvector
  # image is mounted read-only into every instance and added to extension_control_path and
  # dynamic_library_path by the operator. With a bundled image the list is empty.
  image_volume_extensions = local.use_image_volume ? [{
    name  = "pgvector"
    image = { reference = var.pgvector_extension_image }
  }] : []

  # S3 credentials either come from the pod's cloud identity or from the Secret created in backup.tf.
  # jsondecode(jsonencode()) lets the two branches have different object shapes.
  s3_credentials = jsondecode(var.backup_s3_inherit_iam_role ? jsonencode({
    inheritFromIAMRole = true
    }) : jsonencode({
    accessKeyId     = { name = local.backup_secret_name, key = "ACCESS_KEY_ID" }
    secretAccessKey = { name = local.backup_secret_name, key = "ACCESS_SECRET_KEY" }
  }))

  # Shared by the ObjectStore (plugin) and the in-tree barmanObjectStore: the schemas are the same.
  barman_configuration = merge(
    {
      destinationPath = var.backup_destination_path
      s3Credentials   = local.s3_credentials
      wal             = { compression = "gzip", maxParallel = 4 }
      data            = { compression = "gzip", jobs = 2 }
    },
    { for k, v in { endpointURL = var.backup_s3_endpoint_url } : k => v if v != null },
  )

  bootstrap = jsondecode(local.recovering ? jsonencode({
    recovery = {
      source   = "origin"
      database = var.database_name
      owner    = var.database_owner
    }
    }) : jsonencode({
    initdb = {
      database      = var.database_name
      owner         = var.database_owner
      dataChecksums = true
      encoding      = "UTF8"
      localeCollate = "C"
      localeCType   = "C"
    }
  }))

  # The cluster to recover from, read from the same object store under its own server name.
  external_clusters = local.recovering ? [jsondecode(local.use_plugin_backup ? jsonencode({
    name = "origin"
    plugin = {
      name = local.barman_plugin_name
      parameters = {
        barmanObjectName = local.object_store_name
        serverName       = var.recovery_source_cluster_name
      }
    }
    }) : jsonencode({
    name              = "origin"
    barmanObjectStore = merge(local.barman_configuration, { serverName = var.recovery_source_cluster_name })
  }))] : []

  # WAL archiving through the Barman Cloud plugin.
  plugins = local.use_plugin_backup ? [{
    name          = local.barman_plugin_name
    isWALArchiver = true
    parameters    = { barmanObjectName = local.object_store_name }
  }] : []

  # The Cluster spec; see kubernetes_manifest.cluster below.
  cluster_spec = {
    instances             = var.instances
    imageName             = var.postgres_image
    primaryUpdateStrategy = "unsupervised"
    primaryUpdateMethod   = "switchover"
    enableSuperuserAccess = false

    postgresql = {
      parameters = local.postgres_parameters
      extensions = local.image_volume_extensions
    }

    bootstrap        = local.bootstrap
    externalClusters = local.external_clusters
    plugins          = local.plugins

    storage = merge(
      { size = var.storage_size },
      { for k, v in { storageClass = var.storage_class } : k => v if v != null },
    )
    walStorage = merge(
      { size = var.wal_storage_size },
      { for k, v in { storageClass = var.wal_storage_class } : k => v if v != null },
    )

    resources = var.resources

    affinity = {
      enablePodAntiAffinity = true
      topologyKey           = "kubernetes.io/hostname"
      podAntiAffinityType   = var.pod_anti_affinity_type
    }

    inheritedMetadata = {
      labels = local.labels
    }
  }

  # In-tree object store backup; the key is absent altogether unless selected.
  intree_backup = {
    for k, v in {
      backup = {
        retentionPolicy   = var.backup_retention_policy
        barmanObjectStore = local.barman_configuration
      }
    } : k => v if local.use_intree_backup
  }
}

resource "kubernetes_manifest" "cluster" {
  manifest = {
    apiVersion = "postgresql.cnpg.io/v1"
    kind       = "Cluster"
    metadata = {
      name      = var.cluster_name
      namespace = var.namespace
      labels    = local.labels
    }
    # In-tree backup settings are merged in only when that backup method is selected.
    spec = merge(local.cluster_spec, local.intree_backup)
  }

  # The operator's defaulting webhook adds its own entries to spec.postgresql.parameters.
  computed_fields = ["metadata.labels", "metadata.annotations", "spec.postgresql.parameters"]

  wait {
    condition {
      type   = "Ready"
      status = "True"
    }
  }

  timeouts {
    create = "30m"
    update = "30m"
    delete = "10m"
  }

  lifecycle {
    precondition {
      condition     = !local.recovering || var.backup_enabled
      error_message = "recovery_source_cluster_name needs backup_enabled = true: the backups are read from that object store."
    }
    precondition {
      condition     = !local.recovering || var.recovery_source_cluster_name != var.cluster_name
      error_message = "Recover into a cluster with a new name; reusing the source name would archive over its WAL."
    }
  }

  depends_on = [
    kubernetes_secret_v1.backup_s3,
    kubernetes_manifest.object_store,
  ]
}

# The application database already exists after bootstrap; this resource adopts it so the operator
# runs CREATE EXTENSION (as superuser) for pgvector before the migration Job starts. The app role
# owns the database but cannot create untrusted extensions itself.
resource "kubernetes_manifest" "database" {
  manifest = {
    apiVersion = "postgresql.cnpg.io/v1"
    kind       = "Database"
    metadata = {
      name      = "${var.cluster_name}-${var.database_name}"
      namespace = var.namespace
      labels    = local.labels
    }
    spec = {
      name                  = var.database_name
      owner                 = var.database_owner
      cluster               = { name = var.cluster_name }
      ensure                = "present"
      databaseReclaimPolicy = "retain"
      extensions = [for extension in var.database_extensions : {
        name   = extension
        ensure = "present"
      }]
    }
  }

  wait {
    fields = {
      "status.applied" = "true"
    }
  }

  timeouts {
    create = "10m"
    update = "10m"
  }

  depends_on = [kubernetes_manifest.cluster]
}
