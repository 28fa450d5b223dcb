"""Memoria: a Postgres-native hybrid-search memory API for AI agents. See `app.factory.create_app`."""
