"""The CloudNativePG side: Cluster, pgvector, Database, Poolers, backups, monitoring, NetworkPolicies."""

from __future__ import annotations

import re
from typing import Any

import pytest

from .hcl_model import Resource, TerraformProject, block, blocks, strip_interpolation

DATABASE_MODULE = "database"


def only(resources: list[Resource], what: str) -> Resource:
    assert len(resources) == 1, f"expected exactly one {what}, found {[r.address for r in resources]}"
    return resources[0]


def spec_of(resource: Resource) -> dict[str, Any]:
    """The manifest's spec; a `merge(local.a, local.b)` spec is rebuilt from the object-valued locals."""
    spec = resource.body["manifest"]["spec"]
    if isinstance(spec, dict):
        return spec
    merged: dict[str, Any] = {}
    for name in re.findall(r"\blocal\.([A-Za-z_][A-Za-z0-9_]*)", spec):
        value = resource.module.locals.get(name)
        if isinstance(value, dict):
            merged.update(value)
    assert merged, f"cannot resolve spec {spec!r} of {resource.address}"
    return merged


def expand(tf: TerraformProject, resource: Resource, value: Any) -> str:
    return tf.expand(tf.context_for(resource.module), value)


@pytest.fixture(scope="module")
def cluster(tf: TerraformProject) -> Resource:
    return only(tf.manifests("Cluster"), "CloudNativePG Cluster")


@pytest.fixture(scope="module")
def cluster_name(tf: TerraformProject, cluster: Resource) -> str:
    name = expand(tf, cluster, cluster.body["manifest"]["metadata"]["name"])
    assert name == "memoria-db", "the cluster name should resolve to the root default"
    return name


def test_cluster_runs_three_instances_by_default(tf: TerraformProject, cluster: Resource) -> None:
    assert cluster.body["manifest"]["apiVersion"] == "postgresql.cnpg.io/v1"
    assert expand(tf, cluster, spec_of(cluster)["instances"]) == "3"
    instances = tf.root.variables["instances"]
    assert instances.get("validation"), "instances needs a validation rule"


def test_cluster_apply_waits_until_the_cluster_is_ready(cluster: Resource) -> None:
    condition = block(cluster.body, "wait", "condition")
    assert condition == {"type": "Ready", "status": "True"}


def test_cluster_has_separate_data_and_wal_volumes(tf: TerraformProject, cluster: Resource) -> None:
    spec = spec_of(cluster)
    assert "var.storage_size" in spec["storage"]
    assert "var.wal_storage_size" in spec["walStorage"]
    assert re.fullmatch(r"\d+Gi", expand(tf, cluster, "${var.wal_storage_size}"))
    assert "var.resources" in spec["resources"]


def test_cluster_tunes_memory_and_parallelism_for_hnsw_builds(cluster: Resource) -> None:
    spec = spec_of(cluster)
    assert strip_interpolation(spec["postgresql"]["parameters"]) == "local.postgres_parameters"
    parameters = cluster.module.locals["postgres_parameters"]
    for name in ("shared_buffers", "maintenance_work_mem", "max_parallel_maintenance_workers", "work_mem"):
        assert re.search(rf"\b{name}\s*=\s*\S*var\.{name}\b", parameters), (
            f"{name} is not wired to var.{name}"
        )


def test_cluster_disables_superuser_access_and_spreads_instances_over_nodes(cluster: Resource) -> None:
    spec = spec_of(cluster)
    assert spec["enableSuperuserAccess"] is False
    assert spec["affinity"]["enablePodAntiAffinity"] is True
    assert spec["affinity"]["topologyKey"] == "kubernetes.io/hostname"


def test_pgvector_comes_from_an_image_volume_extension_or_a_bundled_image(
    tf: TerraformProject, cluster: Resource
) -> None:
    mode = tf.root.variables["pgvector_mode"]
    validation = " ".join(v["condition"] for v in mode["validation"])
    assert "image-volume" in validation and "bundled-image" in validation
    assert mode["default"] == "image-volume"
    # image-volume needs PostgreSQL 18 (extension_control_path) and the pgvector extension image.
    assert ":18" in tf.root.variables["postgres_image"]["default"]
    spec = spec_of(cluster)
    assert strip_interpolation(spec["imageName"]) == "var.postgres_image"
    extensions = expand(tf, cluster, spec["postgresql"]["extensions"])
    assert "pgvector" in extensions and "reference" in extensions
    assert "ghcr.io/cloudnative-pg/pgvector:" in extensions
    assert "image-volume" in expand(tf, cluster, "${local.use_image_volume}")


