"""Database access: embedded server, connection pools, migrations."""

from app.db.embedded import EmbeddedPostgres, ServeLockError
from app.db.migrate import current_revision, head_revision, upgrade_to_head
from app.db.pool import Database, create_database
from app.db.transaction import read_only_transaction, transaction_with

__all__ = [
    "Database",
    "EmbeddedPostgres",
    "ServeLockError",
    "create_database",
    "current_revision",
    "head_revision",
    "read_only_transaction",
    "transaction_with",
    "upgrade_to_head",
]
