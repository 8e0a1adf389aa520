"""OpenTelemetry end to end (run by scripts/otel-e2e.sh; the Python standard library only).

examples/everything exports its spans by OTLP to a real collector, Arize Phoenix, whose REST API
this client then reads back; its metrics go to a small OTLP/HTTP receiver of this client's own
(Phoenix stores traces only). Two servers, one per era and transport:

* stdio, a 2025-11-25 session (`everything --otel`): `tools/call test_simple_text` with the
  client's W3C trace context in `params._meta` (`traceparent`, `tracestate`), and
  `tools/call test_error_handling` (an isError result) in another trace;
* Streamable HTTP, 2026-07-28 requests (`everything --http`, telemetry on because
  OTEL_EXPORTER_OTLP_ENDPOINT is set): `tools/call test_simple_text` with `_meta.traceparent`, and
  one with the `traceparent` HTTP header only.

For each trace it checks, in Phoenix: the server span's trace id and parent span id are the
client's, its name (`tools/call test_simple_text`) and attributes after the MCP semantic
conventions (mcp.method.name, gen_ai.tool.name, gen_ai.operation.name, jsonrpc.request.id,
mcp.protocol.version, network.transport, mcp.session.id absent without a session, error.type on the
error), and that the handler's own span (`compose_text`) is its child. Then that the metric
mcp.server.operation.duration reached the OTLP metrics endpoint from both servers.

    python3 otel_e2e.py EVERYTHING_BINARY PHOENIX_URL LOG_DIR

Prints "ok - ..." / "not ok - ..." lines and "N passed, M failed"; exits 1 on any failure.
"""

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

EVERYTHING, PHOENIX, LOGS = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3]

passed = 0
failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok - {what}", flush=True)
    else:
        failed += 1
        print(f"not ok - {what}" + (f" ({detail})" if detail else ""), flush=True)
    return ok


# The clients' trace contexts: (trace id, the client's span id), one per request under test, new
# on every run.
def new_context():
    return (os.urandom(16).hex(), os.urandom(8).hex())


STDIO_CALL, STDIO_ERROR, HTTP_META, HTTP_HEADER = (new_context() for _ in range(4))


def traceparent(context):
    return f"00-{context[0]}-{context[1]}-01"


# --- an OTLP/HTTP metrics receiver: keeps every body posted to /v1/metrics -------------------
metric_posts = []


class MetricsReceiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        metric_posts.append((self.path, self.headers.get("content-type", ""), body))
        # An empty ExportMetricsServiceResponse.
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), MetricsReceiver)
threading.Thread(target=receiver.serve_forever, daemon=True).start()

ENV = dict(os.environ)
for name in list(ENV):
    if name.startswith("OTEL_"):
        del ENV[name]
ENV.update(
    {
        "OTEL_EXPORTER_OTLP_ENDPOINT": PHOENIX,
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"http://127.0.0.1:{receiver.server_address[1]}/v1/metrics",
        # Spans leave in batches every 200 ms (and all at exit).
        "OTEL_BSP_SCHEDULE_DELAY": "200",
        "RUST_LOG": "warn",
    }
)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rpc(id, method, params):
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


