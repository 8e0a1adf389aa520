#!/usr/bin/env bash
# What the call pipeline and telemetry cost (not a test; the "Middleware" issue, item 4): the
# performance suite's two-tool server (examples/bench_server.rs) measured as the suite measures it
# (bench/src/middleware.rs: `mcp-bench --middleware`), in five variants started together each round
# and measured slice by slice in turn, with 2025-11-25 and 2026-07-28 requests:
#
#   before the pipeline     bench_server built from $BASE (default 7a852aa, the last commit
#                           without the call pipeline), in a worktree under /tmp, into
#                           target/bench-base-$BASE (kept, so that a second run does not rebuild)
#   before, 2nd copy        the same binary again: the two copies' ratio is the noise alone
#   no layer                today's bench_server, as scripts/bench-perf.sh runs it
#   pass-through layer      the same, BENCH_LAYER=noop: one tower layer forwarding every call
#   telemetry (exporting)   the same, --otel, exporting by OTLP/HTTP to a sink in the driver
#                           that counts the spans it receives
#
#   scripts/bench-middleware.sh            # release builds, 3 rounds pinned and 3 free, writes bench/middleware.md
#   scripts/bench-middleware.sh --quick    # one short round, free, to try a change (writes nothing in bench/)
#   scripts/bench-middleware.sh --callgrind  # where the instructions go: the quick stdio section with
#                                          # every server under callgrind (scripts/middleware-callgrind.py
#                                          # prints the tables; a few minutes; writes nothing in bench/)
#
# Extra driver options go to both runs, e.g. --decompose (two more variants: telemetry whose spans are
# not exported, telemetry sampling 10% of traces) or --current BENCH_SERVER (another build of today's).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BASE="${BASE:-7a852aa}"
started=$SECONDS
# The telemetry variant's own endpoint is set by the driver; no other server may export.
unset OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_TRACES_ENDPOINT OTEL_EXPORTER_OTLP_METRICS_ENDPOINT \
  OTEL_SDK_DISABLED OTEL_TRACES_EXPORTER OTEL_METRICS_EXPORTER
# (As scripts/bench-perf.sh builds them: separate builds, so that no feature of one package
# reaches the other's build.)
cargo build --release --quiet -p mcp-tools-bench
cargo build --release --quiet --example bench_server
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
driver="$target_dir/release/mcp-bench"

# The baseline: bench_server at $BASE, built once in a worktree (removed afterwards) with a
# target folder of its own, so that today's build in target/release is not touched.
base_commit="$(git rev-parse --short "$BASE^{commit}")"
base_target="$target_dir/bench-base-$base_commit"
baseline="$base_target/release/examples/bench_server"
if [ ! -x "$baseline" ]; then
  worktree="$(mktemp -d /tmp/bench-base.XXXXXX)"
  trap 'git worktree remove --force "$worktree" 2>/dev/null || true; rm -rf "$worktree"' EXIT
  git worktree add --quiet --detach "$worktree" "$base_commit"
  echo "building bench_server at $base_commit (a few minutes the first time)" >&2
  (cd "$worktree" && CARGO_TARGET_DIR="$base_target" cargo build --release --quiet --example bench_server)
  git worktree remove --force "$worktree"
  rm -rf "$worktree"
  trap - EXIT
fi

if [ "${1:-}" = "--callgrind" ]; then
  shift
  out="$(mktemp -d)"
  "$driver" --middleware --quick --only stdio --baseline "$baseline" --out "$out/middleware" \
    --wrap "valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=$out/callgrind.%p" "$@" > /dev/null
  python3 scripts/middleware-callgrind.py "$out"
  rm -rf "$out"
  exit 0
fi
if [ "${1:-}" = "--quick" ]; then
  shift
  exec "$driver" --middleware --quick --baseline "$baseline" --out "$(mktemp -d)/middleware" "$@"
