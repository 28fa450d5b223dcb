"""Parse infra/terraform with python-hcl2 into a small model the structure tests query.

There is no terraform binary (and no cluster) in CI, so these tests read the HCL itself. python-hcl2
changed its output between major versions (v4 returns bare strings, v7+ keeps the quotes of string
literals and block labels and adds ``__is_block__`` / comment keys); ``_clean`` normalises both.

``TerraformProject.expand`` follows ``var.*``, ``local.*`` and ``module.*.*`` references through
module calls and outputs, textually, so a test can check what a value becomes in the root module
(e.g. the host in the migration Job's database URL) without evaluating Terraform.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hcl2

REPO_ROOT = Path(__file__).resolve().parents[2]
TERRAFORM_DIR = REPO_ROOT / "infra" / "terraform"

_REFERENCE = re.compile(r"\b(var|local|module)\.([A-Za-z_][A-Za-z0-9_-]*)(?:\.([A-Za-z_][A-Za-z0-9_-]*))?")
_SINGLE_REFERENCE_INTERPOLATION = re.compile(
    r"\$\{\s*((?:var|local)\.[A-Za-z_][A-Za-z0-9_-]*|module\.[A-Za-z_][A-Za-z0-9_-]*\.[A-Za-z_][A-Za-z0-9_-]*)\s*\}"
)


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1].replace('\\"', '"')
    return text


def _canonical_expression(text: str) -> str:
    """Render an expression the way python-hcl2 v7+ does, whatever version parsed it.

    v4 reconstructs nested objects with Python's repr ({'key': '${var.x}'}, True, None); v7+
    writes HCL ({key = var.x}, true, null). Tests compare against the HCL form.
    """
    text = re.sub(r"\bTrue\b", "true", text)
    text = re.sub(r"\bFalse\b", "false", text)
    text = re.sub(r"\bNone\b", "null", text)
    text = text.replace("'", '"')
    text = re.sub(r'"([A-Za-z_][\w.\-/]*)":\s*', r"\1 = ", text)  # {"key": v} -> {key = v}
    text = re.sub(r'"\$\{([^{}"]*)\}"', r"\1", text)  # "${expr}" inside an expression -> expr
    return re.sub(r"\s+,", ",", text)


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            _unquote(key): _clean(item)
            for key, item in value.items()
            if not (key.startswith("__") and key.endswith("__"))
        }
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, str):
        text = _unquote(value)
        return _canonical_expression(text) if text.startswith("${") else text
    return value


def load_hcl(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        loaded: dict[str, Any] = _clean(hcl2.load(handle))
    return loaded


def as_text(value: Any) -> str:
    """A parsed HCL value as text: strings as they are, everything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def strip_interpolation(text: str) -> str:
    """``${expr}`` -> ``expr`` when the whole value is one interpolation."""
    match = re.fullmatch(r"\$\{(.*)\}", text.strip(), flags=re.DOTALL)
    return match.group(1).strip() if match else text


@dataclass
class Resource:
    type: str
    name: str
    body: dict[str, Any]
    module: Module

    @property
    def address(self) -> str:
        return f"{self.module.name}:{self.type}.{self.name}"


