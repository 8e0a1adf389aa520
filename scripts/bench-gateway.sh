#!/usr/bin/env bash
# What a call through the composing gateway costs, and the gateway's memory (not a test; the
# "Composition" issue: "a call through the gateway to a stdio upstream, p50 within 2× of calling
# the upstream directly, measured side by side; gateway memory with twenty upstreams").
# bench/src/gateway.rs (`mcp-bench --gateway`) measures, as the performance suite measures
# `bench_server`, four variants started together each round and measured slice by slice in turn,
# with 2025-11-25 and 2026-07-28 requests:
#
#   direct                  examples/bench_server.rs over stdio (over HTTP: `--http ADDR`)
#   direct, 2nd copy        the same again: the two copies' ratio is the noise alone
#   gateway --no-defer      examples/gateway.rs with one entry `b` (that bench_server over stdio),
#                           called by name (`b_add`), over stdio or its Streamable HTTP front
#   gateway deferred        the same gateway, deferred (the default): `call_tool` → `b_add`
#
# then the gateway's own memory with 20 upstreams of 50 tools (examples/bench_large.rs 50),
# deferred and --no-defer, beside one upstream of 50 and of 1,000 tools and a plain server of the
# same 1,000 tools (bench_large 1000; deferred: examples/catalog.rs).
#
#   scripts/bench-gateway.sh            # release builds; latency pinned, then latency and memory
#                                       # free; writes bench/gateway.md, bench/gateway.json and
#                                       # bench/gateway-pinned.json
#   scripts/bench-gateway.sh --quick    # one short round, free, to try a change (writes nothing in bench/)
#
# Extra driver options go to both runs, e.g. --runs N.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
started=$SECONDS
# (As scripts/bench-perf.sh builds them: separate builds, so that no feature of one package
# reaches the other's build.)
cargo build --release --quiet -p mcp-tools-bench
cargo build --release --quiet --example gateway --example bench_server --example bench_large --example catalog
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
driver="$target_dir/release/mcp-bench"

if [ "${1:-}" = "--quick" ]; then
  shift
  exec "$driver" --gateway --quick --out "$(mktemp -d)/gateway" "$@"
fi
# Pinned (driver on CPU 0; every server, and so every gateway with its upstream, on CPU 1), the
# latency alone; then free (no pinning), latency and memory.
pinned=(taskset -c 0 "$driver" --gateway --pin --only latency --out bench/gateway-pinned "$@")
free=("$driver" --gateway --out bench/gateway "$@")
"${pinned[@]}"
"${free[@]}"
minutes=$(( (SECONDS - started + 30) / 60 ))
shown() { printf '%s ' "$@" | sed "s|$target_dir/|target/|g; s/ $//"; }

notes_marker='<!-- notes below are kept by scripts/bench-gateway.sh -->'
notes=""
[ -f bench/gateway.md ] && notes="$(awk -v marker="$notes_marker" 'found { print } $0 == marker { found = 1 }' bench/gateway.md)"
{
  echo "# What a call through the gateway costs, and its memory"
  echo
  echo "Written by \`scripts/bench-gateway.sh${*:+ $*}\` on $(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD)$(git diff --quiet -- . ':!bench/gateway*' || echo ' (with uncommitted changes)'),"
  echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)); the whole script took about $minutes min."
  echo "It ran \`$(shown "${pinned[@]}")\`, then \`$(shown "${free[@]}")\`."
  echo "Raw rounds: bench/gateway-pinned.json, bench/gateway.json."
  echo
  echo "The performance suite's two-tool server (examples/bench_server.rs), called as"
  echo "\`scripts/bench-perf.sh\` calls it (\`mcp-bench --gateway\`, bench/src/gateway.rs: the same"
  echo "\`add\` requests and sizes; each round starts every server, then measures them slice by slice,"
  echo "each in turn), in four variants, each sent 2025-11-25 and 2026-07-28 requests:"
  echo
  echo "* **direct**: \`bench_server\` over stdio (over HTTP: \`bench_server --http ADDR\`);"
  echo "* **direct, 2nd copy**: the same binary, a second server measured alike. The ratio of the two"
  echo "  copies is what the noise alone gives (an A/A comparison);"
  echo "* **gateway --no-defer**: \`examples/gateway.rs ONE.json --no-defer\` (over HTTP, with"
  echo "  \`--http ADDR\`), whose one entry \`b\` is that \`bench_server\` over stdio, mounted by"
  echo "  \`ServerBuilder::mount\`; the call is \`b_add\`;"
  echo "* **gateway deferred (\`call_tool\`)**: the same gateway deferred (its default): the same call"
  echo "  made through the \`call_tool\` meta-tool (\`{\"name\": \"b_add\", \"arguments\": …}\`)."
  echo
  echo "Every ratio is taken within a round and the median of the rounds' ratios is the figure. A"
  echo "gateway's RSS is its own process's; its upstreams are processes of their own, counted apart."
  echo
  echo "## Pinned (driver on CPU 0; servers, gateways and their upstreams on CPU 1)"
  echo
  cat bench/gateway-pinned.table.md
  echo
  echo "## Free (no pinning), and the gateway's memory"
  echo
  echo "Memory: each server started alone, over stdio (2025-11-25): \`VmRSS\` and \`VmHWM\` 0.5 s"
  echo "after its first \`tools/list\`, then after a burst (three \`tools/list\`; deferred, 20"
  echo "\`search_tools\`; every upstream's \`add\` called sequentially and 32 in flight, the calls"
  echo "shared among the upstreams; every other tool called once) and 0.5 s of rest. Twenty upstreams:"
  echo "\`u01\`…\`u20\`, each \`bench_large 50\` (two tools and 48 generated ones)."
  echo
  cat bench/gateway.table.md
  echo
  echo "$notes_marker"
  echo "$notes"
} > bench/gateway.md
rm -f bench/gateway-pinned.table.md bench/gateway.table.md
echo "wrote bench/gateway.md (about $minutes min)"
