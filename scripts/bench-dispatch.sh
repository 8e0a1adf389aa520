#!/usr/bin/env bash
# The in-process dispatch micro-benchmark (issue #13; bench/benches/dispatch.rs, divan): a
# message through the session (decode, route, arguments, call, encode) and back on the
# in-memory queue, where the test client also parses the answer into a serde_json::Value (which
# dominates the 1,000-tool tools/list row). No transport, so a regression in the core shows here
# first. Writes bench/dispatch.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="$(cargo bench --quiet -p mcp-tools-bench --features divan --bench dispatch 2>/dev/null)"
{
  echo "# In-process dispatch (divan)"
  echo
  echo "Written by \`scripts/bench-dispatch.sh\` on $(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD),"
  echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), current-thread runtime."
  echo
  echo '```text'
  echo "$out"
  echo '```'
} > bench/dispatch.md
cat bench/dispatch.md
