"""Durable background jobs: rows in Postgres, worked by a bounded pool of loops in the app lifespan.

Services add jobs inside the transaction of the change that needs them (`JobQueue.add`); handlers,
registered by kind in `app.factory`, finish them inside the transaction of their work (`complete`).
This package knows no domain: it never imports one.
"""

from app.jobs.queue import BatchFailed, Job, JobQueue, NewJob, complete, complete_for_memories
from app.jobs.settings import JobSettings
from app.jobs.worker import Handler, JobWorker, Reconciler

__all__ = [
    "BatchFailed",
    "Handler",
    "Job",
    "JobQueue",
    "JobSettings",
    "JobWorker",
    "NewJob",
    "Reconciler",
    "complete",
    "complete_for_memories",
]
