"""Recall: hybrid lexical + dense search fused with weighted RRF in one SQL statement."""

from app.recall.service import RecallService

__all__ = ["RecallService"]
