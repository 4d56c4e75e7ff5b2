"""OpenAI request bodies turned into worker requests, and worker results into OpenAI responses.

Fields the server does not know are ignored, as OpenAI-compatible servers do; fields it knows
but cannot honour (n > 1, frequency/presence penalties, logprobs) are refused with a 400 that
names them, so a client never gets silently different behaviour.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

from app.server.guard import ApiError
from app.server.openai_images import has_images, image_content
from app.server.openai_knowledge import FIELD as KNOWLEDGE
from app.server.openai_knowledge import parse_knowledge
from app.server.openai_tools import (
    assistant_calls,
    call_names,
    choice_instruction,
    openai_calls,
    parse_tools,
    tool_message,
    with_instruction,
)
from app.store.message_checks import MessageFieldError, check_choice, text_content

# OpenAI's defaults where the body says nothing.
DEFAULT_TEMPERATURE = 1.0
DEFAULT_TOP_P = 1.0
_FINISH = {"stop": "stop", "length": "length", "context": "length", "tool_calls": "tool_calls"}
_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}
_SAMPLING_FIELDS = ("top_k", "min_p", "repetition_penalty", "seed", "logit_bias")


@dataclass
class ParsedRequest:
    model: str
    params: dict[str, Any]
    stream: bool
    include_usage: bool
    messages: list[dict[str, Any]] | None = None
    prompt: str | list[int] | None = None
    tools: list[dict[str, Any]] | None = None  # offered to the model (see openai_tools)
    knowledge: tuple[str, ...] = ()  # collections to retrieve from (see openai_knowledge)


def parse_chat(body: object, default_max_tokens: int) -> ParsedRequest:
    body = _object(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("'messages' must be a non-empty list of messages.", "messages")
    parsed = _common(body, default_max_tokens)
    names: dict[str, str] = {}
    parsed.messages = []
    for index, message in enumerate(messages):
        clean = _message(message, index, names)
        names.update(call_names(clean.get("tool_calls")))
        parsed.messages.append(clean)
    parsed.tools = parse_tools(body)
    parsed.messages = with_instruction(parsed.messages, choice_instruction(body))
    parsed.knowledge = parse_knowledge(body)
    return parsed


def parse_completion(body: object, default_max_tokens: int) -> ParsedRequest:
    body = _object(body)
    for name in ("echo", "suffix"):
        if body.get(name):
            raise _bad(f"'{name}' is not supported by this server.", name)
    if body.get("best_of") not in (None, 1):
        raise _bad("Only best_of = 1 is supported.", "best_of")
    if body.get(KNOWLEDGE):
        raise _bad(f"'{KNOWLEDGE}' is read by chat completions only.", KNOWLEDGE)
    parsed = _common(body, default_max_tokens)
    parsed.prompt = _prompt(body.get("prompt"))
    return parsed


def _common(body: dict, default_max_tokens: int) -> ParsedRequest:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("'model' must name the served model (see GET /v1/models).", "model")
    if body.get("n") not in (None, 1):
        raise _bad("Only n = 1 is supported: send one request per reply.", "n")
    for name in ("frequency_penalty", "presence_penalty"):
        if body.get(name) not in (None, 0, 0.0):
            raise _bad(
                f"'{name}' is not supported; use 'repetition_penalty' (above 1 discourages "
                "repeating recent tokens).",
                name,
            )
    if body.get("logprobs") or body.get("top_logprobs"):
        raise _bad("Log probabilities are not supported by this server.", "logprobs")
    max_tokens = body.get("max_completion_tokens")
    if max_tokens is None:
        max_tokens = body.get("max_tokens")
    params: dict[str, Any] = {
        "temperature": _or(body.get("temperature"), DEFAULT_TEMPERATURE),
        "top_p": _or(body.get("top_p"), DEFAULT_TOP_P),
        "max_tokens": _or(max_tokens, default_max_tokens),
        "stop": _stops(body.get("stop")),
    }
    params.update({k: body[k] for k in _SAMPLING_FIELDS if body.get(k) is not None})
    options = body.get("stream_options") or {}
    stream = bool(body.get("stream"))
    include_usage = stream and isinstance(options, dict) and bool(options.get("include_usage"))
    return ParsedRequest(model, params, stream, include_usage)


def _object(body: object) -> dict:
    if not isinstance(body, dict):
        raise _bad("The request body must be a JSON object.")
    return body


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


def _stops(value: object) -> list[str]:
    if value is None:
        return []
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise _bad("'stop' must be a string or a list of non-empty strings.", "stop")
    if len(stops) > 4:
        raise _bad("At most 4 stop strings are allowed.", "stop")
    return stops


def _message(message: object, index: int, names: dict[str, str]) -> dict[str, Any]:
    """One history message; `names` maps earlier calls' ids to their function names."""
    param = f"messages[{index}]"
    if not isinstance(message, dict):
        raise _bad(f"{param} must be an object with a role and content.", param)
    try:
        role = _ROLES[check_choice(message.get("role"), _ROLES, "role")]
    except MessageFieldError as exc:
        raise _bad(f"{param}: {exc}", f"{param}.role") from None
    raw = message.get("content")
    if has_images(raw) and role == "user":
        return {"role": role, "content": image_content(raw, f"{param}.content")}
    try:
        content = text_content(raw, f"{param}.content")
    except MessageFieldError as exc:
        raise _bad(str(exc), f"{param}.content") from None
    if role == "tool":
        return tool_message(message, content, names, param)
    clean: dict[str, Any] = {"role": role, "content": content}
    calls = assistant_calls(message, param) if role == "assistant" else None
    if calls is not None:
        clean["tool_calls"] = calls
    return clean


