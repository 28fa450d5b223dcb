"""`memoria namespaces list | rename | merge | migrate-project`: your namespaces, and the one-time
move of a git repository's folder-name namespace (`repo:shop`) to its project identity's
(`repo:github.com/acme/shop`, see `memoria_hook_client.identity`).

`migrate-project` renames on the server (`POST /v1/namespaces/rename`): the namespace keeps its
memories, ids, links, concept graph and shares, and `memoria namespaces rename NEW OLD` undoes it.
When the new name exists already (an agent captured there before the move), it merges instead
(`POST /v1/namespaces/merge`), which no rename undoes. Either way it only says what it would do
unless given `--apply`.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from app.cli.config import settings
from app.client.api import Api
from app.client.render import console, print_json
from memoria_hook_client.namespace import former_namespaces, git_root, namespace_for_cwd, project_namespace


@click.group("namespaces")
def namespaces() -> None:
    """Your namespaces: list, rename, merge them; move a repository's old namespace to its new name.

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


@namespaces.command("merge")
@click.argument("namespace")
@click.argument("into")
@click.option("--apply", is_flag=True, help="Merge; without it, only say what would happen.")
def merge(namespace: str, into: str, apply: bool) -> None:
    """Move every memory of your NAMESPACE into your INTO, then delete NAMESPACE (dry run unless
    --apply). Live memories INTO holds already are moved as forgotten; no rename undoes a merge."""
    with Api.from_settings(settings().client) as api:
        _merge(api, namespace, into, apply)


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
    help="The namespace to move (default: repo:<folder name>, what the hooks used before, and "
    "repo:root-<commit> when a remote was added since).",
)
@click.option("--apply", is_flag=True, help="Rename (or merge); without it, only say what would happen.")
def migrate_project(project_dir: Path, old_name: str | None, apply: bool) -> None:
    """Move this repository's folder-name namespace to its project identity: a rename, or a merge
    when the new name exists already (dry run unless --apply)."""
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
    former = [name for name in ([old_name] if old_name else former_namespaces(root)) if name != new_name]
    if not former:
        out.print(escape(f"this repository has no remote or commit to name it by: it keeps {new_name}"))
        return
    with Api.from_settings(client) as api:
        counts = {ns["name"]: ns["memories"] for ns in api.json("GET", "/v1/namespaces")}
        found = [name for name in former if name in counts]
        if not found:
            out.print(
                escape(
                    f"you have no namespace {' or '.join(former)}: nothing to move; "
                    f"this repository uses {new_name}"
                )
            )
            return
        old_name, *others = found
        if others:
            out.print(escape(f"also found {', '.join(others)}: run this again afterwards to move it too"))
        if new_name in counts:
            _merge(api, old_name, new_name, apply)
            return
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


def _merge(api: Api, namespace: str, into: str, apply: bool) -> None:
    """Merge (or, without `apply`, say what a merge would do) and print the outcome."""
    body = {"namespace": namespace, "into": into, "apply": apply}
    done = api.json("POST", "/v1/namespaces/merge", json=body)
    moved, copies = done["memories"], done["duplicates"]
    already = f", {copies} of them already in {into} (moved as forgotten)" if copies else ""
    shares = f"; its {done['shares']} share(s) carried over" if done["shares"] else ""
    if not done["applied"]:
        console().print(
            escape(
                f"{into} exists already: would merge {namespace} ({moved} memories{already}) into it"
                f"{shares}; no rename undoes a merge; run again with --apply to do it"
            )
        )
        return
    console().print(escape(f"merged {namespace} into {into}: {moved} memories moved{already}{shares}"))
