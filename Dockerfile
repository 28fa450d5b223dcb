# syntax=docker/dockerfile:1
#
# Memoria API image: multi-stage, CPU-only torch, non-root, no build tools in the final stage.
#
#   docker build -t memoria:0.1.0 .
#   docker run -p 8080:8080 -e MEMORIA_DATABASE__URL=postgresql://... memoria:0.1.0          # API
#   docker run -e MEMORIA_DATABASE__URL=postgresql://... memoria:0.1.0 migrate              # schema
#
# `memoria serve` (the default CMD) runs the API; `memoria migrate` (alembic upgrade head, then exit)
# is the command of the Kubernetes migration Job in infra/terraform, which connects to the
# CloudNativePG <cluster>-rw service directly rather than through PgBouncer.
#
# The base image is pinned by tag. For reproducible production builds also pin its digest, e.g.
#   FROM python:3.11-slim-bookworm@sha256:<digest>
# (find it with `docker buildx imagetools inspect python:3.11-slim-bookworm`) and let a bot such as
# Renovate bump it; use the same reference in both stages so the venv's interpreter matches.

############################
# builder: resolve and install everything into /opt/venv
############################
FROM python:3.11-slim-bookworm AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH="/opt/venv/bin:${PATH}"

RUN python -m venv /opt/venv

# CPU build of torch first, from the PyTorch CPU wheel index. `pip install .` then finds torch
# already satisfied and never pulls the CUDA build (several GB of unused GPU libraries).
RUN pip install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0"

WORKDIR /src
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY memoria_hook_client ./memoria_hook_client
COPY migrations ./migrations
RUN pip install .

# The web UI's browser library (cytoscape, from npm at its locked version) into the venv's share
# directory, where the app serves it from (app/ui/routes.py): the runtime stage takes only the venv.
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm \
    && cd app/ui/assets \
    && npm ci --no-audit --no-fund --loglevel=error \
    && install -d /opt/venv/share/memoria/ui/vendor \
    && cp node_modules/cytoscape/dist/cytoscape.esm.min.mjs /opt/venv/share/memoria/ui/vendor/ \
    && cp node_modules/cytoscape/LICENSE /opt/venv/share/memoria/ui/vendor/cytoscape.LICENSE \
    && rm -rf node_modules /var/lib/apt/lists/*

############################
# runtime: the venv + the app files, nothing else
############################
FROM python:3.11-slim-bookworm AS runtime

LABEL org.opencontainers.image.title="memoria" \
      org.opencontainers.image.description="Postgres-native hybrid-search memory API for AI agents"

# - PYTHONPATH=/app: the packages are imported from /app/app and /app/memoria_hook_client (the
#   command line imports the hook client; identical to the installed copies), so
#   alembic.ini and migrations/ sit next to it for `memoria migrate`.
# - HF_HUB_OFFLINE=1: never download models at run time; the local model ships in the venv.
# - HF_HOME, the ONNX export of the local model and the embedded-Postgres data dir are the only
#   writable paths (mount emptyDirs / volumes there when the root filesystem is read-only, as the
#   Kubernetes Deployment does). The export is made on first start (a few seconds) and reused.
ENV PATH="/opt/venv/bin:${PATH}" \
    VIRTUAL_ENV=/opt/venv \
    PYTHONPATH=/app \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    HF_HOME=/var/cache/memoria/huggingface \
    MEMORIA_EMBEDDINGS__ONNX_CACHE_DIR=/var/cache/memoria/onnx \
    MEMORIA_DATABASE__DATA_DIR=/var/lib/memoria/pgdata \
    MEMORIA_SERVER__HOST=0.0.0.0 \
    MEMORIA_SERVER__PORT=8080

RUN groupadd --system --gid 10001 memoria \
    && useradd --system --uid 10001 --gid memoria --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin memoria \
    && install -d -o 10001 -g 10001 -m 0750 /var/cache/memoria /var/lib/memoria

COPY --from=builder /opt/venv /opt/venv

WORKDIR /app
COPY alembic.ini ./
COPY app ./app
COPY memoria_hook_client ./memoria_hook_client
COPY migrations ./migrations

USER 10001:10001

EXPOSE 8080

# No curl in the image: probe with the interpreter that is already there.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4).status == 200 else 1)"]

ENTRYPOINT ["memoria"]
CMD ["serve"]
