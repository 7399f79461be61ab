#!/usr/bin/env bash
# Container smoke: build the project's image and run its compose mesh for real on a Docker engine.
#
#   bash scripts/container_smoke.sh        (as root; CI runs it after the test suite)
#
# Phases, each timed: engine (install docker.io if missing, start a private dockerd unless an
# engine already answers), base (python:3.11-slim-bookworm, or a stand-in built with debootstrap
# from Debian's packages when no registry has it), build (docker build), up (compose up --wait),
# run (scripts/container_smoke_checks.py: generated tasks through the orchestrator container with
# the oracle and noop agents, one tool over REST and one over MCP, /admin not reachable from the
# host), down. CW_SMOKE_AFTER='command' runs before down against the live engine (benchmarks).
# Exit 0: passed. Exit 3: no Docker engine can start on this machine (said loudly;
# the caller skips the step). Any other exit: a failure.
#
# Kept between runs on one machine (never required): the engine's data root (base image, build
# layers) and the stand-in base's root filesystem, under $CW_SMOKE_CACHE. Delete it to start over.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-$ROOT/.venv/bin/python}
CACHE=${CW_SMOKE_CACHE:-/var/cache/compoworld-smoke}
BASE_IMAGE=python:3.11-slim-bookworm
IMAGE=${CW_SMOKE_IMAGE:-compoworld:smoke}
PROJECT=cw-smoke-$$
SKIP=3
RUN=$(mktemp -d /tmp/cw-smoke.XXXXXX)
STARTED_ENGINE=0
COMPOSE_UP=0
declare -a PHASES=()
declare -A SECONDS_OF=()
CURRENT=""
T0=0

