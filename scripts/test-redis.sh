#!/usr/bin/env bash
# Tests of the `redis` feature against a real Redis (tests/redis.rs): tasks shared by several
# servers (read, cancelled and answered through another instance), a stopped instance's task
# failing within its lease, Redis lost and back while serving, Redis unreachable at start-up;
# events (list changes, resource updates, task changes) heard across instances; 2025-11-25 HTTP
# sessions created through one instance, served and ended through another, a call's question to
# the client answered through another instance than the call's; resumable streams
# written on one instance and resumed on another; rate limits counted as one across instances
# (and failing open or closed while Redis is down).
# Installs redis-server from Debian when missing (apt-get, as root in CI), starts it on a free
# port with no persistence in a temporary folder, runs the tests with its URL in
# MCP_TOOLS_REDIS_URL, and stops it at the end. Run by .ci/run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v redis-server >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "redis-server is missing: install it (apt-get install redis-server) or run this as root" >&2
        exit 1
    fi
    echo "== installing redis-server (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi
REDIS_SERVER=$(command -v redis-server)

dir=$(mktemp -d)
pid=
stop() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap stop EXIT

# A free port: the first of a few random ones nothing listens on.
port=
for _ in $(seq 20); do
    candidate=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
done
[ -n "$port" ] || { echo "no free port found" >&2; exit 1; }

"$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
    --daemonize no --logfile "$dir/redis.log" &
pid=$!
for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    if ! kill -0 "$pid" 2>/dev/null; then cat "$dir/redis.log" >&2; exit 1; fi
    sleep 0.1
done
echo "== $("$REDIS_SERVER" --version | cut -d' ' -f1-3) on 127.0.0.1:$port"

export MCP_TOOLS_REDIS_URL="redis://127.0.0.1:$port/"
export MCP_TOOLS_REDIS_SERVER="$REDIS_SERVER"
cargo test -p mcp-tools-workspace --features redis --test redis
# The feature's doc examples (compiled only with it; they need a Redis, so they are not run).
cargo test -p mcp-tools-rs --features redis,rate-limit --doc -- store redis RateLimit
