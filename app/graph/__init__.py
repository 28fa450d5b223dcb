"""Concept graph: extraction on store, maintenance on change/delete, the graph recall leg, routes.

Other domains use the graph through the names below only (import-linter keeps it so); everything
else in this package is its own business.
"""

from app.graph.extract import query_concept_names
from app.graph.indexer import GraphIndexer, detach_memories

__all__ = ["GraphIndexer", "detach_memories", "query_concept_names"]
