"""A git checkout's project identity: the same name on every clone of a repository, and different
names for two repositories that only share a folder name.

The name is, in order:

1. the checkout's `origin` remote, normalised (`remote_identity`): `git@github.com:Acme/Foo.git`,
   `ssh://git@github.com/acme/foo`, `https://user:token@github.com:443/acme/foo.git/` all become
   `github.com/acme/foo`. Credentials, ports and the scheme are dropped, `.git` and slashes at the
   ends too, and the whole name is lower-cased: the big forges (GitHub, GitLab, Bitbucket, Azure
   DevOps) treat owner and repository names case-insensitively, so `Acme/Foo` and `acme/foo` are
   one repository there. A remote that is a local path (`/srv/git/foo`, `file://...`) names no
   project (it is different on each machine), so the next rule applies;
2. the repository's root commit, `root-<12 hex digits>`: every clone of a history shares it;
3. nothing (None): the caller falls back to the folder name, the rule before this one existed.

This runs in the command hook on every prompt, so it costs a few small file reads: the git config is
parsed here (the standard library has no parser for git's config format, and the hook client loads
the standard library only), never by spawning `git`. Only the root commit needs `git` (walking the
object store by hand is not worth it): it is asked once per repository, and the answer is kept in
the client's state directory (`projects/`), keyed by the repository's git directory. A repository
without commits has no root commit; that is read from its refs, so asking costs no process either.

Linked worktrees (`git worktree add`) share their main checkout's config and history, so they get
its name. A submodule has its own `.git` directory (under the superproject's `.git/modules/`) and
its own `origin`, so it is a project of its own.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

ROOT_PREFIX = "root-"
#: Hex digits of the root commit kept in its name: unique among any one user's repositories.
ROOT_DIGITS = 12
#: The longest identity kept; with `repo:` it stays within a namespace name's 200 characters.
MAX_IDENTITY = 190
PROJECTS_DIR = "projects"
#: How long the one `git rev-list` for a root commit may take before the folder name is used instead.
GIT_TIMEOUT_S = 2.0

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)(.*)", re.DOTALL)
# scp-like `[user@]host:path` (git reads it so when no slash comes before the first colon)
_SCP = re.compile(r"(?:[^@/]*@)?([^:/]+):(.*)", re.DOTALL)
_UNSAFE = re.compile(r"[^a-z0-9._/@+-]+")
_HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\](.*)', re.DOTALL)
_KEY = re.compile(r"([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?", re.DOTALL)
#: Hosts that are another door to the same forge (ssh over port 443, `www.`).
_SAME_HOST = {
    "ssh.github.com": "github.com",
    "www.github.com": "github.com",
    "altssh.gitlab.com": "gitlab.com",
    "altssh.bitbucket.org": "bitbucket.org",
    "ssh.dev.azure.com": "dev.azure.com",
    "vs-ssh.visualstudio.com": "visualstudio.com",
}


def git_dirs(root: str) -> tuple[str, str] | None:
    """(git directory, common directory) of the checkout at `root`: `.git` itself for a plain clone;
    for a worktree or submodule `.git` is a file naming the git directory, and a worktree's git
    directory names the main repository's (`commondir`), which holds the config and the objects."""
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        git_dir = dot
    else:
        pointer = _read(dot)
        if pointer is None or not pointer.startswith("gitdir:"):
            return None
        git_dir = os.path.normpath(os.path.join(root, pointer[len("gitdir:") :].strip()))
    common = _read(os.path.join(git_dir, "commondir"))
    if common and common.strip():
        return git_dir, os.path.normpath(os.path.join(git_dir, common.strip()))
    return git_dir, git_dir


def project_identity(root: str, env: Mapping[str, str]) -> str | None:
    """The identity of the checkout at `root` (see the module's docstring), None when it has none."""
    dirs = git_dirs(root)
    if dirs is None:
        return None
    git_dir, common = dirs
    config = _read(os.path.join(common, "config"))
    url = origin_url(config) if config else None
    named = remote_identity(url) if url else None
    if named:
        return named
    root_commit = cached_root_commit(git_dir, common, env)
    return f"{ROOT_PREFIX}{root_commit[:ROOT_DIGITS]}" if root_commit else None


def root_identity(root: str, env: Mapping[str, str]) -> str | None:
    """`root-<12 hex>` of the checkout at `root` whether or not it has a remote (what it was named
    before one was added), None without commits."""
    dirs = git_dirs(root)
    root_commit = cached_root_commit(*dirs, env) if dirs else None
    return f"{ROOT_PREFIX}{root_commit[:ROOT_DIGITS]}" if root_commit else None


def origin_url(config: str) -> str | None:
    """The first `url` of `[remote "origin"]` in git config text (what `git fetch` uses), else None.

    Section names and keys are case-insensitive, the remote's name is not; values may be quoted,
    escaped and followed by `#`/`;` comments. `include`d files are not followed: a remote is
    written to the repository's own config by `git clone` and `git remote add`."""
    in_origin = False
    for raw in config.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = _SECTION.fullmatch(line)
            if header is None:
                in_origin = False
                continue
            section, sub, rest = header[1].lower(), header[2], header[3].strip()
            if sub is None and "." in section:  # the old `[remote.origin]` spelling
                section, _, sub = section.partition(".")
            in_origin = section == "remote" and (sub or "").replace('\\"', '"') == "origin"
            if not in_origin or not rest or rest[0] in "#;":
                continue
            line = rest  # a key may follow the header on the same line
        if not in_origin:
            continue
        pair = _KEY.fullmatch(line)
        if pair is not None and pair[1].lower() == "url" and pair[2] is not None:
            value = _config_value(pair[2])
            if value:
                return value
    return None


