#!/usr/bin/env python3
"""Instructions per call of the gateway process (#42: what a call through examples/gateway.rs
costs it), counted by callgrind rather than timed, so that other jobs on the machine do not
matter. The gateway mounts one bench_server (`b`) and is sent `b_add` calls one at a time over
stdio, by name (--no-defer) and through `call_tool` (deferred), with 2025-11-25 and 2026-07-28
requests. For each: two runs under callgrind, WARM and WARM + N calls; per call = the
difference / N (start-up cancels out). The upstream runs natively; only the gateway is counted.

    cargo build --release --example gateway --example bench_server
    python3 scripts/gateway-callgrind.py target/release/examples/gateway \
        target/release/examples/bench_server OUTDIR [REPEATS]
"""
import json, os, re, subprocess, sys, tempfile

GATEWAY, SERVER, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
REPS = int(sys.argv[4]) if len(sys.argv) > 4 else 1
WARM, N = 50, 1000
META = '{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcp-bench","version":"1"}}'
os.makedirs(OUT, exist_ok=True)
conf = os.path.join(OUT, "one.json")
json.dump({"mcpServers": {"b": {"command": SERVER}}}, open(conf, "w"))

def run(defer, era, calls, tag):
    cg = os.path.join(OUT, f"cg.{tag}")
    args = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", GATEWAY, conf]
    if not defer:
        args.append("--no-defer")
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    def req(i, method, params):
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}, separators=(",", ":")) + "\n")
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("gateway ended")
            m = json.loads(line)
            if m.get("id") == i:
                return line
    if era == "2025":
        req(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cg", "version": "1"}})
        p.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n'); p.stdin.flush()
        extra = ""
    else:
        req(0, "server/discover", {"_meta": json.loads(META)})
        extra = f',"_meta":{META}'
    # wait until the tool is there
    name = "b_add"

    def call(i):
        """The `tools/call` request `i`: `b_add` itself, or through `call_tool` when deferred."""
        if defer:
            return f'{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"call_tool","arguments":{{"name":"{name}","arguments":{{"a":1.5,"b":2}}}}{extra}}}}}'
        return f'{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"{name}","arguments":{{"a":1.5,"b":2}}{extra}}}}}'

    for i in range(1, 200):
        body = call(i)
        p.stdin.write(body + "\n"); p.stdin.flush()
        line = p.stdout.readline()
        while json.loads(line).get("id") != i:
            line = p.stdout.readline()
        if "3.5" in line and '"isError":true' not in line:
            break
        import time; time.sleep(0.2)
    else:
        raise SystemExit("never answered: " + line)
    start = i + 1
    for i in range(start, start + calls):
        body = call(i)
        p.stdin.write(body + "\n"); p.stdin.flush()
        line = p.stdout.readline()
        assert "3.5" in line and f'"id":{i}' in line, line
    last = line
    p.stdin.close()
    p.wait()
    text = open(cg).read()
    tot = int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))
    return tot, last

for rep in range(REPS):
    for defer in (False, True):
        for era in ("2025", "2026"):
            v = "deferred" if defer else "no-defer"
            a, _ = run(defer, era, WARM, f"{v}.{era}.{rep}.a")
            b, last = run(defer, era, WARM + N, f"{v}.{era}.{rep}.b")
            print(f"{v:9} {era}  {(b - a) / N / 1e3:.1f}k instructions/call   (runs {a} / {b})", flush=True)
print("last answer:", last.strip())
