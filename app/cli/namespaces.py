"""`memoria namespaces list | rename | migrate-project`: your namespaces, and the one-time move of a
git repository's folder-name namespace (`repo:shop`) to its project identity's
(`repo:github.com/acme/shop`, see `memoria_hook_client.identity`).

`migrate-project` is a rename on the server (`POST /v1/namespaces/rename`): the namespace keeps its
memories, ids, links, concept graph and shares, and `memoria namespaces rename NEW OLD` undoes it.
It shows what it would do unless given `--apply`. It never merges: when the new name exists already
(an agent captured there since the upgrade), it stops and prints the commands that move the few new
memories into the renamed namespace.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from app.cli.config import settings
from app.client.api import Api
from app.client.render import console, print_json
from memoria_hook_client.namespace import git_root, namespace_for_cwd, project_namespace, repo_namespace


@click.group("namespaces")
def namespaces() -> None:
    """Your namespaces: list them, rename one, move a repository's old namespace to its new name.

    A git repository's namespace is `repo:` and its origin remote without scheme, credentials, port
    and `.git`, lower-cased (`repo:github.com/acme/shop`); without a remote, its root commit
    (`repo:root-<12 hex>`); without commits, its folder name (`repo:shop`), which was every
    repository's namespace before. `MEMORIA_CLIENT__NAMESPACE_MAP` still wins over all three.
    """


@namespaces.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the raw API answer.")
def list_namespaces(as_json: bool) -> None:
    """Your namespaces with their memory counts."""
    with Api.from_settings(settings().client) as api:
        found = api.json("GET", "/v1/namespaces")
    if as_json:
        print_json(found)
        return
    for namespace in found:
        console().print(f"{namespace['memories']:>8}  {escape(namespace['name'])}")


@namespaces.command("rename")
@click.argument("namespace")
@click.argument("new_name")
def rename(namespace: str, new_name: str) -> None:
    """Rename your NAMESPACE to NEW_NAME, which must not exist yet (renaming back undoes it)."""
    with Api.from_settings(settings().client) as api:
        done = _rename(api, namespace, new_name)
    _print_renamed(done)


@namespaces.command("migrate-project")
@click.option(
    "--project-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path,
    show_default="current directory",
    help="A directory inside the git repository.",
)
@click.option(
    "--from",
    "old_name",
    metavar="NAMESPACE",
    help="The namespace to move (default: repo:<folder name>, what the hooks used before).",
)
@click.option("--apply", is_flag=True, help="Rename; without it, only say what would happen.")
def migrate_project(project_dir: Path, old_name: str | None, apply: bool) -> None:
    """Move this repository's folder-name namespace to its project identity (dry run unless --apply)."""
    client = settings().client
    directory = str(project_dir.expanduser().absolute())
    root = git_root(directory)
    if root is None:
        raise click.ClickException(f"{directory} is not inside a git repository")
    new_name = project_namespace(root)
    if new_name is None:  # a root without a usable name, e.g. the file system's root
        raise click.ClickException(f"{root} gives no namespace name")
    in_use = namespace_for_cwd(root, client.namespace_map, client.default_namespace)
    out = console()
    if in_use != new_name:
        out.print(
            escape(
                f"MEMORIA_CLIENT__NAMESPACE_MAP names this repository's namespace ({in_use}): nothing to move"
            )
        )
        return
    old_name = old_name or repo_namespace(root)
    if old_name is None or old_name == new_name:
        out.print(escape(f"this repository has no remote or commit to name it by: it keeps {new_name}"))
        return
    with Api.from_settings(client) as api:
        counts = {ns["name"]: ns["memories"] for ns in api.json("GET", "/v1/namespaces")}
        if old_name not in counts:
            out.print(
                escape(f"you have no namespace {old_name}: nothing to move; this repository uses {new_name}")
            )
            return
        if new_name in counts:
            raise click.ClickException(_both_exist(old_name, new_name, counts[new_name]))
        if not apply:
            out.print(
                escape(
                    f"would rename {old_name} ({counts[old_name]} memories) to {new_name}; "
                    "run again with --apply to do it"
                )
            )
            return
        done = _rename(api, old_name, new_name)
    _print_renamed(done)


def _rename(api: Api, namespace: str, new_name: str) -> dict[str, object]:
    body = {"namespace": namespace, "new_name": new_name}
    answer: dict[str, object] = api.json("POST", "/v1/namespaces/rename", json=body)
    return answer


def _print_renamed(done: dict[str, object]) -> None:
    shares = int(str(done["shares"]))
    shared = (
        f"; the {shares} user(s) it is shared with now call it @you/{done['namespace']}" if shares else ""
    )
    console().print(
        escape(
            f"renamed {done['previous']} to {done['namespace']} ({done['memories']} memories{shared}); "
            f"undo: memoria namespaces rename {done['namespace']} {done['previous']}"
        )
    )


def _both_exist(old_name: str, new_name: str, new_count: int) -> str:
    """Why nothing was renamed, and the commands that merge by hand: set the new namespace (what
    was captured since the upgrade) aside, rename the old one, then copy the set-aside memories in."""
    aside = f"{new_name}-since-upgrade"[:200]
    return (
        f"{new_name} exists already ({new_count} memories, stored since the namespace rule changed), "
        f"so {old_name} cannot be renamed to it (a rename never merges). To merge by hand:\n"
        f"  memoria namespaces rename {new_name} {aside}\n"
        f"  memoria namespaces migrate-project --apply\n"
        f"  memoria export -n {aside} --include-sensitive -o since-upgrade.jsonl\n"
        f"  memoria import since-upgrade.jsonl -n {new_name}\n"
        f"then forget what is left in {aside} (`memoria list -n {aside}`)."
    )
