"""Interop test: the official MCP Python SDK client (`mcp`, pinned in requirements.txt) against
the example servers, in both protocol eras.

    python py_client.py --everything BIN --quickstart BIN --http URL

The 2.x client is dual-era: `mcp.Client(mode="auto")` probes `server/discover` first and speaks
2026-07-28 when the server answers it (sampling and elicitation then travel as input requests
of `input_required` results, which the client answers and retries); `mode="legacy"` forces the
2025-11-25 `initialize` handshake. Both are checked against

- `everything` over stdio (the client's messages recorded by a `tee` in front of the server,
  so the 2026 era is verified on the wire, not by fallback),
- `everything --http` over Streamable HTTP (every request recorded by an httpx hook),
- `quickstart` over stdio: structured output validated by the client against the outputSchema.

Prints one line per check ("ok - name" / "not ok - name: reason"), then "N passed, M failed".
Exits 1 when any check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import traceback
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, MCPDeprecationWarning, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.subscriptions import ToolsListChanged

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
SAMPLED = "Four, from the Python sampling callback"
ELICITED = "python elicitation answer"
TIMEOUT = 20  # seconds per step

# logging/setLevel is deprecated in the 2026 era; on a 2025-11-25 session it is what we test.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

passed = 0
failed = 0


def ok(name: str) -> None:
    global passed
    passed += 1
    print(f"ok - {name}", flush=True)


def not_ok(name: str, reason: object) -> None:
    global failed
    failed += 1
    text = " ".join(str(reason).split())
    print(f"not ok - {name}: {text}", flush=True)


async def check(name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
    """Runs `fn` with a timeout; passes unless it raises. Returns its value (None on failure)."""
    try:
        with anyio.fail_after(TIMEOUT):
            value = await fn()
    except AssertionError as e:
        not_ok(name, e)
        return None
    except TimeoutError:
        not_ok(name, f"no answer within {TIMEOUT} s")
        return None
    except Exception as e:  # noqa: BLE001 - any failure is the check's failure
        not_ok(name, f"{type(e).__name__}: {e}")
        if os.environ.get("INTEROP_DEBUG"):
            traceback.print_exc()
        return None
    ok(name)
    return True if value is None else value


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def short(value: object) -> str:
    s = json.dumps(value, default=str)
    return s if len(s) <= 300 else s[:300] + "…"


class Callbacks:
    """Client-side handlers for the server's questions and notifications, with what they saw."""

    def __init__(self) -> None:
        self.sampling: list[types.CreateMessageRequestParams] = []
        self.elicitations: list[Any] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []

    async def sampling_callback(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampling.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=SAMPLED),
            model="interop-model",
            stop_reason="endTurn",
        )

    async def elicitation_callback(self, context: ClientRequestContext, params: Any) -> types.ElicitResult:
        self.elicitations.append(params)
        # Fill in the form: `response` (test_elicitation) with ELICITED, other text fields with a
        # name, booleans with true.
        properties = (getattr(params, "requested_schema", None) or {}).get("properties", {})
        content: dict[str, Any] = {}
        for field, schema in properties.items():
            if schema.get("type") == "boolean":
                content[field] = True
            else:
                content[field] = ELICITED if field == "response" else "Pythonista"
        return types.ElicitResult(action="accept", content=content)

    async def logging_callback(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    def client_kwargs(self) -> dict[str, Any]:
        return {
            "sampling_callback": self.sampling_callback,
            "elicitation_callback": self.elicitation_callback,
            "logging_callback": self.logging_callback,
            "client_info": types.Implementation(name="mcp-tools-interop-python", version="0.0.0"),
        }


def client_for(server: Any, cb: Callbacks, modern: bool) -> Client:
    """The SDK's client: `mode="auto"` (it probes, and must land on 2026-07-28, asking for logs
    with the request's `logLevel`) or `mode="legacy"` (the 2025-11-25 handshake)."""
    if modern:
        return Client(server, mode="auto", log_level="debug", **cb.client_kwargs())
    return Client(server, mode="legacy", **cb.client_kwargs())


async def fixture_checks(p: str, session: Client, cb: Callbacks, modern: bool) -> None:
    """The checks against the conformance fixture, on a connected client of either era."""

    async def era() -> None:
        expected = MODERN if modern else LEGACY
        assert session.protocol_version == expected, f"protocol_version {session.protocol_version}"

    await check(f"{p} speaks {MODERN if modern else LEGACY}", era)

    async def server_info() -> None:
        info = session.server_info
        assert info is not None and info.name == "mcp-conformance-test-server", f"server_info {info!r}"
        caps = session.server_capabilities
        assert caps is not None and caps.tools is not None and caps.logging is not None, f"capabilities {caps!r}"

    await check(f"{p} serverInfo and capabilities", server_info)

    async def list_tools() -> None:
        result = await session.list_tools()
        names = {tool.name for tool in result.tools}
        for name in ("test_simple_text", "test_tool_with_progress", "test_sampling", "test_elicitation"):
            assert name in names, f"{name} not in {sorted(names)}"

    await check(f"{p} tools/list parsed by the SDK (pydantic)", list_tools)

    async def simple_text() -> None:
        result = await session.call_tool("test_simple_text", {})
        assert not result.is_error, text_of(result)
        assert text_of(result) == "This is a simple text response for testing.", short(text_of(result))

    await check(f"{p} call test_simple_text", simple_text)

    async def progress() -> None:
        seen: list[tuple[float, float | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total))

        result = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        assert not result.is_error, text_of(result)
        assert seen == [(0, 100), (50, 100), (100, 100)], f"progress callback got {seen}"

    await check(f"{p} progress callback gets 0, 50, 100 of 100", progress)

    async def logging() -> None:
        if not modern:  # 2026-07-28 asks for logs per request (the client's log_level)
            await session.set_logging_level("debug")
        cb.logs.clear()
        result = await session.call_tool("test_tool_with_logging", {})
        assert not result.is_error, text_of(result)
        with anyio.fail_after(5):
            while len(cb.logs) < 3:  # notifications are delivered by the session's own task
                await anyio.sleep(0.01)
        assert len(cb.logs) == 3, f"{len(cb.logs)} log messages"
        data = [str(log.data) for log in cb.logs]
        assert "started" in data[0] and "completed" in data[2], short(data)

    await check(f"{p} logging callback gets 3 notifications/message", logging)

    async def sampling() -> None:
        result = await session.call_tool("test_sampling", {"prompt": "What is 2 + 2?"})
        assert not result.is_error, text_of(result)
        assert text_of(result) == f"LLM response: {SAMPLED}", short(text_of(result))
        assert len(cb.sampling) == 1, f"{len(cb.sampling)} sampling requests"  # one question, one retry
        content = cb.sampling[0].messages[0].content
        assert getattr(content, "text", None) == "What is 2 + 2?", f"request carried {content!r}"

    await check(f"{p} sampling callback: test_sampling answers with its text", sampling)

    async def elicitation() -> None:
        result = await session.call_tool("test_elicitation", {"message": "Please type an answer"})
        assert not result.is_error, text_of(result)
        text = text_of(result)
        assert ELICITED in text and "action=accept" in text, short(text)
        assert len(cb.elicitations) == 1 and cb.elicitations[0].message == "Please type an answer", repr(cb.elicitations)

    await check(f"{p} elicitation callback: test_elicitation gets the accepted content", elicitation)

    async def read_resource() -> None:
        result = await session.read_resource("test://static-text")
        assert len(result.contents) == 1, repr(result.contents)
        assert getattr(result.contents[0], "text", None) == "This is the content of the static text resource.", repr(result)

    await check(f"{p} resources/read test://static-text", read_resource)

    async def get_prompt() -> None:
        result = await session.get_prompt("test_prompt_with_arguments", {"arg1": "first", "arg2": "second"})
        text = getattr(result.messages[0].content, "text", "")
        assert "first" in text and "second" in text, short(text)

    await check(f"{p} prompts/get test_prompt_with_arguments", get_prompt)

    if not modern:
        return

    async def input_required() -> None:
        cb.elicitations.clear()
        result = await session.call_tool("test_input_required_result_elicitation", {})
        assert text_of(result) == "Hello, Pythonista!", short(text_of(result))
        assert len(cb.elicitations) == 1, repr(cb.elicitations)

    await check(f"{p} input_required: the elicitation callback answers and the client retries", input_required)

    async def multi_round() -> None:
        cb.elicitations.clear()
        result = await session.call_tool("test_input_required_result_multi_round", {})
        assert not result.is_error and len(cb.elicitations) == 2, f"{text_of(result)} after {len(cb.elicitations)}"

    await check(f"{p} input_required over two rounds (answers sealed in requestState)", multi_round)

    async def listen() -> None:
        async with session.listen(tools_list_changed=True) as sub:
            assert sub.honored.tools_list_changed, repr(sub.honored)
            await session.call_tool("test_trigger_tool_change", {})
            with anyio.fail_after(5):
                event = await sub.__anext__()
            assert isinstance(event, ToolsListChanged), repr(event)

    await check(f"{p} subscriptions/listen: acknowledged, then tools/list_changed", listen)


def recorded_stdio(binary: str, log: str) -> StdioServerParameters:
    """The server behind a `tee` that records every message the client sends it."""
    return StdioServerParameters(command="bash", args=["-c", f"tee -a {shlex.quote(log)} | {shlex.quote(binary)}"])


def sent_messages(log: str) -> list[dict[str, Any]]:
    with open(log) as f:
        return [json.loads(line) for line in f if line.strip()]


def check_modern_wire(requests: list[dict[str, Any]], versions: list[str | None] | None = None) -> None:
    """What a 2026-07-28 client sends: a probe, no handshake, the envelope on every request, and a
    retry with answers after an `input_required` result."""
    methods = [m.get("method") for m in requests if "id" in m]
    assert methods and methods[0] == "server/discover", f"first request {methods[:1]}"
    assert "initialize" not in methods, f"initialize sent: {methods}"
    for message in requests:
        if "id" in message and "method" in message:
            meta = (message.get("params") or {}).get("_meta") or {}
            assert meta.get("io.modelcontextprotocol/protocolVersion") == MODERN, f"no 2026 envelope: {short(message)}"
    retries = [m for m in requests if m.get("method") == "tools/call" and "inputResponses" in (m.get("params") or {})]
    assert retries, "no tools/call retried with inputResponses"
    if versions is not None:
        assert all(v == MODERN for v in versions), f"MCP-Protocol-Version headers {sorted(set(map(str, versions)))}"


async def everything_stdio(binary: str) -> None:
    for modern in (True, False):
        p = f"everything stdio ({'auto' if modern else 'legacy'}):"
        cb = Callbacks()
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as log:
            path = log.name
        async with client_for(recorded_stdio(binary, path), cb, modern) as client:
            await fixture_checks(p, client, cb, modern)
        if modern:
            await check(f"{p} on the wire: server/discover, no initialize, envelopes, a retry", lambda: wire_stdio(path))
        os.unlink(path)


async def wire_stdio(path: str) -> None:
    check_modern_wire(sent_messages(path))


async def everything_http(url: str) -> None:
    for modern in (True, False):
        p = f"everything http {url} ({'auto' if modern else 'legacy'}):"
        cb = Callbacks()
        bodies: list[dict[str, Any]] = []
        versions: list[str | None] = []

        async def on_request(request: Any) -> None:
            try:
                body = json.loads(request.content)
            except Exception:  # noqa: BLE001 - GET/DELETE have no body
                return
            if isinstance(body, dict):
                bodies.append(body)
                if "id" in body:
                    versions.append(request.headers.get("mcp-protocol-version"))

        http = create_mcp_http_client()
        http.event_hooks = {"request": [on_request]}
        async with http:
            async with client_for(streamable_http_client(url, http_client=http), cb, modern) as client:
                await fixture_checks(p, client, cb, modern)
        if modern:

            async def wire() -> None:
                check_modern_wire(bodies, versions)

            await check(f"{p} on the wire: server/discover, no initialize, envelopes and headers, a retry", wire)
        else:

            async def handshake() -> None:
                methods = [b.get("method") for b in bodies if "id" in b]
                assert methods[:1] == ["initialize"], f"requests {methods[:3]}"

            await check(f"{p} on the wire: initialize first", handshake)


async def quickstart_stdio(binary: str) -> None:
    for modern in (True, False):
        p = f"quickstart stdio ({'auto' if modern else 'legacy'}):"
        async with client_for(StdioServerParameters(command=binary, args=[]), Callbacks(), modern) as session:

            async def era() -> None:
                expected = MODERN if modern else LEGACY
                assert session.protocol_version == expected, f"protocol_version {session.protocol_version}"

            await check(f"{p} speaks {MODERN if modern else LEGACY}", era)
            tools = await check(f"{p} tools/list", lambda: session.list_tools())
            if tools:

                async def schema() -> None:
                    create = next(t for t in tools.tools if t.name == "create_note")
                    assert create.output_schema and create.output_schema.get("type") == "object", repr(create)

                await check(f"{p} create_note has an object outputSchema", schema)

            async def create() -> types.CallToolResult:
                # call_tool validates structuredContent against the listed outputSchema (jsonschema).
                result = await session.call_tool(
                    "create_note", {"title": "From Python", "body": "validated", "tags": ["py"]}
                )
                assert not result.is_error, text_of(result)
                sc = result.structured_content
                assert isinstance(sc, dict) and isinstance(sc.get("id"), int), f"structured_content {sc!r}"
                assert sc["title"] == "From Python" and sc["tags"] == ["py"], f"structured_content {sc!r}"
                assert json.loads(text_of(result)) == sc, "text block differs from structuredContent"
                return result

            created = await check(f"{p} call create_note: structuredContent validated by the client", create)

            async def search() -> None:
                result = await session.call_tool("search_notes", {"query": "python"})
                sc = result.structured_content
                assert sc and sc["total"] >= 1, f"structured_content {sc!r}"
                assert created.structured_content["id"] in [n["id"] for n in sc["notes"]], repr(sc)

            if created:
                await check(f"{p} call search_notes finds it (structuredContent validated)", search)

            async def invalid() -> None:
                result = await session.call_tool("search_notes", {"query": 5})
                assert result.is_error, f"not an error: {result!r}"
                assert "/query" in text_of(result), short(text_of(result))

            await check(f"{p} invalid arguments: isError result naming /query", invalid)


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--everything", required=True, help="path to the everything example binary")
    parser.add_argument("--quickstart", required=True, help="path to the quickstart example binary")
    parser.add_argument("--http", required=True, help="URL of a running `everything --http`")
    args = parser.parse_args()
    from importlib.metadata import version

    print(f"# mcp {version('mcp')} on Python {sys.version.split()[0]}", flush=True)
    for name, part in (
        ("everything stdio", lambda: everything_stdio(args.everything)),
        ("everything http", lambda: everything_http(args.http)),
        ("quickstart stdio", lambda: quickstart_stdio(args.quickstart)),
    ):
        try:
            with anyio.fail_after(120):
                await part()
        except Exception as e:  # noqa: BLE001 - a transport failure is one failed check
            not_ok(f"{name}: connection", f"{type(e).__name__}: {e}")
            if os.environ.get("INTEROP_DEBUG"):
                traceback.print_exc()
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
