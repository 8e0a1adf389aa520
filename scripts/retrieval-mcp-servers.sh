#!/usr/bin/env bash
# Regenerates the tool catalog of the retrieval set bench/sets/mcp-servers.json (bench/sets/README.md):
# installs each pinned MCP server package (npm, PyPI) and the official TypeScript SDK client into the
# git-ignored .cache/retrieval/mcp-servers, runs every server over stdio with dummy credentials,
# records its tools/list as listed, and keeps the hand-written tasks already in the file (checking
# that each answer is still in the catalog). The list of servers, versions and dummy settings is
# SERVERS in scripts/retrieval-mcp-servers.mjs. Needs node >= 20 with npm, and python3 (3.10+).
#
#   bash scripts/retrieval-mcp-servers.sh               # reuse installs whose pins did not change
#   bash scripts/retrieval-mcp-servers.sh --reinstall   # install everything afresh
#   bash scripts/retrieval-mcp-servers.sh --only=git,time   # print those servers' tools, write nothing
#   python3 scripts/check-retrieval-mcp-servers.py bench/sets/mcp-servers.json   # counts and answer check
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
node scripts/retrieval-mcp-servers.mjs "$@"
if [[ " $* " != *" --only="* ]]; then
  python3 scripts/check-retrieval-mcp-servers.py bench/sets/mcp-servers.json
fi