say() { printf '[smoke %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
phase() {
  end_phase
  CURRENT=$1
  T0=$(date +%s.%N)
  say "== $1"
}
end_phase() {
  if [ -n "$CURRENT" ]; then
    SECONDS_OF[$CURRENT]=$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN { printf "%.1f", a - b }')
    PHASES+=("$CURRENT")
    CURRENT=""
  fi
}
loud_skip() {
  printf '\n%s\n' "################################################################################"
  printf '#  CONTAINER SMOKE SKIPPED: %s\n' "$1"
  printf '#  No Docker engine could start on this machine, so the image was NOT built and\n'
  printf '#  no container was run. Everything else in CI still counts.\n'
  printf '%s\n\n' "################################################################################"
  exit "$SKIP"
}
report() {
  end_phase
  [ ${#PHASES[@]} -gt 0 ] || return 0
  local total=0
  say "phase timings (seconds):"
  for p in "${PHASES[@]}"; do
    printf '  %-8s %7s\n' "$p" "${SECONDS_OF[$p]}"
    total=$(awk -v a="$total" -v b="${SECONDS_OF[$p]}" 'BEGIN { printf "%.1f", a + b }')
  done
  printf '  %-8s %7s\n' total "$total"
  if [ -n "${CW_SMOKE_TIMINGS:-}" ]; then
    { for p in "${PHASES[@]}"; do printf '%s %s\n' "$p" "${SECONDS_OF[$p]}"; done; } > "$CW_SMOKE_TIMINGS"
  fi
}
# compose down, retried: dockerd 20.10 can refuse to remove the project network ("has active
# endpoints") for a moment after its containers are gone (a libnetwork race, seen once in CI). Between
# tries the stale endpoints are disconnected by force. Fails when a container of the project is left;
# a network the engine still will not release (no container left on it) is reported, not failed.
compose_down() {
  local try net ep
  : > "$RUN/down.log"
  for try in 1 2 3; do
    if "${COMPOSE[@]}" down -t 5 -v --remove-orphans >> "$RUN/down.log" 2>&1; then break; fi
    echo "[down try $try failed]" >> "$RUN/down.log"
    for net in $(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT" 2>/dev/null); do
      for ep in $(docker network inspect -f '{{range .Containers}}{{.Name}} {{end}}' "$net" 2>/dev/null); do
        docker network disconnect -f "$net" "$ep" >> "$RUN/down.log" 2>&1 || true
      done
    done
    sleep 2
  done
  for net in $(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT" 2>/dev/null); do
    docker network rm "$net" >> "$RUN/down.log" 2>&1 || true
  done
  if [ -n "$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" 2>/dev/null)" ]; then
    echo "[containers of $PROJECT left after down]" >> "$RUN/down.log"
    return 1
  fi
  if [ -n "$(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT" 2>/dev/null)" ]; then
    # no container is left, only an endpoint the engine has not released: said, not failed
    say "WARNING: the engine kept network(s) of $PROJECT after down (a stale endpoint); containers are all gone"
    tail -5 "$RUN/down.log"
  fi
  return 0
}
cleanup() {
  local rc=$?
  set +e
  if [ "$COMPOSE_UP" = 1 ]; then
    [ "$rc" = 0 ] || "${COMPOSE[@]}" ps -a 2>&1 | tail -30
    [ "$rc" = 0 ] || "${COMPOSE[@]}" logs --tail 20 orchestrator 2>&1 | tail -40
    if [ "$rc" != 0 ]; then  # the first unhealthy container: its own log and its health probes' output
      local sick
      sick=$("${COMPOSE[@]}" ps -a --format '{{.Name}} {{.Status}}' 2>/dev/null | awk '/unhealthy/ {print $1; exit}')
      if [ -n "$sick" ]; then
        say "first unhealthy container: $sick"
        docker logs --tail 20 "$sick" 2>&1 | tail -20
        docker inspect --format '{{range .State.Health.Log}}{{.ExitCode}} {{.Output}}{{end}}' "$sick" 2>&1 | tail -10
        say "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
      fi
    fi
    compose_down || tail -5 "$RUN/down.log"
  fi
  if [ "$STARTED_ENGINE" = 1 ]; then  # only the engine this script started, by its pidfile
    local pid
    pid=$(cat "$RUN/docker.pid" 2>/dev/null || true)
    if [ -n "$pid" ]; then
      kill "$pid" 2>/dev/null
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    fi
    [ "$rc" = 0 ] || [ "$rc" = "$SKIP" ] || tail -20 "$RUN/dockerd.log"
    mountpoint -q "$RUN/exec/netns/default" 2>/dev/null && umount "$RUN/exec/netns/default"
    for m in $(awk -v r="$RUN" '$2 ~ "^"r {print $2}' /proc/mounts | sort -r); do umount "$m"; done
  fi
  [ "$rc" = 0 ] || [ "$rc" = "$SKIP" ] || say "FAILED (exit $rc) in phase '${CURRENT:-?}'"
  report
  rm -rf "$RUN"
  exit "$rc"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || loud_skip "not root: a private Docker engine needs root"
mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
flock -w 1800 9 || { say "another smoke run holds $CACHE/lock"; exit 1; }

# -- engine -------------------------------------------------------------------------------------
phase engine
if docker info >/dev/null 2>&1; then
  say "using the Docker engine that already answers (${DOCKER_HOST:-default socket})"
else
  if ! command -v dockerd >/dev/null 2>&1; then
    say "installing docker.io from Debian's packages"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io) \
      > "$RUN/apt.log" 2>&1 || { tail -5 "$RUN/apt.log"; loud_skip "docker.io could not be installed"; }
  fi
  export DOCKER_HOST="unix://$RUN/docker.sock"
  dockerd --storage-driver=overlay2 --data-root "$CACHE/docker" --exec-root "$RUN/exec" \
    --pidfile "$RUN/docker.pid" -H "$DOCKER_HOST" > "$RUN/dockerd.log" 2>&1 &
  STARTED_ENGINE=1
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  if ! docker info >/dev/null 2>&1; then
    tail -15 "$RUN/dockerd.log"
    loud_skip "dockerd did not answer within 60 s (see its log above)"
  fi
  say "private dockerd $(docker version --format '{{.Server.Version}}') on $DOCKER_HOST"
fi

# -- base image ---------------------------------------------------------------------------------
phase base
if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  say "$BASE_IMAGE is present"
else
  # No registry is reachable here: a stand-in with Debian bookworm's Python 3.11, trusting this
  # machine's CA bundle so that pip inside the build reaches the package index.
  rootfs_tar="$CACHE/bookworm-python-rootfs.tar"
  if [ ! -s "$rootfs_tar" ]; then
    command -v debootstrap >/dev/null 2>&1 || (apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap) > "$RUN/apt.log" 2>&1
    mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    mirror=${mirror:-$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)}
    rootfs="$RUN/rootfs"
    say "debootstrap bookworm from ${mirror:-the default mirror} (a few minutes, cached afterwards)"
    debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
      bookworm "$rootfs" ${mirror:+"$mirror"} > "$RUN/debootstrap.log" 2>&1 \
      || { tail -20 "$RUN/debootstrap.log"; exit 1; }
    ln -sf python3 "$rootfs/usr/bin/python"
    cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/host-ca-bundle.crt"
    printf '[global]\ncert = /etc/ssl/certs/host-ca-bundle.crt\n' > "$rootfs/etc/pip.conf"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -cf "$rootfs_tar.part" . && mv "$rootfs_tar.part" "$rootfs_tar"
    rm -rf "$rootfs"
  fi
  docker import -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$rootfs_tar" "$BASE_IMAGE" > /dev/null
  say "imported the stand-in $BASE_IMAGE"
fi

# -- build --------------------------------------------------------------------------------------
phase build
# The legacy builder: BuildKit would try to pull the `# syntax=` frontend from a registry.
DOCKER_BUILDKIT=0 docker build -q -t "$IMAGE" . > "$RUN/build.log" 2>&1 || { tail -40 "$RUN/build.log"; exit 1; }
say "built $IMAGE ($(docker image inspect "$IMAGE" --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}'))"

# -- up -----------------------------------------------------------------------------------------
phase up
COMPOSE_BIN=$("$PY" -c 'import compose, pathlib; print(pathlib.Path(compose.__file__).parent / "docker-compose")')
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
COMPOWORLD_ADMIN_TOKEN=$("$PY" -c 'import secrets; print(secrets.token_urlsafe(32))')
export COMPOWORLD_ADMIN_TOKEN CW_IMAGE=$IMAGE CW_PORT=$PORT
COMPOSE=("$COMPOSE_BIN" -p "$PROJECT" -f "$ROOT/docker-compose.yml" --project-directory "$ROOT")
COMPOSE_UP=1
"${COMPOSE[@]}" up -d --no-build --wait --wait-timeout 600 > "$RUN/up.log" 2>&1 || { tail -30 "$RUN/up.log"; exit 1; }
say "$("${COMPOSE[@]}" ps -q | wc -l) containers healthy; orchestrator on 127.0.0.1:$PORT"

# -- run ----------------------------------------------------------------------------------------
phase run
"$PY" "$ROOT/scripts/container_smoke_checks.py" --url "http://127.0.0.1:$PORT" --project "$PROJECT" \
  --work "$RUN" --stats "${CW_SMOKE_STATS:-}"

# Optional, not part of the smoke: a command to run against the live engine and image (e.g. the
# container memory benchmark); DOCKER_HOST and CW_IMAGE are exported for it.
if [ -n "${CW_SMOKE_AFTER:-}" ]; then
  phase extra
  bash -c "$CW_SMOKE_AFTER"
fi

# -- down ---------------------------------------------------------------------------------------
phase down
compose_down || { tail -10 "$RUN/down.log"; exit 1; }
COMPOSE_UP=0
end_phase
say "container smoke passed"
