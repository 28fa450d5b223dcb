"""Run the local sentence-transformers model's transformer on ONNX Runtime instead of eager PyTorch.

A recall embeds one short query on the hot path. Eager PyTorch spends most of that time outside
the arithmetic; ONNX Runtime ran the same MiniLM about 3x faster on this project's 2-core machine
(`memoria bench latency` reports the embedding figure). Only the transformer is exported; the
model's own pooling and normalisation modules run unchanged on its output, so the vectors match
the PyTorch ones (cosine > 0.99999, pinned by a test) and stored embeddings stay comparable.

The export happens once per model and is cached on disk under a key of the model's files and the
torch version; it is written to a temporary name and renamed, so a crash never leaves half a file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

BATCH = 32  # texts per ONNX Runtime call when embedding documents


def _cache_key(model_path: str, torch_version: str) -> str:
    digest = hashlib.sha256(f"{model_path}\0{torch_version}".encode())
    root = Path(model_path)
    if root.is_dir():
        for file in sorted(p for p in root.rglob("*") if p.is_file()):
            stat = file.stat()
            digest.update(f"\0{file.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:24]


class OnnxEncoder:
    """`encode(texts)` with the sentence-transformers model's semantics (pooled, L2-normalised)."""

    def __init__(self, model: SentenceTransformer, model_path: str, cache_dir: Path, threads: int) -> None:
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
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.path = path

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
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=path.parent, suffix=".onnx.partial")
        os.close(handle)
        try:
            with warnings.catch_warnings():  # the TorchScript exporter announces its deprecation
                warnings.simplefilter("ignore")
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
            os.chmod(partial, 0o644)  # mkstemp makes it owner-only; the model is no secret
            os.replace(partial, path)
        finally:
            Path(partial).unlink(missing_ok=True)
        log.info("exported the local embedding model to %s", path)

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