def _config_value(raw: str) -> str:
    """A git config value: quotes removed, `\\"` `\\\\` `\\t` `\\n` unescaped, a comment outside
    quotes cut off, surrounding blanks outside quotes dropped."""
    out: list[str] = []
    quoted = False
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw):
            nxt = raw[index + 1]
            out.append({"t": "\t", "n": "\n", "b": "\b"}.get(nxt, nxt))
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()


def remote_identity(url: str) -> str | None:
    """`host/path` of a remote URL, normalised so that every spelling of one repository agrees
    (see the module's docstring); None for a local path or a URL without a host."""
    url = url.strip()
    scheme = _SCHEME.fullmatch(url)
    if scheme is not None:
        if scheme[1].lower() == "file":
            return None
        host, path = _host(scheme[2]), scheme[3]
    else:
        if url.startswith(("/", ".", "~")) or re.match(r"[A-Za-z]:[\\/]", url):
            return None  # a local path (or a Windows drive)
        scp = _SCP.fullmatch(url)
        if scp is None:
            return None
        host, path = scp[1].lower(), scp[2]
    host = host.rstrip(".")
    if not host:
        return None
    segments = [part for part in path.replace("\\", "/").lower().split("/") if part and part != "."]
    if segments and segments[-1].endswith(".git"):
        segments[-1] = segments[-1][: -len(".git")]
    segments = [part for part in segments if part]
    host = _SAME_HOST.get(host, host)
    if host == "dev.azure.com" and segments[:1] == ["v3"]:
        segments = segments[1:]  # ssh's v3/org/project/repo is https's org/project/_git/repo
    if host.endswith(("dev.azure.com", "visualstudio.com")):
        segments = [part for part in segments if part != "_git"]
    name = _UNSAFE.sub("-", "/".join([host, *segments])).strip("-./")
    return name[:MAX_IDENTITY].rstrip("-./") or None


def _host(authority: str) -> str:
    """The host of a URL's authority, without `user:password@` and `:port`, lower-cased."""
    host = authority.rpartition("@")[2]
    if host.startswith("["):  # [IPv6]:port
        return host[1:].partition("]")[0].lower()
    return host.partition(":")[0].lower()


def has_commits(git_dir: str, common: str) -> bool:
    """Whether HEAD names a commit, read from the refs: a detached HEAD, a loose ref or a packed one.
    A ref store this does not read (reftable) counts as having commits, so `git` is asked."""
    head = (_read(os.path.join(git_dir, "HEAD")) or "").strip()
    if not head.startswith("ref:"):
        return _HEX.fullmatch(head) is not None
    if os.path.isdir(os.path.join(common, "reftable")):
        return True
    ref = head[len("ref:") :].strip()
    if os.path.isfile(os.path.join(git_dir, ref)) or os.path.isfile(os.path.join(common, ref)):
        return True
    packed = _read(os.path.join(common, "packed-refs")) or ""
    return any(line.endswith(" " + ref) for line in packed.splitlines())


def cached_root_commit(git_dir: str, common: str, env: Mapping[str, str]) -> str | None:
    """The repository's root commit, from the state directory when asked before, else from one
    `git rev-list` (then kept); None when there are no commits or `git` cannot say."""
    try:
        inode = os.stat(common).st_ino
    except OSError:
        return None
    path = root_cache_path(env, common)
    from memoria_hook_client.state import read_json, write_json_atomic

    cached = read_json(path, None)
    if isinstance(cached, dict) and cached.get("git_dir") == common and cached.get("inode") == inode:
        root = cached.get("root")
        if isinstance(root, str) and _HEX.fullmatch(root):
            return root
    if not has_commits(git_dir, common):
        return None
    root = _ask_git_root(git_dir)
    if root is None:
        return None
    try:
        write_json_atomic(path, {"git_dir": common, "inode": inode, "root": root})
    except OSError:
        return root  # asked again next time: slower, not wrong (contextlib costs start-up)
    return root


def root_cache_path(env: Mapping[str, str], common: str) -> str:
    """`projects/<folder>-<crc32 of the git directory>.json` in the client's state directory; the
    record holds the git directory too, so two paths sharing a checksum only miss the cache."""
    import zlib

    from memoria_hook_client.state import state_dir

    folder = os.path.basename(os.path.dirname(common.rstrip(os.sep))) or "repo"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in folder).strip(".")[:60] or "repo"
    checksum = zlib.crc32(os.fsencode(common)) & 0xFFFFFFFF
    return os.path.join(state_dir(env), PROJECTS_DIR, f"{safe}-{checksum:08x}.json")


def _ask_git_root(git_dir: str) -> str | None:
    """The oldest root commit of HEAD's history (`rev-list` lists newest first), None on any failure."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "--git-dir", git_dir, "rev-list", "--max-parents=0", "HEAD"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    roots = done.stdout.split() if done.returncode == 0 else []
    return roots[-1] if roots and _HEX.fullmatch(roots[-1]) else None


def _read(path: str) -> str | None:
    """A small text file's content, None when it is missing or unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return None
