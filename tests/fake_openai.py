"""A fake OpenAI-compatible server for the remote tool tests: `/v1/chat/completions` on loopback,
answering each request with the next scripted reply as a stream of server-sent events, the way
real servers stream tool calls (`choices[0].delta.tool_calls[i]`):

- "vllm": the first piece of a call has its `index`, `id`, `type` and `function.name` (no
  arguments), then `function.arguments` comes in small fragments, one chunk each, naming only
  the index;
- "llama.cpp": the same, but the first piece carries `"arguments": ""` and deltas say
  `"content": null`;
- "whole": each call whole in one chunk (Branchwise's own server, mlx_lm.server).

It runs on the test's asyncio loop, keeps every request's JSON body, and stops itself after
`lifetime_s` even if the test never does. With `hold` set, a reply waits for it before it ends
(a test looks at the reply while its calls are being written).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.remote_servers import free_port

STYLES = ("vllm", "llama.cpp", "whole")
FRAGMENT = 3  # characters of arguments per chunk when split, as small as real servers send


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str  # as the server sends it: JSON text, or not (a model's malformed call)
    id: str | None = None  # None: the server numbers it


@dataclass(frozen=True)
class Reply:
    text: str = ""
    calls: tuple[Call, ...] = ()


class FakeServer:
    def __init__(
        self,
        replies: list[Reply],
        style: str = "vllm",
        model: str = "fake-model",
        lifetime_s: float = 120.0,
    ) -> None:
        assert style in STYLES
        self.replies = list(replies)
        self.style = style
        self.model = model
        self.lifetime_s = lifetime_s
        self.requests: list[dict[str, Any]] = []
        self.base_url = ""
        self._runner: web.AppRunner | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._served = 0
        self.hold: asyncio.Event | None = None

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(self.lifetime_s, lambda: loop.create_task(self.stop()))
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    async def stop(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def _models(self, _request: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [{"id": self.model, "object": "model"}]}
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(await request.json())
        reply = self.replies.pop(0)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for delta in self._deltas(reply):
            await self._send(response, [{"index": 0, "delta": delta, "finish_reason": None}])
        if self.hold is not None:
            await self.hold.wait()
        finish = "tool_calls" if reply.calls else "stop"
        await self._send(response, [{"index": 0, "delta": {}, "finish_reason": finish}])
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        await self._send(response, [], usage)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    def _deltas(self, reply: Reply) -> Iterator[dict[str, Any]]:
        empty: dict[str, Any] = {"content": None} if self.style == "llama.cpp" else {}
        yield {"role": "assistant", "content": "" if self.style != "llama.cpp" else None}
        for start in range(0, len(reply.text), FRAGMENT):
            yield {"content": reply.text[start : start + FRAGMENT]}
        for index, call in enumerate(reply.calls):
            self._served += 1
            call_id = call.id or f"call-{self._served}"
            function: dict[str, Any] = {"name": call.name}
            if self.style == "whole":
                function["arguments"] = call.arguments
            elif self.style == "llama.cpp":
                function["arguments"] = ""
            yield {
                **empty,
                "tool_calls": [
                    {"index": index, "id": call_id, "type": "function", "function": function}
                ],
            }
            if self.style == "whole":
                continue
            for start in range(0, len(call.arguments), FRAGMENT):
                fragment = call.arguments[start : start + FRAGMENT]
                yield {
                    **empty,
                    "tool_calls": [{"index": index, "function": {"arguments": fragment}}],
                }

    async def _send(
        self,
        response: web.StreamResponse,
        choices: list[dict[str, Any]],
        usage: dict[str, int] | None = None,
    ) -> None:
        chunk = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": self.model,
            "choices": choices,
            "usage": usage,
        }
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await asyncio.sleep(0)  # one chunk at a time, as a server generating them sends them
