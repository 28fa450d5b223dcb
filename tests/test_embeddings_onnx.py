"""The local model on ONNX Runtime: the same vectors as PyTorch, exported once, a safe fallback."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from app.embeddings import LocalEmbedder
from app.embeddings.onnx import token_batches
from app.settings import EmbeddingSettings

TEXTS = [
    "Alice prefers tabs over spaces",
    "The production database is PostgreSQL 16 on CloudNativePG, backed up nightly to object storage.",
    "ok",
    "Ünïcödé, emoji 🚀 and    odd   spacing",
]


@pytest.fixture(scope="module")
def torch_embedder() -> LocalEmbedder:
    model = LocalEmbedder(EmbeddingSettings(provider="local", local_runtime="torch"))
    model.load_sync()
    return model


@pytest.fixture(scope="module")
def float_embedder(embedding_settings: EmbeddingSettings) -> LocalEmbedder:
    """ONNX with float weights for queries too."""
    model = LocalEmbedder(embedding_settings.model_copy(update={"local_quantize_queries": False}))
    model.load_sync()
    return model


async def test_onnx_vectors_match_pytorch_in_any_batch_order(
    float_embedder: LocalEmbedder, torch_embedder: LocalEmbedder
) -> None:
    embedder = float_embedder
    assert embedder.runtime == "onnx" and torch_embedder.runtime == "torch"
    onnx_batch = await embedder.embed_documents(TEXTS)
    reference = await torch_embedder.embed_documents(TEXTS)
    for got, want in zip(onnx_batch, reference, strict=True):
        assert got.shape == want.shape == (384,)
        assert float(np.dot(got, want)) > 0.99999
        assert abs(float(np.linalg.norm(got)) - 1.0) < 1e-5
    # one at a time (the query path, no padding) gives the same vectors as the padded batch
    for text, batched in zip(TEXTS, onnx_batch, strict=True):
        assert float(np.dot(await embedder.embed_query(text), batched)) > 0.99999


async def test_a_memory_embedded_in_any_batch_gets_the_vector_it_gets_alone(
    float_embedder: LocalEmbedder,
) -> None:
    # texts of many token counts, so batches of one length and padded batches both occur, and more
    # of them than one model call takes
    words = ["the", "deploy", "runbook", "says", "to", "drain", "the", "queue", "before", "migrations"]
    texts = [" ".join(words[: 1 + i % len(words)]) + f" note {i}" for i in range(150)] + TEXTS
    batched = await float_embedder.embed_documents(texts)
    for text, vector in zip(texts, batched, strict=True):
        (alone,) = await float_embedder.embed_documents([text])
        assert float(np.dot(vector, alone)) >= 0.9999
        # stored as float16: the same halfvec within one rounding step of float16
        assert float(np.max(np.abs(vector.astype(np.float16) - alone.astype(np.float16)))) <= 2**-11


def test_documents_are_cut_into_model_calls_of_nearly_all_real_tokens() -> None:
    lengths = [7, 30, 7, 8, 31, 7, 12, 30]
    batches = token_batches(lengths, most=3, min_fill=0.9)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 3
        longest = max(lengths[i] for i in batch)
        assert sum(lengths[i] for i in batch) >= 0.9 * longest * len(batch)
    assert token_batches([]) == []


def test_the_export_is_cached_reused_and_old_exports_are_pruned(tmp_path: Path) -> None:
    settings = EmbeddingSettings(provider="local", onnx_cache_dir=tmp_path, local_quantize_queries=False)
    first = LocalEmbedder(settings)
    first.load_sync()
    (exported,) = tmp_path.glob("*.onnx")
    made = exported.read_bytes()
    week_old = time.time() - 8 * 24 * 3600
    for name in ("of-an-old-install.onnx", "of-another-install.onnx"):
        (tmp_path / name).write_bytes(b"stale")
    os.utime(tmp_path / "of-an-old-install.onnx", (week_old, week_old))
    os.utime(exported, (week_old, week_old))  # old, but about to be used again
    second = LocalEmbedder(settings)
    second.load_sync()
    assert second.runtime == "onnx" and exported.read_bytes() == made  # reused, not exported again
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([exported.name, "of-another-install.onnx"])
    assert exported.stat().st_mtime > week_old + 24 * 3600  # marked as used


def test_an_unusable_cache_dir_falls_back_to_pytorch(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    model = LocalEmbedder(EmbeddingSettings(provider="local", onnx_cache_dir=blocked / "onnx"))
    model.load_sync()
    assert model.runtime == "torch"
    (vector,) = model._encode(["still works"])
    assert vector.shape == (384,)


def test_the_int8_model_is_its_own_embedding_model_close_to_the_float_one(
    tmp_path: Path, torch_embedder: LocalEmbedder
) -> None:
    settings = EmbeddingSettings(
        provider="local", onnx_cache_dir=tmp_path, local_quantize=True, local_quantize_queries=False
    )
    model = LocalEmbedder(settings)
    model.load_sync()
    assert model.model_id == "all-MiniLM-L6-v2+int8" != torch_embedder.model_id
    assert sorted(p.name.count(".int8.") for p in tmp_path.iterdir()) == [0, 1]  # float export kept
    for got, want in zip(model._encode(TEXTS), torch_embedder._encode(TEXTS), strict=True):
        assert 0.95 < float(np.dot(got, want)) < 0.99999  # close, yet not the float vectors
        assert abs(float(np.linalg.norm(got)) - 1.0) < 1e-5


async def test_int8_queries_keep_the_float_model_and_its_stored_vectors(
    embedder: LocalEmbedder, torch_embedder: LocalEmbedder
) -> None:
    assert embedder.model_id == torch_embedder.model_id == "all-MiniLM-L6-v2"
    documents = await embedder.embed_documents(TEXTS)
    reference = await torch_embedder.embed_documents(TEXTS)
    for text, document, want in zip(TEXTS, documents, reference, strict=True):
        assert float(np.dot(document, want)) > 0.99999  # what is stored is the float model's vector
        query = await embedder.embed_query(text)
        assert 0.95 < float(np.dot(query, want)) < 0.99999  # the int8 twin: close, not identical
        assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5


async def test_queries_embed_on_their_own_threads_with_the_documents_weights(tmp_path: Path) -> None:
    # all-int8: the query session (one thread) must load the int8 weights too, never the float ones
    settings = EmbeddingSettings(
        provider="local",
        onnx_cache_dir=tmp_path,
        local_quantize=True,
        local_quantize_queries=False,  # all-int8 already: queries too, whatever this says
        onnx_threads=2,
        onnx_query_threads=1,
    )
    model = LocalEmbedder(settings)
    model.load_sync()
    assert model.runtime == "onnx"
    for text in TEXTS:
        # one text alone each way: int8 activations are quantised per call, so a batch would differ
        (document,) = await model.embed_documents([text])
        assert float(np.dot(await model.embed_query(text), document)) > 0.99999


def test_int8_is_refused_where_it_cannot_run() -> None:
    with pytest.raises(ValueError, match="LOCAL_QUANTIZE"):
        EmbeddingSettings(provider="local", local_runtime="torch", local_quantize=True)
