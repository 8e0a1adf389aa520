#!/usr/bin/env bash
# Retrieval quality of deferred-mode search on the BFCL pooled set (the design note deferred.md):
# downloads the PyPI package bfcl-eval into the git-ignored .cache/bench (never committed),
# unpacks it, fetches the sentence-embedding model for the `HybridRanker` rows
# (scripts/fetch-model.sh), runs `cargo run --release --features embeddings --example
# bench_retrieval`, and writes bench/retrieval.md.
#
#   bash scripts/bench-retrieval.sh                  # the pinned version
#   BFCL_EVAL_VERSION=2026.3.23 bash scripts/bench-retrieval.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=${BFCL_EVAL_VERSION:-2026.3.23}
cache=.cache/bench/bfcl-eval-$version
data=$cache/whl/bfcl_eval/data

if [ ! -f "$data/BFCL_v4_simple_python.json" ]; then
  mkdir -p "$cache"
  python3 -m pip download --quiet --no-deps --disable-pip-version-check "bfcl-eval==$version" -d "$cache"
  wheel=$(ls "$cache"/bfcl_eval-*.whl | head -n 1)
  python3 -m zipfile -e "$wheel" "$cache/whl"
fi

model=$(bash scripts/fetch-model.sh)

mkdir -p bench
cargo run --quiet --release --features embeddings --example bench_retrieval -- \
  --data "$data" --label "bfcl-eval $version" --model "$model" \
  > bench/retrieval.md.tmp
mv bench/retrieval.md.tmp bench/retrieval.md
cat bench/retrieval.md
