"""A request to the local server may name a preset (`"preset": "NAME"`, whatever its case): its
system prompt and settings apply where the request does not say otherwise.

What the request sets wins: its own sampling fields, and its own system message (the preset's
system prompt goes first only when the messages have none). What a served request can take from
a preset: the sampling settings and seed, max tokens, the context length and overflow policy,
speculative decoding (a draft model is the window's: guessing from the conversation instead,
which gives the same tokens) and the thinking switch. A preset's tools are MCP servers of the
window's chats; a served request offers the tools its client sends, so they do not apply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from app.generation.think_settings import EFFORT, THINK
from app.server.guard import ApiError
from app.store.presets import Preset

# Finds a preset by name (None: there is none); the window's store, or `branchwise serve`'s.
PresetLookup = Callable[[str], Preset | None]
# The preset settings a served request takes where its body does not set them.
_SERVED = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repetition_penalty",
    "max_tokens",
    "seed",
    "context_length",
    "overflow",
)


@dataclass(frozen=True)
class RequestPreset:
    name: str
    system_prompt: str = ""
    params: dict[str, Any] = field(default_factory=dict[str, Any])  # for what the body lacks
    reasoning: dict[str, Any] = field(default_factory=dict[str, Any])  # THINK and EFFORT


def request_preset(body: Mapping[str, Any], lookup: PresetLookup | None) -> RequestPreset | None:
    """The preset the body names (None: it names none). Raises ApiError: a name that is no
    text (400), or one no preset has (404)."""
    name = body.get("preset")
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip():
        raise ApiError(400, "'preset' must be the name of a preset.", "invalid_request", "preset")
    preset = lookup(name) if lookup is not None else None
    if preset is None:
        raise ApiError(
            404,
            f"There is no preset named {name!r} (presets are made in Branchwise's window).",
            "preset_not_found",
            "preset",
        )
    settings = preset.settings
    raw = settings.get("params")
    stored = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
    params = {k: stored[k] for k in _SERVED if stored.get(k) is not None}
    if stored.get("speculation") in ("off", "prompt_lookup", "draft"):
        params["speculation"] = "off" if stored["speculation"] == "off" else "prompt_lookup"
    system = settings.get("system_prompt")
    return RequestPreset(
        preset.name,
        system if isinstance(system, str) else "",
        params,
        {k: stored[k] for k in (THINK, EFFORT) if k in stored},
    )


def with_system_prompt(messages: list[dict[str, Any]], preset: RequestPreset) -> list[dict]:
    """The messages with the preset's system prompt first, unless they bring their own."""
    if not preset.system_prompt.strip() or any(m.get("role") == "system" for m in messages):
        return messages
    return [{"role": "system", "content": preset.system_prompt}, *messages]