def test_vector_extension_is_created_declaratively_in_the_app_database(
    tf: TerraformProject, cluster_name: str
) -> None:
    database = only(tf.manifests("Database"), "CNPG Database")
    spec = spec_of(database)
    assert expand(tf, database, spec["cluster"]["name"]) == cluster_name
    assert expand(tf, database, spec["name"]) == "memoria"
    assert "var.database_extensions" in spec["extensions"] and "present" in spec["extensions"]
    assert "vector" in tf.root.variables["database_extensions"]["default"]
    assert block(database.body, "wait")["fields"] == {"status.applied": "true"}


def test_app_credentials_come_from_the_cnpg_generated_app_secret(
    tf: TerraformProject, cluster_name: str
) -> None:
    app = tf.root.module_calls["memoria"]
    assert tf.expand(tf.root_context, app["database_credentials_secret"]) == f"{cluster_name}-app"


@pytest.fixture(scope="module")
def poolers(tf: TerraformProject) -> list[Resource]:
    return tf.manifests("Pooler")


def test_two_transaction_mode_poolers_front_the_primary_and_the_replicas(
    tf: TerraformProject, poolers: list[Resource], cluster_name: str
) -> None:
    assert len(poolers) == 2
    assert sorted(spec_of(p)["type"] for p in poolers) == ["ro", "rw"]
    for pooler in poolers:
        spec = spec_of(pooler)
        assert spec["pgbouncer"]["poolMode"] == "transaction"
        assert expand(tf, pooler, spec["cluster"]["name"]) == cluster_name
        name = expand(tf, pooler, pooler.body["manifest"]["metadata"]["name"])
        assert name == f"{cluster_name}-pooler-{spec['type']}"


def test_pooler_sizes_are_variables(tf: TerraformProject, poolers: list[Resource]) -> None:
    for pooler in poolers:
        spec = spec_of(pooler)
        role = spec["type"]
        assert f"var.pooler_{role}_instances" in spec["instances"]
        parameters = spec["pgbouncer"]["parameters"]
        assert f"var.pooler_{role}_default_pool_size" in parameters["default_pool_size"]
        assert "var.pooler_max_client_conn" in parameters["max_client_conn"]
        assert expand(tf, pooler, parameters["default_pool_size"]) == "${tostring(20)}"


def test_poolers_track_prepared_statements_and_the_app_statement_cache_follows(
    tf: TerraformProject, poolers: list[Resource]
) -> None:
    for pooler in poolers:
        parameters = spec_of(pooler)["pgbouncer"]["parameters"]
        assert "var.max_prepared_statements" in parameters["max_prepared_statements"]
    assert expand(tf, poolers[0], "${var.max_prepared_statements}") != "0", "default must keep the cache on"

    database_call = tf.root.module_calls[DATABASE_MODULE]
    app_call = tf.root.module_calls["memoria"]
    assert (
        strip_interpolation(database_call["max_prepared_statements"])
        == "var.pgbouncer_max_prepared_statements"
    )
    assert strip_interpolation(app_call["statement_cache_size"]) == "local.statement_cache_size"

    rule = strip_interpolation(tf.root.locals["statement_cache_size"])
    match = re.fullmatch(r"var\.pgbouncer_max_prepared_statements\s*==\s*0\s*\?\s*0\s*:\s*var\.(\w+)", rule)
    assert match, f"statement_cache_size must be 0 exactly when max_prepared_statements is 0, got {rule!r}"
    assert tf.root.variables[match.group(1)]["default"] > 0

    settings = tf.module("modules/memoria-app").locals["core_settings"]
    assert strip_interpolation(settings["MEMORIA_DATABASE__STATEMENT_CACHE_SIZE"]) == (
        "tostring(var.statement_cache_size)"
    )


def test_wal_is_archived_continuously_to_an_object_store(tf: TerraformProject, cluster: Resource) -> None:
    module = cluster.module
    # Plugin method: an ObjectStore plus the plugin as the cluster's WAL archiver.
    store = only(tf.manifests("ObjectStore"), "ObjectStore")
    assert store.body["manifest"]["apiVersion"] == "barmancloud.cnpg.io/v1"
    assert strip_interpolation(spec_of(store)["configuration"]) == "local.barman_configuration"
    plugins = module.locals["plugins"]
    assert "isWALArchiver = true" in plugins and "barmanObjectName" in plugins
    assert strip_interpolation(spec_of(cluster)["plugins"]) == "local.plugins"
    # In-tree method: the same configuration under .spec.backup.barmanObjectStore.
    assert "barmanObjectStore = local.barman_configuration" in module.locals["intree_backup"]
    assert "var.backup_destination_path" in as_flat(module.locals["barman_configuration"])
    assert tf.root.variables["backup_enabled"]["default"] is True


