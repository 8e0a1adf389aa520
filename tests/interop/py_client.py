"""Interop test: the official MCP Python SDK client (`mcp`, pinned in requirements.txt) against
the example servers.

    python py_client.py --everything BIN --quickstart BIN --http URL

- `everything` over stdio (`mcp.client.stdio.stdio_client` + `mcp.ClientSession`),
- `everything --http` over Streamable HTTP (`mcp.client.streamable_http.streamable_http_client`
  + `mcp.ClientSession`, and the SDK's own `mcp.Client(mode="auto")`),
- `quickstart` over stdio: structured output validated by the client against the outputSchema.

The 2.x client is dual-era: it probes the 2026 `server/discover` first and falls back to the
`initialize` handshake when the server answers with an error. Both are checked.

Prints one line per check ("ok - name" / "not ok - name: reason"), then "N passed, M failed".
Exits 1 when any check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, ClientSession, MCPDeprecationWarning, MCPError, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

EXPECTED_VERSION = "2025-11-25"
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
    """Client-side handlers for the server's requests and notifications, with what they saw."""

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
        return types.ElicitResult(action="accept", content={"response": ELICITED})

    async def logging_callback(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    def session_kwargs(self) -> dict[str, Any]:
        return {
            "sampling_callback": self.sampling_callback,
            "elicitation_callback": self.elicitation_callback,
            "logging_callback": self.logging_callback,
            "client_info": types.Implementation(name="mcp-tools-interop-python", version="0.0.0"),
        }


async def probe_then_initialize(p: str, session: ClientSession, codes: tuple[int, ...]) -> bool:
    """What the dual-era client does on connect: `server/discover` first, then `initialize`.

    The probe must fail with one of `codes`: over stdio -32601 (method not found); over HTTP the
    probe's `MCP-Protocol-Version: 2026-07-28` header is refused first (400, -32600), which the
    client treats the same way.
    """

    async def discover() -> None:
        try:
            result = await session.discover()
        except MCPError as e:
            assert e.code in codes, f"error {e.code} (expected one of {codes}): {e}"
            print(f"# {p} server/discover answered error {e.code}: {e}", flush=True)
            return
        raise AssertionError(f"server/discover succeeded: {result!r}")

    await check(f"{p} server/discover probe answered with error {' or '.join(map(str, codes))}", discover)

    async def initialize() -> None:
        result = await session.initialize()
        assert result.protocol_version == EXPECTED_VERSION, f"protocolVersion {result.protocol_version}"
        assert session.protocol_version == EXPECTED_VERSION, f"session.protocol_version {session.protocol_version}"

    return bool(await check(f"{p} falls back to initialize: protocol {EXPECTED_VERSION}", initialize))


async def fixture_checks(p: str, session: ClientSession, cb: Callbacks) -> None:
    """The checks against the conformance fixture, on an initialized session."""

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
        assert len(cb.sampling) == 1, f"{len(cb.sampling)} sampling requests"
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


async def everything_stdio(binary: str) -> None:
    p = "everything stdio:"
    cb = Callbacks()
    params = StdioServerParameters(command=binary, args=[])
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write, **cb.session_kwargs()) as session:
                if await probe_then_initialize(p, session, (types.METHOD_NOT_FOUND,)):
                    await fixture_checks(p, session, cb)

        # The SDK's own connect policy (mode="auto": discover, fall back to initialize).
        async def auto() -> None:
            async with Client(StdioServerParameters(command=binary, args=[]), mode="auto") as client:
                assert client.protocol_version == EXPECTED_VERSION, f"protocol_version {client.protocol_version}"
                assert isinstance(client.session, ClientSession)
                result = await client.call_tool("test_simple_text", {})
                assert text_of(result) == "This is a simple text response for testing.", short(text_of(result))

        await check(f"{p} mcp.Client(mode='auto') connects at {EXPECTED_VERSION} and calls a tool", auto)


async def everything_http(url: str) -> None:
    p = f"everything http {url}:"
    cb = Callbacks()
    wire: list[tuple[str, Any]] = []

    async def on_request(request: Any) -> None:
        try:
            body = json.loads(request.content)
        except Exception:  # noqa: BLE001 - GET/DELETE have no body
            body = None
        wire.append(("request", f"{request.method} {body.get('method') if isinstance(body, dict) else ''}".strip()))

    async def on_response(response: Any) -> None:
        wire.append(("response", response.status_code))

    http = create_mcp_http_client()
    http.event_hooks = {"request": [on_request], "response": [on_response]}
    async with http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, **cb.session_kwargs()) as session:
                if await probe_then_initialize(p, session, (types.METHOD_NOT_FOUND, types.INVALID_REQUEST)):
                    await fixture_checks(p, session, cb)

        # The SDK's own connect policy, with the HTTP exchange recorded.
        async def auto() -> None:
            wire.clear()
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode="auto", sampling_callback=cb.sampling_callback) as client:
                assert client.protocol_version == EXPECTED_VERSION, f"protocol_version {client.protocol_version}"
                posts = [what for kind, what in wire if kind == "request" and what.startswith("POST")]
                assert posts[:2] == ["POST server/discover", "POST initialize"], f"requests {posts}"
                cb.sampling.clear()
                result = await client.call_tool("test_sampling", {"prompt": "Say hi"})
                assert text_of(result) == f"LLM response: {SAMPLED}", short(text_of(result))
            print(f"# {p} mcp.Client(mode='auto') HTTP exchange: {wire[:4]}", flush=True)

        await check(f"{p} mcp.Client(mode='auto') probes, falls back to initialize, samples", auto)


async def quickstart_stdio(binary: str) -> None:
    p = "quickstart stdio:"
    params = StdioServerParameters(command=binary, args=[])
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as session:
                if not await probe_then_initialize(p, session, (types.METHOD_NOT_FOUND,)):
                    return
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
                    assert sc and sc["total"] == 1, f"structured_content {sc!r}"
                    assert sc["notes"][0]["id"] == created.structured_content["id"], repr(sc)

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
