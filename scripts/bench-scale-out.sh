#!/usr/bin/env bash
# Load on several instances serving as one (issue #43, item 4; not a test, not in CI): 64 clients
# for 10 minutes through nginx (plain round robin, keep-alive to the instances) over THREE
# `everything --http ADDR --redis URL` instances (release build, `redis` feature) sharing one
# Redis (Debian's redis-server, with append-only persistence, fsync every second, as the guide
# advises for tasks), then the same load on ONE `everything --http ADDR` in memory (no Redis, no
# nginx) for comparison. The driver is bench/src/bin/scale_out.rs (`mcp-scale-out`): 48
# 2026-07-28 clients calling `greet`, 12 of which make every fifth request a 0.5 s
# `slow_compute` task polled with `tasks/get` until its result, checked, and 16 2025-11-25
# clients (sessions of 100 `greet` calls, then DELETE); every answer checked; Redis's command
# counters read before and after.
#
#   bash scripts/bench-scale-out.sh                 # 600 s each phase, writes bench/scale-out-load.md
#   bash scripts/bench-scale-out.sh --seconds 30    # a short try (writes into .cache/ only)
#
# Installs redis-server and nginx with apt-get when missing (as root). Fails when any request
# was lost (the driver exits 1).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECONDS_EACH=600
CLIENTS=64
SESSIONS=16
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_EACH="$2"; shift 2 ;;
    --clients) CLIENTS="$2"; shift 2 ;;
    --sessions) SESSIONS="$2"; shift 2 ;;
    *) echo "usage: bench-scale-out.sh [--seconds N] [--clients N] [--sessions N]" >&2; exit 2 ;;
  esac
done
DIR="$ROOT/.cache/bench-scale-out"
rm -rf "$DIR"
mkdir -p "$DIR/redis" "$DIR/nginx/tmp"
started=$SECONDS
lost=0

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  PIDS=()
}
trap cleanup EXIT

install() {
  command -v "$2" >/dev/null 2>&1 || [ -x "/usr/sbin/$2" ] && return 0
  [ "$(id -u)" -eq 0 ] || { echo "$2 is missing: run as root to apt-get install $1" >&2; exit 1; }
  echo "# apt-get install $1"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$1" >/dev/null
}
install redis-server redis-server
install nginx nginx
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
REDIS_SERVER="$(command -v redis-server)"

