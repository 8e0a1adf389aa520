#!/usr/bin/env bash
# Performance suite (not a test; issue #13): the same two tools (`add`, `echo`) served by
# mcp-tools (examples/bench_server.rs), by rmcp written the way its README shows
# (bench/src/bin/rmcp_bench.rs), by the official TypeScript SDK (bench/ts/server.mjs, stdio) and
# by hand-written floors (bench/floor/src/bin/floor_*.rs), driven by
# bench/src/main.rs (`mcp-bench`) in one run, so that the ratios compare like with like. Also the
# catalog's size (examples/bench_large.rs with 10, 1,000 and 10,000 runtime tools).
#
#   scripts/bench-perf.sh            # release build, 3 runs of everything, writes bench/perf.md
#   scripts/bench-perf.sh --quick    # one short run, to try a change (writes nothing in bench/)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# (Separate builds: target flags such as --example apply to every package named, and the floors'
# package is built alone so that its serde_json gets no feature the other packages turn on:
# features are unified across the packages of one build.)
cargo build --release --quiet -p mcp-tools-bench --features rmcp
cargo build --release --quiet --example bench_server --example bench_large
cargo build --release --quiet -p mcp-tools-floor
# The TypeScript SDK server (bench/ts/server.mjs), with the packages of bench/ts/package-lock.json.
if [ ! -d bench/ts/node_modules/@modelcontextprotocol/sdk ]; then
  npm ci --prefix bench/ts --no-audit --no-fund --silent
fi
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
driver="$target_dir/release/mcp-bench"
if [ "${1:-}" = "--quick" ]; then
  shift
  exec "$driver" --quick --ts-server bench/ts/server.mjs --out "$(mktemp -d)/perf" "$@"
fi
# Two runs of the suite. Pinned: the driver on CPU 0, every server on CPU 1 (`taskset`), so each
# request crosses between the same two cores: the steadiest figures on a shared VM, and a
# server's cost on one core. Free: the scheduler places everything (a multi-threaded server may
# then use both cores; latencies are bimodal, as the cores happen to sleep or not).
taskset -c 0 "$driver" --pin --ts-server bench/ts/server.mjs --out bench/perf-pinned "$@"
"$driver" --ts-server bench/ts/server.mjs --out bench/perf "$@"
notes_marker='<!-- notes below are kept by scripts/bench-perf.sh -->'
notes=""
[ -f bench/perf.md ] && notes="$(awk -v marker="$notes_marker" 'found { print } $0 == marker { found = 1 }' bench/perf.md)"
{
  echo "# Performance: mcp-tools against rmcp and the hand-written floor"
  echo
  echo "Written by \`scripts/bench-perf.sh\` on $(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD)$(git diff --quiet -- . ':!bench/perf*' || echo ' (with uncommitted changes)'),"
  echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))."
  echo "Medians of 3 runs; in brackets, the ratio to the floor's figure of the same run (for"
  echo "rates, higher is better). Raw runs: bench/perf-pinned.json, bench/perf.json."
  echo
  echo "![Each framework's median as a multiple of the floor's, pinned run](perf.svg)"
  echo
  echo "## Pinned (driver on CPU 0, servers on CPU 1)"
  echo
  cat bench/perf-pinned.table.md
  echo
  echo "## Free (no pinning)"
  echo
  cat bench/perf.table.md
  echo
  echo "## The targets, round by round (\`scripts/perf-rounds.py\`)"
  echo
  echo "Each round of the suite starts the servers it compares together and measures them slice by"
  echo "slice, each in turn, so a slow phase of the VM that hits a round hits both figures of that"
  echo "round's ratio; the tables above divide two medians, which may come from different rounds."
  echo "Here each target's ratio is taken within each round, and the median of the three rounds'"
  echo "ratios is the figure (bold: met)."
  echo
  python3 scripts/perf-rounds.py bench/perf-pinned.json bench/perf.json
  echo
  echo "$notes_marker"
  echo "$notes"
} > bench/perf.md
rm -f bench/perf.table.md bench/perf-pinned.table.md
"$target_dir/release/perf-plot" bench/perf-pinned.json bench/perf.svg
echo "wrote bench/perf.md and bench/perf.svg"
