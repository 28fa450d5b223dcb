"""The Swagger UI page loads nothing from another site: every script, stylesheet and icon it names is
served by the app itself, with the right content type. The JSON document stays where CI reads it."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Litestar]

EXPECTED_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


class _Assets(HTMLParser):
    """Every URL a page makes the browser fetch on load: `<script src>`, `<link href>`, `<img src>`."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = {"script": "src", "link": "href", "img": "src"}.get(tag)
        for name, value in attrs:
            if name == wanted and value is not None:
                self.urls.append(value)


def assets_of(html: str) -> list[str]:
    parser = _Assets()
    parser.feed(html)
    return parser.urls


@pytest.mark.parametrize("page", ["/schema", "/schema/swagger"])
async def test_the_docs_page_loads_every_asset_from_this_server(client: Client, page: str) -> None:
    response = await client.get(page)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "SwaggerUIBundle(" in response.text
    urls = assets_of(response.text)
    assert len(urls) == 4, urls  # the bundle, the standalone preset, the stylesheet, the icon
    for url in urls:
        assert url.startswith("/") and not url.startswith("//"), f"{url} is not on this server"
    assert "cdn.jsdelivr.net" not in response.text


async def test_every_asset_the_page_names_is_served_with_its_content_type(client: Client) -> None:
    urls = assets_of((await client.get("/schema")).text)
    assert {url.rsplit(".", 1)[-1] for url in urls} == {"js", "css", "png"}
    for url in urls:
        served = await client.get(url)
        assert served.status_code == 200, url
        expected = next(kind for suffix, kind in EXPECTED_TYPES.items() if url.endswith(suffix))
        assert served.headers["content-type"].startswith(expected), (url, served.headers["content-type"])
        assert served.headers["x-content-type-options"] == "nosniff"
        assert "max-age=" in served.headers["cache-control"]  # versioned URLs: cacheable, unlike the API
        assert len(served.content) > 500
    bundle = next(url for url in urls if url.endswith("swagger-ui-bundle.js"))
    assert b"SwaggerUIBundle" in (await client.get(bundle)).content


async def test_only_the_pages_own_assets_are_served_from_the_package(client: Client) -> None:
    bundle = next(url for url in assets_of((await client.get("/schema")).text) if url.endswith("bundle.js"))
    folder = bundle.rsplit("/", 1)[0]
    for other in ("swagger-editor-bundle.js", "index.css", "..%2F__init__.py", "LICENSE"):
        assert (await client.get(f"{folder}/{other}")).status_code == 404, other


async def test_the_json_document_stays_at_its_path(client: Client) -> None:
    response = await client.get("/schema/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/vnd.oai.openapi+json"
    assert "/v1/memories" in response.json()["paths"]
