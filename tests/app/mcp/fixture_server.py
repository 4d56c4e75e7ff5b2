"""An MCP server for the tests, written with the SDK: run as
`python fixture_server.py [--http PORT] [--crash | --hang] [--slow-start S] [--lifetime S]`.

Over stdio by default, or Streamable HTTP on 127.0.0.1:PORT. Its tools add, sleep, fail, return
a huge result or an image, give the process id, and change another tool's description.
`--crash` writes to stderr and exits before answering; `--hang` never answers. Whatever happens,
the process ends itself after `--lifetime` seconds, so a killed test run leaves nothing behind.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys
import threading
import time

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ImageContent, TextContent

SHIFTY_FIRST = "Says hello."
# A 1x1 PNG.
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
).decode()

server = MCPServer("fixture")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
async def sleep(seconds: float) -> str:
    """Wait `seconds`, then say so."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:  # the client's notifications/cancelled
        print(f"fixture: sleep {seconds} cancelled", file=sys.stderr, flush=True)
        raise
    return f"slept {seconds}"


@server.tool()
def fail(message: str) -> str:
    """Always fails with `message`."""
    raise ToolError(message)


@server.tool()
def huge(chars: int) -> str:
    """A result of `chars` characters (at least 10): a head line, filler, a tail line."""
    return "HEAD\n" + "x" * max(0, chars - 10) + "\nTAIL"


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A caption and a one-pixel image."""
    return [
        TextContent(type="text", text="a pixel:"),
        ImageContent(type="image", data=PIXEL, mime_type="image/png"),
    ]


@server.tool()
def pid() -> int:
    """The server's process id (so a test can end it)."""
    return os.getpid()


@server.tool(description=SHIFTY_FIRST)
def shifty() -> str:
    return "hello"


@server.tool()
def change_description(text: str) -> str:
    """Give the tool `shifty` a new description (as a server update might)."""
    tool = server._tool_manager.get_tool("shifty")
    assert tool is not None
    tool.description = text
    return "changed"


def _end_after(seconds: float) -> None:
    def end() -> None:
        time.sleep(seconds)
        os._exit(0)

    threading.Thread(target=end, daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, help="serve Streamable HTTP on 127.0.0.1:PORT")
    parser.add_argument("--crash", action="store_true")
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--slow-start", type=float, default=0.0, help="seconds before serving")
    parser.add_argument("--lifetime", type=float, default=60.0)
    args = parser.parse_args()
    _end_after(args.lifetime)
    if args.crash:
        print("fixture: starting", file=sys.stderr)
        print("fixture: FIXTURE_KEY is not set", file=sys.stderr, flush=True)
        sys.exit(3)
    if args.hang:
        time.sleep(args.lifetime)
    time.sleep(args.slow_start)
    print("fixture: ready", file=sys.stderr, flush=True)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
