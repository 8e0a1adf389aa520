"""An upstream MCP server written with the Python SDK 2.x (`mcp`, pinned in
tests/interop/requirements.txt: `MCPServer`), for the gateway's interop checks
(scripts/interop.sh, section 9) and examples/client_check.rs. It serves both eras: 2026-07-28
(server/discover) and 2025-11-25 (initialize).

    python py_server.py                 # stdio
    python py_server.py --http PORT     # Streamable HTTP at http://127.0.0.1:PORT/mcp

Tools: convert_temperature (structured output), crunch_numbers (progress), slow_report (sleeps,
for the kill-mid-call check), whoami (the process id); resource py://info; prompt summarize_text.

When the file named by $UPSTREAM_SLOW_START_FILE exists at start, the server removes it and waits
the number of seconds it holds before serving: a slow restart, which keeps the window in which
the gateway has lost this server open long enough to be checked (ts_kill.mjs).
"""

from __future__ import annotations

import os
import sys
import time

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer("py-upstream", version="1.0.0")


class Temperature(BaseModel):
    celsius: float
    fahrenheit: float


@server.tool()
def convert_temperature(celsius: float) -> Temperature:
    """Convert a temperature from degrees Celsius to Fahrenheit."""
    return Temperature(celsius=celsius, fahrenheit=celsius * 9 / 5 + 32)


@server.tool()
async def crunch_numbers(steps: int, ctx: Context) -> str:
    """Crunch numbers in a few steps, reporting progress after each one."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
        await anyio.sleep(0.02)
    return f"crunched in {steps} steps"


@server.tool()
async def slow_report(seconds: float) -> str:
    """Compile a slow quarterly report; takes a long time before it answers."""
    await anyio.sleep(seconds)
    return f"slow_report done after {seconds} s"


@server.tool()
def whoami() -> str:
    """The process id of this Python server."""
    return str(os.getpid())


@server.resource("py://info", mime_type="text/plain", description="About this Python server.")
def info() -> str:
    return "Python SDK upstream"


@server.prompt()
def summarize_text(text: str) -> str:
    """Summarize a text in one sentence."""
    return f"Summarize in one sentence: {text}"


if __name__ == "__main__":
    slow_start = os.environ.get("UPSTREAM_SLOW_START_FILE")
    if slow_start and os.path.exists(slow_start):
        with open(slow_start) as f:
            delay = float(f.read().strip() or "0")
        os.unlink(slow_start)
        time.sleep(delay)
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()
