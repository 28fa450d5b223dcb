"""Users, API keys and request authentication."""

from app.auth.middleware import ApiKeyMiddleware
from app.auth.service import AuthUser, authenticate, create_key, create_user, list_keys, revoke_key

__all__ = [
    "ApiKeyMiddleware",
    "AuthUser",
    "authenticate",
    "create_key",
    "create_user",
    "list_keys",
    "revoke_key",
]
