"""The client's environment read without pydantic: variable names, defaults, XDG paths and the key file.

Two readers need the same answers: `ClientSettings` (pydantic, behind the `memoria` commands) and the
command hook, which Claude Code spawns on every prompt and which therefore loads the standard library
only. One implementation here keeps them from drifting apart. For the hook's sake this module imports
no pathlib or typing at run time (their imports would slow every hook's start).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# The `MEMORIA_CLIENT__*` names of `ClientSettings`, so the server (which refuses unknown `MEMORIA_*`
# variables) and the hook can share one shell environment.
ENV_URL = "MEMORIA_CLIENT__URL"
ENV_API_KEY = "MEMORIA_CLIENT__API_KEY"
ENV_KEY_FILE = "MEMORIA_CLIENT__KEY_FILE"
ENV_HOOK_BUDGET = "MEMORIA_CLIENT__HOOK_BUDGET_S"
ENV_HOOK_LOG = "MEMORIA_CLIENT__HOOK_LOG"
ENV_FLUSH_WAIT = "MEMORIA_CLIENT__FLUSH_WAIT_S"

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_HOOK_BUDGET_S = 1.5
#: How long the waiting flusher (`memoria_hook_client.flush_wait`) keeps trying a server that is down.
DEFAULT_FLUSH_WAIT_S = 1800.0
MAX_FLUSH_WAIT_S = 86400.0


class KeyFileError(Exception):
    """No usable key file; the message says what to do about it."""


def _xdg(variable: str, fallback: str) -> str:
    """An XDG base directory: the variable when set to an absolute path (the spec's rule), else ~/fallback."""
    value = os.environ.get(variable)
    return value if value and os.path.isabs(value) else os.path.join(os.path.expanduser("~"), fallback)


def default_key_file() -> str:
    """`$XDG_CONFIG_HOME/memoria/key`, else `~/.config/memoria/key` (the same on every OS, on purpose)."""
    return os.path.join(_xdg("XDG_CONFIG_HOME", ".config"), "memoria", "key")


def default_hook_log() -> str:
    """`$XDG_CACHE_HOME/memoria/hook.log`, else `~/.cache/memoria/hook.log`."""
    return os.path.join(_xdg("XDG_CACHE_HOME", ".cache"), "memoria", "hook.log")


def read_key_file(path: str | os.PathLike[str]) -> str:
    """The key stored in `path`, refused when other users could read it (as ssh does with keys)."""
    try:
        info = os.stat(path)
        if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise KeyFileError(f"key file {path} is readable by other users; run `chmod 600 {path}`")
        with open(path, encoding="utf-8") as file:
            key = file.read().strip()
    except FileNotFoundError as exc:
        raise KeyFileError(f"no API key: set {ENV_API_KEY} or store one in {path}") from exc
    except OSError as exc:
        raise KeyFileError(f"cannot read key file {path}: {exc.strerror or exc}") from exc
    if not key:
        raise KeyFileError(f"key file {path} is empty")
    return key


def write_key_file(path: str | os.PathLike[str], key: str) -> None:
    """Store `key` in `path`, readable by its owner only: a new file is created 600 (never readable by
    others, not even briefly), an existing one is tightened to 600; a missing directory is made 700."""
    os.makedirs(os.path.dirname(os.fspath(path)) or ".", mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(key + "\n")
    os.chmod(path, 0o600)  # O_CREAT leaves an existing file's mode as it was


def key_from_environment(env: Mapping[str, str]) -> str:
    """`MEMORIA_CLIENT__API_KEY`, else the key file (`MEMORIA_CLIENT__KEY_FILE` or the XDG default)."""
    key = env.get(ENV_API_KEY, "").strip()
    if key:
        return key
    return read_key_file(
        os.path.expanduser(env[ENV_KEY_FILE]) if env.get(ENV_KEY_FILE) else default_key_file()
    )


def hook_log_from_environment(env: Mapping[str, str]) -> str:
    """`MEMORIA_CLIENT__HOOK_LOG`, else the XDG default."""
    return os.path.expanduser(env[ENV_HOOK_LOG]) if env.get(ENV_HOOK_LOG) else default_hook_log()
