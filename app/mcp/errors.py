"""Why a server could not be reached or broke off, in one sentence a person can act on."""

from __future__ import annotations

import httpx2
from mcp import MCPError
from mcp_types import CONNECTION_CLOSED

from app.mcp.config import ServerSpec
from app.mcp.launch import CommandNotFoundError


class ServerGoneError(RuntimeError):
    """The server went away while the connection was open; the message says so."""


def describe_failure(exc: BaseException, spec: ServerSpec) -> str:
    leaf = _first_leaf(exc)
    if isinstance(leaf, CommandNotFoundError | ServerGoneError | TimeoutError) and str(leaf):
        return str(leaf)
    if isinstance(leaf, FileNotFoundError):
        return f"{leaf.filename or spec.command} was not found."
    if isinstance(leaf, PermissionError):
        return f"{leaf.filename or spec.command} cannot be run (permission denied)."
    if isinstance(leaf, MCPError):
        if leaf.code == CONNECTION_CLOSED:
            return "The server closed the connection (it may have crashed; see its output)."
        return f"The server answered with an error: {leaf}"
    if isinstance(leaf, httpx2.HTTPStatusError):
        response = leaf.response
        return f"{spec.url} answered HTTP {response.status_code} {response.reason_phrase}."
    if isinstance(leaf, httpx2.ConnectError):
        return f"Could not connect to {spec.url}: {leaf or 'connection refused'}."
    if isinstance(leaf, httpx2.HTTPError):
        return f"The connection to {spec.url} failed: {type(leaf).__name__} {leaf}".strip()
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


def _first_leaf(exc: BaseException) -> BaseException:
    """The first real error inside the SDK's (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