fi
# Pinned (driver and the OTLP sink on CPU 0, every server on CPU 1), then free, as the suite.
taskset -c 0 "$driver" --middleware --pin --baseline "$baseline" --out bench/middleware-pinned "$@"
taskset -c 0 "$driver" --middleware --pin --poll --only http --baseline "$baseline" --out bench/middleware-polling "$@"
"$driver" --middleware --baseline "$baseline" --out bench/middleware-free "$@"
minutes=$(( (SECONDS - started + 30) / 60 ))

notes_marker='<!-- notes below are kept by scripts/bench-middleware.sh -->'
notes=""
[ -f bench/middleware.md ] && notes="$(awk -v marker="$notes_marker" 'found { print } $0 == marker { found = 1 }' bench/middleware.md)"
{
  echo "# What the call pipeline and telemetry cost"
  echo
  echo "Written by \`scripts/bench-middleware.sh\` on $(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD)$(git diff --quiet -- . ':!bench/middleware*' || echo ' (with uncommitted changes)'),"
  echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)); the whole script took about $minutes min."
  echo "Raw rounds: bench/middleware-pinned.json, bench/middleware-polling.json, bench/middleware-free.json."
  echo
  echo "The performance suite's two-tool server (examples/bench_server.rs), measured as"
  echo "\`scripts/bench-perf.sh\` measures it (\`mcp-bench --middleware\`, bench/src/middleware.rs: the"
  echo "same requests and sizes; each round starts every server, then measures them slice by slice,"
  echo "each in turn), in five variants, each sent 2025-11-25 and 2026-07-28 requests:"
  echo
  echo "* **before the pipeline**: \`bench_server\` built from $base_commit, the last commit without the call pipeline;"
  echo "* **before, 2nd copy**: the same binary, a second server measured alike. The ratio of the two"
  echo "  copies is what the noise alone gives (an A/A comparison);"
  echo "* **no layer**: today's \`bench_server\`, as the suite runs it;"
  echo "* **pass-through layer**: the same binary with \`BENCH_LAYER=noop\`: one tower layer"
  echo "  (\`layer_fn\` + \`service_fn\`) forwarding every call, the pipeline's own cost;"
  echo "* **telemetry (exporting)**: the same binary with \`--otel\` and \`OTEL_EXPORTER_OTLP_ENDPOINT\`"
  echo "  pointing to an OTLP/HTTP sink in the driver (bench/src/otlp_sink.rs), which answers 200 with"
  echo "  an empty message and counts the spans it receives (table at the end of each section). The"
  echo "  \`OTEL_BSP_*\` defaults otherwise: batches of 512 spans, a queue of 2,048; metrics every 60 s and at exit."
  echo
  echo "Every ratio is taken within a round and the median of the rounds' ratios is the figure."
  echo "**Run-to-run spread**: for each figure, the largest distance from 1 of the A/A ratios (the two"
  echo "copies of the baseline, every round, both eras); \"no layer\" is unchanged when the median of"
  echo "its ratios to the baseline is no further from 1 than that."
  echo
  echo "## Pinned (driver and sink on CPU 0, servers on CPU 1)"
  echo
  cat bench/middleware-pinned.table.md
  echo
  echo "## Pinned, HTTP, the clients polling (\`--pin --poll\`)"
  echo
  echo "As above, but each HTTP client's connection is non-blocking and its thread yields the CPU"
  echo "until the answer is there, instead of sleeping in the kernel: a server's answer never wakes"
  echo "up a halted vCPU. Pinned with sleeping clients, that wake-up is a large and bistable share of"
  echo "a server's time (the 2026-12-06 evening notes below), which the servers compared pay unequally"
  echo "from round to round. Polling, the server's own work decides its rate."
  echo
  cat bench/middleware-polling.table.md
  echo
  echo "## Free (no pinning)"
  echo
  cat bench/middleware-free.table.md
  echo
  echo "$notes_marker"
  echo "$notes"
} > bench/middleware.md
rm -f bench/middleware-pinned.table.md bench/middleware-polling.table.md bench/middleware-free.table.md
echo "wrote bench/middleware.md (about $minutes min)"
