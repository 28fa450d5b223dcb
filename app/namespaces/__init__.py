"""Namespaces: a user's separate memory stores (one per project or repository)."""

from app.namespaces.service import (
    ensure_namespaces,
    list_namespaces,
    resolve_namespaces,
    validate_namespace_name,
)

__all__ = [
    "ensure_namespaces",
    "list_namespaces",
    "resolve_namespaces",
    "validate_namespace_name",
]
