#!/usr/bin/env python3
"""Issue #13's targets as ratios taken round by round: for each round of the suite, the ratio of
two cells measured in that same round (ours against the floor, against rmcp, 2026-07-28 against
2025-11-25 with the same bytes), then the median of the rounds' ratios. A slow phase of the VM
that hits one round hits both cells of that round's ratio, where the tables' ratio of two
medians can pair one server's fast round with the other's slow one.

    python3 scripts/perf-rounds.py bench/perf-pinned.json bench/perf.json

Prints a markdown table (scripts/bench-perf.sh puts it in bench/perf.md).
"""

import json
import statistics
import sys

# (target, measurement of the numerator, its column, measurement of the denominator, its column,
#  limit, whether the ratio must stay at or below the limit (times) or reach it (rates))
TARGETS = [
    ("stdio sequential p50 ≤ 1.3× floor", "stdio sequential p50", "mcp-tools",
     "stdio sequential p50", "floor", 1.3, True),
    ("stdio sequential p50 below rmcp's fastest", "stdio sequential p50", "mcp-tools",
     "stdio sequential p50", "rmcp stdio_pipes()", 1.0, True),
    ("stdio pipelined ≥ 0.9× floor", "stdio 32 in flight calls/s", "mcp-tools",
     "stdio 32 in flight calls/s", "floor", 0.9, False),
    ("stdio pipelined ≥ 3× rmcp `stdio_pipes()`", "stdio 32 in flight calls/s", "mcp-tools",
     "stdio 32 in flight calls/s", "rmcp stdio_pipes()", 3.0, False),
    ("stdio pipelined ≥ 2× the TypeScript SDK", "stdio 32 in flight calls/s", "mcp-tools",
     "stdio 32 in flight calls/s", "TypeScript SDK", 2.0, False),
    ("HTTP 1 client p50 ≤ 1.2× floor", "HTTP 1 client p50", "mcp-tools",
     "HTTP 1 client p50", "floor", 1.2, True),
    ("HTTP 16 clients ≥ 0.9× floor", "HTTP 16 clients calls/s", "mcp-tools",
     "HTTP 16 clients calls/s", "floor", 0.9, False),
    ("per-call p50, 10,000 tools ≤ 1.1× 10 tools", "stdio sequential p50, 10000 tools", "mcp-tools",
     "stdio sequential p50, 10 tools", "mcp-tools", 1.1, True),
    ("`tools/list` of 1,000 tools ≤ 1.2× the hand-written page", "tools/list p50, 1000 tools", "mcp-tools",
     "tools/list p50, 1000 tools", "floor", 1.2, True),
    ("2026-07-28 envelope: sequential p50 ≤ +10%", "stdio sequential p50", "mcp-tools (2026-07-28)",
     "stdio sequential p50", "mcp-tools (2025-11-25, same bytes)", 1.1, True),
    ("2026-07-28 envelope: pipelined ≥ 1/1.1 (−10% time)", "stdio 32 in flight calls/s", "mcp-tools (2026-07-28)",
     "stdio 32 in flight calls/s", "mcp-tools (2025-11-25, same bytes)", 1 / 1.1, False),
]


def rounds(report, measurement, column):
    for row in report["rows"]:
        if row["measurement"] == measurement:
            cell = row["cells"].get(column)
            return cell["runs"] if cell else None
    return None


def ratios(report, target):
    _, num_row, num_col, den_row, den_col, _, _ = target
    num, den = rounds(report, num_row, num_col), rounds(report, den_row, den_col)
    if not num or not den or len(num) != len(den):
        return None
    return [n / d for n, d in zip(num, den)]


def cell(values, limit, at_most):
    """The rounds' ratios and their median (bold when the target is met), as table cells."""
    if values is None:
        return "", ""
    median = statistics.median(values)
    met = median <= limit if at_most else median >= limit
    return ", ".join(f"{v:.2f}" for v in values), f"**{median:.2f}×**" if met else f"{median:.2f}× (missed)"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: perf-rounds.py PINNED.json FREE.json")
    pinned, free = (json.load(open(path)) for path in sys.argv[1:])
    print("| target | pinned, per round | pinned median | free, per round | free median |")
    print("|---|---|---|---|---|")
    for target in TARGETS:
        p_rounds, p_median = cell(ratios(pinned, target), target[5], target[6])
        f_rounds, f_median = cell(ratios(free, target), target[5], target[6])
        print(f"| {target[0]} | {p_rounds} | {p_median} | {f_rounds} | {f_median} |")


if __name__ == "__main__":
    main()
