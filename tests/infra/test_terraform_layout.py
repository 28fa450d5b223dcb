"""Module layout, variables, providers and the worked example of infra/terraform."""

from __future__ import annotations

import re

import pytest

from .hcl_model import TERRAFORM_DIR, TerraformProject, load_hcl, strip_interpolation

SECRET_NAME = re.compile(r"password|secret|api_key|token|access_key|credential", re.IGNORECASE)
# ...except inputs that only *name* a Kubernetes Secret (ingress_tls_secret_name, *_credentials_secret)
# or which key is in use: the active key id is shown in plans so that a rotation can be reviewed.
SECRET_REFERENCE = re.compile(r"(_name|_secret|^secrets_active_key_id)$")


def test_every_terraform_file_parses_and_the_expected_modules_exist(tf: TerraformProject) -> None:
    names = {module.name for module in tf.all_modules()}
    assert {".", "modules/cnpg-cluster", "modules/memoria-app"} <= names
    for expected in ("versions.tf", "variables.tf", "outputs.tf", "main.tf"):
        assert expected in tf.root.files, f"root module lacks {expected}"


def test_every_variable_declares_a_type_and_a_description(tf: TerraformProject) -> None:
    problems = []
    for module in tf.all_modules():
        for name, body in module.variables.items():
            if not body.get("type"):
                problems.append(f"{module.name}: var.{name} has no type")
            if not str(body.get("description", "")).strip():
                problems.append(f"{module.name}: var.{name} has no description")
    assert not problems, "\n".join(problems)


def test_every_output_has_a_description(tf: TerraformProject) -> None:
    missing = [
        f"{module.name}: output.{name}"
        for module in tf.all_modules()
        for name, body in module.outputs.items()
        if not str(body.get("description", "")).strip()
    ]
    assert not missing


def test_secret_variables_are_marked_sensitive_and_have_no_default_value(tf: TerraformProject) -> None:
    secret_variables = [
        (module, name, body)
        for module in tf.all_modules()
        for name, body in module.variables.items()
        if SECRET_NAME.search(name) and not SECRET_REFERENCE.search(name)
    ]
    names = {name for _, name, _ in secret_variables}
    # The secrets this deployment handles must exist as inputs in the first place.
    assert {
        "voyage_api_key",
        "backup_s3_access_key_id",
        "backup_s3_secret_access_key",
        "secrets_encryption_keys",
    } <= names
    for module, name, body in secret_variables:
        assert body.get("sensitive") is True, f"{module.name}: var.{name} must be sensitive = true"
        assert body.get("default") in (None, {}, ""), (
            f"{module.name}: var.{name} must not ship a secret default"
        )


def test_extra_secret_env_is_sensitive(tf: TerraformProject) -> None:
    for module in (tf.root, tf.module("modules/memoria-app")):
        assert module.variables["extra_secret_env"].get("sensitive") is True


def test_providers_are_pinned_in_versions_tf(tf: TerraformProject) -> None:
    terraform_blocks = tf.root.files["versions.tf"]["terraform"]
    assert len(terraform_blocks) == 1
    settings = terraform_blocks[0]
    assert re.search(r">=\s*1\.\d+", settings["required_version"]), "required_version must set a floor"

    providers: dict[str, dict[str, str]] = {}
    for block in settings["required_providers"]:
        providers.update(block)
    for provider in ("kubernetes", "helm"):
        assert provider in providers, f"{provider} provider is not declared"
        assert providers[provider]["source"] == f"hashicorp/{provider}"
        constraint = providers[provider]["version"]
        # "~> x.y" or an exact version: a bare ">=" would let a new major version in.
        assert re.fullmatch(r"(~>|=)?\s*\d+\.\d+(\.\d+)?", constraint.strip()), (
            f"{provider} version {constraint!r} is not pinned to a major line"
        )


def test_no_module_other_than_the_root_configures_providers_or_versions(tf: TerraformProject) -> None:
    for module in tf.all_modules():
        if module is tf.root:
            continue
        assert not list(module.blocks("provider")), f"{module.name} must not configure providers"
        for _, block in module.blocks("terraform"):
            for providers in block.get("required_providers", []):
                for name, requirement in providers.items():
                    assert "version" not in requirement, f"{module.name} pins {name}; pin in the root only"


def test_module_calls_pass_only_declared_inputs_and_every_required_one(tf: TerraformProject) -> None:
    meta_arguments = {"source", "version", "depends_on", "providers", "count", "for_each"}
    for call_name, arguments in tf.root.module_calls.items():
        child = tf.child_of(tf.root, call_name)
        declared = set(child.variables)
        passed = set(arguments) - meta_arguments
        assert passed <= declared, f"module.{call_name} passes undeclared inputs {sorted(passed - declared)}"
        required = {name for name, body in child.variables.items() if "default" not in body}
        assert required <= passed, f"module.{call_name} misses required inputs {sorted(required - passed)}"


def test_every_declared_variable_is_used_by_its_module(tf: TerraformProject) -> None:
    unused = []
    for module in tf.all_modules():
        text = "\n".join(path.read_text(encoding="utf-8") for path in module.path.glob("*.tf"))
        for name in module.variables:
            if not re.search(rf"\bvar\.{re.escape(name)}\b", text):
                unused.append(f"{module.name}: var.{name}")
    assert not unused, "declared but never used: " + ", ".join(unused)


@pytest.mark.parametrize("example", sorted(p.name for p in (TERRAFORM_DIR / "examples").glob("*.tfvars")))
def test_example_tfvars_set_only_declared_variables_and_the_required_image(
    tf: TerraformProject, example: str
) -> None:
    values = load_hcl(TERRAFORM_DIR / "examples" / example)
    declared = tf.root.variables
    assert set(values) <= set(declared), f"{example} sets undeclared {sorted(set(values) - set(declared))}"
    required = {name for name, body in declared.items() if "default" not in body}
    assert required <= set(values), f"{example} misses required {sorted(required - set(values))}"
    # Secrets come from TF_VAR_* in the environment, never from a file that may get committed.
    leaked = {name for name in values if declared[name].get("sensitive") is True}
    assert not leaked, f"{example} writes secrets {sorted(leaked)} into a tfvars file"


def test_there_is_a_worked_example(tf: TerraformProject) -> None:
    assert list((TERRAFORM_DIR / "examples").glob("*.tfvars")), "examples/ needs at least one .tfvars"


def test_image_variable_rejects_latest_and_untagged_images(tf: TerraformProject) -> None:
    image = tf.root.variables["image"]
    assert "default" not in image, "the image must be chosen by the operator"
    conditions = " ".join(strip_interpolation(v["condition"]) for v in image.get("validation", []))
    assert "latest" in conditions and "sha256" in conditions


def test_cnpg_operator_install_is_an_optional_pinned_helm_release(tf: TerraformProject) -> None:
    releases = {r.name: r.body for r in tf.root.resources if r.type == "helm_release"}
    operator = releases["cnpg_operator"]
    assert operator["chart"] == "cloudnative-pg"
    assert "var.install_cnpg_operator" in operator["count"]
    assert strip_interpolation(operator["version"]) == "var.cnpg_operator_chart_version"
    assert "default" in tf.root.variables["install_cnpg_operator"]
