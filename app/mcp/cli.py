"""`branchwise tools list|call`: the MCP servers from a script or a terminal, through the same
client code the window uses.

    branchwise tools list [--config FILE | --data-dir DIR] [--json]
    branchwise tools call SERVER TOOL --args JSON [--config FILE | --data-dir DIR] [--timeout S]

`call` prints the result and exits 0; on failure it prints one line saying why and exits 1 (the
tool reported an error, or the server failed), 2 (bad arguments, an unknown server or tool, an
unreadable config) or 3 (a timeout). `list` exits 1 when an enabled server failed to start.
With a data folder (the default one, or --data-dir) the built-in tools are there too, as the
server `branchwise`. A config file is only read, never changed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from app.mcp.config import BUILTIN_SERVER, CONFIG_NAME, McpConfig, McpConfigError, read_config
from app.mcp.launch import display_command, search_path
from app.mcp.results import ToolFailure, ToolResult
from app.mcp.tool_info import ServerStatus, ToolInfo

PROG = "branchwise tools"
EXIT_FAILED, EXIT_USAGE, EXIT_TIMEOUT = 1, 2, 3
_EXIT_BY_FAILURE = {
    ToolFailure.TOOL: EXIT_FAILED,
    ToolFailure.SERVER: EXIT_FAILED,
    ToolFailure.CANCELLED: EXIT_FAILED,
    ToolFailure.DENIED: EXIT_FAILED,  # never asked here: the command runs what it is told
    ToolFailure.BAD_ARGUMENTS: EXIT_USAGE,
    ToolFailure.TIMEOUT: EXIT_TIMEOUT,
}


class _Usage(Exception):
    """A one-line reason to exit with EXIT_USAGE."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description="List or call MCP tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="start the enabled servers and list their tools")
    listing.add_argument("--json", action="store_true", help="print JSON")
    call = commands.add_parser("call", help="call one tool and print its result")
    call.add_argument("server")
    call.add_argument("tool")
    call.add_argument("--args", default="{}", help="the arguments as a JSON object ({})")
    call.add_argument("--timeout", type=float, help="seconds (the server's timeout)")
    for sub in (listing, call):
        where = sub.add_mutually_exclusive_group()
        where.add_argument("--config", type=Path, help="an mcp.json file")
        where.add_argument("--data-dir", help=f"the app's data folder (its {CONFIG_NAME})")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # Library warnings would break the one-line answers; servers' output goes to their logs.
    logging.getLogger().addHandler(logging.NullHandler())
    try:
        config, data_dir = _config(args)
        if any(spec.command for spec in config.servers.values()):
            # The login shell is asked for its PATH while the MCP SDK is being imported.
            threading.Thread(target=search_path, daemon=True).start()
        if args.command == "list":
            return asyncio.run(_list(config, data_dir, args.json))
        return asyncio.run(_call(config, data_dir, args))
    except _Usage as exc:
        return _fail(str(exc), EXIT_USAGE)


def _config(args: argparse.Namespace) -> tuple[McpConfig, Path | None]:
    """The servers, and the data folder when there is one (the built-in tools need it)."""
    if args.config is not None:
        path, data_dir = args.config, None
        if not path.is_file():
            raise _Usage(f"{path} does not exist.")
    else:
        from app.paths import AppPaths

        data_dir = AppPaths.resolve(args.data_dir).data_dir
        path = data_dir / CONFIG_NAME
    try:
        return read_config(path), data_dir
    except McpConfigError as exc:
        raise _Usage(str(exc)) from exc


async def _list(config: McpConfig, data_dir: Path | None, as_json: bool) -> int:
    from app.mcp.servers import ToolServers

    servers = ToolServers(config)
    servers.start_enabled()
    try:
        states = await servers.wait_started()
    finally:
        await servers.close()
    rows: list[dict[str, Any]] = []
    for spec, state in zip(config.servers.values(), states, strict=True):
        rows.append(
            {
                "server": spec.name,
                "status": state.status.value if spec.enabled or spec.problem else "disabled",
                "command": display_command(spec) if spec.problem is None else None,
                "error": state.error,
                "stderr_tail": list(state.stderr_tail),
                "tools": [_tool_row(t) for t in state.tools],
            }
        )
    if data_dir is not None:
        from app.mcp.builtin_search import SEARCH_TOOL

        rows.append(
            {
                "server": BUILTIN_SERVER,
                "status": "built-in",
                "command": None,
                "error": None,
                "stderr_tail": [],
                "tools": [_tool_row(SEARCH_TOOL)],
            }
        )
    print(json.dumps(rows, indent=2, ensure_ascii=False) if as_json else _text_listing(rows))
    failed = any(r["status"] == ServerStatus.FAILED for r in rows)
    return EXIT_FAILED if failed else 0


