#!/usr/bin/env python3
"""Where the telemetry's and the pipeline's instructions go: reads what
`scripts/bench-middleware.sh --callgrind` leaves in a folder (the driver's middleware.json and one
callgrind file per thread of every stdio server: `callgrind.PID-NN`) and prints, per variant and
era, the instructions per call of each kind of thread, then, for the exporting telemetry server,
the functions that make up its cost (inclusive instructions per call, summed over threads).

    python3 scripts/middleware-callgrind.py DIR
"""

import collections
import glob
import json
import os
import re
import subprocess
import sys

# The kind of a thread, from the functions its file names (first match wins).
KINDS = [
    ("span exporter thread", ("otlp::Shared::send_batches",)),
    ("metric reader thread", ("PeriodicReader",)),
    ("requests (runtime workers)", ("serve_stdio",)),
    ("OTLP clients' start-up (system certificates)", ("ClientHandle::new",)),
]

# The functions shown for the telemetry server: (a part of the symbol, what it is).
FUNCTIONS = [
    ("mcp_tools::middleware::otel::Telemetry as mcp_tools::dispatch::observe::Observer>::begin",
     "request span made (`Telemetry::begin`)"),
    ("SdkTracer as opentelemetry::trace::tracer::Tracer>::build_with_context",
     "  of which the SDK's span (with `Telemetry::new`)"),
    ("opentelemetry::trace::context::SynchronizedSpan as core::convert::From<T>>::from",
     "  of which the span put in the request's context"),
    ("mcp_tools::middleware::otel::Request as mcp_tools::dispatch::observe::Observation>::end",
     "request ended (`Request::end`)"),
    ("ResolvedBoundMeasures<T> as opentelemetry::metrics::instruments::BoundSyncInstrument<T>>::measure",
     "  of which the duration histogram (a bound handle)"),
    ("opentelemetry::trace::context::SpanRef::end", "  of which the span's end (written, to the batch queue)"),
    ("mcp_tools::middleware::otel::SpanAttributes as mcp_tools::middleware::request_span::Attributes>::write",
     "    of which its attributes written (`SpanAttributes::write`)"),
    ("OtlpSpanProcessor as opentelemetry_sdk::trace::span_processor::SpanProcessor>::on_end",
     "the SDK's spans written and queued (`OtlpSpanProcessor::on_end`)"),
    ("mcp_tools::middleware::otel::Request as mcp_tools::dispatch::observe::Observation>::poll_in",
     "the request run in its context (handler included)"),
    ("otlp::Shared::send_batches", "span exporter thread"),
    ("reqwest::blocking::request::RequestBuilder::send", "  of which the POSTs"),
    ("rustls_native_certs::load_native_certs", "start-up: the OTLP clients load the system certificates"),
]


def annotate(path):
    return subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", path], capture_output=True, text=True
    ).stdout


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: middleware-callgrind.py DIR")
    folder = sys.argv[1]
    report = json.load(open(os.path.join(folder, "middleware.json")))
    processes = {p["pid"]: p for p in report["stdio_processes"]}
    kinds = collections.defaultdict(collections.Counter)  # (variant, era) -> kind -> Ir
    files = collections.defaultdict(list)
    for path in glob.glob(os.path.join(folder, "callgrind.*-*")):
        pid = int(re.search(r"callgrind\.(\d+)-\d+$", path).group(1))
        if pid not in processes:
            continue
        process = processes[pid]
        key = (process["variant"], process["requests"], process["calls"])
        text = open(path).read()
        total = int(re.search(r"^summary: (\d+)", text, re.M).group(1))
        kind = next((k for k, marks in KINDS if all(m in text for m in marks)), "other (main thread, start-up)")
        kinds[key][kind] += total
        files[key].append(path)
    print("| variant | requests | instructions per call | by thread |")
    print("|---|---|---|---|")
    order = [v["name"] for v in report["variants"]]
    for key in sorted(kinds, key=lambda k: (order.index(k[0]), k[1])):
        variant, era, calls = key
        total = sum(kinds[key].values())
        parts = "; ".join(f"{kind} {ir / calls / 1e3:.1f}k" for kind, ir in kinds[key].most_common() if ir / calls >= 50)
        print(f"| {variant} | {era} | {total / calls / 1e3:.1f}k | {parts} |")
    print()
    print("Telemetry (exporting), 2025-11-25 requests: inclusive instructions per call, summed over threads.")
    print()
    print("| function | instructions per call |")
    print("|---|---|")
    key = next(k for k in kinds if k[0] == "telemetry (exporting)" and k[1] == "2025-11-25")
    calls = key[2]
    outputs = [annotate(path) for path in files[key]]
    for symbol, label in FUNCTIONS:
        total = 0
        for out in outputs:
            best = 0
            for line in out.splitlines():
                m = re.match(r"\s*([\d,]+) \(", line)
                if m and symbol in line:
                    best = max(best, int(m.group(1).replace(",", "")))
            total += best
        print(f"| {label} | {total / calls:,.0f} |")


if __name__ == "__main__":
    main()
