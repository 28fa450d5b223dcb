"""A small synchronous client for the REST API whose every failure is one readable line.

People read these errors in a terminal, so transport errors name the URL and the likely fix, and
API errors carry the server's problem+json `detail` rather than a stack trace.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click
import httpx

from app.client.settings import ClientSettings
from memoria_hook_client.environment import ENV_API_KEY, KeyFileError, read_key_file


class RequestFailed(click.ClickException):
    """A call to the API that did not succeed: unreachable, too slow, or answered non-2xx (`status`).

    Printed by click as `Error: <message>` with exit status 1. Not `app.errors.ApiError`, which is
    the server's side: a problem the server answers with.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def api_key(client: ClientSettings) -> str:
    """`MEMORIA_CLIENT__API_KEY` (or `.env`), else the key file, which must be readable by its owner only."""
    if client.api_key is not None and client.api_key.get_secret_value().strip():
        return client.api_key.get_secret_value().strip()
    try:
        return read_key_file(client.key_file)
    except KeyFileError as exc:
        if not client.key_file.exists():
            raise click.ClickException(
                f"no API key: set {ENV_API_KEY} or save one with `memoria login`"
            ) from exc
        raise click.ClickException(str(exc)) from exc


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
    def from_settings(cls, client: ClientSettings, *, need_key: bool = True) -> Api:
        """A client for `client.url` with the configured key (none for `/readyz` and the like)."""
        return cls(client.url, api_key(client) if need_key else None, client.timeout_s)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def send(self, method: str, path: str, *, accept: tuple[int, ...] = (), **kwargs: Any) -> httpx.Response:
        """The response when it is 2xx (or listed in `accept`), else RequestFailed naming the cause."""
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.ConnectError as exc:
            raise RequestFailed(f"cannot reach Memoria at {self.url} (is `memoria serve` running?)") from exc
        except httpx.TimeoutException as exc:
            raise RequestFailed(f"Memoria at {self.url} did not answer within {self._timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise RequestFailed(f"request to {self.url} failed: {exc}") from exc
        if response.is_success or response.status_code in accept:
            return response
        if response.status_code == 401:
            raise RequestFailed(f"the API key was refused ({_detail(response)})", 401)
        raise RequestFailed(
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

    def share(self, namespace: str, user: str, permission: str) -> tuple[dict[str, Any], bool]:
        """Share one of the caller's namespaces with `user`: (the share, whether it is new)."""
        body = {"namespace": namespace, "user": user, "permission": permission}
        response = self.send("POST", "/v1/shares", json=body)
        return response.json(), response.status_code == 201

    def shares(self) -> dict[str, list[dict[str, Any]]]:
        """{granted: shares of the caller's namespaces, received: namespaces shared with the caller}."""
        shares: dict[str, list[dict[str, Any]]] = self.json("GET", "/v1/shares")
        return shares

    def revoke_share(self, namespace: str, user: str) -> None:
        self.send("DELETE", "/v1/shares", params={"namespace": namespace, "user": user})
