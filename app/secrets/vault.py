"""Seal the originals of redacted credentials with AES-256-GCM, and open them again.

Each original is encrypted under the active key with a fresh random 96-bit nonce; the key id is kept
beside the ciphertext so older keys can still open what they sealed until a rotation re-seals it.
The associated data binds a ciphertext to its place, memory id, ordinal and kind: a row copied into
another memory (or renumbered, or relabelled) fails authentication instead of disclosing a secret
to the owner of that other memory. Random nonces are safe for about 2^32 seals per key; rotating to
a new key resets that count.

Without a key, `seal` keeps nothing: redaction alone is the default and it is safe.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from app.secrets.redact import Secret
from app.secrets.settings import SecretSettings

NONCE_BYTES = 12
_AAD_PREFIX = b"memoria/memory-secret/v1\x00"


class SecretsError(Exception):
    """A sealed original cannot be opened or re-sealed; the message says which and why."""


class UnknownKey(SecretsError):
    """The key an original was sealed under is not configured (removed too early, or a typo)."""


class TamperedSecret(SecretsError):
    """A ciphertext failed authentication: altered, or not sealed for this memory and ordinal."""


class NoActiveKey(SecretsError):
    """An operation needs a key to seal with and none is configured."""


class Sealable(Protocol):
    """What `Vault.seal` needs of a credential: a `Secret` or a redaction `Finding`."""

    @property
    def number(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def original(self) -> str: ...


@dataclass(frozen=True, slots=True)
class SealedSecret:
    """One row of `memory_secrets`: an original, encrypted, and what is needed to open it."""

    memory_id: int
    ordinal: int
    kind: str
    key_id: str
    nonce: bytes
    ciphertext: bytes


def associated_data(memory_id: int, ordinal: int, kind: str) -> bytes:
    """What a ciphertext is bound to; authenticated, not encrypted."""
    return _AAD_PREFIX + f"{memory_id}\x00{ordinal}\x00{kind}".encode()


class Vault:
    """The configured keys, each ready as an AES-GCM cipher; immutable, so one serves every request."""

    def __init__(self, keys: Mapping[str, bytes], active_key_id: str | None) -> None:
        if active_key_id is not None and active_key_id not in keys:
            raise NoActiveKey(f"active key id {active_key_id!r} is not among the keys")
        self._ciphers = {key_id: AESGCM(key) for key_id, key in keys.items()}
        self._active = active_key_id

    @classmethod
    def from_settings(cls, settings: SecretSettings) -> Vault:
        return cls(settings.raw_keys(), settings.active_key)

    @property
    def active_key_id(self) -> str | None:
        return self._active

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(self._ciphers)

    @property
    def keeps_originals(self) -> bool:
        """Whether `seal` stores anything: only with a key configured."""
        return self._active is not None

    def seal(self, memory_id: int, secrets: Iterable[Sealable]) -> list[SealedSecret]:
        """One row per distinct number (a finding that repeats a number is the same credential),
        sealed under the active key; no rows at all without a key."""
        if self._active is None:
            return []
        distinct: dict[int, Sealable] = {}
        for item in secrets:
            distinct.setdefault(item.number, item)
        return [
            self._seal(memory_id, number, item.kind, item.original)
            for number, item in sorted(distinct.items())
        ]

    def _seal(self, memory_id: int, ordinal: int, kind: str, original: str) -> SealedSecret:
        if self._active is None:
            raise NoActiveKey("no MEMORIA_SECRETS__KEYS configured: there is no key to seal with")
        nonce = os.urandom(NONCE_BYTES)
        ciphertext = self._ciphers[self._active].encrypt(
            nonce, original.encode("utf-8"), associated_data(memory_id, ordinal, kind)
        )
        return SealedSecret(memory_id, ordinal, kind, self._active, nonce, ciphertext)

    def open(self, rows: Sequence[SealedSecret]) -> list[Secret]:
        """The originals of `rows`, in their order. UnknownKey when a row's key is not configured,
        TamperedSecret when a row does not authenticate (changed, or moved from another memory)."""
        return [Secret(row.ordinal, row.kind, self._open(row)) for row in rows]

    def _open(self, row: SealedSecret) -> str:
        cipher = self._ciphers.get(row.key_id)
        where = f"secret #{row.ordinal} of memory {row.memory_id}"
        if cipher is None:
            configured = ", ".join(repr(key_id) for key_id in self._ciphers) or "none"
            raise UnknownKey(
                f"{where} is sealed under key {row.key_id!r}, which MEMORIA_SECRETS__KEYS does not hold "
                f"(configured: {configured})"
            )
        try:
            plain = cipher.decrypt(
                row.nonce, row.ciphertext, associated_data(row.memory_id, row.ordinal, row.kind)
            )
        except InvalidTag:
            raise TamperedSecret(
                f"{where} does not authenticate under key {row.key_id!r}: it was altered or belongs to "
                "another memory"
            ) from None
        return plain.decode("utf-8")

    def reseal(self, row: SealedSecret) -> SealedSecret:
        """`row` opened and sealed again under the active key (same place, new nonce)."""
        if self._active is None:
            raise NoActiveKey("no MEMORIA_SECRETS__KEYS configured: there is no key to seal with")
        return self._seal(row.memory_id, row.ordinal, row.kind, self._open(row))
