"""Credentials in memories: found, replaced by typed placeholders, and (with a key) sealed at rest.

The write path calls `redact` (or `redact_all` for several fields of one memory), stores the
redacted text, and hands `Redacted.secrets` to `Vault.seal`, whose rows `insert_sealed` writes in
the same transaction as the memory. The owner-only read opens them with `read_sealed` + `Vault.open`.
Without a configured key `Vault.seal` returns no rows: the originals are kept nowhere.
"""

from app.secrets.catalog import warm as warm_secret_catalog
from app.secrets.detect import KINDS, Detector, Span
from app.secrets.redact import (
    DEFAULT_DETECTOR,
    Finding,
    Redacted,
    Secret,
    placeholder,
    placeholders_in,
    redact,
    redact_all,
    secrets_of,
)
from app.secrets.rotate import RotationReport, rotate_keys
from app.secrets.settings import SecretSettings
from app.secrets.storage import count_by_key, insert_sealed, keep_sealed, read_sealed
from app.secrets.vault import (
    NoActiveKey,
    SealedSecret,
    SecretsError,
    TamperedSecret,
    UnknownKey,
    Vault,
)

__all__ = [
    "DEFAULT_DETECTOR",
    "KINDS",
    "Detector",
    "Finding",
    "NoActiveKey",
    "Redacted",
    "RotationReport",
    "SealedSecret",
    "Secret",
    "SecretSettings",
    "SecretsError",
    "Span",
    "TamperedSecret",
    "UnknownKey",
    "Vault",
    "count_by_key",
    "insert_sealed",
    "keep_sealed",
    "placeholder",
    "placeholders_in",
    "read_sealed",
    "redact",
    "redact_all",
    "rotate_keys",
    "secrets_of",
    "warm_secret_catalog",
]
