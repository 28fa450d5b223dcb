# `make run` serves Memoria (API and web UI) on an embedded PostgreSQL; `make test` runs the whole test suite.
# Each creates .venv on first use. torch is installed first, pinned, so no CUDA build is pulled.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

VENDOR := app/ui/static/vendor/cytoscape.esm.min.mjs

.PHONY: run test lint docs venv clean

$(STAMP): pyproject.toml
	@echo "First use (or pyproject.toml changed): creating $(VENV) and installing Memoria's dependencies"
	@echo "(PyTorch, ONNX Runtime, an embedded PostgreSQL...). This takes a few minutes, once."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)
	@echo "$(VENV) is ready."

venv: $(STAMP)

# The web UI's browser library (cytoscape, from npm; served by the app, never from a CDN).
$(VENDOR): app/ui/assets/package-lock.json
	bash .ci/ui-assets.sh

run: $(STAMP) $(VENDOR)
	HF_HUB_OFFLINE=1 $(BIN)/memoria serve

# pytest-xdist workers, each with its own embedded PostgreSQL; a test file stays on one worker, so its
# fixtures are built once. 0 (one process) by default: with two workers on a two-core machine a
# real agent CLI's hook can miss its time budget while the other worker loads the machine.
TEST_WORKERS ?= 0

test: $(STAMP) $(VENDOR)
	bash .ci/pgbouncer-tests.sh --install-only  # the pooler tests run against a real PgBouncer
	bash .ci/browser-tests.sh --install-only    # the web UI's tests drive Debian's chromium
	HF_HUB_OFFLINE=1 $(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

# import-linter (the layers, docs/architecture.md, the bench and the hook client's standard-library-only rule),
# ruff, ruff format, mypy --strict on app, the hook client, the bench and tests.
lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check app memoria_hook_client memoria_bench tests migrations
	$(BIN)/ruff format --check app memoria_hook_client memoria_bench tests migrations
	$(BIN)/mypy
	$(BIN)/mypy migrations

# The documentation site, built with --strict into a temporary directory (every link must resolve).
docs: $(STAMP)
	bash .ci/docs.sh

clean:
	rm -rf $(VENV)