# --- 1. stdio, a 2025-11-25 session ----------------------------------------------------------
def run_stdio():
    log = open(os.path.join(LOGS, "otel-everything-stdio.log"), "wb")
    child = subprocess.Popen(
        [EVERYTHING, "--otel"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=ENV
    )
    answers = {}

    def send(message):
        child.stdin.write((json.dumps(message) + "\n").encode())
        child.stdin.flush()

    def answer(id):
        while id not in answers:
            line = child.stdout.readline()
            if not line:
                raise RuntimeError(f"stdout closed before the answer to {id}")
            message = json.loads(line)
            if "id" in message:
                answers[message["id"]] = message
        return answers[id]

    try:
        send(rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "otel-e2e", "version": "1"}}))
        init = answer(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(rpc(2, "tools/call", {"name": "test_simple_text", "arguments": {},
                                   "_meta": {"traceparent": traceparent(STDIO_CALL), "tracestate": "e2e=1"}}))
        call = answer(2)
        send(rpc(3, "tools/call", {"name": "test_error_handling", "arguments": {},
                                   "_meta": {"traceparent": traceparent(STDIO_ERROR)}}))
        error = answer(3)
        check(init.get("result", {}).get("protocolVersion") == "2025-11-25"
              and call.get("result", {}).get("content", [{}])[0].get("text") == "This is a simple text response for testing."
              and error.get("result", {}).get("isError") is True,
              "stdio: everything --otel answers initialize, test_simple_text and test_error_handling (isError)",
              json.dumps([init, call, error])[:300])
    except Exception as e:  # noqa: BLE001
        check(False, "stdio: everything --otel answers", repr(e))
    child.stdin.close()
    try:
        status = child.wait(timeout=20)
        check(status == 0, "stdio: everything exits 0 at the end of its input (exporting what is left)", f"status {status}")
    except subprocess.TimeoutExpired:
        child.kill()
        check(False, "stdio: everything exits at the end of its input within 20 s")


# --- 2. Streamable HTTP, 2026-07-28 requests -------------------------------------------------
def post(url, body, headers):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream", **headers})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


def run_http():
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    log = open(os.path.join(LOGS, "otel-everything-http.log"), "wb")
    child = subprocess.Popen([EVERYTHING, "--http", f"127.0.0.1:{port}"], stdout=log, stderr=log, env=ENV)
    try:
        deadline = time.time() + 20
        while True:
            try:
                urllib.request.urlopen(url, timeout=2)
            except urllib.error.HTTPError:
                break  # it answers (405 or 400 to a bare GET)
            except OSError:
                if time.time() > deadline or child.poll() is not None:
                    raise RuntimeError("everything --http did not start")
                time.sleep(0.1)
        envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}}
        headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "test_simple_text"}
        call = rpc("e2e-http-1", "tools/call", {"name": "test_simple_text", "arguments": {},
                                                 "_meta": {**envelope, "traceparent": traceparent(HTTP_META)}})
        status, first = post(url, call, headers)
        call = rpc("e2e-http-2", "tools/call", {"name": "test_simple_text", "arguments": {}, "_meta": envelope})
        status2, second = post(url, call, {**headers, "traceparent": traceparent(HTTP_HEADER)})
        text = "This is a simple text response for testing."
        check(status == 200 and status2 == 200
              and first.get("result", {}).get("content", [{}])[0].get("text") == text
              and second.get("result", {}).get("content", [{}])[0].get("text") == text,
              "http: everything --http (telemetry on by OTEL_EXPORTER_OTLP_ENDPOINT) answers two 2026-07-28 tools/call",
              json.dumps([first, second])[:300])
    except Exception as e:  # noqa: BLE001
        check(False, "http: everything --http answers", repr(e))
    child.send_signal(signal.SIGTERM)
    try:
        status = child.wait(timeout=20)
        check(status == 0, "http: everything stops on SIGTERM with status 0 (exporting what is left)", f"status {status}")
    except subprocess.TimeoutExpired:
        child.kill()
        check(False, "http: everything stops within 20 s of SIGTERM")


# --- 3. what Phoenix stored ------------------------------------------------------------------
def spans_of(trace_id, names, limit=30):
    """The spans Phoenix has of the trace, once every name in `names` is among them."""
    deadline = time.time() + limit
    spans = []
    while time.time() < deadline:
        with urllib.request.urlopen(f"{PHOENIX}/v1/projects/default/spans/otlpv1?trace_id={trace_id}", timeout=10) as r:
            spans = json.loads(r.read())["data"]
        if all(any(s["name"] == n for s in spans) for n in names):
            break
        time.sleep(0.5)
    return spans


def attributes(span):
    def value(v):
        for key in ("string_value", "int_value", "bool_value", "double_value"):
            if v.get(key) is not None:
                return str(v[key])
        return None

    return {kv["key"]: value(kv["value"]) for kv in span.get("attributes") or []}


