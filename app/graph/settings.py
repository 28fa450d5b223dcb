"""Concept extraction on store and the graph leg of recall."""

from __future__ import annotations

from pydantic import Field

from app.core.settings import Section


class GraphSettings(Section):
    enabled: bool = Field(default=True, description="extract concepts on store and run the graph leg")
    # A quarter: with concepts limited to what a person would name (app/graph/extract.py), the leg
    # finds fewer memories, and at the weight of a text leg it outranked their best hits.
    weight: float = Field(
        default=0.25,
        ge=0,
        le=10,
        description="RRF weight of the graph leg",
    )
    concept_embeddings: bool = Field(
        default=False,
        description="embed concept names: seeds the graph by nearest concepts and merges near-duplicates "
        "(costs an embedding per new concept)",
    )
    max_concepts_per_memory: int = Field(
        default=12,
        ge=1,
        le=50,
        description="Most concepts one memory is linked to (bounds a store's graph work).",
    )
    max_hops: int = Field(default=2, ge=1, le=2, description="hops walked out from the seeds (1 or 2)")
    hop_decay: float = Field(default=0.25, gt=0, le=1, description="activation kept per hop")
    fanout: int = Field(default=8, ge=1, le=200, description="strongest edges followed per concept")
    max_seeds: int = Field(default=8, ge=1, le=100, description="rarest query concepts that seed the walk")
    max_concepts: int = Field(default=32, ge=1, le=1000, description="most activated concepts scored")
    memories_per_concept: int = Field(
        default=20, ge=1, description="most memories one reached concept contributes (bounds the leg's cost)"
    )
    hub_fraction: float = Field(
        default=0.01, gt=0, le=1, description="concepts in more than this share of a namespace are hubs"
    )
    hub_min_doc_freq: int = Field(default=25, ge=1, description="a concept is never a hub below this count")
    feedback_hits: int = Field(
        default=20,
        ge=0,
        le=100,
        description="best lexical+dense hits whose rare concepts also activate the graph leg "
        "(pseudo-relevance feedback); 0: off",
    )
    feedback_weight: float = Field(
        default=1.0, ge=0, le=10, description="activation of a feedback concept per hit"
    )
    feedback_max_fraction: float = Field(
        default=0.02,
        gt=0,
        le=1,
        description="feedback concepts are those in at most this share of the namespace",
    )
    feedback_concepts: int = Field(default=16, ge=1, le=1000, description="most feedback concepts scored")
    seed_neighbors: int = Field(default=5, ge=0, le=50, description="nearest concepts (by embedding) seeded")
    seed_min_similarity: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Least cosine similarity for a concept to be seeded by embedding.",
    )
    merge_similarity: float = Field(
        default=0.92, ge=0, le=1, description="a new concept this close to an existing one becomes its alias"
    )
    evidence_ids_kept: int = Field(default=50, ge=1, description="evidence memory ids kept per edge")
