#!/usr/bin/env bash
# Where the HTTP servers' time goes beyond instructions (issue #13): the quick HTTP measurement
# of the performance suite (`mcp-bench --quick --only http --skip-rmcp`: 1 client, then 16) with
# every server under callgrind's cache simulation, so that ours and the floor are compared on
# the same requests by figures that do not depend on the VM's mood:
#   Ir    instructions;
#   I1mr  first-level instruction-cache misses (code that does not fit in the 32 KB cache);
#   D1m   first-level data-cache misses (reads and writes);
#   CEst  callgrind's estimate of cycles, Ir + 10 x (first-level misses) + 100 x (last-level).
# About 70 seconds. Not a test. Needs valgrind (installed with apt-get when missing, as root).
#
#   bash scripts/bench-cachesim.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v valgrind > /dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq valgrind > /dev/null
  else
    echo "bench-cachesim: needs valgrind (apt-get install valgrind)" >&2
    exit 1
  fi
fi
# The same builds as scripts/bench-perf.sh (the floors' package alone: see there).
cargo build --release --quiet -p mcp-tools-bench
cargo build --release --quiet --example bench_server
cargo build --release --quiet -p mcp-tools-floor
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
out="$(mktemp -d)"
"$target_dir/release/mcp-bench" --quick --only http --skip-rmcp --out "$out/perf" \
  --wrap "valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file=$out/callgrind.out.%p" > /dev/null
# The suite starts the floor for 2025-11-25 requests, then for 2026-07-28 ones, then ours the
# same way: in the order of their process ids.
python3 - "$out" <<'EOF'
import glob, os, re, sys
runs = []
for path in glob.glob(os.path.join(sys.argv[1], "callgrind.out.*")):
    text = open(path).read()
    binary = os.path.basename(re.search(r"^cmd:\s+(\S+)", text, re.M).group(1))
    names = re.search(r"^events: (.*)$", text, re.M).group(1).split()
    values = dict(zip(names, map(int, re.search(r"^summary: (.*)$", text, re.M).group(1).split())))
    runs.append((int(path.rsplit(".", 1)[1]), binary, values))
runs.sort()
rows, floor = [], {}
for i, (_, binary, v) in enumerate(runs):
    era = "2025-11-25" if i % 2 == 0 else "2026-07-28"
    l1 = v["I1mr"] + v["D1mr"] + v["D1mw"]
    ll = v["ILmr"] + v["DLmr"] + v["DLmw"]
    cest = v["Ir"] + 10 * l1 + 100 * ll
    name = "floor" if binary.startswith("floor") else "mcp-tools"
    figures = (v["Ir"], v["I1mr"], v["D1mr"] + v["D1mw"], cest)
    if name == "floor":
        floor[era] = figures
    rows.append((name, era, figures))
print("| server | requests | Ir | I1mr | D1m | CEst | CEst / floor's |")
print("|---|---|---|---|---|---|---|")
for name, era, (ir, i1, d1, cest) in rows:
    ratio = cest / floor[era][3] if era in floor else float("nan")
    print(f"| {name} | {era} | {ir / 1e6:.1f}M | {i1 / 1e6:.2f}M | {d1 / 1e6:.2f}M | {cest / 1e6:.1f}M | {ratio:.3f} |")
EOF
rm -rf "$out"
