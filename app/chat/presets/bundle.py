"""What a preset holds, how a chat takes it, and how far a chat has drifted from it.

A preset is the chat settings a person tunes: the system prompt, the sampling parameters and
seed, the context length and what happens when a chat outgrows it, speculative decoding and
the draft model, the thinking switch and effort, the tool servers, and optionally a model. It
is stored as the JSON `to_json` writes ({"system_prompt", "model_id", "params"}).

A preset fixes every one of those settings: taking it sets each one it names, and puts each one
it does not name back to what a new chat starts with (Preferences' defaults), so two chats on
one preset read the same. A chat's other params (tool approvals, keys of a newer version) stay.
Drift is the difference between a chat and what the preset would make of it, said per setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

from app.chat.tools.choice import CHAT_KEY
from app.generation.think_settings import EFFORT, THINK
from app.library.draft_choice import DRAFT_MODEL_KEY
from app.store.records import Conversation

# The chat params a preset carries, with the words a person reads for each.
PARAM_LABELS: dict[str, str] = {
    "temperature": "temperature",
    "top_p": "top-p",
    "top_k": "top-k",
    "min_p": "min-p",
    "repetition_penalty": "repetition penalty",
    "max_tokens": "max tokens",
    "seed": "seed",
    "speculation": "speculative decoding",
    DRAFT_MODEL_KEY: "draft model",
    "context_length": "context length",
    "overflow": "overflow",
    THINK: "thinking",
    EFFORT: "reasoning effort",
    CHAT_KEY: "tools",
}
PRESET_KEYS = frozenset(PARAM_LABELS)


@dataclass(frozen=True)
class PresetSettings:
    system_prompt: str = ""
    model_id: str | None = None  # None: a chat keeps its own model
    params: dict[str, Any] = field(default_factory=dict[str, Any])  # PRESET_KEYS only

    @classmethod
    def of_chat(cls, conversation: Conversation, with_model: bool = False) -> PresetSettings:
        """The chat's settings as a preset ("Save current settings as preset…")."""
        model = conversation.model_id if with_model else None
        return cls(conversation.system_prompt, model, dict(conversation.params)).trimmed()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PresetSettings:
        """Read back what `to_json` wrote; what is not a preset's is left out."""
        system = data.get("system_prompt")
        model = data.get("model_id")
        params = data.get("params")
        return cls(
            system if isinstance(system, str) else "",
            model if isinstance(model, str) and model else None,
            dict(cast("dict[str, Any]", params)) if isinstance(params, dict) else {},
        ).trimmed()

    def trimmed(self) -> PresetSettings:
        """Only what a preset carries (a chat's params hold more: tool approvals, say)."""
        return replace(self, params={k: v for k, v in self.params.items() if k in PRESET_KEYS})

    def to_json(self) -> dict[str, Any]:
        return {
            "system_prompt": self.system_prompt,
            "model_id": self.model_id,
            "params": self.params,
        }

    def applied_to(self, params: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
        """A chat's params once it takes this preset: the preset's settings, the new-chat
        `defaults` for those it leaves unset, the chat's other params as they were."""
        kept = {k: v for k, v in params.items() if k not in PRESET_KEYS}
        reset = {k: v for k, v in defaults.items() if k in PRESET_KEYS}
        return {**kept, **reset, **self.params}

    def drift(self, conversation: Conversation, defaults: Mapping[str, Any]) -> tuple[str, ...]:
        """How the chat differs from this preset, one phrase per setting ("temperature 0.7 →
        0.2"); () when it matches. `defaults` are what new chats start with, and what an unset
        setting means (the overflow policy from Preferences, say): a setting left unset and one
        set to what unset means are the same."""
        meaning = {THINK: True, **defaults}  # thinking is on unless a chat turned it off
        changes: list[str] = []
        if conversation.system_prompt != self.system_prompt:
            changes.append("system prompt")
        if self.model_id is not None and conversation.model_id != self.model_id:
            changes.append(f"model {self.model_id} → {conversation.model_id or 'none'}")
        expected = self.applied_to(conversation.params, defaults)
        for key, label in PARAM_LABELS.items():
            want = expected.get(key, meaning.get(key))
            have = conversation.params.get(key, meaning.get(key))
            if want != have:
                changes.append(f"{label} {_shown(want)} → {_shown(have)}")
        return tuple(changes)


def _shown(value: object) -> str:
    if value is None:
        return "default"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"  # tool servers
    return str(value)
