"""Talking to an OpenAI-compatible server with the official `openai` client, on the asyncio loop
(in the app, the qasync loop that is also the Qt loop: nothing here blocks the GUI thread).

Every call makes its own `AsyncOpenAI(max_retries=0)`: a retry would re-run a generation the
person is watching, so a failure is reported at once, in words, instead.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import openai

from app.images.data_urls import image_url_part
from app.images.store import ImageError
from app.remote.connections import Connections, RemoteModel
from app.remote.errors import RemoteError
from app.remote.streamed_calls import StreamedCalls

__all__ = [
    "ChatResult", "RemoteError", "describe", "list_models", "remote_model_ids", "request_params",
    "stream_chat",
]  # fmt: skip

# Connecting must be quick; the first token may take minutes (a long prompt on a busy server).
TIMEOUT = openai.Timeout(connect=10.0, read=600.0, write=60.0, pool=10.0)
LIST_TIMEOUT = openai.Timeout(10.0)
# Sent when a connection has no key: servers without auth ignore it; the openai client needs one.
NO_KEY = "none"
# The openai client wraps failures before the response in its own errors, but a connection that
# breaks while the stream is read raises its HTTP library's error (httpx or httpx2, by version):
# every failure of a request is therefore caught and reported, in words, through `describe`.

# Sampling parameters many servers take beyond OpenAI's own, sent only when not at "off".
_EXTRA_OFF = {"top_k": 0, "min_p": 0.0, "repetition_penalty": 1.0}


@dataclass(frozen=True)
class ChatResult:
    text: str
    finish_reason: str  # "stop", "length" or "tool_calls", as the server said
    stats: dict[str, float]
    # The calls the reply made, as the local engine gives them: {"id", "name", "arguments"}.
    tool_calls: tuple[dict[str, Any], ...] = ()


def client(base_url: str, api_key: str | None, timeout: openai.Timeout = TIMEOUT) -> Any:
    return openai.AsyncOpenAI(
        base_url=base_url, api_key=api_key or NO_KEY, max_retries=0, timeout=timeout
    )


async def list_models(base_url: str, api_key: str | None) -> list[str]:
    """The model ids the server lists at /v1/models, sorted. Raises RemoteError."""
    try:
        async with client(base_url, api_key, LIST_TIMEOUT) as api:
            page = await api.models.list()
            return sorted(model.id for model in page.data)
    except Exception as exc:  # any failure: see the note at the top
        raise RemoteError(describe(exc, base_url)) from exc


async def remote_model_ids(connections: Connections) -> list[str]:
    """Every saved connection's models as chat model ids, asked of all servers at once; a
    server that does not answer offers none (the Connections page says why)."""
    saved = connections.all()
    answers = await asyncio.gather(
        *(list_models(c.base_url, connections.api_key(c.name)) for c in saved),
        return_exceptions=True,
    )
    return [
        RemoteModel(connection.name, model).model_id
        for connection, models in zip(saved, answers, strict=True)
        if not isinstance(models, BaseException)
        for model in models
    ]


async def stream_chat(
    base_url: str,
    api_key: str | None,
    model: str,
    messages: Sequence[dict],
    params: dict[str, Any],
    on_text: Callable[[str], None],
    tools: Sequence[dict] | None = None,
    on_call: Callable[[str], None] = lambda _name: None,
) -> ChatResult:
    """Stream a chat completion, handing each piece of text to `on_text` as it arrives.

    `messages` go out exactly as given (the stored text, byte for byte; a call's arguments held
    as an object are sent as the JSON text OpenAI's shape wants), so a server with a prefix
    cache finds the shared history. `tools` (OpenAI-style schemas) are offered to the model,
    and the calls it streams back (`delta.tool_calls`, in pieces: `app.remote.streamed_calls`)
    come whole in the result; `on_call` is told the tool being called as each piece arrives.
    Cancelling the task closes the connection, which stops the generation on servers that
    notice (vLLM, llama.cpp, mlx_lm.server, Branchwise).
    Raises RemoteError."""
    started = time.perf_counter()
    first_token_at: float | None = None
    parts: list[str] = []
    finish_reason: str | None = None
    usage: Any = None
    calls = StreamedCalls()
    try:
        # Images are read and encoded off the loop: a photo of several MiB would stall it.
        outgoing = await asyncio.to_thread(lambda: [_outgoing(m) for m in messages])
    except ImageError as exc:
        raise RemoteError(str(exc)) from exc
    try:
        async with client(base_url, api_key) as api:
            stream = await api.chat.completions.create(
                model=model,
                messages=outgoing,
                stream=True,
                stream_options={"include_usage": True},
                **({"tools": list(tools)} if tools else {}),
                **request_params(params),
            )
            async with stream:
                async for chunk in stream:
                    if chunk.usage is not None:
                        usage = chunk.usage
                    for choice in chunk.choices:
                        text = choice.delta.content if choice.delta else None
                        pieces = choice.delta.tool_calls if choice.delta else None
                        if (text or pieces) and first_token_at is None:
                            first_token_at = time.perf_counter()
                        if text:
                            parts.append(text)
                            on_text(text)
                        if pieces:
                            calls.add(pieces)
                            on_call(calls.calling or "")
                        if choice.finish_reason:
                            finish_reason = choice.finish_reason
    except Exception as exc:  # any failure: see the note at the top
        raise RemoteError(describe(exc, base_url), interrupted=bool(parts)) from exc
    if finish_reason is None:
        raise RemoteError(
            f"The server at {base_url} closed the connection before the reply was finished.",
            interrupted=bool(parts),
        )
    made, unreadable = calls.whole()
    return ChatResult(
        "".join(parts) + unreadable,
        finish_reason,
        _stats(usage, started, first_token_at, len(parts)),
        made,
    )


def _outgoing(message: dict) -> dict:
    """A stored message in OpenAI's shape: images as `image_url` parts with data URLs, call
    arguments as JSON text."""
    content = message.get("content")
    if isinstance(content, list):
        message = {
            **message,
            "content": [_part(part, index) for index, part in enumerate(content, start=1)],
        }
    calls = message.get("tool_calls")
    if not calls:
        return message
    shaped = []
    for call in calls:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            function = {**function, "arguments": json.dumps(arguments or {}, ensure_ascii=False)}
        shaped.append({**call, "type": call.get("type", "function"), "function": function})
    return {**message, "tool_calls": shaped}


def _part(part: dict, index: int) -> dict:
    if part.get("type") != "image":
        return part
    return image_url_part(part["image"], f"#{index}")


def request_params(params: dict[str, Any]) -> dict[str, Any]:
    """A conversation's sampling parameters as chat-completion arguments."""
    out: dict[str, Any] = {
        "temperature": float(params["temperature"]),
        "top_p": float(params["top_p"]),
        "max_tokens": int(params["max_tokens"]),
    }
    if params.get("seed") is not None:
        out["seed"] = int(params["seed"])
    if params.get("logit_bias"):
        out["logit_bias"] = dict(params["logit_bias"])
    extra = {k: params[k] for k, off in _EXTRA_OFF.items() if params.get(k, off) != off}
    if extra:
        out["extra_body"] = extra
    return out


def _stats(
    usage: Any, started: float, first_token_at: float | None, pieces: int
) -> dict[str, float]:
    """The stats line's numbers: the server's own counts when it reports usage (with
    `cached_tokens` when its prefix cache says), timings measured here."""
    now = time.perf_counter()
    stats: dict[str, float] = {}
    generated = pieces  # without usage, one streamed piece is one token on the common servers
    if usage is not None:
        stats["prompt_tokens"] = usage.prompt_tokens
        generated = usage.completion_tokens
        details = usage.prompt_tokens_details
        cached = getattr(details, "cached_tokens", None) if details is not None else None
        if cached is not None:
            stats["cached_tokens"] = cached
            stats["prefill_tokens"] = usage.prompt_tokens - cached
    stats["generated_tokens"] = generated
    if first_token_at is not None:
        stats["ttft_s"] = first_token_at - started
        if generated > 1 and now > first_token_at:
            stats["decode_tps"] = (generated - 1) / (now - first_token_at)
    return stats


def describe(exc: BaseException, base_url: str) -> str:
    """A failed request in words a person can act on."""
    if isinstance(exc, openai.AuthenticationError):
        return (
            f"The server at {base_url} refused the API key (401 Unauthorized). Check the "
            "connection's key in File › Connections."
        )
    if isinstance(exc, openai.PermissionDeniedError):
        return f"The server at {base_url} does not allow this key to do that (403 Forbidden)."
    if isinstance(exc, openai.NotFoundError):
        return f"The server at {base_url} does not know that model or path (404): {_detail(exc)}"
    if isinstance(exc, openai.APIStatusError):
        return f"The server at {base_url} answered {exc.status_code}: {_detail(exc)}"
    if isinstance(exc, openai.APITimeoutError):
        return f"The server at {base_url} did not answer in time."
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return f"Branchwise could not reach {base_url}: {cause}. Is the server running?"
    return f"The connection to {base_url} broke: {exc or type(exc).__name__}"


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or (body.get("error") or {}).get("message")
        if message:
            return str(message)
    return exc.message
