"""Signing in with an API key, and out.

The key is checked by the API's own `Gate` (rate limits and the failed-authentication lockout
included), then forgotten: the browser gets a session cookie, HttpOnly and SameSite=Strict, whose
token PostgreSQL keeps only hashed (app.auth.sessions).
"""

from __future__ import annotations

import secrets

from litestar import get, post
from litestar.datastructures import Cookie
from litestar.exceptions import NotAuthorizedException
from litestar.response import Redirect, Template

from app.auth.gate import Gate
from app.auth.middleware import client_host
from app.auth.scopes import READ
from app.auth.sessions import end_session, find_session, start_session, tokens_match
from app.errors import TooManyRequests
from app.ui.settings import UiSettings
from app.ui.web import SESSION_COOKIE, SIGNIN_CSRF_COOKIE, UiRequest, form_text, page, safe_next, see_other


def _secure(request: UiRequest, settings: UiSettings) -> bool:
    return settings.secure_cookie == "always" or (
        settings.secure_cookie == "auto" and request.url.scheme == "https"
    )


def _cookie(request: UiRequest, settings: UiSettings, name: str, value: str, max_age: int) -> Cookie:
    return Cookie(
        key=name,
        value=value,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="strict",
        secure=_secure(request, settings),
    )


def _signin_form(
    request: UiRequest,
    settings: UiSettings,
    next_path: str | None,
    *,
    status_code: int = 200,
    error: str = "",
    suggest_key: bool = False,
) -> Template:
    """The form with a fresh double-submit token (its cookie lives ten minutes); `suggest_key`
    follows the error with the command that creates a key (the template writes it as code)."""
    token = secrets.token_urlsafe(32)
    response = page(
        request,
        "signin.html",
        None,
        status_code=status_code,
        signin_token=token,
        next=safe_next(next_path),
        error=error,
        suggest_key=suggest_key,
    )
    response.cookies.append(_cookie(request, settings, SIGNIN_CSRF_COOKIE, token, 600))
    return response


@get("/signin", include_in_schema=False)
async def signin_page(request: UiRequest) -> Template | Redirect:
    settings: UiSettings = request.app.state.ui_settings
    if await find_session(request.app.state.db.write, request.cookies.get(SESSION_COOKIE, "")) is not None:
        return see_other(safe_next(request.query_params.get("next")))
    return _signin_form(request, settings, request.query_params.get("next"))


@post("/signin", include_in_schema=False)
async def signin(request: UiRequest) -> Template | Redirect:
    settings: UiSettings = request.app.state.ui_settings
    form = await request.form()
    next_path = form_text(form, "next")
    sent, expected = form_text(form, "csrf_token"), request.cookies.get(SIGNIN_CSRF_COOKIE, "")
    if not tokens_match(sent, expected):
        return _signin_form(
            request, settings, next_path, status_code=403, error="The sign-in form expired. Please try again."
        )
    key = form_text(form, "key")
    if not key:
        return _signin_form(
            request, settings, next_path, status_code=400, error="Paste an API key to sign in."
        )
    gate: Gate = request.app.state.gate
    try:
        user = await gate.admit(request.app.state.db.write, key, client_host(request), fresh=True)
    except NotAuthorizedException:
        return _signin_form(
            request,
            settings,
            next_path,
            status_code=401,
            error="That key does not work: it is unknown, revoked or expired.",
            suggest_key=True,
        )
    except TooManyRequests as exc:
        return _signin_form(
            request, settings, next_path, status_code=429, error=f"Too many attempts: {exc.detail}"
        )
    if READ not in user.scopes:
        return _signin_form(
            request,
            settings,
            next_path,
            status_code=403,
            error="This key lacks the read scope the web UI needs.",
            suggest_key=True,
        )
    token = await start_session(request.app.state.db.write, user.key_id, settings.session_hours * 3600)
    response = see_other(safe_next(next_path))
    response.cookies.append(
        _cookie(request, settings, SESSION_COOKIE, token, int(settings.session_hours * 3600))
    )
    response.cookies.append(_cookie(request, settings, SIGNIN_CSRF_COOKIE, "", 0))
    return response


@post("/signout", include_in_schema=False)
async def signout(request: UiRequest) -> Redirect:
    """Ends the session in PostgreSQL (so a copied cookie stops working) and clears the cookie. A
    cross-site post cannot sign anyone out: it must carry the session's CSRF token."""
    settings: UiSettings = request.app.state.ui_settings
    token = request.cookies.get(SESSION_COOKIE, "")
    session = await find_session(request.app.state.db.write, token)
    form = await request.form()
    sent = form.get("csrf_token")
    if session is not None and session.csrf_matches(sent if isinstance(sent, str) else None):
        await end_session(request.app.state.db.write, token)
    elif session is not None:
        return see_other("/memories")
    response = see_other("/signin")
    response.cookies.append(_cookie(request, settings, SESSION_COOKIE, "", 0))
    return response


@get("/", include_in_schema=False)
async def home(request: UiRequest) -> Redirect:
    session = await find_session(request.app.state.db.write, request.cookies.get(SESSION_COOKIE, ""))
    return see_other("/memories" if session is not None else "/signin")