def _prompt(prompt: object) -> str | list[int]:
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str | list):
        prompt = prompt[0]  # a batch of one
    if isinstance(prompt, str) and prompt:
        return prompt
    if (
        isinstance(prompt, list)
        and prompt
        and all(isinstance(i, int) and not isinstance(i, bool) for i in prompt)
    ):
        return prompt
    raise _bad("'prompt' must be one non-empty text or one non-empty list of token ids.", "prompt")


def _bad(message: str, param: str | None = None) -> ApiError:
    return ApiError(400, message, code="invalid_request", param=param)


# ---- responses -----------------------------------------------------------------------------


def finish_reason(engine_reason: str) -> str:
    """The engine's reason in OpenAI's words (the context running out is a "length")."""
    return _FINISH.get(engine_reason, "stop")


def usage(stats: dict[str, Any]) -> dict[str, Any]:
    prompt = int(stats.get("prompt_tokens", 0))
    completion = int(stats.get("generated_tokens", 0))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": int(stats.get("cached_tokens", 0))},
    }


class Shaper:
    """Builds one reply's response objects: a chat completion or a text completion."""

    def __init__(self, model: str, chat: bool) -> None:
        self.model = model
        self.chat = chat
        self.id = f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def _envelope(self, obj: str, choices: list[dict]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": obj,
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
            "choices": choices,
        }

    def complete(
        self, text: str, reason: str, stats: dict[str, Any], tool_calls: list | None = None
    ) -> dict[str, Any]:
        if self.chat:
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if tool_calls:
                message.update(content=text or None, tool_calls=openai_calls(tool_calls))
            choice = {"index": 0, "message": message}
            body = self._envelope("chat.completion", [choice])
        else:
            body = self._envelope("text_completion", [{"index": 0, "text": text}])
        body["choices"][0].update(finish_reason=finish_reason(reason), logprobs=None)
        body["usage"] = usage(stats)
        return body

    def chunk(
        self,
        text: str | None,
        reason: str | None = None,
        first: bool = False,
        tool_calls: list | None = None,
    ) -> dict[str, Any]:
        """A streamed piece: new text or the reply's calls, or (with `reason`) the last piece,
        which carries none."""
        if self.chat:
            delta: dict[str, Any] = {"role": "assistant"} if first else {}
            if text is not None:
                delta["content"] = text
            if tool_calls:
                delta["tool_calls"] = openai_calls(tool_calls, streamed=True)
            choice: dict[str, Any] = {"index": 0, "delta": delta}
            obj = "chat.completion.chunk"
        else:
            choice, obj = {"index": 0, "text": text or ""}, "text_completion"
        choice.update(
            finish_reason=None if reason is None else finish_reason(reason), logprobs=None
        )
        return self._envelope(obj, [choice])

    def usage_chunk(self, stats: dict[str, Any]) -> dict[str, Any]:
        """`stream_options.include_usage`: the last chunk, no choices, the usage."""
        obj = "chat.completion.chunk" if self.chat else "text_completion"
        return {**self._envelope(obj, []), "usage": usage(stats)}
