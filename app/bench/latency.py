"""`memoria bench latency`: recall latency and HNSW recall@10 on a large, realistic corpus.

The corpus goes in through the real store path (`MemoryService.store`, real MiniLM embeddings), so
the table, its GIN and HNSW indexes and the planner statistics look like production's. Latency is
measured three ways, because each answers a different question:

- over real HTTP against a `memoria serve` process (what an agent sees, embedding included);
- the recall statement alone, with precomputed query vectors (what the SQL costs);
- one query embedding in this process (how much of the HTTP figure is the model).

Lexical-only and hybrid requests are interleaved one by one with the same query text, so a
background load that comes and goes (this machine is shared) hits both alike and the hybrid/lexical
ratio stays fair. Every hybrid request uses a text no earlier request used, because the local
embedder caches query vectors.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import numpy as np
from pgvector import HalfVector
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.progress import TimeRemainingColumn, TransferSpeedColumn  # noqa: F401  (kept for clarity)

from app.auth.service import create_key, create_user
from app.bench.corpus import PersonaPool, SyntheticMemory, generate_memories, namespace_names
from app.db import Database
from app.embeddings import Embedder, Vector
from app.memories.schemas import MemoryIn
from app.memories.service import MemoryService
from app.recall.schemas import LegWeights, RecallRequest
from app.recall.service import RecallService, set_local_sql
from app.recall.sql import RECALL_PARAMS, RECALL_STATEMENT
from app.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SENTENCES = REPO_ROOT.parent / "shared" / "bench" / "persona-sentences" / "sentences.txt"
BATCH = 100
MODES: dict[str, dict[str, float] | None] = {"lexical": {"dense": 0.0}, "hybrid": None}