@dataclass
class Module:
    name: str
    path: Path
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    def blocks(self, kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for filename, parsed in self.files.items():
            for block in parsed.get(kind, []):
                yield filename, block

    @property
    def variables(self) -> dict[str, dict[str, Any]]:
        return {name: body for _, block in self.blocks("variable") for name, body in block.items()}

    @property
    def locals(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for _, block in self.blocks("locals"):
            merged.update(block)
        return merged

    @property
    def outputs(self) -> dict[str, dict[str, Any]]:
        return {name: body for _, block in self.blocks("output") for name, body in block.items()}

    @property
    def module_calls(self) -> dict[str, dict[str, Any]]:
        return {name: body for _, block in self.blocks("module") for name, body in block.items()}

    @property
    def resources(self) -> list[Resource]:
        found = []
        for _, block in self.blocks("resource"):
            for rtype, named in block.items():
                for rname, body in named.items():
                    found.append(Resource(rtype, rname, body, self))
        return found


@dataclass(frozen=True)
class Context:
    """Where an expression is evaluated: a module, plus the call that instantiated it."""

    module: Module
    call_args: dict[str, Any] | None = None
    parent: Context | None = None


class TerraformProject:
    def __init__(self, root: Path) -> None:
        self.root_path = root
        self.modules: dict[Path, Module] = {}
        for tf_file in sorted(root.rglob("*.tf")):
            if ".terraform" in tf_file.parts:
                continue
            directory = tf_file.parent.resolve()
            module = self.modules.setdefault(
                directory, Module(name=str(directory.relative_to(root.resolve())) or ".", path=directory)
            )
            module.files[tf_file.name] = load_hcl(tf_file)
        self.root = self.modules[root.resolve()]

    # -- lookups -------------------------------------------------------------------------------

    def all_modules(self) -> list[Module]:
        return list(self.modules.values())

    def module(self, relative: str) -> Module:
        return self.modules[(self.root_path / relative).resolve()]

    def child_of(self, parent: Module, call_name: str) -> Module:
        source = parent.module_calls[call_name]["source"]
        return self.modules[(parent.path / source).resolve()]

    @property
    def root_context(self) -> Context:
        return Context(self.root)

    def call_context(self, call_name: str) -> Context:
        """Context of a module called from the root module."""
        return Context(
            self.child_of(self.root, call_name), self.root.module_calls[call_name], Context(self.root)
        )

    def resources(self, rtype: str) -> list[Resource]:
        return [r for m in self.all_modules() for r in m.resources if r.type == rtype]

    def manifests(self, kind: str) -> list[Resource]:
        return [
            r for r in self.resources("kubernetes_manifest") if r.body.get("manifest", {}).get("kind") == kind
        ]

    def context_for(self, module: Module) -> Context:
        if module is self.root:
            return Context(self.root)
        for call_name in self.root.module_calls:
            if self.child_of(self.root, call_name) is module:
                return self.call_context(call_name)
        return Context(module)

    # -- textual evaluation --------------------------------------------------------------------

    def expand(self, context: Context, value: Any, depth: int = 0) -> str:
        """Replace var/local/module references in ``value`` by what they resolve to, recursively."""
        text = as_text(value)
        if depth > 25:
            return text

        def resolve(kind: str, name: str, attr: str | None) -> str | None:
            module = context.module
            if kind == "local" and name in module.locals:
                return self.expand(context, module.locals[name], depth + 1)
            if kind == "var":
                if context.call_args is not None and name in context.call_args and context.parent:
                    return self.expand(context.parent, context.call_args[name], depth + 1)
                variable = module.variables.get(name, {})
                if "default" in variable and variable["default"] is not None:
                    return self.expand(context, variable["default"], depth + 1)
                return None
            if kind == "module" and attr and name in module.module_calls:
                child = self.child_of(module, name)
                output = child.outputs.get(attr)
                if output is None:
                    return None
                child_context = Context(child, module.module_calls[name], context)
                return self.expand(child_context, output["value"], depth + 1)
            return None

        def replace_interpolation(match: re.Match[str]) -> str:
            parts = match.group(1).split(".")
            resolved = resolve(parts[0], parts[1], parts[2] if len(parts) > 2 else None)
            return match.group(0) if resolved is None else resolved

        def replace_reference(match: re.Match[str]) -> str:
            resolved = resolve(match.group(1), match.group(2), match.group(3))
            return match.group(0) if resolved is None else resolved

        text = _SINGLE_REFERENCE_INTERPOLATION.sub(replace_interpolation, text)
        return _REFERENCE.sub(replace_reference, text)


def blocks(body: dict[str, Any], *path: str) -> list[dict[str, Any]]:
    """Follow nested blocks (each a list of dicts) and return every block at the end of the path."""
    current: list[dict[str, Any]] = [body]
    for key in path:
        nxt: list[dict[str, Any]] = []
        for item in current:
            value = item.get(key)
            if isinstance(value, list):
                nxt.extend(v for v in value if isinstance(v, dict))
            elif isinstance(value, dict):
                nxt.append(value)
        current = nxt
    return current


def block(body: dict[str, Any], *path: str) -> dict[str, Any]:
    found = blocks(body, *path)
    assert len(found) == 1, f"expected exactly one block at {'.'.join(path)}, found {len(found)}"
    return found[0]


def env_value(container: dict[str, Any], name: str) -> Any:
    for env in blocks(container, "env"):
        if env.get("name") == name:
            return env.get("value")
    raise AssertionError(f"container {container.get('name')} has no env {name}")


def url_host(url: str) -> str:
    """Host part of postgresql://user:pass@HOST:port/db (HOST may contain expanded expressions)."""
    after_at = url.split("@", 1)[1]
    return re.split(r":\d+/|:\$\{", after_at, maxsplit=1)[0]
