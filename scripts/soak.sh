#!/usr/bin/env bash
# Soak benchmark (not a test): one million calls over stdio and one million over Streamable HTTP,
# 64 concurrent clients, mixing normal calls, cancellations and disconnects (HTTP also: session
# churn and 2026-07-28 stateless calls). The driver, examples/bench_soak.rs, spawns itself as the
# server and samples the server's RSS (VmRSS, VmHWM in /proc) at start, after warm-up (10% of
# the calls), in the middle, at the end and every ~2 s. Writes the Markdown report to
# bench/soak.md.
#
# Takes about 2 minutes on 2 cores after the release build (stdio ~15 s, HTTP ~1 min); the first
# release build takes a few minutes more.
#
# Pass criteria (exit status 0): 0 protocol errors on both transports, and the server's RSS
# grows by at most 10% from the end of the warm-up to the end. Arguments go to the driver:
#   scripts/soak.sh --calls 20000 --transport http      # a quick run
#   scripts/soak.sh --echo-only                         # baseline without cancellations/disconnects
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --quiet --example bench_soak
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
mkdir -p bench
status=0
"$target_dir/release/examples/bench_soak" "$@" | tee bench/soak.md || status=$?
exit "$status"