def _tool_row(tool: ToolInfo) -> dict[str, Any]:
    return {
        "name": tool.name,
        "model_name": tool.model_name,
        "title": tool.title,
        "description": tool.description,
        "input_schema": tool.input_schema,
    }


def _text_listing(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No MCP servers are set up."
    lines: list[str] = []
    for row in rows:
        status = row["status"]
        if status == ServerStatus.READY:
            status = f"ready, {len(row['tools'])} tool{'s' if len(row['tools']) != 1 else ''}"
        elif row["error"]:
            status = f"{status}: {row['error']}"
        command = f"  $ {row['command']}" if row["command"] else ""
        lines.append(f"{row['server']}  ({status}){command}")
        for tool in row["tools"]:
            summary = (tool["description"] or "").strip().splitlines()
            lines.append(f"  {tool['name']}" + (f"  {summary[0]}" if summary else ""))
        lines += [f"  | {line}" for line in row["stderr_tail"][-5:]] if row["error"] else []
    return "\n".join(lines)


async def _call(config: McpConfig, data_dir: Path | None, args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise _Usage(f"--args is not valid JSON: {exc.msg} at column {exc.colno}.") from exc
    if not isinstance(arguments, dict):
        raise _Usage("--args must be a JSON object, such as '{\"a\": 1}'.")
    if args.timeout is not None and not args.timeout > 0:
        raise _Usage("--timeout must be a positive number of seconds.")
    if args.server == BUILTIN_SERVER and data_dir is not None:
        result = _call_builtin(data_dir, args.tool, arguments)
    else:
        result = await _call_server(config, args, arguments)
    if result.is_error:
        assert result.failure is not None
        code = _EXIT_BY_FAILURE[result.failure]
        return _fail(f"{args.server}/{args.tool}: {result.reason}", code)
    print(result.text)
    return 0


async def _call_server(config: McpConfig, args: argparse.Namespace, arguments: dict) -> ToolResult:
    from app.mcp.servers import ToolServers

    spec = config.servers.get(args.server)
    if spec is None:
        names = ", ".join(config.servers) or "none"
        raise _Usage(f"There is no server named {args.server} (servers: {names}).")
    if spec.problem is not None:
        raise _Usage(f"The entry for {spec.name} cannot be used: {spec.problem}")
    if not spec.enabled:
        raise _Usage(f"The server {spec.name} is disabled; enable it to call its tools.")
    servers = ToolServers(McpConfig({spec.name: spec}))
    servers.start_enabled()
    try:
        (state,) = await servers.wait_started()
        if state.error is not None:
            last = f" (its last output: {state.stderr_tail[-1]})" if state.stderr_tail else ""
            return ToolResult(f"did not start: {state.error}{last}", ToolFailure.SERVER)
        return await servers.call(spec.name, args.tool, arguments, args.timeout)
    finally:
        await servers.close()


def _call_builtin(data_dir: Path, tool: str, arguments: dict) -> ToolResult:
    from app.mcp.builtin_search import SEARCH_TOOL, search_conversations
    from app.paths import AppPaths
    from app.store.conversations import Store

    if tool != SEARCH_TOOL.name:
        raise _Usage(f"The built-in tools are: {SEARCH_TOOL.name}.")
    database = AppPaths(data_dir).database
    if not database.is_file():
        return ToolResult("No conversation mentions anything yet: there are no chats.")
    with Store.open_another(database) as store:  # the app may be writing a reply
        return search_conversations(store, arguments)


def _fail(reason: str, code: int) -> int:
    print(f"{PROG}: {' '.join(reason.split())}", file=sys.stderr)
    return code
