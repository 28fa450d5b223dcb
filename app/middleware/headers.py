"""Security headers on every answer the app sends, errors and 404s of unknown paths included.

A Litestar `before_send` hook rather than route middleware or `response_headers`: it sees every
`http.response.start` the app sends, so answers that never reach a route handler get the headers too
(a 401 from the API-key middleware, a 404 for a path no route matches, the deadline's 503).

- `X-Content-Type-Options: nosniff`: a browser renders a JSON body (which holds what users stored)
  as the type we declare, never as HTML or script it guessed.
- `X-Frame-Options: DENY` and `Referrer-Policy: no-referrer`: no page may frame the API or the docs,
  and following a link from them tells the other site nothing.
- `Cache-Control: no-store` on everything but the docs: memories, recall results and errors are one
  user's live data, and no browser or proxy cache should keep a copy. The docs' static assets are
  versioned and set their own long-lived `Cache-Control`.
- `Content-Security-Policy: default-src 'none'` on everything but the docs: a JSON answer loads
  nothing, so even a body a browser did render could run no script. The Swagger UI page runs its
  own inline start-up script, so it is left to its route.
- The web UI's pages (routes whose `opt` holds `UI_OPT`) get a policy that lets them load the app's
  own styles, scripts and images and nothing else: no inline script, no inline style attribute, forms
  post only to this origin. Its static files may be cached (they are revalidated).
"""

from __future__ import annotations

from litestar.datastructures import MutableScopeHeaders
from litestar.types import Message, Scope

DOCS_PREFIX = "/schema"
"""Where the OpenAPI document and its UI are served (`OpenAPIConfig.path` in app.factory)."""

ALWAYS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
API_ONLY = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
}


UI_OPT = "ui"
"""A route `opt` key: the route is a web UI page (`True`) or UI static file (`"static"`)."""
UI_ONLY = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
}


def ui_kind(scope: Scope) -> object:
    """The matched route's `UI_OPT` value (None for the API, the docs and unmatched paths)."""
    handler = scope.get("route_handler")
    return handler.opt.get(UI_OPT) if handler is not None else None


def is_docs(path: str) -> bool:
    return path == DOCS_PREFIX or path.startswith(DOCS_PREFIX + "/")


async def security_headers(message: Message, scope: Scope) -> None:
    """`before_send` hook: set the headers above on the start of an HTTP answer (overriding what a
    handler set: a route cannot opt its data back into a cache)."""
    if message["type"] != "http.response.start":
        return
    message.setdefault("headers", [])  # ASGI lets an answer leave them out
    headers = MutableScopeHeaders.from_message(message)
    for name, value in ALWAYS.items():
        headers[name] = value
    ui = ui_kind(scope)
    if ui:
        headers.update(UI_ONLY)
        if ui != "static":
            headers["Cache-Control"] = "no-store"
    elif not is_docs(scope.get("path", "")):
        for name, value in API_ONLY.items():
            headers[name] = value
