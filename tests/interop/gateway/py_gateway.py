"""Interop: the Python SDK's client (`mcp` 2.x, tests/interop/requirements.txt) driving the
gateway (examples/gateway.rs) in front of real upstreams (upstreams.json), in both of its modes:
`mode="auto"` (must land on 2026-07-28) and `mode="legacy"` (2025-11-25).

    python py_gateway.py --upstreams mt,ts,py[,web] (--stdio GATEWAY CONFIG | --http URL) [--no-defer]

`--no-defer` says the gateway lists every tool (passed on to a stdio gateway; an HTTP gateway must
have been started with it). Per upstream: a natural request finds its tool (deferred) or the list
has it (listed, the SDK validating structured output against its outputSchema), a call through
`call_tool` or by its prefixed name with its structured output, progress forwarded, a resource
read and a prompt got by their namespaced names. Prints "ok - ..."/"not ok - ..." lines, then
"N passed, M failed".
"""

from __future__ import annotations

import argparse
import json
import os
import traceback
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, MCPDeprecationWarning, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
UPSTREAMS = json.loads((Path(__file__).parent / "upstreams.json").read_text())
TIMEOUT = 20

passed = 0
failed = 0


def ok(name: str) -> None:
    global passed
    passed += 1
    print(f"ok - {name}", flush=True)


def not_ok(name: str, reason: object) -> None:
    global failed
    failed += 1
    print(f"not ok - {name}: {' '.join(str(reason).split())[:600]}", flush=True)


async def check(name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
    try:
        with anyio.fail_after(TIMEOUT):
            value = await fn()
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
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def short(value: object) -> str:
    s = json.dumps(value, default=str)
    return s if len(s) <= 300 else s[:300] + "…"


async def drive(client: Client, p: str, names: list[str], listed: bool, mode: str) -> None:
    async def era() -> None:
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert client.protocol_version == expected, f"protocol_version {client.protocol_version}"
        assert client.server_info is not None and client.server_info.name == "mcp-tools-gateway", client.server_info

    await check(f"{p} speaks {'2026-07-28' if mode == 'auto' else '2025-11-25'}", era)

    async def list_all() -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    tools = await check(f"{p} tools/list parsed by the SDK (pydantic)", list_all) or []
    listed_names = [t.name for t in tools]

    async def call(name: str, args: dict[str, Any], **kw: Any) -> types.CallToolResult:
        if listed:
            return await client.call_tool(name, args, **kw)
        return await client.call_tool("call_tool", {"name": name, "arguments": args}, **kw)

    for name in names:
        u = UPSTREAMS[name]
        if listed:

            async def has_tools(u: dict[str, Any] = u) -> None:
                for tool in (u["tool"], u["progress"]["tool"]):
                    assert tool in listed_names, f"{tool} not in {short(listed_names)}"

            await check(f"{p} {name}: {u['tool']} and {u['progress']['tool']} listed", has_tools)
        else:

            async def search(u: dict[str, Any] = u) -> None:
                result = await client.call_tool("search_tools", {"query": u["search"], "limit": 5})
                found = [t["name"] for t in (result.structured_content or {}).get("tools", [])]
                assert u["tool"] in found[:3], f"top 3: {short(found)}"

            await check(f"{p} {name}: search_tools \"{u['search']}\" finds {u['tool']}", search)

        async def call_it(u: dict[str, Any] = u) -> None:
            result = await call(u["tool"], u["args"])
            assert not result.is_error, short(result.model_dump())
            # The answer is the gateway's: an upstream's own identity is not passed on.
            meta = result.model_dump(by_alias=True, exclude_none=True).get("_meta") or {}
            assert "io.modelcontextprotocol/serverInfo" not in meta, f"the upstream's serverInfo passed on: {short(meta)}"
            if "structured" in u:
                assert result.structured_content == u["structured"], f"structured {short(result.structured_content)}"
                assert json.loads(text_of(result)) == u["structured"], f"text {short(text_of(result))}"
            else:
                assert text_of(result) == u["text"], short(text_of(result))

        via = "" if listed else " through call_tool"
        structured = ", structured output preserved" if "structured" in u else ""
        await check(f"{p} {name}: call {u['tool']}{via}{structured}", call_it)

        async def progress(u: dict[str, Any] = u) -> None:
            seen: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append(progress)

            result = await call(u["progress"]["tool"], u["progress"]["args"], progress_callback=on_progress)
            assert not result.is_error, short(result.model_dump())
            await anyio.sleep(0.05)
            assert seen == u["progress"]["expect"], f"progress {seen}"

        expect = ", ".join(str(x) for x in u["progress"]["expect"])
        await check(f"{p} {name}: progress of {u['progress']['tool']} forwarded ({expect})", progress)

        async def read(u: dict[str, Any] = u) -> None:
            result = await client.read_resource(u["resource"]["uri"])
            first = result.contents[0]
            assert isinstance(first, types.TextResourceContents) and first.text == u["resource"]["text"], short(
                result.model_dump()
            )
            assert str(first.uri) == u["resource"]["uri"], first.uri

        await check(f"{p} {name}: resources/read {u['resource']['uri']}", read)

        async def prompt(u: dict[str, Any] = u) -> None:
            result = await client.get_prompt(u["prompt"]["name"], u["prompt"]["args"])
            text = "\n".join(getattr(m.content, "text", "") for m in result.messages)
            assert u["prompt"]["text"] in text, short(result.model_dump())

        await check(f"{p} {name}: prompts/get {u['prompt']['name']}", prompt)


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstreams", default="mt,ts,py")
    parser.add_argument("--stdio", nargs=2, metavar=("GATEWAY", "CONFIG"))
    parser.add_argument("--http")
    parser.add_argument("--no-defer", action="store_true")
    parser.add_argument("--modes", default="auto,legacy")
    a = parser.parse_args()
    names = a.upstreams.split(",")
    for mode in a.modes.split(","):
        p = f"python {mode} {'http' if a.http else 'stdio'} {'listed' if a.no_defer else 'deferred'}:"
        if a.http:
            server: Any = streamable_http_client(a.http)
        else:
            gateway, config = a.stdio
            server = StdioServerParameters(command=gateway, args=[config, *(["--no-defer"] if a.no_defer else [])])
        try:
            async with Client(server, mode=mode) as client:
                await drive(client, p, names, a.no_defer, mode)
        except Exception as e:  # noqa: BLE001
            not_ok(f"{p} connect to the gateway and close", f"{type(e).__name__}: {e}")
            if os.environ.get("INTEROP_DEBUG"):
                traceback.print_exc()
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(anyio.run(main))
