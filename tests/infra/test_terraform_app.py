"""The Memoria API side: Deployment, migration Job, Service, HPA, PDB, settings, NetworkPolicies."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from .hcl_model import Resource, TerraformProject, block, blocks, env_value, strip_interpolation

APP_MODULE = "modules/memoria-app"


def app_resource(tf: TerraformProject, rtype: str, name: str) -> Resource:
    found = [r for r in tf.resources(rtype) if r.module.name == APP_MODULE and r.name == name]
    assert len(found) == 1, f"expected one {rtype}.{name} in {APP_MODULE}, found {len(found)}"
    return found[0]


def expand(tf: TerraformProject, value: Any) -> str:
    return tf.expand(tf.context_for(tf.module(APP_MODULE)), value)


def first_host_label(tf: TerraformProject, url: Any) -> str:
    """First DNS label of the host in postgresql://u:p@HOST:5432/db, after expanding references."""
    expanded = expand(tf, url)
    host = expanded.split("@", 1)[1]
    host = re.sub(r"^\$\{\s*coalesce\(", "", host)  # read URL: coalesce(read_host, write_host)
    host = re.sub(r"^\$\{\d+\s*>\s*1\s*\?\s*", "", host)  # read host: the ro pooler when there are replicas
    return host.split(".", 1)[0]


@pytest.fixture(scope="module")
def deployment(tf: TerraformProject) -> Resource:
    return app_resource(tf, "kubernetes_deployment_v1", "api")


@pytest.fixture(scope="module")
def pod_spec(deployment: Resource) -> dict[str, Any]:
    return block(deployment.body, "spec", "template", "spec")


@pytest.fixture(scope="module")
def container(pod_spec: dict[str, Any]) -> dict[str, Any]:
    return block(pod_spec, "container")


@pytest.fixture(scope="module")
def job(tf: TerraformProject) -> Resource:
    return app_resource(tf, "kubernetes_job_v1", "migrate")


@pytest.fixture(scope="module")
def job_container(job: Resource) -> dict[str, Any]:
    return block(job.body, "spec", "template", "spec", "container")


def test_api_container_runs_memoria_serve_on_port_8080(
    tf: TerraformProject, container: dict[str, Any]
) -> None:
    assert container["args"][0] == "serve"
    # Only the migration Job migrates; N pods racing through PgBouncer on start would not be safe.
    assert "--no-migrate" in container["args"]
    port = block(container, "port")
    assert port["name"] == "http"
    assert expand(tf, port["container_port"]) == "8080"
    settings = tf.module(APP_MODULE).locals["core_settings"]
    assert settings["MEMORIA_SERVER__HOST"] == "0.0.0.0"  # noqa: S104 - the container must listen on every interface
    assert expand(tf, settings["MEMORIA_SERVER__PORT"]) == "${tostring(8080)}"


def test_deployment_pod_security_context_is_hardened(pod_spec: dict[str, Any]) -> None:
    security = block(pod_spec, "security_context")
    assert security["run_as_non_root"] is True
    assert security["run_as_user"] == 10001
    assert block(security, "seccomp_profile")["type"] == "RuntimeDefault"
    assert pod_spec["automount_service_account_token"] is False


@pytest.mark.parametrize("which", ["api", "migrate"])
def test_containers_drop_all_capabilities_and_run_read_only_without_privilege_escalation(
    container: dict[str, Any], job_container: dict[str, Any], which: str
) -> None:
    security = block(container if which == "api" else job_container, "security_context")
    assert security["allow_privilege_escalation"] is False
    assert security["read_only_root_filesystem"] is True
    assert security["privileged"] is False
    assert security["run_as_non_root"] is True
    assert block(security, "capabilities")["drop"] == ["ALL"]
    assert block(security, "seccomp_profile")["type"] == "RuntimeDefault"


