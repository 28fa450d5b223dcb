"""Talking to a Memoria server from outside it, over its REST API (never the database).

`api`, `transfer` and `render` serve the `memoria` commands for people (`app.cli.client`), so they
work the same against a laptop server and a Kubernetes deployment. `environment` (shared with the
command hook) and `namespace` (shared with the server's hook endpoint) load the standard library
only. Deliberately empty of imports: the command hook imports `app.client.environment` on every
prompt and must load nothing more.
"""
