"""Namespaces: a user's separate memory stores (one per project or repository)."""

from app.namespaces.routes import get_namespaces
from app.namespaces.service import (
    DEFAULT_NAMESPACE,
    ensure_namespaces,
    list_namespaces,
    resolve_namespaces,
    validate_namespace_name,
)

__all__ = [
    "DEFAULT_NAMESPACE",
    "ensure_namespaces",
    "get_namespaces",
    "list_namespaces",
    "resolve_namespaces",
    "validate_namespace_name",
]
