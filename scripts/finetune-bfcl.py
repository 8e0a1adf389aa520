#!/usr/bin/env python3
"""Fine-tunes a sentence-transformers model on BFCL's request -> function pairs, to measure what
fine-tuning the encoder would give on the other retrieval sets (`bench/retrieval.md`, "Fine-tuned
on BFCL"). Not part of the product or of CI: the model the README recommends is not fine-tuned.

    python3 -m venv /tmp/ft-venv
    /tmp/ft-venv/bin/pip install torch==2.5.1 sentence-transformers==3.3.1 transformers==4.46.3 \
        'huggingface-hub>=0.23.2,<1.0' 'datasets<4' 'accelerate>=0.26'
    /tmp/ft-venv/bin/python scripts/finetune-bfcl.py .cache/models/all-MiniLM-L6-v2 \
        .cache/bench/bfcl-eval-2026.3.23/whl/bfcl_eval/data /tmp/minilm-bfcl --epochs 1
    cargo run --release --features embeddings --example bench_sets -- --model /tmp/minilm-bfcl \
        --rankers "lexical weight" --weights 0.25:0.3,0.25:0.35

(`bash scripts/bench-retrieval.sh` fetches the model and BFCL first.) Each of BFCL's 2,061 requests
is paired with its function's text, written as `embedding_text` writes a tool's (name as words,
first sentence of the description, parameter names), and the model learns with in-batch negatives
(sentence-transformers' MultipleNegativesRankingLoss; batches of 32, learning rate 2e-5, 10%
warm-up, texts cut at 128 tokens, seed 0). About 2.5 minutes per epoch on 2 cores. The folder
written loads in `SentenceEmbedder::from_dir`. BFCL's own figures are then no longer unseen.
"""

import argparse
import json
import random
import re
import sys
import time

CATEGORIES = ["simple_python", "multiple", "live_simple", "live_multiple", "simple_java", "simple_javascript"]


def lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def pairs(data):
    """BFCL's pooled functions by name, and (request, function name) pairs, as bench_sets pools them."""
    functions, out = {}, []
    for category in CATEGORIES:
        answers = {a["id"]: a for a in lines(f"{data}/possible_answer/BFCL_v4_{category}.json")}
        for question in lines(f"{data}/BFCL_v4_{category}.json"):
            for function in question["function"]:
                functions.setdefault(function["name"], function)
            name = next(iter(answers[question["id"]]["ground_truth"][0]))
            text = " ".join(t["content"] for t in question["question"][0] if t["role"] == "user")
            out.append((text, name))
    return functions, out


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


def tool_text(function):
    """What `embedding_text` embeds for a tool (without title and tags, which BFCL lacks)."""
    text = words(function["name"])
    description = first_sentence(function.get("description", ""))
    if description:
        text += ": " + description
    params = list((function.get("parameters") or {}).get("properties", {}))
    if params:
        text += " Parameters: " + ", ".join(words(p) for p in params) + "."
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="a sentence-transformers model folder")
    parser.add_argument("bfcl_data", help="bfcl_eval/data of the bfcl-eval wheel")
    parser.add_argument("out", help="where the fine-tuned folder is written")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=2e-5)
    args = parser.parse_args()

    import torch
    from sentence_transformers import InputExample, SentenceTransformer, losses
    from torch.utils.data import DataLoader

    torch.manual_seed(0)
    random.seed(0)
    functions, examples = pairs(args.bfcl_data)
    examples = [InputExample(texts=[request, tool_text(functions[name])]) for request, name in examples]
    print(f"{len(examples)} pairs over {len(functions)} functions", file=sys.stderr)
    model = SentenceTransformer(args.base, device="cpu")
    model.max_seq_length = 128
    loader = DataLoader(examples, shuffle=True, batch_size=32)
    loss = losses.MultipleNegativesRankingLoss(model)
    started = time.time()
    model.fit(
        train_objectives=[(loader, loss)],
        epochs=args.epochs,
        warmup_steps=int(0.1 * len(loader) * args.epochs),
        optimizer_params={"lr": args.lr},
        show_progress_bar=False,
    )
    print(f"trained in {time.time() - started:.0f} s", file=sys.stderr)
    model.save(args.out, safe_serialization=True)


if __name__ == "__main__":
    main()
