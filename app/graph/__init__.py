"""Concept graph: extraction on store, maintenance on change/delete, the graph recall leg, routes.

Other domains use the graph through the names below only (import-linter keeps it so); everything
else in this package is its own business.
"""

from app.graph.extract import query_concept_names
from app.graph.indexer import INDEX_JOB, GraphIndexer, indexing_jobs, lock_graph, unlink_memories

__all__ = [
    "INDEX_JOB",
    "GraphIndexer",
    "indexing_jobs",
    "lock_graph",
    "query_concept_names",
    "unlink_memories",
]
