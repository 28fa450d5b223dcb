"""`python -m app.cli`: the `memoria` command without its console script."""

import sys

from app.cli import main

sys.exit(main(prog_name="memoria"))
