"""A tool as Branchwise knows it: which server offers it, what it says it does, its arguments'
JSON Schema, and the name and OpenAI-style schema a model sees; a tool as the person is shown it
(`ToolLabel`: its own name and its server's); and what a server connection reports to whoever
shows it (`ServerState`: its status, its tools when ready, why it failed with the last lines it
wrote). Light (no SDK), so the window can import it."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from app.mcp.config import BUILTIN_SERVER

# OpenAI-style function names: letters, digits, `_` and `-`, at most 64.
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64
SEPARATOR = "__"


@dataclass(frozen=True)
class ToolLabel:
    """A tool by its own name and its server's, as the window shows it; the namespaced
    `model_name` is only what the model sees. `server` is "" where no tool of the chat has the
    name the model called."""

    server: str
    name: str


@dataclass(frozen=True)
class ToolInfo:
    server: str
    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    title: str | None = None
    # The server's hints (read-only, destructive…): untrusted unless the person trusts it.
    annotations: dict[str, Any] = field(default_factory=dict)

    @property
    def definition_hash(self) -> str:
        """Changes whenever what the model and the person are told about the tool changes (its
        description or its arguments), so a remembered approval no longer applies."""
        text = json.dumps(
            {"description": self.description, "input_schema": self.input_schema},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def model_name(self) -> str:
        return model_name(self.server, self.name)

    @property
    def label(self) -> ToolLabel:
        return ToolLabel(self.server, self.name)

    def openai_schema(self) -> dict[str, Any]:
        """The tool as chat templates take it: `{"type": "function", "function": {…}}`."""
        parameters = self.input_schema if isinstance(self.input_schema, dict) else {}
        return {
            "type": "function",
            "function": {
                "name": self.model_name,
                "description": self.description,
                "parameters": parameters or {"type": "object", "properties": {}},
            },
        }


def model_name(server: str, tool: str) -> str:
    """`server__tool`, safe for every model family's call syntax and unique across servers
    (tool names are unique only within one server). Too long a name is shortened with a hash.
    Built-in tools keep their own name (none has a double underscore, so none can clash)."""
    if server == BUILTIN_SERVER:
        return tool
    name = _NOT_NAME.sub("_", server) + SEPARATOR + _NOT_NAME.sub("_", tool)
    if len(name) <= _MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\n{tool}".encode()).hexdigest()[:8]
    return name[: _MAX_NAME - 9] + "_" + digest


class ServerStatus(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True)
class ServerState:
    name: str
    status: ServerStatus
    tools: tuple[ToolInfo, ...] = ()
    error: str | None = None
    stderr_tail: tuple[str, ...] = ()  # the server's last lines on stderr when it failed


StateListener = Callable[[ServerState], None]
