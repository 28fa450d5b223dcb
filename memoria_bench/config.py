"""The settings sections a benchmark runs the product with, and the services built from them.

Benchmarks are adapters: they never read the environment themselves. The `memoria bench` commands
load the settings once and hand over only the sections the benchmarks use, and the services are
built here exactly as `app.factory` wires them for the API, so a figure measures what runs in
production rather than a configuration of the benchmark's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.capture.settings import CaptureSettings
from app.db import Database
from app.db.settings import DatabaseSettings
from app.embeddings import Embedder
from app.embeddings.backfill import EmbeddingJobs
from app.embeddings.inputs import NO_CONTEXT, TurnContext
from app.graph import GraphIndexer
from app.graph.settings import GraphSettings
from app.hooks.settings import HookSettings
from app.links.settings import LinkSettings
from app.links.supersede import supersede_when_embedded
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
    capture: CaptureSettings = field(default_factory=CaptureSettings)
    """What a captured episode is stored with (its importance): the quality bench stores turns as
    the capture route does."""
    turn_context: TurnContext = NO_CONTEXT
    """What captured turns are embedded with (`MEMORIA_EMBEDDINGS__TURN_CONTEXT_*`)."""

    def memory_service(self, db: Database, embedder: Embedder) -> MemoryService:
        return MemoryService(db, embedder, self.memories, links=self.links, turn_context=self.turn_context)

    def embedding_jobs(self, db: Database, embedder: Embedder) -> EmbeddingJobs:
        """The embedding job's handler, as the service registers it: it gives captured episodes
        their vectors (then judges the automatic supersede)."""
        return EmbeddingJobs(db.write, embedder, supersede_when_embedded(self.links), self.turn_context)

    def recall_service(self, db: Database, embedder: Embedder) -> RecallService:
        return RecallService(db, embedder, self.recall, self.memories.tag_limits, self.graph)

    def graph_indexer(self, db: Database, embedder: Embedder) -> GraphIndexer:
        """The store route's indexer: it embeds concepts only when `graph.concept_embeddings` is on."""
        return GraphIndexer(db.write, embedder if self.graph.concept_embeddings else None, self.graph)
