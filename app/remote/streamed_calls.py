"""Tool calls as an OpenAI-compatible server streams them (`choices[0].delta.tool_calls`), put
together into the calls the local engine gives: `{"id", "name", "arguments": dict}`.

Servers stream a call in one of two ways: vLLM and llama.cpp's server send its `index`, `id` and
`function.name` first, then `function.arguments` in many fragments, each piece naming only the
index; others (Branchwise's own server, mlx_lm.server) send the whole call in one piece. Both
read the same here. A piece that brings a new id to an index already holding a call starts a
new call: some servers number every call 0.

A call whose arguments are not a JSON object, or that names no tool, is no call: its text is
kept with the reply's (the person sees what the model wrote) and nothing runs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


class StreamedCalls:
    def __init__(self) -> None:
        self._calls: list[_Call] = []
        self._by_index: dict[int | None, _Call] = {}

    @property
    def calling(self) -> str | None:
        """The tool the reply is calling now (the last call begun; "" while its name has not
        come), or None before any call."""
        return self._calls[-1].name if self._calls else None

    def add(self, pieces: Sequence[Any]) -> None:
        """One chunk's `delta.tool_calls`."""
        for piece in pieces:
            call = self._by_index.get(piece.index)
            if call is None or (piece.id and call.id and piece.id != call.id):
                call = self._by_index[piece.index] = _Call()
                self._calls.append(call)
            call.id = piece.id or call.id
            function = piece.function
            if function is not None:
                call.name = function.name or call.name
                call.arguments += function.arguments or ""

    def whole(self) -> tuple[tuple[dict[str, Any], ...], str]:
        """The calls in the order they began, and the text of those that are no call (kept
        as reply text, never dropped). A call without an id, or repeating an earlier call's,
        is given one: a result finds its call by id."""
        made: list[dict[str, Any]] = []
        unreadable = ""
        for call in self._calls:
            try:
                arguments = json.loads(call.arguments or "{}")
            except ValueError:
                arguments = None
            if not isinstance(arguments, dict) or not call.name:
                unreadable += f"\n{call.name}({call.arguments})"
                continue
            taken = {m["id"] for m in made}
            call_id = call.id if call.id and call.id not in taken else _new_id()
            made.append({"id": call_id, "name": call.name, "arguments": arguments})
        return tuple(made), unreadable


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"
