# syntax=docker/dockerfile:1
# One image for every generated service and the orchestrator (DESIGN: one image,
# one container per service). Run one service, several (each at /services/<name>),
# or the orchestrator:
#   docker run compoworld serve <svc> --host 0.0.0.0 --port 8000
#   docker run compoworld serve <a> <b> <c> --host 0.0.0.0 --port 8000
#   docker run -p 8000:8000 compoworld orchestrator --host 0.0.0.0 --port 8000

FROM python:3.11-slim-bookworm AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
RUN python -m venv /opt/venv
COPY pyproject.toml README.md ./
COPY compoworld ./compoworld
COPY orchestrator ./orchestrator
COPY trainer ./trainer
COPY service_templates ./service_templates
# The runtime install only: no dev extras (validators, linters, test tools).
RUN /opt/venv/bin/pip install --no-cache-dir .

FROM python:3.11-slim-bookworm
RUN groupadd --system --gid 10001 compoworld \
 && useradd --system --uid 10001 --gid compoworld --no-create-home --home-dir /tmp --shell /usr/sbin/nologin compoworld
COPY --from=build /opt/venv /opt/venv
# The service library, read-only at run time (owned by root).
COPY generated_services /app/generated_services
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    MPLCONFIGDIR=/tmp/matplotlib \
    XDG_CACHE_HOME=/tmp/.cache \
    COMPOWORLD_LIBRARY=/app/generated_services \
    HEALTHCHECK_URL=http://127.0.0.1:8000/health
WORKDIR /app
USER 10001:10001
EXPOSE 8000
# Python, not curl: the slim image has no curl. Single services and packs both
# answer GET /health; set HEALTHCHECK_URL if you serve on another port.
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD ["python", "-m", "compoworld.deploy.healthcheck"]
# `serve` and `orchestrator` start with only what serving needs (no typer/rich, no SQLAlchemy
# resident); any other command is handed to the full `compoworld` CLI.
ENTRYPOINT ["python", "-m", "compoworld.deploy.entrypoint"]
CMD ["orchestrator", "--host", "0.0.0.0", "--port", "8000"]
