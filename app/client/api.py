"""A small synchronous client for the REST API whose every failure is one readable line.

People read these errors in a terminal, so transport errors name the URL and the likely fix, and
API errors carry the server's problem+json `detail` rather than a stack trace.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click
import httpx

from app.client.config import api_key, load_settings
from app.client.settings import ClientSettings


class ApiError(click.ClickException):
    """Printed by click as `Error: <message>` with exit status 1."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    if isinstance(body, dict):
        return str(body.get("detail") or body.get("title") or body)[:300]
    return str(body)[:300]


class Api:
    def __init__(self, url: str, key: str | None, timeout: float) -> None:
        self.url = url.rstrip("/")
        headers = {"User-Agent": "memoria-cli"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)
        self._timeout = timeout

    @classmethod
    def from_settings(cls, client: ClientSettings | None = None, *, need_key: bool = True) -> Api:
        client = client or load_settings().client
        return cls(client.url, api_key(client) if need_key else None, client.timeout_s)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def send(self, method: str, path: str, *, accept: tuple[int, ...] = (), **kwargs: Any) -> httpx.Response:
        """The response when it is 2xx (or listed in `accept`), else an ApiError naming the cause."""
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.ConnectError as exc:
            raise ApiError(f"cannot reach Memoria at {self.url} (is `memoria serve` running?)") from exc
        except httpx.TimeoutException as exc:
            raise ApiError(f"Memoria at {self.url} did not answer within {self._timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise ApiError(f"request to {self.url} failed: {exc}") from exc
        if response.is_success or response.status_code in accept:
            return response
        if response.status_code == 401:
            raise ApiError(f"the API key was refused ({_detail(response)})", 401)
        raise ApiError(
            f"{response.status_code} {response.reason_phrase}: {_detail(response)}", response.status_code
        )

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.send(method, path, **kwargs).json()

    def memories(self, params: dict[str, Any], page_size: int = 200) -> Iterator[dict[str, Any]]:
        """Every memory matching `params`, newest first, following the cursor page by page."""
        cursor: str | None = None
        while True:
            query = {**params, "limit": page_size, "cursor": cursor}
            page = self.json("GET", "/v1/memories", params={k: v for k, v in query.items() if v is not None})
            yield from page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return
