"""Credential redaction and the keys that encrypt the redacted originals at rest.

With no key configured (the default) a detected credential is replaced by its placeholder and the
original is kept nowhere: safe by default, nothing to leak. With keys, each original is sealed with
AES-256-GCM under `active_key_id`; older keys stay listed only so that what they sealed can still be
opened, until `memoria secrets rotate-key` has moved every row to the active one.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Self

from pydantic import Field, SecretStr, field_validator, model_validator

from app.core.settings import Section

KEY_BYTES = 32
"""AES-256: a key is 32 random bytes (`memoria secrets new-key` prints one)."""

_KEY_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def decode_key(key_id: str, value: str) -> bytes:
    """The raw bytes of a base64 key; ValueError naming the key id (never the key) when it is not one."""
    try:
        raw = base64.b64decode(value.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"key {key_id!r} is not base64") from None
    if len(raw) != KEY_BYTES:
        raise ValueError(f"key {key_id!r} is {len(raw)} bytes once decoded; AES-256 needs {KEY_BYTES}")
    return raw


class SecretSettings(Section):
    redact: bool = Field(
        default=True,
        description="replace credentials found in stored memories by typed placeholders "
        "([secret:github-token#1]); false stores text as given",
    )
    keys: dict[str, SecretStr] = Field(
        default_factory=dict,
        description='JSON map of key id to a base64 32-byte key, e.g. {"2026-01": "…"}; empty = the '
        "originals of redacted credentials are kept nowhere",
    )
    active_key_id: str | None = Field(
        default=None,
        description="the key new originals are sealed under and `memoria secrets rotate-key` moves "
        "every stored one to (default: the only key, when exactly one is configured)",
    )
    rotate_batch_size: int = Field(
        default=500, ge=1, le=10_000, description="sealed originals re-encrypted per transaction"
    )

    @field_validator("keys")
    @classmethod
    def _keys_are_aes256(cls, keys: dict[str, SecretStr]) -> dict[str, SecretStr]:
        """A bad key must stop the start, not the first store that needs it."""
        for key_id, value in keys.items():
            if not _KEY_ID.match(key_id):
                raise ValueError(f"key id {key_id[:70]!r} must be 1-64 characters of A-Z a-z 0-9 . _ -")
            decode_key(key_id, value.get_secret_value())
        return keys

    @model_validator(mode="after")
    def _active_key_is_known(self) -> Self:
        if self.active_key_id is None and len(self.keys) > 1:
            raise ValueError("with several keys, set MEMORIA_SECRETS__ACTIVE_KEY_ID to the one to seal with")
        if self.active_key_id is not None and self.active_key_id not in self.keys:
            raise ValueError(f"active key id {self.active_key_id!r} is not in MEMORIA_SECRETS__KEYS")
        return self

    @property
    def active_key(self) -> str | None:
        """The id new originals are sealed under: the configured one, else the only key, else None."""
        if self.active_key_id is not None:
            return self.active_key_id
        return next(iter(self.keys), None)

    def raw_keys(self) -> dict[str, bytes]:
        """Key id → key bytes, decoded (validated on load, so this cannot fail)."""
        return {key_id: decode_key(key_id, value.get_secret_value()) for key_id, value in self.keys.items()}
