#!/usr/bin/env bash
# OpenAPI bridge benchmark (not a test): how long examples/openapi (release build) takes to serve
# real API descriptions, and how much memory it holds. Data sets: the repository's pet store
# (tests/data/openapi/pets.yaml, YAML, 12 operations) and four documents of @octokit/openapi
# (npm, pinned; unpacked into .cache/bench/): api.github.com.json (13 MB, $refs),
# api.github.com.deref.json (73 MB, every $ref already inlined), ghec.json (GitHub Enterprise
# Cloud, the largest catalog) and ghes-3.19.json (GitHub Enterprise Server).
#
# For each document, a fresh server over stdio (5 runs, the median reported): time from spawn to
# the initialize answer (the document read, parsed and turned into tools, the server built),
# then to the end of tools/list (every page), the bytes of tools/list, and the server's RSS
# once listed (VmRSS) and at its peak (VmHWM). The direct catalog with output schemas (the
# default) and without (--no-output-schemas), and the deferred one (--defer: the search index
# built at start-up).
#
#   scripts/bench-openapi.sh            # writes bench/openapi.md (keeping its notes section)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OCTOKIT_VERSION=23.0.2
CACHE=.cache/bench/octokit-$OCTOKIT_VERSION
GENERATED="$CACHE/package/generated"
FILES=(api.github.com.json api.github.com.deref.json ghec.json ghes-3.19.json)
missing=0
for f in "${FILES[@]}"; do [ -s "$GENERATED/$f" ] || missing=1; done
if [ "$missing" -eq 1 ]; then
  rm -rf "$CACHE"
  mkdir -p "$CACHE"
  npm pack --silent --pack-destination "$CACHE" "@octokit/openapi@$OCTOKIT_VERSION" >/dev/null
  tar -xzf "$CACHE"/octokit-openapi-*.tgz -C "$CACHE" "${FILES[@]/#/package/generated/}"
  rm -f "$CACHE"/octokit-openapi-*.tgz
fi
cargo build --release --quiet --example openapi
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
mkdir -p bench
table="$(mktemp)"
trap 'rm -f "$table"' EXIT
python3 - "$target_dir/release/examples/openapi" tests/data/openapi/pets.yaml "${FILES[@]/#/$GENERATED/}" <<'EOF' | tee "$table"
import json, os, platform, statistics, subprocess, sys, time

binary, docs = sys.argv[1], sys.argv[2:]
RUNS = 5
MODES = [("direct", []), ("direct, --no-output-schemas", ["--no-output-schemas"]), ("--defer", ["--defer"])]

def rss(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) // 1024, int(fields["VmHWM"].split()[0]) // 1024

def run(doc, flags):
    started = time.perf_counter()
    server = subprocess.Popen([binary, doc, "--base-url", "https://api.example.com", *flags],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    def ask(request):
        server.stdin.write((json.dumps(request) + "\n").encode())
        server.stdin.flush()
        line = server.stdout.readline()
        return len(line), json.loads(line)
    _, init = ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    assert "result" in init, init
    ready = time.perf_counter() - started
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    tools, size, cursor, page = 0, 0, None, 1
    while True:
        params = {"cursor": cursor} if cursor else {}
        n, answer = ask({"jsonrpc": "2.0", "id": page, "method": "tools/list", "params": params})
        tools, size, page = tools + len(answer["result"]["tools"]), size + n, page + 1
        cursor = answer["result"].get("nextCursor")
        if not cursor:
            break
    listed = time.perf_counter() - started
    now, peak = rss(server.pid)
    server.stdin.close()
    server.wait(timeout=30)
    return ready * 1e3, listed * 1e3, tools, size, now, peak

print("# OpenAPI bridge: start-up, tools/list and memory\n")
print("Written by `scripts/bench-openapi.sh` (examples/openapi, release build, stdio; "
      f"median of {RUNS} fresh servers; {platform.machine()}, {os.cpu_count()} cores, "
      f"{time.strftime('%Y-%m-%d')}).\n")
print("`ready`: spawn to the initialize answer (document read and parsed, tools built, server "
      "built). `listed`: spawn to the last tools/list page. RSS once listed / peak.\n")
print("| document | mode | tools | ready ms | listed ms | tools/list bytes | RSS MiB | peak MiB |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for doc in docs:
    name = os.path.basename(doc)
    mb = os.path.getsize(doc) / 1e6
    for mode, flags in MODES:
        runs = [run(doc, flags) for _ in range(RUNS)]
        med = lambda i: statistics.median(r[i] for r in runs)
        print(f"| {name} ({mb:.1f} MB) | {mode} | {runs[0][2]} | {med(0):.0f} | {med(1):.0f} | "
              f"{runs[0][3]:,} | {med(4):.0f} | {med(5):.0f} |", flush=True)
EOF
# The notes below the marker in bench/openapi.md (earlier figures, analysis) are kept.
notes="$(sed -n '/^<!-- notes below are kept by scripts\/bench-openapi.sh -->$/,$p' bench/openapi.md 2>/dev/null || true)"
{
  cat "$table"
  if [ -n "$notes" ]; then printf '\n%s\n' "$notes"; fi
} >bench/openapi.md
