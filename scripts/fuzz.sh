#!/usr/bin/env bash
# Fuzzes the targets of tests/fuzz.rs (the JSON-RPC decoder and dispatcher over stdio, argument
# decoding and validation, the HTTP request path) with fresh random seeds for a set time each,
# on stable Rust (proptest strategies and corpus mutation; the corpus is fuzz/corpus/).
# The target `encoder` (not among the default ones: it builds the `embeddings` feature and needs
# the model of scripts/fetch-model.sh) fuzzes the search's own BERT encoder against
# candle_transformers' (mcp-tools/src/deferred/encoder/fuzz.rs), in the `fuzz` profile: optimised,
# with debug assertions and overflow checks.
#
#   scripts/fuzz.sh            # 300 s per target (15 minutes)
#   scripts/fuzz.sh 60         # 60 s per target
#   scripts/fuzz.sh 60 http    # one target
#   scripts/fuzz.sh 300 encoder
#
# A failure prints the shrunk input and the seed that reproduces it:
#   PROPTEST_RNG_SEED=<seed> cargo test --test fuzz <target>
#   PROPTEST_RNG_SEED=<seed> scripts/fuzz.sh 1 encoder
# Add the input to fuzz/corpus/ once fixed, so every `cargo test` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${FUZZ_SECONDS:-300}}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(messages arguments http)
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for target in "${targets[@]}"; do
  echo "== $target: ${seconds}s"
  if [ "$target" = encoder ]; then
    MCP_TOOLS_MODEL="$PWD/$(bash scripts/fetch-model.sh)"
    export MCP_TOOLS_MODEL
    # Its two tests (random models, the real model) side by side, each for the given seconds.
    FUZZ_SECONDS="$seconds" cargo test --quiet --profile fuzz -p mcp-tools-rs --features embeddings \
      --lib deferred::encoder::fuzz -- --nocapture || { echo "fuzz: encoder failed" >&2; exit 1; }
    continue
  fi
  cargo test --test fuzz --no-run --quiet
  status=0
  FUZZ_SECONDS="$seconds" RUST_BACKTRACE=0 cargo test --quiet --test fuzz -- --exact "$target" --nocapture \
    >"$log" 2>&1 || status=$?
  # The `explode` tool's deliberate panics are noise; everything else is shown.
  grep -vE '^(running [0-9]+ tests?|test result:.*|\.|)$|panicked at tests/fuzz.rs:[0-9]+:[0-9]+:$|^boom$|RUST_BACKTRACE' "$log" || true
  [ "$status" -eq 0 ] || { echo "fuzz: $target failed (exit $status)" >&2; exit 1; }
done
echo "fuzz: no failure in ${#targets[@]} target(s), ${seconds}s each"
