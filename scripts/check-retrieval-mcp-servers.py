#!/usr/bin/env python3
"""Checks a retrieval set of bench/sets (bench/sets/README.md) and prints its counts.

Every answer and every alternative must name a tool of the catalog; tool names are unique within
a server; each server's "tools" count matches the catalog. Exits 1 on any problem.

    python3 scripts/check-retrieval-mcp-servers.py bench/sets/mcp-servers.json
"""
import collections
import json
import sys


def main(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    problems = []
    tools = doc["tools"]
    keys = [(t["server"], t["name"]) for t in tools]
    have = set(keys)
    for key, n in collections.Counter(keys).items():
        if n > 1:
            problems.append(f"tool listed {n} times: {key[0]}/{key[1]}")
    per_server = collections.Counter(t["server"] for t in tools)
    for s in doc["servers"]:
        if per_server.get(s["server"], 0) != s["tools"]:
            problems.append(f"server {s['server']}: says {s['tools']} tools, catalog has {per_server.get(s['server'], 0)}")
    for t in tools:
        if not isinstance(t.get("description", ""), str) or not isinstance(t.get("inputSchema"), dict):
            problems.append(f"tool {t['server']}/{t['name']}: no description string or inputSchema object")

    tasks = doc["tasks"]
    answers_per_task = collections.Counter()
    servers_per_task = collections.Counter()
    answered_servers = collections.Counter()
    with_alternatives = 0
    queries = collections.Counter(t["query"] for t in tasks)
    for q, n in queries.items():
        if n > 1:
            problems.append(f"query repeated {n} times: {q!r}")
    for i, task in enumerate(tasks):
        answers = task["answers"]
        if not answers:
            problems.append(f"task {i}: no answers")
        answers_per_task[len(answers)] += 1
        servers_per_task[len({a['server'] for a in answers})] += 1
        seen = set()
        for a in answers:
            key = (a["server"], a["tool"])
            if key in seen:
                problems.append(f"task {i}: {key[0]}/{key[1]} answered twice")
            seen.add(key)
            answered_servers[a["server"]] += 1
            alts = a.get("alternatives", [])
            with_alternatives += bool(alts)
            for x in [a, *alts]:
                if (x["server"], x["tool"]) not in have:
                    problems.append(f"task {i}: {x['server']}/{x['tool']} is not in the catalog ({task['query'][:60]!r})")

    servers = [s["server"] for s in doc["servers"]]
    print(f"{doc['name']}: {len(servers)} servers, {len(tools)} tools, {len(tasks)} tasks")
    print("answers per task: " + ", ".join(f"{k}: {v}" for k, v in sorted(answers_per_task.items())))
    print("servers per task: " + ", ".join(f"{k}: {v}" for k, v in sorted(servers_per_task.items())))
    print(f"answers with alternatives: {with_alternatives}")
    unused = [s for s in servers if not answered_servers[s]]
    print(f"servers answering some task: {len(servers) - len(unused)} of {len(servers)}" + (f" (none for: {', '.join(unused)})" if unused else ""))
    if problems:
        print(f"{len(problems)} problem(s):\n  " + "\n  ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench/sets/mcp-servers.json"))
