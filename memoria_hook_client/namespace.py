"""Which namespace a coding agent's working directory recalls from (and `memoria remember` stores to).

Order: a configured path-prefix mapping (`MEMORIA_CLIENT__NAMESPACE_MAP`, which always wins), then
the git repository holding `cwd`, named by its project identity (`memoria_hook_client.identity`):
`repo:<normalised origin remote>` (e.g. `repo:github.com/acme/shop`), else `repo:root-<root commit>`,
else `repo:<basename of the repository root>` (the folder name, the only rule before the identity
existed), then a configured default. Never full paths: the same repository is checked out at
different paths on different machines and should share its memories. When `cwd` does not exist,
the basename of `cwd` itself stands in for the repository root, since an agent is normally started
at the repository root. `memoria namespaces migrate-project` renames a project's folder-name
namespace (`repo_namespace`) to its identity's.

This runs on the CLIENT only: the `memoria` commands (what you remember here comes back here), the
command hook (which sends the answer as `?namespace=`) and the http-hook installer (which writes it
into a project's hook URL). The server never imports it: resolving paths a client sends on the
server's filesystem would let any client probe which paths exist there. The mapping and default
come from `MEMORIA_CLIENT__NAMESPACE_MAP` / `MEMORIA_CLIENT__DEFAULT_NAMESPACE` (`ClientSettings`;
the command hook reads them here, without pydantic). It loads the standard library only, without
typing or pathlib at run time, so the command hook's start-up stays fast.
"""

from __future__ import annotations

import json
import os
import re

from memoria_hook_client.identity import project_identity, root_identity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

ENV_NAMESPACE_MAP = "MEMORIA_CLIENT__NAMESPACE_MAP"
ENV_DEFAULT_NAMESPACE = "MEMORIA_CLIENT__DEFAULT_NAMESPACE"

REPO_PREFIX = "repo:"
_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]+")
_MAX_DEPTH = 64


def repo_namespace(root: str) -> str | None:
    """`repo:<basename>` with characters the namespace rule refuses replaced by `-`: the folder-name
    namespace, the fallback of `project_namespace` (and every repository's name before it)."""
    base = _UNSAFE.sub("-", os.path.basename(os.path.normpath(root))).strip("-.")
    return f"{REPO_PREFIX}{base[:190]}" if base else None


def project_namespace(root: str, env: Mapping[str, str] | None = None) -> str | None:
    """`repo:<identity>` of the git checkout at `root`, else its folder-name namespace. `env` locates
    the state directory caching root commits (default: this process's environment)."""
    identity = project_identity(root, os.environ if env is None else env)
    return f"{REPO_PREFIX}{identity}" if identity else repo_namespace(root)


def former_namespaces(root: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The names the checkout at `root` had before its `project_namespace`, newest rule last: its
    folder name (every repository's before project identities) and, when a remote names it now,
    its root commit's (before the remote was added)."""
    current = project_namespace(root, env)
    root_commit = root_identity(root, os.environ if env is None else env)
    names = [repo_namespace(root), f"{REPO_PREFIX}{root_commit}" if root_commit else None]
    return [name for name in dict.fromkeys(names) if name and name != current]


def git_root(cwd: str) -> str | None:
    """The nearest directory at or above `cwd` holding `.git` (a directory, or a file for worktrees)."""
    path = os.path.abspath(cwd)
    for _ in range(_MAX_DEPTH):
        if os.path.exists(os.path.join(path, ".git")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent
    return None


def _mapped(cwd: str, mapping: Mapping[str, str]) -> str | None:
    """The namespace of the longest mapped prefix that contains `cwd`, whole path components only."""
    best: tuple[int, str] | None = None
    for prefix, name in mapping.items():
        root = os.path.normpath(os.path.expanduser(prefix))
        if (cwd == root or cwd.startswith(root.rstrip(os.sep) + os.sep)) and (
            best is None or len(root) > best[0]
        ):
            best = (len(root), name)
    return best[1] if best else None


def namespace_for_cwd(
    cwd: str | None,
    mapping: Mapping[str, str] | None = None,
    default: str | None = None,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """The namespace for `cwd`: mapped prefix, else the git repository's `project_namespace`, else
    `default`."""
    if not cwd or "\x00" in cwd:
        return default
    cwd = os.path.normpath(os.path.expanduser(cwd))
    mapped = _mapped(cwd, mapping or {})
    if mapped:
        return mapped
    if not os.path.isdir(cwd):
        return repo_namespace(cwd) or default
    root = git_root(cwd)
    return (project_namespace(root, env) if root else None) or default


def mapping_from_environment(env: Mapping[str, str]) -> dict[str, str]:
    """`MEMORIA_CLIENT__NAMESPACE_MAP` (a JSON object of path prefix -> namespace), `{}` when unset;
    ValueError names what is wrong with it."""
    raw = env.get(ENV_NAMESPACE_MAP, "").strip()
    if not raw:
        return {}
    try:
        mapping = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"{ENV_NAMESPACE_MAP} is not JSON: {exc}") from None
    if not isinstance(mapping, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()
    ):
        raise ValueError(f'{ENV_NAMESPACE_MAP} must be a JSON object of strings, {{"/path": "namespace"}}')
    return mapping


def default_from_environment(env: Mapping[str, str]) -> str | None:
    """`MEMORIA_CLIENT__DEFAULT_NAMESPACE`, None when unset or blank."""
    return env.get(ENV_DEFAULT_NAMESPACE, "").strip() or None


def event_namespace(event: Mapping[str, object], env: Mapping[str, str], notes: list[str]) -> str | None:
    """The namespace of a hook event's `cwd` on this machine (None: the server's default); a bad
    `MEMORIA_CLIENT__NAMESPACE_MAP` is noted and skipped, so the repository's namespace still works."""
    try:
        mapping = mapping_from_environment(env)
    except ValueError as exc:
        notes.append(str(exc))
        mapping = {}
    cwd = event.get("cwd")
    return namespace_for_cwd(
        cwd if isinstance(cwd, str) else None, mapping, default_from_environment(env), env
    )