# wait_tcp PORT: until something listens on 127.0.0.1:PORT (20 s at most).
wait_tcp() {
  for _ in $(seq 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "nothing listens on 127.0.0.1:$1" >&2
  return 1
}
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

echo "# cargo build --release (everything with redis; mcp-scale-out)"
cargo build --release --quiet --features redis --example everything
cargo build --release --quiet -p mcp-tools-bench --features scale-out --bin mcp-scale-out
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
EVERYTHING="$TARGET_DIR/release/examples/everything"
DRIVER="$TARGET_DIR/release/mcp-scale-out"

# === 1. three instances, Redis, nginx =========================================================
P_REDIS=$(free_port)
"$REDIS_SERVER" --port "$P_REDIS" --bind 127.0.0.1 --appendonly yes --appendfsync everysec --save "" \
  --dir "$DIR/redis" --daemonize no >"$DIR/redis.log" 2>&1 &
PIDS+=($!)
wait_tcp "$P_REDIS"
REDIS_URL="redis://127.0.0.1:$P_REDIS/"
PORTS=()
for i in 1 2 3; do
  port=$(free_port)
  RUST_LOG=warn "$EVERYTHING" --http "127.0.0.1:$port" --redis "$REDIS_URL" >"$DIR/everything-$i.log" 2>&1 &
  PIDS+=($!)
  PORTS+=("$port")
done
PN=$(free_port)
NGX="$DIR/nginx"
cat >"$NGX/nginx.conf" <<EOF
# Written by scripts/bench-scale-out.sh: round robin over three everything instances.
daemon off;
master_process off;
worker_processes 1;
pid $NGX/nginx.pid;
error_log $NGX/error.log warn;
events { worker_connections 1024; }
http {
  client_body_temp_path $NGX/tmp/client_body;
  proxy_temp_path $NGX/tmp/proxy;
  fastcgi_temp_path $NGX/tmp/fastcgi;
  uwsgi_temp_path $NGX/tmp/uwsgi;
  scgi_temp_path $NGX/tmp/scgi;
  access_log off;
  upstream everything {
    server 127.0.0.1:${PORTS[0]};
    server 127.0.0.1:${PORTS[1]};
    server 127.0.0.1:${PORTS[2]};
    keepalive 128;
  }
  server {
    listen 127.0.0.1:$PN;
    keepalive_requests 1000000;
    location / {
      proxy_pass http://everything;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_buffering off;
      proxy_read_timeout 300s;
      add_header X-Upstream \$upstream_addr always;
    }
  }
}
EOF
"$NGINX" -p "$NGX" -e "$NGX/error.log" -c "$NGX/nginx.conf" >"$DIR/nginx.log" 2>&1 &
PIDS+=($!)
for port in "${PORTS[@]}" "$PN"; do wait_tcp "$port"; done
echo "# phase 1: $CLIENTS clients ($SESSIONS of them 2025-11-25) for $SECONDS_EACH s through nginx over 3 instances, Redis at $REDIS_URL"
"$DRIVER" "http://127.0.0.1:$PN/mcp" --clients "$CLIENTS" --sessions "$SESSIONS" --seconds "$SECONDS_EACH" \
  --redis "$REDIS_URL" --out "$DIR/three" >"$DIR/three.out" || lost=1
redis_rss=$(awk '/VmHWM/ {print $2}' "/proc/${PIDS[0]}/status")
inst_rss=""
for i in 1 2 3; do inst_rss+="$(awk '/VmHWM/ {print $2}' "/proc/${PIDS[$i]}/status") "; done
cleanup

# === 2. one instance, in memory ===============================================================
port=$(free_port)
RUST_LOG=warn "$EVERYTHING" --http "127.0.0.1:$port" >"$DIR/everything-alone.log" 2>&1 &
PIDS+=($!)
wait_tcp "$port"
echo "# phase 2: the same load on one instance in memory (no Redis, no nginx)"
"$DRIVER" "http://127.0.0.1:$port/mcp" --clients "$CLIENTS" --sessions "$SESSIONS" --seconds "$SECONDS_EACH" \
  --out "$DIR/alone" >"$DIR/alone.out" || lost=1
alone_rss=$(awk '/VmHWM/ {print $2}' "/proc/${PIDS[0]}/status")
cleanup

OUT="$DIR/scale-out-load.md"
[ "$SECONDS_EACH" -ge 600 ] && OUT="$ROOT/bench/scale-out-load.md"
python3 - "$DIR/three.json" "$DIR/alone.json" "$OUT" "$SECONDS_EACH" "$CLIENTS" "$SESSIONS" \
  "$redis_rss" "$inst_rss" "$alone_rss" "$((SECONDS - started))" <<'EOF'
import json, subprocess, sys
three, alone = (json.load(open(p)) for p in sys.argv[1:3])
out, seconds, clients, sessions, redis_rss, inst_rss, alone_rss, took = sys.argv[3:]
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mib = lambda kib: f"{int(kib) / 1024:.1f} MiB"
L = []
L.append("# Several instances under load: 64 clients for 10 minutes (issue #43)\n")
L.append(f"Written by `scripts/bench-scale-out.sh` at {commit}{' (with uncommitted changes)' if dirty else ''}, "
         f"{subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} cores ({cpu}); the whole script took {int(took) // 60} min. "
         "Raw figures: the driver's JSON, kept in `.cache/bench-scale-out/` (three.json, alone.json).\n")
L.append(f"{clients} clients at once, each one request at a time, for {seconds} s: {int(clients) - int(sessions)} "
         "2026-07-28 clients calling `greet`, of which one in four makes every fifth request a "
         "`slow_compute` task of 0.5 s with the tasks extension, polled with `tasks/get` every 100 ms "
         "until completed, its result checked, every tenth task's result read a second time (all the "
         "clients come from one address, one caller to the server, whose running tasks are limited to "
         "16 per instance by default: 12 task clients stay under it), and "
         f"{sessions} 2025-11-25 clients (a session, 100 "
         "`greet` calls, DELETE, again). Every answer is checked against its request (the greeting "
         "names the call, the result names the task). The driver (`mcp-scale-out`, "
         "bench/src/bin/scale_out.rs) runs on the same 2 cores as everything else.\n")
L.append("* **three instances**: nginx 1 worker, round robin, keep-alive to the instances, in front of three "
         "`everything --http ADDR --redis URL` (release); Redis (Debian's) with `--appendonly yes "
         "--appendfsync everysec`;")
L.append("* **one instance, in memory**: one `everything --http ADDR` (release), no Redis, no nginx, the same load.\n")
def row(name, d):
    lost = d["errors"]
    t = d["tasks"]
    return (f"| {name} | {d['requests_answered']:,} | {d['requests_per_second']:,.0f} /s | **{lost}** | "
            f"{t['started']:,} / {t['completed_and_checked']:,} / {t['read_again_identical']:,} | "
            f"{d['sessions']['opened']:,} / {d['sessions']['ended']:,} |")
L.append("| | requests answered | rate | lost or wrong | tasks started / completed with their result / read again, same | 2025 sessions opened / ended |")
L.append("|---|---|---|---|---|---|")
L.append(row("three instances, Redis, nginx", three))
L.append(row("one instance, in memory", alone))
L.append("")
L.append("Latency of each kind of request, in ms (whole run):\n")
L.append("| request | three: count | p50 | p99 | p99.9 | max | one, in memory: count | p50 | p99 | p99.9 | max |")
L.append("|---|---|---|---|---|---|---|---|---|---|---|")
for kind in sorted(set(three["kinds"]) | set(alone["kinds"])):
    cells = []
    for d in (three, alone):
        k = d["kinds"].get(kind)
        cells += [f"{k['count']:,}", f"{k['p50_ms']:.2f}", f"{k['p99_ms']:.2f}", f"{k['p999_ms']:.2f}", f"{k['max_ms']:.1f}"] if k else ["–"] * 5
    L.append(f"| {kind} | " + " | ".join(cells) + " |")
L.append("")
L.append("Minute by minute (three instances), `greet (2026-07-28)` and `tasks/get`: p50 / p99 ms:\n")
L.append("| minute | greet (2026-07-28) | tasks/get |")
L.append("|---|---|---|")
g = {m["minute"]: m for m in three["kinds"].get("greet (2026-07-28)", {}).get("by_minute", [])}
p = {m["minute"]: m for m in three["kinds"].get("tasks/get", {}).get("by_minute", [])}
for minute in sorted(set(g) | set(p)):
    cell = lambda d: f"{d[minute]['p50_ms']:.2f} / {d[minute]['p99_ms']:.2f} ({d[minute]['count']:,})" if minute in d else "–"
    L.append(f"| {minute} | {cell(g)} | {cell(p)} |")
L.append("")
r = three["redis"]
L.append(f"**Redis round trips**: {r['commands']:,} commands over {three['requests_answered']:,} requests answered: "
         f"**{r['per_request']:.2f} per request** (Redis's `INFO commandstats`, before and after; every instance's "
         "commands, the lease renewals and bus subscriptions included). By command:\n")
L.append("| command | calls | per request |")
L.append("|---|---|---|")
for name, calls in sorted(r["by_command"].items(), key=lambda kv: -kv[1]):
    L.append(f"| `{name}` | {calls:,} | {calls / three['requests_answered']:.3f} |")
L.append("")
L.append("Which instance answered (nginx's `X-Upstream`): " + ", ".join(f"{u} {n:,}" for u, n in three["upstreams"].items()) + ".\n")
L.append(f"Peak resident memory: Redis {mib(redis_rss)}; the three instances " + ", ".join(mib(k) for k in inst_rss.split()) +
         f"; the one in-memory instance {mib(alone_rss)}.\n")
if three["error_samples"] or alone["error_samples"]:
    L.append("Errors seen: " + "; ".join(three["error_samples"] + alone["error_samples"]) + "\n")
L.append("<!-- notes below are kept by scripts/bench-scale-out.sh -->\n")
try:
    old = open(out).read()
    notes = old.split("<!-- notes below are kept by scripts/bench-scale-out.sh -->\n", 1)[1]
except (FileNotFoundError, IndexError):
    notes = ""
open(out, "w").write("\n".join(L) + notes)
print(f"wrote {out}")
EOF
echo "# bench-scale-out finished in $((SECONDS - started)) s"
if [ "$lost" -ne 0 ]; then echo "bench-scale-out: requests were lost or wrong (see the report)" >&2; exit 1; fi
