"""Talking to a Memoria server from outside it, over its REST API (never the database).

`api`, `transfer` and `render` serve the `memoria` commands for people (`app.cli.client`), so they
work the same against a laptop server and a Kubernetes deployment; `settings` is their
configuration (`ClientSettings`) and `json_file` edits agents' JSON config files in place. The
standard-library-only readers of the same environment (`environment`, `namespace`) live in
`memoria_hook_client`, which the command hook loads on every prompt.
"""