def test_read_only_root_filesystem_gets_writable_tmp_and_model_cache(
    tf: TerraformProject, pod_spec: dict[str, Any], container: dict[str, Any]
) -> None:
    mounts = {m["name"]: expand(tf, m["mount_path"]) for m in blocks(container, "volume_mount")}
    volumes = {v["name"]: v for v in blocks(pod_spec, "volume")}
    assert mounts.get("tmp") == "/tmp"
    for name in mounts:
        assert blocks(volumes[name], "empty_dir"), f"volume {name} must be an emptyDir"
    core = tf.module(APP_MODULE).locals["core_settings"]
    for cache in ("HF_HOME", "MEMORIA_EMBEDDINGS__ONNX_CACHE_DIR"):
        path = expand(tf, core[cache])
        assert path.startswith(mounts["model-cache"] + "/"), f"{cache} must live on the writable cache volume"


def test_probes_hit_readyz_and_healthz_on_the_http_port(container: dict[str, Any]) -> None:
    readiness = block(container, "readiness_probe", "http_get")
    liveness = block(container, "liveness_probe", "http_get")
    assert readiness["path"] == "/readyz"
    assert liveness["path"] == "/healthz"
    assert readiness["port"] == liveness["port"] == "http"


def test_api_writes_through_the_rw_pooler_and_recalls_through_the_ro_pooler(
    tf: TerraformProject, container: dict[str, Any]
) -> None:
    assert first_host_label(tf, env_value(container, "MEMORIA_DATABASE__URL")) == "memoria-db-pooler-rw"
    assert first_host_label(tf, env_value(container, "MEMORIA_DATABASE__READ_URL")) == "memoria-db-pooler-ro"


def test_recall_reads_the_primary_when_the_cluster_has_no_replica(tf: TerraformProject) -> None:
    """CNPG's -ro service selects replicas only: with one instance the ro pooler has no server, so
    the read host must fall back to the write host rather than fail every recall."""
    call = tf.root.module_calls["memoria"]
    read_host = strip_interpolation(call["database_read_host"])
    ro_when_replicas = r"var\.instances\s*>\s*1\s*\?\s*module\.database\.pooler_ro_host\s*:\s*null"
    assert re.fullmatch(ro_when_replicas, read_host), read_host
    read_url = tf.module(APP_MODULE).locals["read_url"]
    assert "coalesce(var.database_read_host, var.database_write_host)" in read_url


def test_replica_lag_bound_is_a_validated_input_that_reaches_the_api_only_with_replicas(
    tf: TerraformProject,
) -> None:
    root_variable = tf.root.variables["replica_max_lag_s"]
    assert "number" in str(root_variable["type"])
    assert root_variable.get("validation"), "replica_max_lag_s needs a validation rule"
    assert tf.module(APP_MODULE).variables["replica_max_lag_s"].get("validation")
    passed = strip_interpolation(tf.root.module_calls["memoria"]["replica_max_lag_s"])
    assert passed == "var.replica_max_lag_s"
    settings = str(tf.module(APP_MODULE).locals["settings"])
    assert re.search(
        r"MEMORIA_DATABASE__REPLICA_MAX_LAG_S\s*=\s*var\.replica_max_lag_s\s*\}\s*:\s*k\s*=>\s*tostring\(v\)"
        r"\s*if\s*var\.database_read_host\s*!=\s*null",
        settings,
    ), settings


def test_migration_job_runs_memoria_migrate_directly_against_the_rw_service(
    tf: TerraformProject, job_container: dict[str, Any]
) -> None:
    assert job_container["command"] == ["memoria"]
    assert job_container["args"] == ["migrate"]
    url = env_value(job_container, "MEMORIA_DATABASE__URL")
    host = first_host_label(tf, url)
    assert host == "memoria-db-rw", f"migrations must bypass PgBouncer and use <cluster>-rw, got {host}"
    assert "pooler" not in expand(tf, url)
    names = [e["name"] for e in blocks(job_container, "env")]
    assert "MEMORIA_DATABASE__READ_URL" not in names


