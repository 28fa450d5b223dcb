"""The MCP endpoint (`/mcp`): the memory tools an agent stores and recalls through, over the domain
services, with the REST API's keys and scopes; and the Claude Code configuration that points at it.

An adapter like `app.hooks`: the server side (`endpoint`, `calls`, `tools`, `render`) calls
`MemoryService` and `RecallService` and runs no SQL of its own; `install` runs on the client.
Nothing is imported here, so the CLI can load `install` without the MCP SDK.
"""
