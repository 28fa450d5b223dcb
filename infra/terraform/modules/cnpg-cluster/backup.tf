# Continuous backup: WAL archiving (continuous, from the primary) + base backups on a schedule.
# Either through the Barman Cloud plugin (ObjectStore resource, default) or the in-tree
# .spec.backup.barmanObjectStore (deprecated by CNPG but still supported). Both write the same
# Barman layout, so a cluster can move between them without losing its backup history.

resource "kubernetes_secret_v1" "backup_s3" {
  count = var.backup_enabled && !var.backup_s3_inherit_iam_role ? 1 : 0

  metadata {
    name      = local.backup_secret_name
    namespace = var.namespace
    labels    = local.labels
  }

  type = "Opaque"

  data = {
    ACCESS_KEY_ID     = var.backup_s3_access_key_id
    ACCESS_SECRET_KEY = var.backup_s3_secret_access_key
  }

  lifecycle {
    precondition {
      condition     = var.backup_s3_access_key_id != null && var.backup_s3_secret_access_key != null
      error_message = "Backups with static keys need backup_s3_access_key_id and backup_s3_secret_access_key (or set backup_s3_inherit_iam_role = true)."
    }
  }
}

resource "kubernetes_manifest" "object_store" {
  count = local.use_plugin_backup ? 1 : 0

  manifest = {
    apiVersion = "barmancloud.cnpg.io/v1"
    kind       = "ObjectStore"
    metadata = {
      name      = local.object_store_name
      namespace = var.namespace
      labels    = local.labels
    }
    spec = {
      retentionPolicy = var.backup_retention_policy
      configuration   = local.barman_configuration
    }
  }

  lifecycle {
    precondition {
      condition     = can(regex("^s3://[^/]+", var.backup_destination_path))
      error_message = "backup_destination_path must be an s3:// URL when backups are enabled."
    }
  }
}

locals {
  scheduled_backup_spec = {
    schedule             = var.backup_schedule
    immediate            = true
    backupOwnerReference = "self"
    cluster              = { name = var.cluster_name }
    method               = local.use_plugin_backup ? "plugin" : "barmanObjectStore"
    # Base backups from a replica when one exists, keeping the I/O off the primary.
    target = "prefer-standby"
  }

  # pluginConfiguration exists only for method = plugin.
  scheduled_backup_plugin = {
    for k, v in { pluginConfiguration = { name = local.barman_plugin_name } } : k => v if local.use_plugin_backup
  }
}

resource "kubernetes_manifest" "scheduled_backup" {
  count = var.backup_enabled ? 1 : 0

  manifest = {
    apiVersion = "postgresql.cnpg.io/v1"
    kind       = "ScheduledBackup"
    metadata = {
      name      = "${var.cluster_name}-daily"
      namespace = var.namespace
      labels    = local.labels
    }
    spec = merge(local.scheduled_backup_spec, local.scheduled_backup_plugin)
  }

  depends_on = [kubernetes_manifest.cluster]

  lifecycle {
    precondition {
      condition     = can(regex("^s3://[^/]+", var.backup_destination_path))
      error_message = "backup_destination_path must be an s3:// URL when backups are enabled."
    }
  }
}
