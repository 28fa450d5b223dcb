"""The core every layer may use: the settings section base, shared validation and time helpers.

It imports nothing from the domain packages or the adapters (import-linter enforces it).
"""
