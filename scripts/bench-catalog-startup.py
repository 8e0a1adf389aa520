#!/usr/bin/env python3
"""Start-up of `examples/catalog --model` on a tool file: when `initialize` is answered, when the
first `search_tools` is answered, when the semantic index ranks by meaning (the tools' short texts
embedded: the server's log line `semantic search index ready`) and when it is complete (their
second texts as well: `... refined by the second texts`),
with an empty vectors cache and then with the cache the first run left (a fresh per-user cache
folder: XDG_CACHE_HOME in a temporary directory), then two processes started together on that
cache, two started together on an empty cache and a restart after those two. Prints a markdown
table.

    cargo build --release --features embeddings --example catalog
    python3 scripts/bench-catalog-startup.py FILE.json "$(bash scripts/fetch-model.sh)"

With `--tasks SET.json` (after `--write-catalog`, if any; SET.json: bench/sets/mcp-servers.json),
also scores the served `search_tools` on the set's tasks once the index is complete, after each
start.
With `--encoders int8,exact,reference` (after the options above; `--rounds N`, default 3, may
follow it), instead compares the encoders that can run the model (`catalog --encoder`): N rounds,
each a first start on an empty cache with every encoder in turn, so that they share the machine's
state; prints each start and the medians, with the tasks' scores if `--tasks` is given.
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
        name = catalog_name({"server": tool["server"], "tool": tool["name"]}, counts)
        entry = {"name": name, "description": tool.get("description", ""),
                 "inputSchema": tool.get("inputSchema", {"type": "object"}), "tags": [tool["server"]]}
        for key in ["title", "annotations"]:
            if key in tool:
                entry[key] = tool[key]
        tools.append(entry)
    json.dump({"tools": tools}, open(out, "w"))


def catalog_name(answer, counts):
    """The name a set's (server, tool) has in the catalog file: its own, prefixed by the server
    (`server__name`) where two servers share it."""
    name = answer["tool"]
    return name if counts[name] == 1 else f"{answer['server']}__{name}"


def evaluate(ask, tasks_file):
    """Every task of a retrieval set (bench/sets/mcp-servers.json) through the served
    `search_tools` (10 results): hit@5 (a needed tool, or an equally right alternative, among the
    first 5), MRR@10 and the tasks with no result, as `bench_sets` counts them."""
    data = json.load(open(tasks_file))
    counts = {}
    for tool in data["tools"]:
        counts[tool["name"]] = counts.get(tool["name"], 0) + 1
    hit5 = mrr = none = 0.0
    for i, task in enumerate(data["tasks"]):
        reply = ask({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                     "params": {"name": "search_tools", "arguments": {"query": task["query"], "limit": 10}}})
        names = [t["name"] for t in reply["result"].get("structuredContent", {}).get("tools", [])]
        none += not names
        ranks = []
        for answer in task["answers"]:
            accepted = {catalog_name(a, counts) for a in [answer] + answer.get("alternatives", [])}
            found = [r for r, name in enumerate(names) if name in accepted]
            if found:
                ranks.append(found[0])
        first = min(ranks) if ranks else None
        hit5 += first is not None and first < 5
        mrr += 1 / (first + 1) if first is not None else 0
    n = len(data["tasks"])
    return hit5 / n, mrr / n, int(none)


def run(catalog, model, cache, tasks=None, encoder=None):
    env = dict(os.environ, RUST_LOG="info", XDG_CACHE_HOME=cache)
    start = time.monotonic()
    extra = ["--encoder", encoder] if encoder else []
    server = subprocess.Popen([BINARY, catalog, "--model", model, *extra], stdin=subprocess.PIPE,
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
    scores = evaluate(ask, tasks) if tasks else None
    server.stdin.close()
    server.wait()
    first = lambda times: times[0] if times else float("nan")
    return initialized, searched, first(ready), first(refined), scores


def together(catalog, model, cache, n=2):
    """`n` servers of `catalog` started at once (threads), sharing the cache folder: each one's
    figures, as `run` gives them."""
    results = [None] * n
    barrier = threading.Barrier(n)

    def one(i):
        barrier.wait()
        results[i] = run(catalog, model, cache)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def compare(catalog, model, encoders, rounds, tasks):
    """First starts of every encoder, interleaved round by round, each on an empty cache."""
    tools = len(json.load(open(catalog))["tools"])
    print(f"| round | encoder | initialize answered | ranks by meaning | complete | ms/tool (complete) |"
          + (" hit@5 | MRR@10 |" if tasks else ""))
    print("|---|---|---|---|---|---|" + ("---|---|" if tasks else ""))
    times = {e: [] for e in encoders}
    for r in range(1, rounds + 1):
        for encoder in encoders:
            with tempfile.TemporaryDirectory() as cache:
                init, _, ready, refined, scores = run(catalog, model, cache, tasks, encoder)
            times[encoder].append((ready, refined))
            row = f"| {r} | {encoder} | {init:.2f} s | {ready:.2f} s | {refined:.2f} s | {refined * 1000 / tools:.1f} |"
            if scores:
                row += f" {scores[0]:.3f} | {scores[1]:.3f} |"
            print(row, flush=True)
    median = lambda xs: sorted(xs)[len(xs) // 2]
    base = encoders[0]
    base_ready = median([t[0] for t in times[base]])
    base_refined = median([t[1] for t in times[base]])
    print(f"\nMedians of {rounds} first starts on {tools} tools (times relative to `{base}`):\n")
    print("| encoder | ranks by meaning | complete |")
    print("|---|---|---|")
    for encoder in encoders:
        ready = median([t[0] for t in times[encoder]])
        refined = median([t[1] for t in times[encoder]])
        print(f"| {encoder} | {ready:.2f} s ({ready / base_ready:.2f}×) | {refined:.2f} s ({refined / base_refined:.2f}×) |")


def main():
    args = sys.argv[1:]
    tasks = None
    if args[:1] == ["--write-catalog"]:
        write_catalog(args[1])
        args = args[2:]
    if args[:1] == ["--tasks"]:
        tasks = args[1]
        args = args[2:]
    encoders, rounds = None, 3
    if args[:1] == ["--encoders"]:
        encoders = args[1].split(",")
        args = args[2:]
        if args[:1] == ["--rounds"]:
            rounds = int(args[1])
            args = args[2:]
    if len(args) != 2:
        sys.exit(__doc__)
    catalog, model = args
    if encoders:
        compare(catalog, model, encoders, rounds, tasks)
        return
    tools = len(json.load(open(catalog))["tools"])
    with tempfile.TemporaryDirectory() as cache:
        print(f"| `catalog --model` on {tools} tools | initialize answered | first search answered "
              "| ranks by meaning (short texts) | complete (whole definitions too) |")
        print("|---|---|---|---|---|")
        scored = []
        for label in ["no vectors cached (first start)", "vectors cached (restart)"]:
            init, search, ready, refined, scores = run(catalog, model, cache, tasks)
            scored.append(scores)
            print(f"| {label} | {init:.2f} s | {search:.2f} s | {ready:.2f} s ({ready * 1000 / tools:.1f} ms/tool) "
                  f"| {refined:.2f} s ({refined * 1000 / tools:.1f} ms/tool) |")
        # Two servers of the same catalog started at the same moment, with the cache the runs
        # above left: neither may slow the other past a restart's bound.
        for i, (init, search, ready, refined, _) in enumerate(together(catalog, model, cache)):
            print(f"| vectors cached, two processes started together: {'first' if i == 0 else 'second'} "
                  f"| {init:.2f} s | {search:.2f} s | {ready:.2f} s | {refined:.2f} s |")
    # Two first starts at the same moment on an empty cache (both embed, both save the file, each
    # by a rename of its own), then a restart: it must find the whole file they left.
    with tempfile.TemporaryDirectory() as cache:
        for i, (init, search, ready, refined, _) in enumerate(together(catalog, model, cache)):
            print(f"| no vectors cached, two processes started together: {'first' if i == 0 else 'second'} "
                  f"| {init:.2f} s | {search:.2f} s | {ready:.2f} s | {refined:.2f} s |")
        init, search, ready, refined, _ = run(catalog, model, cache)
        print(f"| vectors cached by those two (restart) | {init:.2f} s | {search:.2f} s | {ready:.2f} s "
              f"| {refined:.2f} s |")
        if tasks:
            print(f"\n`search_tools` of the served catalog, once complete, on the tasks of {tasks}: " +
                  "; ".join(f"{when} hit@5 {hit5:.3f}, MRR@10 {mrr:.3f}, {none} with no result"
                            for when, (hit5, mrr, none) in zip(["first start", "restart"], scored)) + ".")


if __name__ == "__main__":
    main()
