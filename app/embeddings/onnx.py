"""Run the local sentence-transformers model's transformer on ONNX Runtime instead of eager PyTorch.

A recall embeds one short query on the hot path. Eager PyTorch spends most of that time outside
the arithmetic; ONNX Runtime ran the same MiniLM about 3x faster on this project's 2-core machine
(`memoria bench latency` reports the embedding figure). Only the transformer is exported; the
model's own pooling and normalisation modules run unchanged on its output, so the vectors match
the PyTorch ones (cosine > 0.99999, pinned by a test) and stored embeddings stay comparable.

The export happens once per model and is cached on disk under a key of the model's files and the
torch version; it is written to a temporary name and renamed, so a crash never leaves half a file.
With `quantize`, the exported model's matrix multiplications get int8 weights (per output channel,
activations quantized on the fly): about 2x faster again, at a cosine of ~0.99 to the float vectors,
so a quantized model is a different embedding model (its own `embedding_model` id).
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

BATCH = 32  # texts per ONNX Runtime call when embedding documents
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
        quantize: bool = False,
    ) -> None:
        import onnxruntime as ort
        import torch

        self._model = model
        self._tokenizer = model.tokenizer
        self._max_length = model.max_seq_length
        self._input_names = list(self._tokenizer.model_input_names)
        self._rest = list(model)[1:]  # pooling, normalisation, ...: they run in PyTorch, unchanged
        path = cache_dir / f"{_cache_key(model_path, torch.__version__)}.onnx"
        if not path.exists():
            self._export(path)
        exported = path
        if quantize:
            path = self._quantized(exported)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Idle intra-op threads sleep instead of spinning: a spinning thread takes the core that
        # PostgreSQL or the next request needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.path = path
        _prune_unused(cache_dir, in_use={exported, path})  # the float export is what int8 is made from

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

    def encode(self, texts: list[str]) -> np.ndarray:
        import torch

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        rows: list[np.ndarray] = []
        for start in range(0, len(order), BATCH):
            batch = [texts[i] for i in order[start : start + BATCH]]
            tokens = self._tokenizer(
                batch, padding=True, truncation=True, max_length=self._max_length, return_tensors="np"
            )
            feeds = {name: np.asarray(tokens[name], dtype=np.int64) for name in self._input_names}
            (token_embeddings,) = self._session.run(None, feeds)
            features: dict[str, Any] = {
                "token_embeddings": torch.from_numpy(token_embeddings),
                "attention_mask": torch.from_numpy(feeds["attention_mask"]),
            }
            with torch.inference_mode():
                for module in self._rest:
                    features = module(features)
                pooled = torch.nn.functional.normalize(features["sentence_embedding"], dim=-1)
            rows.append(pooled.numpy())
        if not rows:
            return np.empty((0, 0), dtype=np.float32)
        out = np.empty((len(texts), rows[0].shape[1]), dtype=np.float32)
        out[order] = np.concatenate(rows)  # back to the callers' order
        return out
