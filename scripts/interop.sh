#!/usr/bin/env bash
# Interop test: the official MCP TypeScript SDK client (pinned in tests/interop/package.json)
# against the quickstart example server over stdio.
#
#   bash scripts/interop.sh
#
# Installs the npm packages from tests/interop/package-lock.json (npm ci), builds
# `cargo build --example quickstart`, runs tests/interop/ts_client.mjs with the machine's node.
# Ends with a line "N passed, M failed"; exits non-zero when any check failed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
INTEROP="$ROOT/tests/interop"

summary_fail() {
  # A setup step failed before any check ran: still end with the summary line.
  echo "interop: $1" >&2
  echo "0 passed, 1 failed"
  exit 1
}

command -v node >/dev/null 2>&1 || summary_fail "node is not installed"
command -v npm >/dev/null 2>&1 || summary_fail "npm is not installed"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 18 ]; then
  summary_fail "node $(node --version) is too old: the MCP SDK needs node 18 or newer"
fi
echo "interop: node $(node --version), npm $(npm --version)"

# 1. npm packages, exactly as locked. npm ci leaves node_modules/.package-lock.json behind;
#    when it matches the committed lock, node_modules is up to date and the install is skipped.
if [ -f "$INTEROP/node_modules/.package-lock.json" ] \
  && [ -d "$INTEROP/node_modules/@modelcontextprotocol/sdk" ] \
  && node -e '
      const fs = require("fs");
      const a = JSON.parse(fs.readFileSync(process.argv[1], "utf8")).packages;
      const b = JSON.parse(fs.readFileSync(process.argv[2], "utf8")).packages;
      const strip = (p) => Object.fromEntries(Object.entries(p)
        .filter(([k]) => k !== "")
        .map(([k, v]) => [k, v.version + " " + (v.integrity || "")]));
      process.exit(JSON.stringify(strip(a)) === JSON.stringify(strip(b)) ? 0 : 1);
    ' "$INTEROP/package-lock.json" "$INTEROP/node_modules/.package-lock.json" 2>/dev/null; then
  echo "interop: tests/interop/node_modules is up to date"
else
  echo "interop: npm ci in tests/interop"
  (cd "$INTEROP" && npm ci --no-audit --no-fund --loglevel=error) \
    || summary_fail "npm ci failed in tests/interop"
fi

# 2. The example server, in the workspace's shared target dir (debug profile).
echo "interop: cargo build --example quickstart"
cargo build --example quickstart --quiet || summary_fail "cargo build --example quickstart failed"
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
BIN="$TARGET_DIR/debug/examples/quickstart"
[ -x "$BIN" ] || summary_fail "no binary at $BIN after the build"

# 3. The TypeScript SDK client checks; the script's status is theirs.
cd "$INTEROP"
status=0
node ts_client.mjs "$BIN" || status=$?
if [ "$status" -ne 0 ]; then
  echo "interop: FAILED (ts_client.mjs exited $status)" >&2
fi
exit "$status"
