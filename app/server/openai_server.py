"""The local OpenAI-compatible server: aiohttp on the running asyncio loop (the window's qasync
loop, or `branchwise serve`'s own), answering from the shared inference worker.

Endpoints: GET /health, GET /v1/models, POST /v1/chat/completions and POST /v1/completions
(streamed as server-sent events ending in `data: [DONE]`, or whole). A chat completion may name
knowledge collections to retrieve from (`app.server.openai_knowledge`). The runner never installs
signal handlers (the app owns them) and cancels a handler whose client went away, which cancels
its generation. The `model` field only selects the loaded model: it never loads anything.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from aiohttp import web

from app.generation.worker_errors import WorkerFailure
from app.generation.worker_events import GenerationFinished, TokensReady
from app.server.config import ServerConfig
from app.server.guard import CORS_ORIGINS, ApiError, add_cors_headers, middlewares
from app.server.openai_images import MAX_REQUEST_BYTES
from app.server.openai_knowledge import sources, turn_texts, unknown_collections, with_excerpts
from app.server.openai_schema import ParsedRequest, Shaper, parse_chat, parse_completion
from app.server.openai_tools import ContentStream
from app.server.served_requests import Event, QueueFullError, ServedGenerations, ServedRequest

_GENERATIONS = web.AppKey("generations", ServedGenerations)
# Used when the body sets no max_tokens and the model's context is unknown.
FALLBACK_MAX_TOKENS = 4096
# How long stopping waits for open replies (each cancelled at once) before closing them.
SHUTDOWN_TIMEOUT_S = 2.0
_log = logging.getLogger(__name__)


class LocalServer:
    """Start on a running loop with `await start()`; `await stop()` cancels what is in flight."""

    def __init__(self, generations: ServedGenerations, config: ServerConfig) -> None:
        config.check()
        self.generations = generations
        self.config = config
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        """The base URL clients use (the OpenAI client's base_url)."""
        # A wildcard bind answers on loopback too, which is what this computer's clients use.
        shown = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(
            self.config.host, self.config.host
        )
        shown = f"[{shown}]" if ":" in shown else shown
        return f"http://{shown}:{self.port}/v1"

    async def start(self) -> str:
        """Bind and listen; returns the URL. Raises OSError when the port is taken."""
        runner = web.AppRunner(
            build_app(self.generations, self.config),
            handle_signals=False,
            handler_cancellation=True,
            access_log=None,
            shutdown_timeout=SHUTDOWN_TIMEOUT_S,
        )
        await runner.setup()
        try:
            await web.TCPSite(runner, self.config.host, self.config.port).start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = int(runner.addresses[0][1])
        return self.url

    async def stop(self) -> None:
        if self._runner is None:
            return
        self.generations.cancel_all()
        runner, self._runner = self._runner, None
        await runner.cleanup()


def build_app(generations: ServedGenerations, config: ServerConfig) -> web.Application:
    app = web.Application(middlewares=middlewares(config), client_max_size=MAX_REQUEST_BYTES)
    app[_GENERATIONS] = generations
    app[CORS_ORIGINS] = frozenset(config.cors_origins)
    app.on_response_prepare.append(add_cors_headers)
    app.router.add_get("/health", _health)
    app.router.add_get("/v1/models", _models)
    app.router.add_post("/v1/chat/completions", _chat)
    app.router.add_post("/v1/completions", _completions)
    return app


async def _health(request: web.Request) -> web.Response:
    model = request.app[_GENERATIONS].model
    return web.json_response({"status": "ok" if model else "loading"})


async def _models(request: web.Request) -> web.Response:
    model = request.app[_GENERATIONS].model
    data = []
    if model:
        data.append(
            {"id": model.model_id, "object": "model", "created": 0, "owned_by": "branchwise"}
        )
    return web.json_response({"object": "list", "data": data})


async def _chat(request: web.Request) -> web.StreamResponse:
    return await _generate(request, chat=True)


async def _completions(request: web.Request) -> web.StreamResponse:
    return await _generate(request, chat=False)


async def _generate(request: web.Request, chat: bool) -> web.StreamResponse:
    generations = request.app[_GENERATIONS]
    model = generations.model
    try:
        body = await request.json()
    except ValueError as exc:
        raise ApiError(400, f"The request body is not valid JSON: {exc}", "invalid_json") from exc
    default_max = (model.context_length if model else 0) or FALLBACK_MAX_TOKENS
    parsed = (parse_chat if chat else parse_completion)(body, default_max)
    if model is None:
        raise ApiError(503, "No model is loaded yet; try again shortly.", "model_not_ready")
    if parsed.model != model.model_id:
        raise ApiError(
            404,
            f"The model {parsed.model!r} is not served here; this server serves "
            f"{model.model_id!r} (see GET /v1/models).",
            "model_not_found",
            "model",
        )
    used = await _with_knowledge(generations, parsed) if parsed.knowledge else None
    try:
        served = generations.submit(parsed.messages, parsed.params, parsed.prompt, parsed.tools)
    except QueueFullError as exc:
        raise ApiError(503, str(exc), "server_busy", headers={"x-should-retry": "false"}) from exc
    shaper = Shaper(model.model_id, chat)
    try:
        if parsed.stream:
            # The model's tool-call format, to hold call markup back while streaming.
            tool_format = model.tool_format if parsed.tools else None
            return await _stream(request, served, parsed, shaper, tool_format, used)
        return await _whole(served, shaper, used)
    finally:
        # A client that went away cancels this handler (and so reaches here) mid-reply.
        generations.cancel(served)


async def _with_knowledge(
    generations: ServedGenerations, parsed: ParsedRequest
) -> list[dict[str, Any]]:
    """Retrieve for the request's last user message and put the excerpts ahead of its text;
    returns the sources to answer with."""
    base = generations.knowledge
    if base is None:
        raise ApiError(400, "This server has no knowledge index.", "knowledge_unavailable")
    missing = unknown_collections(parsed.knowledge, base.collection_names())
    if missing is not None:
        raise missing
    messages = parsed.messages or []
    index, text, previous = turn_texts(messages)
    try:
        found = await generations.retrieve(parsed.knowledge, text, previous)
    except Exception as exc:  # the index's own failure: said, with its reason, as a 500
        _log.exception("A served retrieval failed")
        message = f"The knowledge could not be searched: {exc}"
        raise ApiError(500, message, "knowledge_error") from exc
    parsed.messages = with_excerpts(messages, index, found.excerpts)
    return sources(found.excerpts)


async def _whole(
    served: ServedRequest, shaper: Shaper, used: list[dict[str, Any]] | None
) -> web.Response:
    async for event in served.events():
        error = _error_of(event)
        if error is not None:
            raise error
        if isinstance(event, GenerationFinished):
            body = shaper.complete(
                event.text, event.finish_reason, event.stats, list(event.tool_calls)
            )
            if used is not None:
                body["sources"] = used
            return web.json_response(body)
    raise AssertionError("the events end with finished or failed")


async def _stream(
    request: web.Request,
    served: ServedRequest,
    parsed: ParsedRequest,
    shaper: Shaper,
    tool_format: str | None,
    used: list[dict[str, Any]] | None = None,
) -> web.StreamResponse:
    """Headers go out with the first event, so a request refused by the engine (a prompt too
    long, bad sampling settings) still gets a proper status and JSON body; a failure after
    that is sent as a last `data: {"error": ...}` event. With tools offered, call markup is held
    back (see app.server.openai_tools) and the calls go out whole at the end. The knowledge
    `used` goes out as `"sources"` in the first chunk."""
    content = ContentStream(tool_format)
    response: web.StreamResponse | None = None
    async for event in served.events():
        error = _error_of(event)
        if response is None:
            if error is not None:
                raise error
            response = await _open_stream(request)
            if shaper.chat:
                first = shaper.chunk("", first=True)
                await _send(response, first if used is None else {**first, "sources": used}, parsed)
        if error is not None:
            await _send(response, error.body(), parsed)
        elif isinstance(event, TokensReady):
            text = content.feed(event.text)
            if text:
                await _send(response, shaper.chunk(text), parsed)
        elif isinstance(event, GenerationFinished):
            rest = content.finish(event.text)
            if rest or event.tool_calls:
                chunk = shaper.chunk(rest or None, tool_calls=list(event.tool_calls))
                await _send(response, chunk, parsed)
            await _send(response, shaper.chunk(None, event.finish_reason), parsed)
            if parsed.include_usage:
                await _send(response, shaper.usage_chunk(event.stats), parsed)
    assert response is not None
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def _open_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    return response


async def _send(response: web.StreamResponse, data: dict[str, Any], parsed: ParsedRequest) -> None:
    if parsed.include_usage and "usage" not in data:
        data = {**data, "usage": None}
    await response.write(f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode())


def _error_of(event: Event) -> ApiError | None:
    """The error to answer for a failed request, or for one stopped by the app itself (quitting,
    or the server stopping): clients cancel only by going away."""
    if isinstance(event, WorkerFailure):
        if event.invalid_request:
            return ApiError(400, event.message, "invalid_request")
        return ApiError(500, f"The model failed to answer: {event.message}", "model_error")
    if isinstance(event, GenerationFinished) and event.finish_reason == "cancelled":
        return ApiError(503, "The generation was stopped: the server is shutting down.", "stopped")
    return None
