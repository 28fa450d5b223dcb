"""Run the local sentence-transformers model's transformer on ONNX Runtime instead of eager PyTorch.

A recall embeds one short query on the hot path. Eager PyTorch spends most of that time outside
the arithmetic; ONNX Runtime runs the same MiniLM several times faster on a CPU
(`memoria bench latency` reports the embedding figure). Only the transformer is exported; the
model's own pooling and normalisation modules run unchanged on its output (the usual mean pooling
is done in numpy, the same arithmetic without PyTorch's per-call overhead), so the vectors match
the PyTorch ones (cosine > 0.99999, pinned by a test) and stored embeddings stay comparable.

The export happens once per model and is cached on disk under a key of the model's files and the
torch version; it is written to a temporary name and renamed, so a crash never leaves half a file.
With `quantize`, the exported model's matrix multiplications get int8 weights (per output channel,
activations quantized on the fly): faster again, at a cosine just short of 1 to the float vectors,
so a quantized model is a different embedding model (its own `embedding_model` id).

With `quantize_queries`, only recall's query embeddings use the int8 weights. Stored vectors stay
float, so the model, its id and the index are unchanged; a query vector ~0.99 cosine from its float
twin ranks the float documents the same (`memoria bench quality` measures it).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

BATCH = 64  # most texts per ONNX Runtime call when embedding documents
MIN_FILL = 0.9
"""A batch of documents takes texts (shortest token count first) while at least this share of its
padded tokens are real: every padded position costs a full pass through the model, and a batch of
memories is mostly short texts of many lengths (ordering by characters left a fifth padding)."""
UNUSED_FOR_S = 7 * 24 * 3600  # cached exports nobody loaded for a week are deleted


def _cache_key(model_path: str, torch_version: str) -> str:
    digest = hashlib.sha256(f"{model_path}\0{torch_version}".encode())
    root = Path(model_path)
    if root.is_dir():
        for file in sorted(p for p in root.rglob("*") if p.is_file()):
            stat = file.stat()
            digest.update(f"\0{file.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:24]


@contextmanager
def _partial_file(path: Path) -> Iterator[Path]:
    """A temporary file beside `path` that becomes `path` only when the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, suffix=".onnx.partial")
    os.close(handle)
    partial = Path(name)
    try:
        yield partial
        partial.chmod(0o644)  # mkstemp makes it owner-only; the model is no secret
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def _prune_unused(cache_dir: Path, in_use: set[Path]) -> None:
    """Mark the files `in_use` as used now and delete exports unused for a week.

    Every new install of the model or of torch gets a new cache key, so without this the directory
    grows by ~90 MB per reinstall. A process already running keeps its model: it is in memory.
    """
    with contextlib.suppress(OSError):  # a read-only cache still works, it just is not pruned
        for used in in_use:
            os.utime(used)
        cutoff = time.time() - UNUSED_FOR_S
        for stale in cache_dir.glob("*.onnx"):
            if stale not in in_use and stale.stat().st_mtime < cutoff:
                stale.unlink(missing_ok=True)
                log.info("deleted the unused ONNX export %s", stale)


