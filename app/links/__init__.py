"""Typed links between memories (supersedes, resolved-by, see-also, part-of) and validity in time."""

from app.links.service import LinkService, MadeLink, link, source_deleted, source_restored, unlink

__all__ = ["LinkService", "MadeLink", "link", "source_deleted", "source_restored", "unlink"]
