"""What every web UI page shares: the signed-in session, the CSRF check, rendering, redirects.

Pages are server-rendered HTML forms that work without JavaScript. A page needs a live session
(`signed_in`, a dependency); without one it answers 303 to the sign-in page, which comes back to the
page afterwards. Every POST must carry the session's own CSRF token (`csrf_token` in the form): the
cookie is SameSite=Strict already, the token stops what SameSite does not (an old browser, a sibling
subdomain). Errors render as HTML pages with the API's status codes (`html_errors`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

from litestar import Request
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException, NotAuthorizedException
from litestar.response import Redirect, Response, Template
from litestar.status_codes import HTTP_303_SEE_OTHER, HTTP_403_FORBIDDEN, HTTP_500_INTERNAL_SERVER_ERROR

from app.auth.gate import Gate
from app.auth.scopes import READ, WRITE
from app.auth.sessions import UiSession, find_session
from app.errors import ApiError, Forbidden, database_unavailable

log = logging.getLogger(__name__)

SESSION_COOKIE = "memoria_session"
SIGNIN_CSRF_COOKIE = "memoria_signin_csrf"
"""The sign-in form has no session yet: its token is a double-submit cookie, SameSite=Strict too."""

UiRequest = Request[Any, Any, State]
Session = NamedDependency[UiSession]
"""A page's signed-in session (the `session` dependency, `signed_in`)."""


class SignInRequired(HTTPException):
    """No live session: the page answers 303 to the sign-in page."""

    status_code = HTTP_303_SEE_OTHER


class CsrfRejected(HTTPException):
    status_code = HTTP_403_FORBIDDEN
    detail = "This form was not sent from a page of this session. Reload the page and try again."


def here(request: UiRequest) -> str:
    """The path and query of this request, to come back to after signing in."""
    query = request.scope.get("query_string", b"").decode("latin-1")
    return request.url.path + (f"?{query}" if query else "")


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a path of this site only (never `//host` or a scheme)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/memories"
    return target


async def signed_in(request: UiRequest) -> UiSession:
    """The page's session (a dependency). 303 to sign-in without one; 429 when the session's key
    has used up its requests (pages count against the key's rate limit, as its API requests do);
    403 for a POST without the session's CSRF token; 403 when the key lacks `read` (or `write`, for
    a POST)."""
    session = await find_session(request.app.state.db.write, request.cookies.get(SESSION_COOKIE, ""))
    if session is None:
        raise SignInRequired(detail=here(request))
    gate: Gate = request.app.state.gate
    await gate.admit_session(request.app.state.db.write, session.user)  # the key's rate limit: 429
    if request.method == "POST":
        form = await request.form()
        token = form.get("csrf_token")
        if not session.csrf_matches(token if isinstance(token, str) else None):
            raise CsrfRejected()
    needed = WRITE if request.method == "POST" else READ
    if needed not in session.user.scopes:
        raise Forbidden(f"this API key lacks the `{needed}` scope this page needs")
    return session


def page(
    request: UiRequest,
    template: str,
    session: UiSession | None,
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    **context: Any,
) -> Template:
    """A rendered page; the layout gets the user, the CSRF token and the active section."""
    return Template(
        template_name=template,
        status_code=status_code,
        headers=dict(headers or {}),
        context={
            "user": session.user if session is not None else None,
            "csrf_token": session.csrf_token if session is not None else "",
            "path": request.url.path,
            **context,
        },
        media_type="text/html",
    )


def see_other(path: str, **query: Any) -> Redirect:
    """303 to `path` (a POST's answer: the browser then GETs the page, and reload does not re-post)."""
    params = {k: v for k, v in query.items() if v is not None}
    return Redirect(path=path + (f"?{urlencode(params)}" if params else ""), status_code=HTTP_303_SEE_OTHER)


def form_text(form: Mapping[str, Any], name: str) -> str:
    """A form field as text ('' when missing or a file)."""
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def html_error(request: UiRequest, exc: Exception) -> Response[Any]:
    """Errors of UI routes as pages: sign-in redirects, the API's 4xx with their message, and a
    503 or 500 page that says what to do."""
    if isinstance(exc, SignInRequired):
        return Redirect(
            path=f"/signin?next={quote(str(exc.detail), safe='')}", status_code=HTTP_303_SEE_OTHER
        )
    if isinstance(exc, NotAuthorizedException):  # a key that stopped working mid-request
        return Redirect(path="/signin", status_code=HTTP_303_SEE_OTHER)
    headers: Mapping[str, str] = {}
    if isinstance(exc, HTTPException):
        status, detail, headers = exc.status_code, str(exc.detail), exc.headers or {}  # a 429's Retry-After
        if isinstance(exc, ApiError) and status >= 500:
            log.warning("%s %s: %s", request.method, request.url.path, detail)
    else:
        reason = database_unavailable(exc)
        if reason is not None:
            status, detail = 503, f"The database is not answering ({reason}). Try again in a moment."
        else:
            log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
            status, detail = HTTP_500_INTERNAL_SERVER_ERROR, "Something went wrong on the server."
    session = None
    return page(
        request, "error.html", session, status_code=status, headers=headers, status=status, detail=detail
    )