@contextmanager
def _root_warnings_muted() -> Iterator[None]:
    """onnxruntime's quantizer logs a generic pre-processing hint to the root logger on every run."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


class OnnxEncoder:
    """`encode(texts)` with the sentence-transformers model's semantics (pooled, L2-normalised)."""

    def __init__(
        self,
        model: SentenceTransformer,
        model_path: str,
        cache_dir: Path,
        threads: int,
        query_threads: int,
        quantize: bool = False,
        quantize_queries: bool = False,
    ) -> None:
        import torch

        self._model = model
        self._tokenizer = model.tokenizer
        self._max_length = model.max_seq_length
        self._input_names = list(self._tokenizer.model_input_names)
        self._pad_id = int(self._tokenizer.pad_token_id or 0)
        self._rest = list(model)[1:]  # pooling, normalisation, ...: run on the transformer's output
        self._mean_pooled = _is_mean_pooled_and_normalised(self._rest)
        path = cache_dir / f"{_cache_key(model_path, torch.__version__)}.onnx"
        if not path.exists():
            self._export(path)
        exported = path
        quantized = self._quantized(exported) if quantize or quantize_queries else exported
        path = quantized if quantize else exported
        query_path = quantized if quantize or quantize_queries else exported
        self._session = self._open(path, threads)
        # Queries get a session of their own whenever it differs in weights or threads: one query is
        # too small a job to share between threads (a second thread made it slower and cost more
        # CPU), while a batch of stored memories is not.
        self._query_session = (
            self._session
            if (query_path, query_threads) == (path, threads)
            else self._open(query_path, query_threads)
        )
        self.path = path
        _prune_unused(cache_dir, in_use={exported, quantized})  # the float export is what int8 is made from

    @staticmethod
    def _open(path: Path, threads: int) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Idle intra-op threads sleep instead of spinning: a spinning thread takes the core that
        # PostgreSQL or the next request needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def _export(self, path: Path) -> None:
        import torch

        transformer: Any = self._model[0].auto_model
        transformer.eval()
        names = self._input_names

        class TokenEmbeddings(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.transformer = transformer

            def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
                output = self.transformer(**dict(zip(names, inputs, strict=True)))
                hidden: torch.Tensor = output.last_hidden_state
                return hidden

        sample = self._tokenizer(["an example sentence", "two"], padding=True, return_tensors="pt")
        axes = {name: {0: "batch", 1: "tokens"} for name in names}
        with _partial_file(path) as partial, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the TorchScript exporter announces its deprecation
            torch.onnx.export(
                TokenEmbeddings(),
                tuple(sample[name] for name in names),
                partial,
                input_names=names,
                output_names=["token_embeddings"],
                dynamic_axes=axes | {"token_embeddings": {0: "batch", 1: "tokens"}},
                opset_version=17,
                dynamo=False,
            )
        log.info("exported the local embedding model to %s", path)

    @staticmethod
    def _quantized(path: Path) -> Path:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        target = path.with_suffix(".int8.onnx")
        if target.exists():
            return target
        with _partial_file(target) as partial, _root_warnings_muted():  # advice meant for image models
            quantize_dynamic(
                path, partial, per_channel=True, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"]
            )
        log.info("quantized the local embedding model to %s", target)
        return target

    def encode(self, texts: list[str], query: bool = False) -> np.ndarray:
        """Pooled, normalised vectors in `texts` order; `query` runs the query session.

        Texts are tokenized once, ordered by token count and cut into batches that are nearly all
        real tokens (`token_batches`); padding is masked out, so a text's vector does not depend on
        the batch it ran in (beyond float rounding: cosine > 0.9999 to the text alone, pinned by a
        test)."""
        session = self._query_session if query else self._session
        if not texts:
            return np.empty((0, 0), dtype=np.float32)
        tokens = self._tokenizer(texts, truncation=True, max_length=self._max_length)
        columns = {name: tokens[name] for name in self._input_names}
        lengths = [len(ids) for ids in columns[self._input_names[0]]]
        order: list[int] = []
        rows: list[np.ndarray] = []
        for batch in token_batches(lengths):
            width = max(lengths[i] for i in batch)
            feeds = {
                name: _padded([column[i] for i in batch], width, self._pad_id if name == "input_ids" else 0)
                for name, column in columns.items()
            }
            if "attention_mask" not in feeds:
                feeds["attention_mask"] = _padded([[1] * lengths[i] for i in batch], width, 0)
            (token_embeddings,) = session.run(None, {name: feeds[name] for name in self._input_names})
            rows.append(self._pool(token_embeddings, feeds["attention_mask"]))
            order += batch
        out = np.empty((len(texts), rows[0].shape[1]), dtype=np.float32)
        out[order] = np.concatenate(rows)  # back to the callers' order
        return out

    def _pool(self, token_embeddings: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        if self._mean_pooled:  # the common case in numpy: PyTorch's module calls cost more per query
            mask = attention_mask[..., None].astype(np.float32)
            pooled = (token_embeddings * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        else:
            import torch

            features: dict[str, Any] = {
                "token_embeddings": torch.from_numpy(token_embeddings),
                "attention_mask": torch.from_numpy(attention_mask),
            }
            with torch.inference_mode():
                for module in self._rest:
                    features = module(features)
            pooled = np.asarray(features["sentence_embedding"].numpy())
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: np.ndarray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return normalised


def _is_mean_pooled_and_normalised(modules: list[Any]) -> bool:
    """True for the usual [Pooling(mean), Normalize] tail, which numpy reproduces exactly."""
    from sentence_transformers.models import Normalize, Pooling

    if len(modules) != 2 or not isinstance(modules[0], Pooling) or not isinstance(modules[1], Normalize):
        return False
    config = modules[0].get_config_dict()
    return bool(config.get("pooling_mode") == "mean" and config.get("include_prompt", True))


def token_batches(lengths: list[int], most: int = BATCH, min_fill: float = MIN_FILL) -> list[list[int]]:
    """Indexes of texts of these token counts, cut into model calls: shortest first, each batch at
    most `most` texts and at least `min_fill` real tokens (the rest is padding to its longest)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    batch: list[int] = []
    real = 0
    for i in order:
        grown = len(batch) + 1
        if batch and (grown > most or real + lengths[i] < min_fill * grown * lengths[i]):
            batches.append(batch)
            batch, real = [], 0
        batch.append(i)
        real += lengths[i]
    if batch:
        batches.append(batch)
    return batches


def _padded(rows: list[list[int]], width: int, pad: int) -> np.ndarray:
    """Token rows as one int64 matrix, padded on the right with `pad` to `width` (masked out)."""
    matrix = np.full((len(rows), width), pad, dtype=np.int64)
    for r, row in enumerate(rows):
        matrix[r, : len(row)] = row
    return matrix
