"""Concept graph: extraction on store, maintenance on change/delete, the graph recall leg, routes."""
