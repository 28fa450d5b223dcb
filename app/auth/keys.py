"""API key format and hashing. Keys are 256-bit random tokens; only their SHA-256 is stored.

A fast hash is right here (unlike passwords): the secret has full entropy, so it cannot be
guessed, and the lookup must stay cheap because it runs on every request.
"""

from __future__ import annotations

import hashlib
import secrets

KEY_PREFIX = "mem_"


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def display_prefix(key: str) -> str:
    """The part of a key that is safe to show in listings."""
    return key[: len(KEY_PREFIX) + 6]
