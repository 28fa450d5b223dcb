"""Sealing originals with AES-256-GCM: round trip, authentication of place and content, keys."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
from pathlib import Path

import pytest

from app.secrets import (
    NoActiveKey,
    SealedSecret,
    Secret,
    SecretSettings,
    TamperedSecret,
    UnknownKey,
    Vault,
    redact,
)
from app.settings import InvalidSettings, Settings, load_settings

GITHUB_LIKE = "ghp_" + "Zq8" * 12  # the shape of a token; the vault does not care what it seals


def _key() -> bytes:
    return os.urandom(32)


@pytest.fixture
def vault() -> Vault:
    return Vault({"k1": _key()}, "k1")


def _secrets() -> list[Secret]:
    return [Secret(1, "github-token", GITHUB_LIKE), Secret(2, "password", "hunter2-Xk9#")]


def test_sealed_originals_open_to_what_was_sealed(vault: Vault) -> None:
    rows = vault.seal(17, _secrets())
    assert [(r.memory_id, r.ordinal, r.kind, r.key_id) for r in rows] == [
        (17, 1, "github-token", "k1"),
        (17, 2, "password", "k1"),
    ]
    assert all(GITHUB_LIKE.encode() not in r.ciphertext for r in rows)
    assert vault.open(rows) == _secrets()


def test_findings_seal_once_per_number(vault: Vault) -> None:
    token = "ghp_" + "".join("aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"[i] for i in range(36))
    redacted = redact(f"{token} and {token}")
    assert len(redacted.findings) == 2
    rows = vault.seal(5, redacted.findings)
    assert [r.ordinal for r in rows] == [1]
    assert vault.open(rows) == [Secret(1, "github-token", token)]


def test_every_seal_uses_a_fresh_nonce(vault: Vault) -> None:
    first, second = vault.seal(1, _secrets()[:1])[0], vault.seal(1, _secrets()[:1])[0]
    assert first.nonce != second.nonce
    assert first.ciphertext != second.ciphertext


def test_a_changed_ciphertext_is_refused(vault: Vault) -> None:
    row = vault.seal(3, _secrets())[0]
    flipped = bytes([row.ciphertext[0] ^ 1]) + row.ciphertext[1:]
    with pytest.raises(TamperedSecret, match="secret #1 of memory 3"):
        vault.open([dataclasses.replace(row, ciphertext=flipped)])


@pytest.mark.parametrize(
    "moved", [{"memory_id": 4}, {"ordinal": 2}, {"kind": "password"}], ids=["memory", "ordinal", "kind"]
)
def test_a_row_moved_to_another_memory_or_place_is_refused(vault: Vault, moved: dict[str, object]) -> None:
    row = vault.seal(3, _secrets())[0]
    with pytest.raises(TamperedSecret, match="belongs to another memory"):
        vault.open([dataclasses.replace(row, **moved)])  # type: ignore[arg-type]


def test_a_row_under_an_unconfigured_key_is_refused_naming_the_key() -> None:
    old = Vault({"2025": _key()}, "2025").seal(9, _secrets())
    with pytest.raises(
        UnknownKey, match=r"key '2025', which MEMORIA_SECRETS__KEYS does not hold \(configured: 'k1'\)"
    ):
        Vault({"k1": _key()}, "k1").open(old)


def test_the_same_key_id_with_other_key_bytes_does_not_open() -> None:
    rows = Vault({"k1": _key()}, "k1").seal(9, _secrets())
    with pytest.raises(TamperedSecret):
        Vault({"k1": _key()}, "k1").open(rows)


def test_without_a_key_nothing_is_kept() -> None:
    vault = Vault.from_settings(SecretSettings())
    assert not vault.keeps_originals
    assert vault.seal(1, _secrets()) == []
    with pytest.raises(NoActiveKey):
        vault.reseal(SealedSecret(1, 1, "password", "k1", b"\0" * 12, b"\0" * 32))


def test_reseal_moves_a_row_to_the_active_key_in_the_same_place() -> None:
    old_key, new_key = _key(), _key()
    row = Vault({"old": old_key}, "old").seal(8, _secrets())[1]
    both = Vault({"old": old_key, "new": new_key}, "new")
    moved = both.reseal(row)
    assert (moved.memory_id, moved.ordinal, moved.kind, moved.key_id) == (8, 2, "password", "new")
    assert Vault({"new": new_key}, "new").open([moved]) == [_secrets()[1]]


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_keys_come_from_the_environment_as_a_json_map(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv(
        "MEMORIA_SECRETS__KEYS", json.dumps({"2026-01": _b64(_key()), "2025-07": _b64(_key())})
    )
    monkeypatch.setenv("MEMORIA_SECRETS__ACTIVE_KEY_ID", "2026-01")
    settings = Settings().secrets
    assert settings.active_key == "2026-01"
    assert Vault.from_settings(settings).key_ids == ("2026-01", "2025-07")
    assert _b64(settings.raw_keys()["2026-01"]) not in repr(settings)


def test_a_single_key_is_the_active_one() -> None:
    assert SecretSettings(keys={"only": _b64(_key())}).active_key == "only"  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"KEYS": '{"k": "not base64!"}'}, "key 'k' is not base64"),
        (
            {"KEYS": json.dumps({"k": _b64(os.urandom(16))})},
            "key 'k' is 16 bytes once decoded; AES-256 needs 32",
        ),
        ({"KEYS": json.dumps({"bad id": _b64(os.urandom(32))})}, "key id 'bad id' must be"),
        (
            {"KEYS": json.dumps({"a": _b64(os.urandom(32)), "b": _b64(os.urandom(32))})},
            "set MEMORIA_SECRETS__ACTIVE_KEY_ID",
        ),
        (
            {"KEYS": json.dumps({"a": _b64(os.urandom(32))}), "ACTIVE_KEY_ID": "b"},
            "active key id 'b' is not in",
        ),
        ({"ACTIVE_KEY_ID": "b"}, "active key id 'b' is not in"),
    ],
)
def test_bad_key_settings_stop_the_start_with_a_line_that_names_the_key_never_its_value(
    env: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    for name, value in env.items():
        monkeypatch.setenv(f"MEMORIA_SECRETS__{name}", value)
    with pytest.raises(InvalidSettings, match=message) as caught:
        load_settings()
    assert "MEMORIA_SECRETS__" in str(caught.value)
    for value in json.loads(env.get("KEYS", "{}")).values():
        assert value == "not base64!" or value not in str(caught.value)
