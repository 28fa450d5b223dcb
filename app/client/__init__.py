"""The `memoria` commands for people: remember, recall, list, forget, import, export, status, login.

They talk to a running server over its REST API (never to the database), so they work the same
against a laptop server and a Kubernetes deployment.
"""
