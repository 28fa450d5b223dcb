"""Test doubles that speak real protocols (HTTP on 127.0.0.1), never monkeypatches."""
