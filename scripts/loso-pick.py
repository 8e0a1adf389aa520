#!/usr/bin/env python3
"""Leave-one-set-out choices over one or more grids written by `bench_sets --loso --loso-grid FILE`
(one grid per model folder), as one grid: a point is a model and its settings.

    python3 scripts/loso-pick.py published=.cache/bench/loso-grid.tsv tuned=.cache/bench/loso-tuned.tsv
    python3 scripts/loso-pick.py ... --min-silence 0.85

The criterion is `bench_sets --loso`'s: a point's score on a set is the mean of hit@5 and MRR@10;
for set S the point picked is the best mean score over the other sets, each weighted equally
("left out"); ties go to the point with fewer settings away from the first grid's default, then to
the first in the grids. `--min-silence X` keeps only the points whose mean off-topic silence (the
share of 16 unrelated requests answered with no result) over the sets the choice is made on is at
least X: the choice then also keeps the search quiet when nothing in the catalog fits.
Prints markdown.
"""

import argparse
import csv
import sys

SETTINGS = ["lexical", "floor", "detail", "split", "drop", "adapter", "spelling"]
# `HybridRanker::from_model`'s settings (as `bench_sets`'s `DEFAULT_POINT`).
DEFAULT = {"lexical": "0.2", "floor": "0.25", "detail": "0.5", "split": "true", "drop": "true",
           "adapter": "true", "spelling": "true"}


def read(label, path):
    with open(path) as f:
        rows = list(csv.reader(f, delimiter="\t"))
    header, body = rows[0], rows[1:]
    sets = [h[: -len(" hit5")] for h in header if h.endswith(" hit5")]
    points = []
    for row in body:
        cells = dict(zip(header, row))
        p = {"model": label, **{k: cells[k] for k in SETTINGS}}
        p["figures"] = {s: {m: float(cells[f"{s} {m}"]) for m in ("hit5", "mrr10", "recall5", "silent")}
                        for s in sets}
        points.append(p)
    return sets, points


def label(p):
    on = lambda k, yes, no: yes if p[k] == "true" else no
    return (f"{p['model']}: lexical {p['lexical']} · floor {p['floor']} · detail {p['detail']} · "
            f"{on('split', 'steps', 'no steps')} · {on('drop', 'values dropped', 'values kept')} · "
            f"{on('adapter', 'adapter', 'no adapter')} · {on('spelling', 'spelling', 'no spelling')}")


def score(f):
    return (f["hit5"] + f["mrr10"]) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("grids", nargs="+", help="LABEL=FILE")
    ap.add_argument("--min-silence", type=float, default=None)
    args = ap.parse_args()
    sets, points = None, []
    first_model = None
    for g in args.grids:
        name, _, path = g.partition("=")
        s, p = read(name, path)
        if sets is not None and s != sets:
            sys.exit(f"{path}: other sets ({s} against {sets})")
        sets = s
        first_model = first_model or name
        points += p
    # The first grid's default point (without the query adapter if its model has none).
    if not any(p["model"] == first_model and p["adapter"] == "true" for p in points):
        DEFAULT["adapter"] = "false"
    default = next(i for i, p in enumerate(points)
                   if p["model"] == first_model and all(p[k] == v for k, v in DEFAULT.items()))

    def differences(p):
        return int(p["model"] != first_model) + sum(p[k] != DEFAULT[k] for k in SETTINGS)

    def pick(on):
        def mean(p, what):
            return sum(what(p["figures"][s]) for s in on) / len(on)
        eligible = [i for i, p in enumerate(points)
                    if args.min_silence is None or mean(p, lambda f: f["silent"]) >= args.min_silence - 1e-9]
        best = None
        for i in eligible:
            if best is None:
                best = i
                continue
            a, b = mean(points[i], score), mean(points[best], score)
            if a > b + 1e-9 or (abs(a - b) <= 1e-9 and differences(points[i]) < differences(points[best])):
                best = i
        return best

    meets = lambda f: f["hit5"] >= 0.75 and f["mrr10"] >= 0.60
    pair = lambda f: f"{f['hit5']:.3f} / {f['mrr10']:.3f}"
    yes = lambda b: "yes" if b else "**no**"
    models = sorted({p["model"] for p in points}, key=[p["model"] for p in points].index)
    counts = ", ".join(f"{m}: {sum(p['model'] == m for p in points)}" for m in models)
    print(f"{len(points)} points ({counts}), "
          f"{len(sets)} sets; criterion: mean of hit@5 and MRR@10"
          + (f", among points whose mean off-topic silence on the sets chosen on is ≥ {args.min_silence}"
             if args.min_silence is not None else "") + ".\n")
    print("| set | default: hit@5 / MRR@10 | tuned on the set | **left out** | point picked on the other sets "
          "| left-out ≥ 0.75 / 0.60 | its off-topic silence |")
    print("|---|---|---|---|---|---|---|")
    left_scores = []
    for s in sets:
        tuned = pick([s])
        left = pick([t for t in sets if t != s])
        f = points[left]["figures"][s]
        left_scores.append(score(f))
        own = pair(points[tuned]["figures"][s]) if tuned is not None else "(none silent enough)"
        print(f"| {s} | {pair(points[default]['figures'][s])} | {own} "
              f"| **{pair(f)}** | {label(points[left])} | {yes(meets(f))} | {f['silent']:.2f} |")
    every = pick(sets)
    mean_default = sum(score(points[default]["figures"][s]) for s in sets) / len(sets)
    print(f"\nMean criterion over the {len(sets)} sets: default {mean_default:.4f}, left out "
          f"{sum(left_scores) / len(sets):.4f}.\n")
    print(f"**Best single point on all {len(sets)} sets**: {label(points[every])}\n")
    print("| set | this point | ≥ 0.75 / 0.60 | off-topic silence: default → this point |")
    print("|---|---|---|---|")
    for s in sets:
        f = points[every]["figures"][s]
        print(f"| {s} | {pair(f)} | {yes(meets(f))} | {points[default]['figures'][s]['silent']:.2f} → "
              f"{f['silent']:.2f} |")


if __name__ == "__main__":
    main()
