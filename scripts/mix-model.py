#!/usr/bin/env python3
"""Averages two sentence-transformers folders of the same architecture weight by weight: a model
fine-tuned for tool search and the model it was tuned from (a weight-space ensemble, as in
WiSE-FT, Wortsman et al. 2022: the mix keeps most of what tuning gained on its own kind of data
and most of what the published model knows elsewhere). `scripts/fetch-model.sh --tuned` runs it;
the share is chosen by leave-one-set-out (`bench/retrieval-loso.md`).

    python3 scripts/mix-model.py BASE_DIR TUNED_DIR OUT_DIR [--tuned-share 0.5]

Every file but `model.safetensors` is the tuned folder's. Needs torch and safetensors (the
virtual environment of `fetch-model.sh --tuned`).
"""

import argparse
import os
import shutil

from safetensors.torch import load_file, save_file


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("tuned")
    ap.add_argument("out")
    ap.add_argument("--tuned-share", type=float, default=0.5)
    args = ap.parse_args()
    share = args.tuned_share
    if not 0.0 <= share <= 1.0:
        raise SystemExit(f"--tuned-share must be from 0 to 1, not {share}")
    base = load_file(os.path.join(args.base, "model.safetensors"))
    tuned = load_file(os.path.join(args.tuned, "model.safetensors"))
    mixed = {}
    for name, weight in tuned.items():
        if name not in base:
            raise SystemExit(f"{args.base}: no weight {name}")
        if base[name].shape != weight.shape:
            raise SystemExit(f"{name}: shapes differ ({tuple(base[name].shape)}, {tuple(weight.shape)})")
        if weight.is_floating_point():
            mixed[name] = (share * weight.float() + (1 - share) * base[name].float()).to(weight.dtype).contiguous()
        else:
            mixed[name] = weight.contiguous()
    partial = args.out + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(args.tuned, partial)
    save_file(mixed, os.path.join(partial, "model.safetensors"), metadata={"format": "pt"})
    shutil.rmtree(args.out, ignore_errors=True)
    os.rename(partial, args.out)
    print(f"{args.out}: {len(mixed)} weights, {share:g} tuned, {1 - share:g} base")


if __name__ == "__main__":
    main()