SERVER_SPAN = "tools/call test_simple_text"
ERROR_SPAN = "tools/call test_error_handling"
UNSET, ERROR = 0, 2


def check_tree(label, context, version, transport, request_id, http):
    trace_id, parent_id = context
    spans = spans_of(trace_id, [SERVER_SPAN, "compose_text"])
    server = [s for s in spans if s["name"] == SERVER_SPAN]
    if not check(len(server) == 1, f"{label}: Phoenix has one span `{SERVER_SPAN}` in the client's trace {trace_id}",
                 f"spans: {[s['name'] for s in spans]}"):
        return
    server = server[0]
    check(server["trace_id"] == trace_id and server["parent_span_id"] == parent_id,
          f"{label}: the server span's parent is the client's span {parent_id}",
          f"trace {server['trace_id']}, parent {server['parent_span_id']}")
    expected = {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "test_simple_text",
        "gen_ai.operation.name": "execute_tool",
        "jsonrpc.request.id": request_id,
        "mcp.protocol.version": version,
        "network.transport": transport,
    }
    if http:
        expected["network.protocol.name"] = "http"
    found = attributes(server)
    wrong = {k: (v, found.get(k)) for k, v in expected.items() if found.get(k) != v}
    absent = [k for k in ("error.type", "rpc.response.status_code", "mcp.session.id") if k in found]
    check(not wrong and not absent and server["status"]["code"] == UNSET,
          f"{label}: the server span's attributes: " + ", ".join(f"{k}={v}" for k, v in expected.items()),
          f"wrong {wrong}, unexpected {absent}, status {server['status']}")
    children = [s for s in spans if s["name"] == "compose_text"]
    check(len(children) == 1 and children[0]["parent_span_id"] == server["span_id"]
          and children[0]["trace_id"] == trace_id
          and attributes(children[0]).get("fixture") == "conformance",
          f"{label}: the handler's span `compose_text` is the server span's child",
          f"children {[(c['span_id'], c['parent_span_id']) for c in children]}, server {server['span_id']}")


def main():
    started = time.time()
    run_stdio()
    run_http()
    check_tree("stdio 2025-11-25, _meta.traceparent", STDIO_CALL, "2025-11-25", "pipe", "2", http=False)
    check_tree("http 2026-07-28, _meta.traceparent", HTTP_META, "2026-07-28", "tcp", "e2e-http-1", http=True)
    check_tree("http 2026-07-28, traceparent header", HTTP_HEADER, "2026-07-28", "tcp", "e2e-http-2", http=True)

    spans = spans_of(STDIO_ERROR[0], [ERROR_SPAN])
    error = [s for s in spans if s["name"] == ERROR_SPAN]
    found = attributes(error[0]) if error else {}
    check(len(error) == 1 and error[0]["parent_span_id"] == STDIO_ERROR[1]
          and found.get("error.type") == "tool_error" and error[0]["status"]["code"] == ERROR,
          "stdio: the isError result's span has error.type=tool_error and status ERROR, under the client's span",
          f"{[(s['name'], s['parent_span_id'], s['status']) for s in spans]} {found.get('error.type')}")

    # Each server sent its metrics at exit: protobuf bodies naming the metric and the transport.
    bodies = [body for path, kind, body in metric_posts if path == "/v1/metrics" and kind == "application/x-protobuf"]
    named = [b for b in bodies if b"mcp.server.operation.duration" in b and b"tools/call" in b]
    check(any(b"pipe" in b for b in named) and any(b"tcp" in b for b in named),
          "the metric mcp.server.operation.duration reached the OTLP/HTTP metrics endpoint from both servers (pipe, tcp)",
          f"{len(metric_posts)} posts, {len(named)} naming the metric")
    print(f"# otel e2e client: {time.time() - started:.1f} s")
    print(f"{passed} passed, {failed} failed")
    receiver.shutdown()
    sys.exit(1 if failed else 0)


main()
