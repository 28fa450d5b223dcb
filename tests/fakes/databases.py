"""Databases migrated for a given embedding width (the shared fixtures build 384-d ones)."""

from __future__ import annotations

import uuid

import psycopg

from app.db.migrate import upgrade_to_head
from app.db.urls import database_of, with_database


def create_template(admin_url: str, dimension: int) -> str:
    """A migrated database for `dimension` to copy from; returns its name."""
    name = f"tpl_{dimension}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    upgrade_to_head(with_database(admin_url, name), dimension)
    return name


def copy_of(admin_url: str, template: str) -> str:
    """A private copy of `template`; returns its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return with_database(admin_url, name)


def drop(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def name_of(url: str) -> str:
    return database_of(url)
