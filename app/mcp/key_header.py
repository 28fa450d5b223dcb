"""`python -m app.mcp.key_header`: Claude Code's `headersHelper` for Memoria's MCP server.

Claude Code runs this command when it connects to the server and sends the JSON object it prints
as HTTP headers. It prints the `Authorization` header with the key the hook and the CLI use
(`MEMORIA_CLIENT__API_KEY`, else the key file `memoria login` wrote), so the tools work in a shell
that has only the key file; a literal `${MEMORIA_CLIENT__API_KEY}` in the configuration cannot
(Claude Code sends it empty, the server answers 401 and the tools silently vanish).

Standard library only (with `memoria_hook_client.environment`): it runs at every connection.
No key: a message on stderr and exit 1, which Claude Code reports as the server's failure (visible
in `/mcp` and `claude mcp list`) instead of a silent 401.
"""

from __future__ import annotations

import json
import os
import sys

from memoria_hook_client.environment import KeyFileError, key_from_environment


def main() -> int:
    try:
        key = key_from_environment(os.environ)
    except KeyFileError as exc:
        print(f"memoria: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"Authorization": f"Bearer {key}"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
