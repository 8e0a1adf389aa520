#!/usr/bin/env bash
# OpenTelemetry end to end: examples/everything exports a span per request by OTLP to a real
# collector, Arize Phoenix (PyPI `arize-phoenix`, pinned with everything it pulls in:
# tests/interop/otel/requirements.txt), and tests/interop/otel_e2e.py reads the traces back from
# Phoenix's REST API and checks the span tree: the client's traceparent -> the server span (its
# name and attributes after OpenTelemetry's MCP semantic conventions) -> the handler's own span;
# over stdio in a 2025-11-25 session and over Streamable HTTP with 2026-07-28 requests (trace
# context in `params._meta`, or in the `traceparent` header). It also checks that the metric
# mcp.server.operation.duration reaches an OTLP/HTTP metrics endpoint (Phoenix stores traces only;
# the client runs a small receiver for metrics).
#
#   bash scripts/otel-e2e.sh          (scripts/interop.sh runs it as its section 8)
#
# Phoenix goes into a venv in $OTEL_E2E_DIR/venv (default target/otel-e2e/, git-ignored;
# scripts/interop.sh uses .cache/interop/otel/): kept between runs, reinstalled when the
# requirements or the Python change (about 80 s and 190 MB of downloads the first time, 850 MB
# installed). It runs on free ports on 127.0.0.1 with a fresh working folder, no telemetry of its
# own and no external resources, and is stopped on exit. Logs: $OTEL_E2E_DIR/logs/.
# Prints "ok - ..." / "not ok - ..." lines, then "N passed, M failed"; exits non-zero when M > 0
# (a failed setup step counts as a failed check).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIR="${OTEL_E2E_DIR:-$ROOT/target/otel-e2e}"
VENV="$DIR/venv"
LOGS="$DIR/logs"
REQUIREMENTS="$ROOT/tests/interop/otel/requirements.txt"
rm -rf "$LOGS" "$DIR/phoenix"
mkdir -p "$LOGS" "$DIR/phoenix"
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$DIR/pip-cache}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PYTHONDONTWRITEBYTECODE=1

# shellcheck source=scripts/tap.sh
source "$ROOT/scripts/tap.sh"
finish() {
  note "otel-e2e finished in $((SECONDS - START)) s; logs in ${LOGS#"$ROOT"/}/"
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
  exit $?
}

PHOENIX_PID=""
CURRENT_PID=""
cleanup() {
  local pid deadline
  for pid in $CURRENT_PID $PHOENIX_PID; do
    kill -TERM "$pid" 2>/dev/null || continue
    deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  CURRENT_PID=""
  PHOENIX_PID=""
}
trap cleanup EXIT
trap 'echo "otel-e2e: interrupted" >&2; exit 130' INT
trap 'echo "otel-e2e: terminated" >&2; exit 143' TERM

# bounded SECONDS CMD...: CMD under `timeout`, in the background so that signals are handled.
bounded() {
  local limit="$1" status
  shift
  timeout --kill-after=10 "$limit" "$@" &
  CURRENT_PID=$!
  wait "$CURRENT_PID"
  status=$?
  CURRENT_PID=""
  return "$status"
}

# --- Python and Phoenix ------------------------------------------------------------------------
PYTHON="$(command -v python3.11 || command -v python3 || true)"
if [ -z "$PYTHON" ] || ! "$PYTHON" -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] < (3, 14))'; then
  not_ok "setup: Python 3.10 to 3.13 is installed (Phoenix needs it)"
  finish
fi
stamp="$(sha256sum <"$REQUIREMENTS" | cut -d' ' -f1) $("$PYTHON" --version 2>&1)"
if [ -f "$VENV/.otel-e2e-stamp" ] && [ "$(cat "$VENV/.otel-e2e-stamp")" = "$stamp" ] && [ -x "$VENV/bin/python" ]; then
  note "${VENV#"$ROOT"/}: Phoenix up to date"
else
  note "${VENV#"$ROOT"/}: $("$PYTHON" --version 2>&1) -m venv; pip install -r ${REQUIREMENTS#"$ROOT"/}"
  rm -rf "$VENV"
  install_start=$SECONDS
  if bounded 120 "$PYTHON" -m venv "$VENV" >"$LOGS/venv.log" 2>&1 \
    && bounded 1200 "$VENV/bin/python" -m pip install -q -r "$REQUIREMENTS" >>"$LOGS/venv.log" 2>&1; then
    echo "$stamp" >"$VENV/.otel-e2e-stamp"
    note "installed in $((SECONDS - install_start)) s"
  else
    not_ok "setup: a venv with ${REQUIREMENTS#"$ROOT"/} in ${VENV#"$ROOT"/}"
    show_tail "$LOGS/venv.log"
    finish
  fi
fi
note "arize-phoenix $("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("arize-phoenix"))')"

read -r HTTP_PORT GRPC_PORT <<<"$("$PYTHON" -c '
import socket
held = [socket.socket() for _ in range(2)]
for s in held: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in held))')"
PHOENIX="http://127.0.0.1:$HTTP_PORT"
phoenix_start=$SECONDS
env PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$HTTP_PORT" PHOENIX_GRPC_PORT="$GRPC_PORT" \
  PHOENIX_WORKING_DIR="$DIR/phoenix" PHOENIX_TELEMETRY_ENABLED=false PHOENIX_ALLOW_EXTERNAL_RESOURCES=false \
  "$VENV/bin/python" -m phoenix.server.main serve >"$LOGS/phoenix.log" 2>&1 &
PHOENIX_PID=$!
up=0
for _ in $(seq 1 600); do
  kill -0 "$PHOENIX_PID" 2>/dev/null || break
  if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$PHOENIX/healthz")" = 200 ]; then
    up=1
    break
  fi
  sleep 0.2
done
if [ "$up" -eq 1 ]; then
  ok "setup: Phoenix answers at $PHOENIX (OTLP/HTTP at /v1/traces) after $((SECONDS - phoenix_start)) s"
else
  not_ok "setup: Phoenix answers at $PHOENIX within 120 s"
  show_tail "$LOGS/phoenix.log"
  finish
fi

# --- the server under test ---------------------------------------------------------------------
if ! bounded 1800 cargo build --quiet --example everything >"$LOGS/cargo-build.log" 2>&1; then
  not_ok "setup: cargo build --example everything"
  show_tail "$LOGS/cargo-build.log"
  finish
fi
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
EVERYTHING="$TARGET_DIR/debug/examples/everything"
if ! "$EVERYTHING" --help | grep -q -- '--otel'; then
  not_ok "setup: everything --help lists --otel"
  finish
fi

# --- the client --------------------------------------------------------------------------------
bounded 300 "$PYTHON" "$ROOT/tests/interop/otel_e2e.py" "$EVERYTHING" "$PHOENIX" "$LOGS" >"$LOGS/client.out" 2>"$LOGS/client.stderr"
status=$?
sed -E 's/^([0-9]+ passed, [0-9]+ failed)$/# client: \1/' "$LOGS/client.out"
PASSED=$((PASSED + $(grep -c '^ok - ' "$LOGS/client.out")))
noks=$(grep -c '^not ok - ' "$LOGS/client.out")
FAILED=$((FAILED + noks))
if [ "$status" -ne 0 ] && [ "$noks" -eq 0 ]; then
  not_ok "client: tests/interop/otel_e2e.py exited with status $status without a failed check"
fi
if [ "$status" -ne 0 ]; then
  show_tail "$LOGS/client.stderr"
  for log in "$LOGS"/otel-everything-*.log; do show_tail "$log"; done
  show_tail "$LOGS/phoenix.log"
fi
cleanup
finish
