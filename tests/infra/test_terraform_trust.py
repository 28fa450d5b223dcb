"""The deploy side of issue #16: the keys that seal redacted credentials, and the proxies to trust.

The encryption keys must reach the pods through a Kubernetes Secret (Terraform-managed, or one the
operator made so the keys stay out of Terraform state), never through the ConfigMap; the Terraform
inputs must refuse what the app would refuse at start, so a bad key fails the plan, not the rollout.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import re
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from .hcl_model import (
    TERRAFORM_DIR,
    Module,
    Resource,
    TerraformProject,
    as_text,
    block,
    blocks,
    load_hcl,
    strip_interpolation,
)

APP_MODULE = "modules/memoria-app"
KEY_SETTINGS = ("MEMORIA_SECRETS__KEYS", "MEMORIA_SECRETS__ACTIVE_KEY_ID")
GOOD_KEY = base64.b64encode(bytes(range(32))).decode()


def app_resource(tf: TerraformProject, rtype: str, name: str) -> Resource:
    found = [r for r in tf.resources(rtype) if r.module.name == APP_MODULE and r.name == name]
    assert len(found) == 1, f"expected one {rtype}.{name} in {APP_MODULE}, found {len(found)}"
    return found[0]


def both_modules(tf: TerraformProject) -> list[Module]:
    """The root module, where the operator sets the inputs, and the app module, which uses them."""
    return [tf.root, tf.module(APP_MODULE)]


def conditions(variable: dict[str, Any]) -> list[str]:
    return [strip_interpolation(v["condition"]) for v in variable.get("validation", [])]


def hcl_regex(condition: str) -> re.Pattern[str]:
    """The one `regex("...")` pattern of a validation condition (RE2 and Python agree on these)."""
    patterns = re.findall(r'regex\("((?:[^"\\]|\\.)*)"', condition)
    assert len(patterns) == 1, f"expected one regex() in {condition}"
    return re.compile(patterns[0])


def deployment_container(tf: TerraformProject) -> dict[str, Any]:
    deployment = app_resource(tf, "kubernetes_deployment_v1", "api")
    return block(deployment.body, "spec", "template", "spec", "container")


def app_accepts_keys(keys: dict[str, str]) -> bool:
    from app.secrets.settings import SecretSettings

    try:
        SecretSettings(keys={key_id: SecretStr(value) for key_id, value in keys.items()})
    except ValidationError:
        return False
    return True


# --- where the keys live ---------------------------------------------------------------------------


def test_encryption_keys_are_put_into_the_app_secret(tf: TerraformProject) -> None:
    module = tf.module(APP_MODULE)
    secret = app_resource(tf, "kubernetes_secret_v1", "memoria")
    assert strip_interpolation(secret.body["data"]) == "local.secret_env"
    secret_env = as_text(module.locals["secret_env"])
    assert "MEMORIA_SECRETS__KEYS = var.secrets_encryption_keys" in secret_env
    assert "jsonencode(v)" in secret_env, "the app reads the key map as one JSON object"
    assert "MEMORIA_SECRETS__ACTIVE_KEY_ID = var.secrets_active_key_id" in secret_env
    # A change of key or active id changes the checksum, which rolls the pods.
    annotations = block(
        app_resource(tf, "kubernetes_deployment_v1", "api").body, "spec", "template", "metadata"
    )["annotations"]
    assert "local.secret_env" in as_text(annotations)


def test_no_config_map_and_no_plain_env_value_ever_carries_an_encryption_key(tf: TerraformProject) -> None:
    for config_map in tf.resources("kubernetes_config_map_v1"):
        data = tf.expand(tf.context_for(config_map.module), config_map.body["data"])
        assert "MEMORIA_SECRETS__" not in data, f"{config_map.address} carries encryption settings"
        assert "secrets_encryption_keys" not in data and "secrets_active_key_id" not in data
    for resource in (
        app_resource(tf, "kubernetes_deployment_v1", "api"),
        app_resource(tf, "kubernetes_job_v1", "migrate"),
    ):
        for container in blocks(resource.body, "spec", "template", "spec", "container"):
            envs = blocks(container, "env") + blocks(container, "dynamic", "env", "content")
            for env in envs:
                if "MEMORIA_SECRETS__" in as_text(env.get("name")) or "secrets_keys" in as_text(env):
                    assert "value" not in env, f"{resource.address}: {env['name']} must not be a plain value"
                    assert blocks(env, "value_from", "secret_key_ref"), (
                        f"{env['name']} must come from a Secret"
                    )
                    assert not blocks(env, "value_from", "config_map_key_ref")


def test_migration_job_never_sees_the_encryption_keys(tf: TerraformProject) -> None:
    """`memoria migrate` seals nothing, so its pod gets no keys at all."""
    job = app_resource(tf, "kubernetes_job_v1", "migrate")
    container = block(job.body, "spec", "template", "spec", "container")
    assert not blocks(container, "env_from", "secret_ref")
    assert not blocks(container, "dynamic")
    assert "secrets_" not in as_text(container) and "MEMORIA_SECRETS__" not in as_text(container)


def test_an_existing_secret_feeds_the_keys_entry_by_entry_instead(tf: TerraformProject) -> None:
    """With secrets_keys_existing_secret the keys never pass through Terraform state."""
    module = tf.module(APP_MODULE)
    existing = strip_interpolation(module.locals["existing_secret_env"])
    assert existing.startswith("var.secrets_keys_existing_secret == null ? {} :")
    # The keys must be there (a missing entry stops the pod); the active key id may be.
    assert "MEMORIA_SECRETS__KEYS = false" in existing
    assert "MEMORIA_SECRETS__ACTIVE_KEY_ID = true" in existing

    dynamic = [d["env"] for d in blocks(deployment_container(tf), "dynamic") if "env" in d]
    assert len(dynamic) == 1
    assert strip_interpolation(dynamic[0]["for_each"]) == "local.existing_secret_env"
    content = block(dynamic[0], "content")
    assert strip_interpolation(content["name"]) == "env.key"
    ref = block(content, "value_from", "secret_key_ref")
    assert strip_interpolation(ref["name"]) == "var.secrets_keys_existing_secret"
    assert strip_interpolation(ref["key"]) == "env.key"
    assert strip_interpolation(ref["optional"]) == "env.value"


def test_keys_come_from_one_place_and_the_active_key_is_one_of_them(tf: TerraformProject) -> None:
    secret = app_resource(tf, "kubernetes_secret_v1", "memoria")
    checks = [strip_interpolation(p["condition"]) for p in blocks(secret.body, "lifecycle", "precondition")]
    assert (
        "var.secrets_keys_existing_secret == null || "
        "(length(var.secrets_encryption_keys) == 0 && var.secrets_active_key_id == null)"
    ) in checks
    assert (
        "var.secrets_active_key_id == null ? length(var.secrets_encryption_keys) <= 1 : "
        "contains(keys(var.secrets_encryption_keys), var.secrets_active_key_id)"
    ) in checks


# --- the inputs ------------------------------------------------------------------------------------


def test_key_inputs_are_sensitive_empty_by_default_and_passed_to_the_app(tf: TerraformProject) -> None:
    for module in both_modules(tf):
        keys = module.variables["secrets_encryption_keys"]
        assert keys.get("sensitive") is True, f"{module.name}: the keys must be sensitive"
        assert keys["default"] == {}, "no key by default: redact and keep nothing"
        assert keys.get("nullable") is False
        assert module.variables["secrets_active_key_id"]["default"] is None
        assert module.variables["secrets_keys_existing_secret"]["default"] is None
        assert module.variables["trusted_proxies"]["default"] == []
    call = tf.root.module_calls["memoria"]
    for name in (
        "secrets_encryption_keys",
        "secrets_active_key_id",
        "secrets_keys_existing_secret",
        "trusted_proxies",
    ):
        assert strip_interpolation(call[name]) == f"var.{name}", f"module.memoria must get var.{name}"


@pytest.mark.parametrize("where", [".", APP_MODULE])
def test_key_validation_refuses_exactly_the_keys_the_app_refuses(tf: TerraformProject, where: str) -> None:
    found = conditions(tf.module(where).variables["secrets_encryption_keys"])
    key_checks = [c for c in found if "values(var.secrets_encryption_keys)" in c]
    assert len(key_checks) == 1
    # base64decode() fails on random bytes (not UTF-8); ISO-8859-1 maps each byte to one character.
    assert 'length(textdecodebase64(key, "ISO-8859-1")), -1) == 32' in key_checks[0]
    pattern = hcl_regex(key_checks[0])
    samples = {
        "32 bytes": GOOD_KEY,
        "32 bytes, all 0xff": base64.b64encode(b"\xff" * 32).decode(),
        "16 bytes": base64.b64encode(bytes(16)).decode(),
        "48 bytes": base64.b64encode(bytes(48)).decode(),
        "url-safe alphabet": base64.urlsafe_b64encode(b"\xfb" * 32).decode(),
        "no padding": GOOD_KEY.rstrip("="),
        "not base64": "!" * 44,
        "empty": "",
    }
    for label, key in samples.items():
        terraform_accepts = pattern.fullmatch(key) is not None
        assert terraform_accepts == app_accepts_keys({"k1": key}), f"{label}: Terraform and the app disagree"


@pytest.mark.parametrize("where", [".", APP_MODULE])
def test_key_id_validation_refuses_exactly_the_ids_the_app_refuses(tf: TerraformProject, where: str) -> None:
    variables = tf.module(where).variables
    id_checks = [c for c in conditions(variables["secrets_encryption_keys"]) if "keys(var." in c]
    assert len(id_checks) == 1
    patterns = [hcl_regex(id_checks[0]), hcl_regex(conditions(variables["secrets_active_key_id"])[0])]
    for key_id in ("2026-01", "prod.v2_a", "a", "x" * 64, "x" * 65, "", "bad id", "a/b", "clé", "k:1"):
        app_ok = app_accepts_keys({key_id: GOOD_KEY})
        for pattern in patterns:
            assert (pattern.fullmatch(key_id) is not None) == app_ok, (
                f"{key_id!r}: Terraform and the app disagree"
            )


@pytest.mark.parametrize("where", [".", APP_MODULE])
def test_existing_secret_name_must_be_a_kubernetes_name(tf: TerraformProject, where: str) -> None:
    [check] = conditions(tf.module(where).variables["secrets_keys_existing_secret"])
    pattern = hcl_regex(check)
    assert pattern.fullmatch("memoria-encryption-keys")
    for bad in ("Memoria-Keys", "keys_", "-keys", "a" * 254):
        assert not pattern.fullmatch(bad), bad


# --- trusted proxies -------------------------------------------------------------------------------


def test_trusted_proxies_reach_the_configmap_as_a_json_list_only_when_set(tf: TerraformProject) -> None:
    module = tf.module(APP_MODULE)
    settings = as_text(module.locals["settings"])
    entry = re.search(
        r"\{for k, v in \{MEMORIA_AUTH__TRUSTED_PROXIES = var\.trusted_proxies\} : ([^}]*)\}", settings
    )
    assert entry, "MEMORIA_AUTH__TRUSTED_PROXIES must be in the ConfigMap settings"
    assert entry.group(1) == "k => jsonencode(v) if length(v) > 0"
    assert "TRUSTED_PROXIES" not in as_text(module.locals["secret_env"])


@pytest.mark.parametrize("where", [".", APP_MODULE])
def test_trusted_proxies_must_be_cidrs(tf: TerraformProject, where: str) -> None:
    variable = tf.module(where).variables["trusted_proxies"]
    assert strip_interpolation(variable["type"]) == "list(string)"
    assert variable.get("nullable") is False
    assert "alltrue([for cidr in var.trusted_proxies : can(cidrhost(cidr, 0))])" in conditions(variable)


@pytest.mark.parametrize("example", sorted(p.name for p in (TERRAFORM_DIR / "examples").glob("*.tfvars")))
def test_example_proxies_are_networks_the_app_accepts(example: str) -> None:
    from app.auth.settings import AuthSettings

    proxies = load_hcl(TERRAFORM_DIR / "examples" / example).get("trusted_proxies", [])
    for proxy in proxies:
        assert "/" in proxy and ipaddress.ip_network(proxy, strict=False)
    assert AuthSettings(trusted_proxies=proxies).trusted_proxies == proxies


# --- the encoding --------------------------------------------------------------------------------


def test_what_terraform_writes_is_what_the_settings_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonencode() writes compact JSON; pydantic-settings must read the map and the list from it."""
    from app.settings import Settings

    def jsonencode(value: object) -> str:
        return json.dumps(value, separators=(",", ":"))

    other_key = base64.b64encode(b"\x01" * 32).decode()
    monkeypatch.setenv(KEY_SETTINGS[0], jsonencode({"2026-01": GOOD_KEY, "2026-07": other_key}))
    monkeypatch.setenv(KEY_SETTINGS[1], "2026-07")
    monkeypatch.setenv("MEMORIA_AUTH__TRUSTED_PROXIES", jsonencode(["10.244.0.0/16", "fd00::/8"]))
    settings = Settings()
    assert settings.secrets.raw_keys() == {"2026-01": bytes(range(32)), "2026-07": b"\x01" * 32}
    assert settings.secrets.active_key == "2026-07"
    assert settings.auth.trusted_proxies == ["10.244.0.0/16", "fd00::/8"]
