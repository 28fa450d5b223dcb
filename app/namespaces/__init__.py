"""Namespaces: a user's separate memory stores (one per project or repository), which their owner
can share with other users (read, or read and write)."""

from app.namespaces.service import (
    Namespace,
    ReadOnlyShare,
    TooManyNamespaces,
    ensure_namespaces,
    list_namespaces,
    namespace_names,
    namespace_overview,
    resolve_namespaces,
    resolve_scope,
    shared_address,
    validate_namespace_name,
    writable_namespace,
)

__all__ = [
    "Namespace",
    "ReadOnlyShare",
    "TooManyNamespaces",
    "ensure_namespaces",
    "list_namespaces",
    "namespace_names",
    "namespace_overview",
    "resolve_namespaces",
    "resolve_scope",
    "shared_address",
    "validate_namespace_name",
    "writable_namespace",
]
