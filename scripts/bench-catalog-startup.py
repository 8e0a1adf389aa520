#!/usr/bin/env python3
"""Start-up of `examples/catalog --model` on a tool file: when `initialize` is answered, when the
first `search_tools` is answered, when the semantic index ranks by meaning (the tools' short texts
embedded: the server's log line `semantic search index ready`) and when it is complete (their
second texts as well: `... refined by the second texts`),
with an empty vectors cache and then with the cache the first run left (a fresh per-user cache
folder: XDG_CACHE_HOME in a temporary directory). Prints a markdown table.

    cargo build --release --features embeddings --example catalog
    python3 scripts/bench-catalog-startup.py FILE.json "$(bash scripts/fetch-model.sh)"

FILE.json has the shape of a `tools/list` result (`bench_sets` reads the same tools from
bench/sets/mcp-servers.json; `--write-catalog OUT` writes that set as such a file first).
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

BINARY = "target/release/examples/catalog"


def write_catalog(out):
    """bench/sets/mcp-servers.json as a tools/list file: names two servers share get the server's
    prefix (`server__name`), each tool is tagged with its server and keeps its title and
    annotations."""
    data = json.load(open("bench/sets/mcp-servers.json"))
    counts = {}
    for tool in data["tools"]:
        counts[tool["name"]] = counts.get(tool["name"], 0) + 1
    tools = []
    for tool in data["tools"]:
        name = tool["name"] if counts[tool["name"]] == 1 else f"{tool['server']}__{tool['name']}"
        entry = {"name": name, "description": tool.get("description", ""),
                 "inputSchema": tool.get("inputSchema", {"type": "object"}), "tags": [tool["server"]]}
        for key in ["title", "annotations"]:
            if key in tool:
                entry[key] = tool[key]
        tools.append(entry)
    json.dump({"tools": tools}, open(out, "w"))


def run(catalog, model, cache):
    env = dict(os.environ, RUST_LOG="info", XDG_CACHE_HOME=cache)
    start = time.monotonic()
    server = subprocess.Popen([BINARY, catalog, "--model", model], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    ready, refined = [], []

    def watch():
        for line in server.stderr:
            if b"semantic search index ready" in line:
                ready.append(time.monotonic() - start)
            if b"semantic search index refined" in line:
                refined.append(time.monotonic() - start)

    threading.Thread(target=watch, daemon=True).start()

    def ask(message):
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
        if "id" in message:
            return json.loads(server.stdout.readline())

    ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    initialized = time.monotonic() - start
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    found = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "search_tools", "arguments": {"query": "create an issue"}}})
    searched = time.monotonic() - start
    assert "result" in found, found
    while not ready and time.monotonic() - start < 600:
        time.sleep(0.05)
    # A ranker without second texts (detail_weight 0) logs no refinement.
    waited = time.monotonic()
    while not refined and time.monotonic() - waited < 120:
        time.sleep(0.05)
    server.stdin.close()
    server.wait()
    first = lambda times: times[0] if times else float("nan")
    return initialized, searched, first(ready), first(refined)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--write-catalog"]:
        write_catalog(args[1])
        args = args[2:]
    if len(args) != 2:
        sys.exit(__doc__)
    catalog, model = args
    tools = len(json.load(open(catalog))["tools"])
    with tempfile.TemporaryDirectory() as cache:
        print(f"| `catalog --model` on {tools} tools | initialize answered | first search answered "
              "| ranks by meaning (short texts) | complete (whole definitions too) |")
        print("|---|---|---|---|---|")
        for label in ["no vectors cached (first start)", "vectors cached (restart)"]:
            init, search, ready, refined = run(catalog, model, cache)
            print(f"| {label} | {init:.2f} s | {search:.2f} s | {ready:.2f} s ({ready * 1000 / tools:.1f} ms/tool) "
                  f"| {refined:.2f} s ({refined * 1000 / tools:.1f} ms/tool) |")


if __name__ == "__main__":
    main()