@pytest.mark.parametrize("which", ["api", "migrate"])
def test_database_password_is_read_from_the_cnpg_secret_before_the_url_uses_it(
    tf: TerraformProject, container: dict[str, Any], job_container: dict[str, Any], which: str
) -> None:
    env = blocks(container if which == "api" else job_container, "env")
    names = [e["name"] for e in env]
    for variable, key in (("DB_USERNAME", "username"), ("DB_PASSWORD", "password")):
        ref = block(env[names.index(variable)], "value_from", "secret_key_ref")
        assert ref["key"] == key
        assert expand(tf, ref["name"]) == "memoria-db-app"
        # Kubernetes only expands $(VAR) for variables declared earlier in the list.
        assert names.index(variable) < names.index("MEMORIA_DATABASE__URL")
    url = expand(tf, env[names.index("MEMORIA_DATABASE__URL")]["value"])
    assert url.startswith("postgresql://$(DB_USERNAME):$(DB_PASSWORD)@")


def test_migration_job_runs_before_the_deployment_rolls_and_is_renamed_per_image(
    tf: TerraformProject, deployment: Resource, job: Resource
) -> None:
    assert "kubernetes_job_v1.migrate" in [strip_interpolation(d) for d in deployment.body["depends_on"]]
    assert job.body["wait_for_completion"] is True
    assert "sha256(var.image)" in tf.module(APP_MODULE).locals["migration_job_name"]
    assert strip_interpolation(block(job.body, "metadata")["name"]) == "local.migration_job_name"
    assert block(job.body, "spec", "template", "spec")["restart_policy"] == "Never"
    # The root module only starts the app after the database (and its vector extension) is ready.
    assert "module.database" in [
        strip_interpolation(d) for d in tf.root.module_calls["memoria"]["depends_on"]
    ]


def test_service_hpa_and_pdb_target_the_api_pods(tf: TerraformProject, deployment: Resource) -> None:
    service = app_resource(tf, "kubernetes_service_v1", "api")
    assert strip_interpolation(block(service.body, "spec")["selector"]) == "var.api_pod_labels"
    assert block(service.body, "spec", "port")["target_port"] == "http"

    hpa = app_resource(tf, "kubernetes_horizontal_pod_autoscaler_v2", "api")
    target = block(hpa.body, "spec", "scale_target_ref")
    assert target["kind"] == "Deployment"
    assert "kubernetes_deployment_v1.api" in target["name"]
    assert "var.hpa_max_replicas" in block(hpa.body, "spec")["max_replicas"]
    # The HPA owns the replica count once it exists.
    assert any("replicas" in item for item in block(deployment.body, "lifecycle")["ignore_changes"])

    pdb = app_resource(tf, "kubernetes_pod_disruption_budget_v1", "api")
    assert strip_interpolation(block(pdb.body, "spec", "selector")["match_labels"]) == "var.api_pod_labels"
    assert (
        strip_interpolation(block(deployment.body, "spec", "selector")["match_labels"])
        == "var.api_pod_labels"
    )


def test_api_reads_settings_from_the_configmap_and_secrets_from_the_secret(
    tf: TerraformProject, container: dict[str, Any]
) -> None:
    config_map = app_resource(tf, "kubernetes_config_map_v1", "settings")
    secret = app_resource(tf, "kubernetes_secret_v1", "memoria")
    refs = " ".join(str(e) for e in blocks(container, "env_from"))
    assert "kubernetes_config_map_v1.settings" in refs and "kubernetes_secret_v1.memoria" in refs
    assert strip_interpolation(config_map.body["data"]) == "local.settings"
    assert strip_interpolation(secret.body["data"]) == "local.secret_env"
    secret_env = tf.module(APP_MODULE).locals["secret_env"]
    assert "VOYAGE_API_KEY = var.voyage_api_key" in secret_env
    assert tf.module(APP_MODULE).variables["voyage_api_key"]["sensitive"] is True


