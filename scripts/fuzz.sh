#!/usr/bin/env bash
# Fuzzes the targets of tests/fuzz.rs (the JSON-RPC decoder and dispatcher over stdio, argument
# decoding and validation, the HTTP request path) with fresh random seeds for a set time each,
# on stable Rust (proptest strategies and corpus mutation; the corpus is fuzz/corpus/).
#
#   scripts/fuzz.sh            # 300 s per target (15 minutes)
#   scripts/fuzz.sh 60         # 60 s per target
#   scripts/fuzz.sh 60 http    # one target
#
# A failure prints the shrunk input and the seed that reproduces it:
#   PROPTEST_RNG_SEED=<seed> cargo test --test fuzz <target>
# Add the input to fuzz/corpus/ once fixed, so every `cargo test` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${FUZZ_SECONDS:-300}}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(messages arguments http)
cargo test --test fuzz --no-run --quiet
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for target in "${targets[@]}"; do
  echo "== $target: ${seconds}s"
  status=0
  FUZZ_SECONDS="$seconds" RUST_BACKTRACE=0 cargo test --quiet --test fuzz -- --exact "$target" --nocapture \
    >"$log" 2>&1 || status=$?
  # The `explode` tool's deliberate panics are noise; everything else is shown.
  grep -vE '^(running [0-9]+ tests?|test result:.*|\.|)$|panicked at tests/fuzz.rs:[0-9]+:[0-9]+:$|^boom$|RUST_BACKTRACE' "$log" || true
  [ "$status" -eq 0 ] || { echo "fuzz: $target failed (exit $status)" >&2; exit 1; }
done
echo "fuzz: no failure in ${#targets[@]} target(s), ${seconds}s each"
