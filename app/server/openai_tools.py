"""Tool calling on the local server, in OpenAI's shapes: `tools` and `tool_choice` in a request,
assistant `tool_calls` and `tool` result messages in its history, and the calls a reply made as
`message.tool_calls` or streamed `delta.tool_calls`.

`tool_choice` is honoured as far as a local model allows, without constrained decoding:
"auto" (the default) offers the tools; "none" offers none (the history may still hold calls);
a named function offers only that function and asks for it in the system prompt, and "required"
asks for a call the same way. Both are requests to the model, not guarantees: a reply that calls
nothing comes back as content with finish_reason "stop". The engine refuses tools for a model
whose chat template takes none, which the client gets as a 400 saying so.

While a reply streams, text is held back from the point where a call may be starting (a suffix
that could be the start of the model's call marker), so call markup is never streamed as content;
the calls are sent, each whole, when the reply ends. MLX-backed modules are imported only when a
request offers tools (the worker has loaded them by then).
"""

from __future__ import annotations

import json
from typing import Any

from app.server.guard import ApiError

_CHOICES = ("auto", "none", "required")


def parse_tools(body: dict) -> list[dict[str, Any]] | None:
    """The tools to offer the model under the request's `tool_choice` (None: none)."""
    tools = body.get("tools")
    if tools is None or tools == []:
        return None
    if not isinstance(tools, list) or not all(_is_function(t) for t in tools):
        raise _bad(
            "'tools' must be a list of {'type': 'function', 'function': {'name', …}}.", "tools"
        )
    choice = body.get("tool_choice", "auto")
    if choice is None or choice == "auto":
        return tools
    if choice == "none":
        return None
    if choice == "required":
        return tools
    name = _named(choice)
    chosen = [t for t in tools if t["function"]["name"] == name]
    if not chosen:
        raise _bad(
            f"'tool_choice' names the function {name!r}, which is not among 'tools'.", "tool_choice"
        )
    return chosen


def choice_instruction(body: dict) -> str | None:
    """What the system prompt asks of the model for `tool_choice` "required" or a named
    function (None for the others)."""
    choice = body.get("tool_choice")
    if not body.get("tools") or choice in (None, "auto", "none"):
        return None
    if choice == "required":
        return "Answer by calling one or more of the functions you are given."
    return f"Answer by calling the function {_named(choice)}."


def with_instruction(messages: list[dict], instruction: str | None) -> list[dict]:
    """`instruction` added to the system prompt (a new one when there is none)."""
    if instruction is None:
        return messages
    if messages and messages[0]["role"] == "system":
        first = messages[0]
        return [{**first, "content": f"{first['content']}\n\n{instruction}"}, *messages[1:]]
    return [{"role": "system", "content": instruction}, *messages]


def assistant_calls(message: dict, param: str) -> list[dict] | None:
    """An assistant message's `tool_calls`, passed on as given (the engine checks each)."""
    calls = message.get("tool_calls")
    if calls is None or calls == []:
        return None
    if not isinstance(calls, list):
        raise _bad(f"{param}.tool_calls must be a list of calls.", f"{param}.tool_calls")
    return calls


def tool_message(message: dict, content: str, names: dict[str, str], param: str) -> dict:
    """A `tool` result message; its function's name is found from the call it answers when the
    client leaves it out (some templates render it)."""
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise _bad(
            f"{param} (a tool result) needs the 'tool_call_id' it answers.", f"{param}.tool_call_id"
        )
    clean = {"role": "tool", "content": content, "tool_call_id": call_id}
    name = message.get("name") or names.get(call_id)
    if isinstance(name, str) and name:
        clean["name"] = name
    return clean


def call_names(calls: list[dict] | None) -> dict[str, str]:
    """{call id: function name} of an assistant message's calls."""
    names = {}
    for call in calls or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(call.get("id"), str):
            names[call["id"]] = str(function.get("name", ""))
    return names


def openai_calls(calls: list[dict[str, Any]], streamed: bool = False) -> list[dict[str, Any]]:
    """The worker's calls (`{"id", "name", "arguments": dict}`) in OpenAI's shape, with an
    `index` each when streamed."""
    shaped = []
    for index, call in enumerate(calls):
        entry: dict[str, Any] = {
            "id": call["id"],
            "type": "function",
            "function": {
                "name": call["name"],
                "arguments": json.dumps(call["arguments"], ensure_ascii=False),
            },
        }
        shaped.append({"index": index, **entry} if streamed else entry)
    return shaped


class ContentStream:
    """A streaming reply's content with any call markup held back (see the module docstring).
    `tool_format` None: every delta passes as it comes."""

    def __init__(self, tool_format: str | None) -> None:
        self.tool_format = tool_format
        self.text = ""
        self.sent = ""
        self._markers: tuple[str, ...] = ()
        self._bare: tuple[str, ...] = ()
        self._calling = False
        if tool_format is not None:
            from inference.toolcalls.formats import TOOL_FORMATS

            form = TOOL_FORMATS[tool_format]
            self._markers, self._bare = form.markers, form.bare

    def feed(self, delta: str) -> str:
        """The content to send now for `delta`."""
        self.text += delta
        if self.tool_format is None:
            return self._send(self.text)
        if self._calling or self._call_begun():
            self._calling = True
            return ""
        return self._send(self.text[: len(self.text) - self._held_tail()])

    def finish(self, content: str) -> str:
        """What is left to send once the reply is read: the rest of its final `content` (its
        text without calls), when what was sent is the start of it."""
        return content[len(self.sent) :] if content.startswith(self.sent) else ""

    def _send(self, upto: str) -> str:
        new = upto[len(self.sent) :]
        self.sent = upto
        return new

    def _call_begun(self) -> bool:
        from inference.toolcalls.formats import call_in_progress

        return call_in_progress(self.text, self.tool_format or "") is not None

    def _held_tail(self) -> int:
        """How many characters at the end may be the start of a call."""
        lead = self.text.lstrip()
        if self._bare and (not lead or lead.startswith(self._bare)):
            # A bare-JSON format (Llama 3.x): a reply that opens like a call may be one, which
            # only its end can tell.
            return len(self.text)
        longest = 0
        for marker in self._markers:
            for size in range(min(len(marker) - 1, len(self.text)), longest, -1):
                if self.text.endswith(marker[:size]):
                    longest = size
                    break
        return longest


def _is_function(tool: object) -> bool:
    return _function_name(tool) is not None


def _function_name(entry: object) -> str | None:
    """The name in a `{"type": "function", "function": {"name": …}}` entry, else None."""
    if not isinstance(entry, dict) or entry.get("type", "function") != "function":
        return None
    function = entry.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) and name else None


def _named(choice: object) -> str:
    name = _function_name(choice)
    if name is None:
        raise _bad(
            f"'tool_choice' must be one of {', '.join(_CHOICES)} or "
            "{'type': 'function', 'function': {'name': …}}.",
            "tool_choice",
        )
    return name


def _bad(message: str, param: str) -> ApiError:
    return ApiError(400, message, code="invalid_request", param=param)
