"""CORS is off unless origins are configured; then only those origins get a grant, preflight and
answer alike, and never with credentials."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from app.embeddings import LocalEmbedder
from app.factory import create_app
from app.settings import InvalidSettings, ServerSettings, Settings, load_settings

Client = AsyncTestClient[Litestar]
ALLOWED = "http://localhost:5173"
OTHER = "https://evil.example"


def preflight(origin: str, method: str = "POST") -> dict[str, str]:
    return {
        "Origin": origin,
        "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": "authorization, content-type",
    }


def grants(response: httpx.Response) -> list[str]:
    """The CORS headers an answer carries (none means the browser refuses the cross-origin read)."""
    return sorted(name for name in response.headers if name.lower().startswith("access-control-"))


@pytest.fixture
async def cors_client(settings: Settings, embedder: LocalEmbedder) -> AsyncIterator[Client]:
    server = settings.server.model_copy(update={"cors_origins": [ALLOWED]})
    app = create_app(settings.model_copy(update={"server": server}), embedder=embedder)
    async with AsyncTestClient(app=app) as client:
        yield client


async def test_by_default_no_origin_gets_a_grant_not_even_on_preflight(
    client: Client, alice: dict[str, str]
) -> None:
    for origin in (ALLOWED, OTHER):
        asked = await client.options("/v1/memories", headers=preflight(origin))
        assert asked.status_code < 500
        assert grants(asked) == [], asked.headers
        answered = await client.get("/v1/memories", headers={**alice, "Origin": origin})
        assert answered.status_code == 200
        assert grants(answered) == [], answered.headers
        assert grants(await client.get("/readyz", headers={"Origin": origin})) == []


async def test_a_configured_origin_gets_a_preflight_grant_for_the_apis_methods_and_headers(
    cors_client: Client,
) -> None:
    asked = await cors_client.options("/v1/memories", headers=preflight(ALLOWED))
    assert asked.status_code in (200, 204), asked.text
    assert asked.headers["access-control-allow-origin"] == ALLOWED
    assert "POST" in asked.headers["access-control-allow-methods"]
    allowed_headers = asked.headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed_headers
    assert "content-type" in allowed_headers
    assert "access-control-allow-credentials" not in asked.headers


async def test_another_origin_gets_no_preflight_grant_when_some_are_configured(cors_client: Client) -> None:
    asked = await cors_client.options("/v1/memories", headers=preflight(OTHER))
    assert asked.status_code == 400
    assert "Disallowed CORS Origin" in asked.text
    assert grants(asked) == [], asked.headers


async def test_answers_carry_the_grant_only_for_the_configured_origin(
    cors_client: Client, alice: dict[str, str]
) -> None:
    allowed = await cors_client.get("/v1/memories", headers={**alice, "Origin": ALLOWED})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == ALLOWED
    assert "retry-after" in allowed.headers["access-control-expose-headers"].lower()
    other = await cors_client.get("/v1/memories", headers={**alice, "Origin": OTHER})
    assert other.status_code == 200  # CORS is the browser's rule; the server only withholds the grant
    assert other.headers.get("access-control-allow-origin") is None


def test_the_origins_come_from_the_environment_as_a_json_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORIA_SERVER__CORS_ORIGINS", f'["{ALLOWED}", "https://app.example.com:8443"]')
    assert load_settings().server.cors_origins == [ALLOWED, "https://app.example.com:8443"]


@pytest.mark.parametrize(
    "bad",
    ["*", "http://localhost:5173/", "https://app.example.com/path", "localhost:5173", "ftp://x.example"],
)
def test_what_is_not_an_origin_is_refused_with_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv("MEMORIA_SERVER__CORS_ORIGINS", f'["{bad}"]')
    with pytest.raises(InvalidSettings, match=r"MEMORIA_SERVER__CORS_ORIGINS: .* is not an origin"):
        load_settings()


def test_cors_is_off_unless_configured() -> None:
    assert ServerSettings().cors_origins == []
