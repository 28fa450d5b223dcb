"""The settings sections a benchmark runs the product with, and the services built from them.

Benchmarks are adapters: they never read the environment themselves. The `memoria bench` commands
load the settings once and hand over only the sections the benchmarks use, and the services are
built here exactly as `app.factory` wires them for the API, so a figure measures what runs in
production rather than a configuration of the benchmark's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.db import Database
from app.db.settings import DatabaseSettings
from app.embeddings import Embedder
from app.graph import GraphIndexer
from app.graph.settings import GraphSettings
from app.hooks.settings import HookSettings
from app.links.settings import LinkSettings
from app.memories.service import MemoryService
from app.memories.settings import MemorySettings
from app.recall.service import RecallService
from app.recall.settings import RecallSettings


@dataclass(frozen=True, slots=True)
class BenchConfig:
    database: DatabaseSettings
    memories: MemorySettings
    recall: RecallSettings
    graph: GraphSettings
    hooks: HookSettings = field(default_factory=HookSettings)
    """The hook's settings: `bench quality --floor` recalls as the prompt hook does."""
    links: LinkSettings = field(default_factory=LinkSettings)

    def memory_service(self, db: Database, embedder: Embedder) -> MemoryService:
        return MemoryService(db, embedder, self.memories, links=self.links)

    def recall_service(self, db: Database, embedder: Embedder) -> RecallService:
        return RecallService(db, embedder, self.recall, self.memories.tag_limits, self.graph)

    def graph_indexer(self, db: Database, embedder: Embedder) -> GraphIndexer:
        """The store route's indexer: it embeds concepts only when `graph.concept_embeddings` is on."""
        return GraphIndexer(db.write, embedder if self.graph.concept_embeddings else None, self.graph)
