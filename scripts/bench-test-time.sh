#!/usr/bin/env bash
# The first `cargo test --workspace` a newcomer runs (#44 point 11, bench/test-time.md): a clone
# of this repository's HEAD in a temporary folder (cold target/), the README's quick start
# (`cargo run --example quickstart`, stdin closed), then `cargo test --workspace`, timed. Prints
# the load before and after each step, the test command's phases (compiling, each test binary
# that took a second or more, the doc tests) and the test counts. Time it on a quiet machine:
# the target is under 3 minutes there.
#
#     bash scripts/bench-test-time.sh [DIR]     # DIR: where to clone (default: a new temp folder)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$PWD"
dir="${1:-$(mktemp -d)/mcp-tools}"
rm -rf "$dir"
git clone -q "$repo" "$dir"
cd "$dir"
echo "commit $(git log -1 --format='%h %s')"
echo "load before the quick start: $(uptime)"
start=$(date +%s.%N)
cargo run -q --example quickstart </dev/null >/dev/null 2>&1
echo "quick start: $(echo "$(date +%s.%N) - $start" | bc) s"
echo "load before the tests: $(uptime)"
log="$dir.test.log"
start=$(date +%s.%N)
set +e
# Each line of the test command's output, with the seconds since it started.
cargo test --workspace 2>&1 | python3 -c '
import sys, time
t0 = float(sys.argv[1])
for line in sys.stdin:
    sys.stdout.write("%7.1f %s" % (time.time() - t0, line))
' "$start" >"$log"
status=${PIPESTATUS[0]}
set -e
echo "cargo test --workspace: $(echo "$(date +%s.%N) - $start" | bc) s (exit $status; output in $log)"
echo "load after: $(uptime)"
python3 - "$log" <<'EOF'
import re, sys
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
# A phase starts at "Running X" / "Doc-tests X" and lasts until the next one starts.
marks = [(0.0, "compiling")]
for line in lines:
    at, _, text = line.strip().partition(" ")
    text = text.strip()
    if text.startswith("Running ") or text.startswith("Doc-tests "):
        marks.append((float(at), text.split(" (")[0]))
end = float(lines[-1].split()[0]) if lines else 0.0
phases = [(marks[i + 1][0] if i + 1 < len(marks) else end) - at for i, (at, _) in enumerate(marks)]
for (at, name), took in sorted(zip(marks, phases), key=lambda p: -p[1]):
    if took >= 1.0:
        print(f"{took:7.1f} s  {name}")
counts = [re.search(r"(\d+) passed; (\d+) failed; (\d+) ignored", l) for l in lines]
total = [sum(int(m.group(i)) for m in counts if m) for i in (1, 2, 3)]
print("passed %d, failed %d, ignored %d" % tuple(total))
EOF
exit "$status"