def as_flat(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def test_scheduled_backup_takes_base_backups_of_the_cluster(tf: TerraformProject, cluster_name: str) -> None:
    backup = only(tf.manifests("ScheduledBackup"), "ScheduledBackup")
    spec = spec_of(backup)
    assert expand(tf, backup, spec["cluster"]["name"]) == cluster_name
    assert strip_interpolation(spec["schedule"]) == "var.backup_schedule"
    assert "plugin" in spec["method"] and "barmanObjectStore" in spec["method"]
    assert len(tf.root.variables["backup_schedule"]["default"].split()) == 6, "CNPG cron has a seconds field"
    assert "pluginConfiguration" in backup.module.locals["scheduled_backup_plugin"]


def test_backup_credentials_are_stored_in_a_secret_from_sensitive_inputs(tf: TerraformProject) -> None:
    secret = only(
        [r for r in tf.resources("kubernetes_secret_v1") if r.module.name == "modules/cnpg-cluster"],
        "backup credentials Secret",
    )
    data = secret.body["data"]
    assert strip_interpolation(data["ACCESS_KEY_ID"]) == "var.backup_s3_access_key_id"
    assert strip_interpolation(data["ACCESS_SECRET_KEY"]) == "var.backup_s3_secret_access_key"
    for name in ("backup_s3_access_key_id", "backup_s3_secret_access_key"):
        assert secret.module.variables[name]["sensitive"] is True


def test_pod_monitors_for_instances_and_poolers_are_toggled_by_one_variable(tf: TerraformProject) -> None:
    monitors = tf.manifests("PodMonitor")
    assert len(monitors) == 2
    for monitor in monitors:
        assert "var.enable_pod_monitor" in monitor.body["count"]
        assert spec_of(monitor)["podMetricsEndpoints"] == [{"port": "metrics"}]
    assert strip_interpolation(tf.root.variables["enable_pod_monitor"]["type"]) == "bool"


def network_policy(tf: TerraformProject, module: str, name: str) -> Resource:
    return only(
        [
            r
            for r in tf.resources("kubernetes_network_policy_v1")
            if r.module.name == module and r.name == name
        ],
        f"{module} NetworkPolicy {name}",
    )


def ingress_rules(tf: TerraformProject, policy: Resource) -> list[tuple[str, set[str]]]:
    """(expanded peer text, ports) for each ingress rule."""
    rules = []
    for rule in blocks(policy.body, "spec", "ingress") + blocks(
        policy.body, "spec", "dynamic", "ingress", "content"
    ):
        peers = expand(tf, policy, blocks(rule, "from"))
        ports = {str(p["port"]) for p in blocks(rule, "ports")}
        rules.append((peers, ports))
    return rules


def test_database_pods_admit_poolers_and_the_migration_job_but_not_the_api(
    tf: TerraformProject, cluster_name: str
) -> None:
    policy = network_policy(tf, "modules/cnpg-cluster", "instances")
    assert block(policy.body, "spec")["policy_types"] == ["Ingress"]
    rules = ingress_rules(tf, policy)
    postgres_peers = " | ".join(peers for peers, ports in rules if "5432" in ports)
    assert f"{cluster_name}-pooler-rw" in postgres_peers and f"{cluster_name}-pooler-ro" in postgres_peers
    assert '"migrate"' in postgres_peers, "the migration Job must reach the instances directly"
    assert '"api"' not in postgres_peers, "API pods must go through the poolers"
    assert any("cnpg-system" in peers and "8000" in ports for peers, ports in rules), "operator -> 8000"


def test_pooler_pods_admit_only_the_api_pods(tf: TerraformProject) -> None:
    policy = network_policy(tf, "modules/cnpg-cluster", "poolers")
    rules = [(peers, ports) for peers, ports in ingress_rules(tf, policy) if "5432" in ports]
    assert len(rules) == 1
    peers = rules[0][0]
    assert '"api"' in peers and '"migrate"' not in peers
    # The labels the database module admits are the labels the app module puts on its pods.
    database_call = tf.root.module_calls[DATABASE_MODULE]
    app_call = tf.root.module_calls["memoria"]
    assert database_call["client_pod_labels"] == app_call["api_pod_labels"]
    assert database_call["migration_pod_labels"] == app_call["migration_pod_labels"]