def test_every_memoria_variable_the_deploy_sets_is_a_setting_memoria_accepts(tf: TerraformProject) -> None:
    """The app rejects unknown MEMORIA_* variables (extra="forbid"), so a typo would crash-loop pods.

    Every MEMORIA_<SECTION>__<FIELD> written anywhere in the app module counts: ConfigMap and Secret
    entries, plain env values, entries read from an existing Secret, and the comments naming them."""
    from app.settings import Settings

    sections = Settings.model_fields
    module_text = "\n".join(
        path.read_text(encoding="utf-8") for path in tf.module(APP_MODULE).path.glob("*.tf")
    )
    names = set(re.findall(r"\bMEMORIA_[A-Z0-9]+__[A-Z0-9_]+\b", module_text))
    names |= set(tf.module(APP_MODULE).locals["core_settings"])
    # What the test must see, whatever the module's shape: database URLs (env), the embedding key
    # (Secret), the encryption keys (Secret or an existing Secret), trusted proxies (ConfigMap).
    assert {
        "MEMORIA_DATABASE__URL",
        "MEMORIA_DATABASE__READ_URL",
        "MEMORIA_EMBEDDINGS__VOYAGE_API_KEY",
        "MEMORIA_SECRETS__KEYS",
        "MEMORIA_SECRETS__ACTIVE_KEY_ID",
        "MEMORIA_AUTH__TRUSTED_PROXIES",
    } <= names
    for name in sorted(n for n in names if n.startswith("MEMORIA_")):
        section, _, field = name.removeprefix("MEMORIA_").lower().partition("__")
        assert section in sections, f"{name}: no settings section {section}"
        model = sections[section].annotation
        assert isinstance(model, type) and issubclass(model, BaseModel), f"{name}: {section} is no section"
        assert field in model.model_fields, f"{name}: no setting {field}"


def network_policy(tf: TerraformProject, name: str) -> Resource:
    return app_resource(tf, "kubernetes_network_policy_v1", name)


def egress_rules(policy: Resource, *, dynamic: bool) -> list[dict[str, Any]]:
    if dynamic:
        return blocks(policy.body, "spec", "dynamic", "egress", "content")
    return blocks(policy.body, "spec", "egress")


def test_api_egress_is_limited_to_dns_and_the_poolers(tf: TerraformProject) -> None:
    policy = network_policy(tf, "api")
    assert block(policy.body, "spec")["policy_types"] == ["Ingress", "Egress"]
    static = egress_rules(policy, dynamic=False)
    assert len(static) == 2
    dns, poolers = static
    assert {(p["port"], p["protocol"]) for p in blocks(dns, "ports")} == {("53", "UDP"), ("53", "TCP")}
    pooler_peers = expand(tf, blocks(poolers, "to"))
    assert "memoria-db-pooler-rw" in pooler_peers and "memoria-db-pooler-ro" in pooler_peers
    assert "cnpg.io/poolerName" in pooler_peers
    assert expand(tf, [p["port"] for p in blocks(poolers, "ports")]) == '["${tostring(5432)}"]'


def test_https_egress_for_the_embeddings_api_exists_only_for_remote_providers(tf: TerraformProject) -> None:
    policy = network_policy(tf, "api")
    dynamic = [d for d in blocks(policy.body, "spec", "dynamic") if "egress" in d]
    assert len(dynamic) == 1
    rule = block(dynamic[0], "egress")
    assert "local.remote_embeddings" in rule["for_each"]
    assert [p["port"] for p in blocks(rule, "content", "ports")] == ["443"]
    remote = tf.module(APP_MODULE).locals["remote_embeddings"]
    assert '"voyage"' in remote and '"local"' not in remote


def test_migration_pods_may_only_reach_dns_and_the_database_instances(tf: TerraformProject) -> None:
    policy = network_policy(tf, "migrate")
    assert strip_interpolation(block(policy.body, "spec", "pod_selector")["match_labels"]) == (
        "var.migration_pod_labels"
    )
    rules = egress_rules(policy, dynamic=False)
    assert len(rules) == 2
    database_peers = expand(tf, blocks(rules[1], "to"))
    assert '"cnpg.io/podRole": "instance"' in database_peers
    assert not blocks(policy.body, "spec", "ingress"), "nothing needs to connect to the migration Job"


def test_ingress_is_optional(tf: TerraformProject) -> None:
    ingress = app_resource(tf, "kubernetes_ingress_v1", "api")
    assert "var.ingress_enabled" in ingress.body["count"]
    assert tf.root.variables["ingress_enabled"]["default"] is False
