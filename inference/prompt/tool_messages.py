"""Tool use in a conversation, as the chat template sees it: the tool schemas offered to the
model, an assistant message's tool calls, and a tool's result message.

They arrive in OpenAI's shape (a call is `{"id", "type": "function", "function": {"name",
"arguments"}}`, with the arguments a JSON string or an object) and are checked and made plain
here, so a bad entry is a PromptError that names it, never a template crash. Templates disagree
on the arguments: most render them with `tojson` or walk them as a mapping (Qwen, Llama,
Mistral, GLM), while DeepSeek's concatenate them as text, so `for_template` hands each template
the form it renders.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from inference.errors import PromptError

# `… + tool['function']['arguments'] + …`: a template that pastes the arguments in as text.
_ARGUMENTS_AS_TEXT = re.compile(r"\+\s*[\w.\[\]'\"]*arguments['\"\]]*\s*(\+|}})")


def clean_tools(tools: object) -> list[dict[str, Any]]:
    """OpenAI-style tool schemas (`{"type": "function", "function": {"name", "description",
    "parameters"}}`) as plain JSON values, or PromptError naming the first bad one."""
    if isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Sequence):
        raise PromptError("Tools must be a list of {'type': 'function', 'function': …} entries.")
    clean: list[dict[str, Any]] = []
    for index, item in enumerate(cast("Sequence[object]", tools), start=1):
        tool = as_mapping(item)
        function = as_mapping(tool.get("function")) if tool is not None else None
        if (
            tool is None
            or function is None
            or tool.get("type", "function") != "function"
            or not _is_name(function.get("name"))
        ):
            raise PromptError(
                f"Tool {index} is not a {{'type': 'function', 'function': "
                "{'name', …}} entry with a name."
            )
        clean.append(_plain(tool, f"Tool {index}"))
    return clean


def clean_tool_calls(calls: object, index: int) -> list[dict[str, Any]]:
    """An assistant message's calls as `{"id"?, "type": "function", "function": {"name",
    "arguments": dict}}`, or PromptError naming the bad one (message `index`, from 1)."""
    if isinstance(calls, str | bytes | Mapping) or not isinstance(calls, Sequence) or not calls:
        raise PromptError(f"Message {index} has 'tool_calls' that are not a list of calls.")
    clean: list[dict[str, Any]] = []
    for number, item in enumerate(cast("Sequence[object]", calls), start=1):
        where = f"Message {index}, tool call {number}"
        call = as_mapping(item)
        function = as_mapping(call.get("function")) if call is not None else None
        if call is None or function is None or call.get("type", "function") != "function":
            raise PromptError(f"{where} is not a {{'type': 'function', 'function': …}} entry.")
        name = function.get("name")
        if not _is_name(name):
            raise PromptError(f"{where} has no function name.")
        entry: dict[str, Any] = {
            "type": "function",
            "function": {"name": name, "arguments": _arguments(function.get("arguments"), where)},
        }
        call_id = call.get("id")
        if call_id is not None:
            if not isinstance(call_id, str):
                raise PromptError(f"{where} has an id that is not text.")
            entry["id"] = call_id
        clean.append(entry)
    return clean


def clean_tool_message(message: Mapping[str, Any], index: int) -> dict[str, Any]:
    """A tool result message: its text `content`, and the `tool_call_id` and `name` of the call
    it answers when given."""
    content = message.get("content")
    if not isinstance(content, str):
        raise PromptError(f"Message {index} (tool) has no text content.")
    clean: dict[str, Any] = {"role": "tool", "content": content}
    for key in ("tool_call_id", "name"):
        value = message.get(key)
        if value is not None:
            if not isinstance(value, str):
                raise PromptError(f"Message {index} (tool) has a {key} that is not text.")
            clean[key] = value
    return clean


def for_template(messages: list[dict[str, Any]], chat_template: object) -> list[dict[str, Any]]:
    """`messages` with their calls' arguments in the form `chat_template` renders: a JSON string
    for a template that pastes them in as text, else the mapping (unchanged)."""
    if not isinstance(chat_template, str) or not _ARGUMENTS_AS_TEXT.search(chat_template):
        return messages
    return [_with_text_arguments(m) if m.get("tool_calls") else m for m in messages]


def _with_text_arguments(message: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {
            **call,
            "function": {
                **call["function"],
                "arguments": json.dumps(call["function"]["arguments"], ensure_ascii=False),
            },
        }
        for call in message["tool_calls"]
    ]
    return {**message, "tool_calls": calls}


def _arguments(arguments: object, where: str) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as error:
            raise PromptError(f"{where} has arguments that are not JSON: {error}") from None
    found = as_mapping(arguments)
    if found is None:
        raise PromptError(f"{where} has arguments that are not a JSON object.")
    return _plain(found, where)


def _plain(value: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A deep, JSON-only copy (the template and the cache key see plain values only)."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise PromptError(f"{where} holds a value that is not JSON: {error}") from None


def as_mapping(value: object) -> Mapping[str, Any] | None:
    """`value` when it is a mapping (as a JSON object, taken to have text keys), else None:
    how the checks here read a value that may be anything."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def _is_name(name: object) -> bool:
    return isinstance(name, str) and bool(name.strip())
