#!/usr/bin/env bash
# Deferred mode as a client sees it: tools/list size direct vs deferred, and the search_tools
# round trip over stdio against ping, on a synthetic 10,000-tool catalog. Writes bench/deferred.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --quiet --example catalog --example bench_deferred
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
{
  echo "# Deferred mode: token economy and round trip"
  echo
  echo "Reproduce: \`scripts/bench-deferred.sh\` ($(nproc) cores, $(date -u +%Y-%m-%d))."
  echo
  "$target_dir/release/examples/bench_deferred"
} | tee bench/deferred.md
