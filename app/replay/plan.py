"""What a replay sends: the reply's prompt rebuilt from the tree as it is now (the system
prompt, the path above the reply with its images and files; for a compacted branch's summary,
the path it covers and the request it answered), and the settings, tools and model its
provenance recorded. Nothing here writes to the store."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.generation.prompt_messages import missing_image, prompt_messages
from app.store.compaction_records import covered_ids
from app.store.conversations import Store
from app.store.provenance import is_replayable, item
from app.store.records import Message, StoreError


class ReplayError(Exception):
    """A replay that cannot run; the message says why for the person (`branchwise replay`
    exits 2)."""


@dataclass(frozen=True)
class ReplayPlan:
    message_id: int
    conversation_id: int
    model_path: Path
    messages: list[dict[str, Any]] = field(hash=False)
    # The engine's parameters: the recorded sampling settings and context options.
    params: dict[str, Any] = field(hash=False)
    template_kwargs: dict[str, Any] = field(hash=False)
    tools: list[dict[str, Any]] = field(hash=False)
    continued: str | None
    recorded: dict[str, Any] = field(hash=False)  # the reply's provenance as stored
    notes: tuple[str, ...] = ()  # what the replay does otherwise than the reply did, and why


def plan_replay(store: Store, message_id: int) -> ReplayPlan:
    """The replay of reply `message_id`; raises ReplayError when it cannot run (no provenance,
    an imported reply, its model or an image gone) and StoreError for an unknown id."""
    reply = store.get_message(message_id)
    recorded = reply.provenance
    summary = reply.role == "summary"
    if not summary and (reply.role != "assistant" or reply.parent_id is None):
        raise ReplayError(f"Message {message_id} is not a reply.")
    if recorded.get("imported_from"):
        raise ReplayError(
            f"Reply {message_id} was imported from {recorded['imported_from']}: only the model's "
            "name is known, so it cannot be generated again."
        )
    if not is_replayable(recorded):
        raise ReplayError(
            f"Reply {message_id} has no recorded provenance (it was written before Branchwise "
            "recorded it, or by a remote server), so it cannot be replayed."
        )
    name = str(item(recorded, "model.name") or "the model")
    model_path = Path(str(item(recorded, "model.path")))
    if not (model_path / "config.json").is_file():
        raise ReplayError(
            f"The model {name} that wrote reply {message_id} is missing: {model_path} is no "
            "longer in the library."
        )
    path = summarised_path(store, reply) if summary else store.path_to(message_id)[:-1]
    refused = missing_image(store, path)
    if refused is not None:
        raise ReplayError(refused)
    detail = recorded.get("image_detail")
    messages = prompt_messages(
        store, reply.conversation_id, path, detail if isinstance(detail, int) else None
    )
    if summary:  # written as the next reply of the path it covers, asked for in these words
        messages.append({"role": "user", "content": reply.compaction.get("instruction", "")})
    continued = recorded.get("continued")
    if continued:
        messages.append({"role": "assistant", "content": continued})
    sampling = dict(recorded.get("sampling") or {})
    notes: list[str] = []
    if sampling.get("speculation") == "draft":
        # Drafting changes speed, never the tokens: guessing from the conversation replays
        # the same reply without loading the draft model.
        sampling["speculation"] = "prompt_lookup"
        notes.append(
            "The reply was drafted by a second model; the replay guesses from the "
            "conversation instead (the tokens are the same either way)."
        )
    if reply.stats.get("finish_reason") == "cancelled":
        # Stopped by the person: the replay writes as many tokens as the reply had, so it can
        # be identical to what was kept.
        sampling["max_tokens"] = max(1, len(recorded["token_ids"]))
        notes.append(
            f"The reply was stopped after {len(recorded['token_ids'])} tokens; the "
            "replay writes as many."
        )
    params = {**sampling, "overflow": recorded.get("overflow") or "truncate_middle"}
    if recorded.get("context_limit") is not None:
        params["context_length"] = recorded["context_limit"]
    return ReplayPlan(
        message_id=message_id,
        conversation_id=reply.conversation_id,
        model_path=model_path,
        messages=messages,
        params=params,
        template_kwargs=dict(recorded.get("template_kwargs") or {}),
        tools=list(recorded.get("tools") or ()),
        continued=continued or None,
        recorded=recorded,
        notes=tuple(notes),
    )


def summarised_path(store: Store, summary: Message) -> list[Message]:
    """The path a compacted branch's summary was written for, as the tree holds it now;
    ReplayError when its messages are no longer that path (one was deleted)."""
    covers = covered_ids(summary)
    try:
        path = store.path_to(covers[-1]) if covers else []
    except StoreError:
        path = []
    if not covers or [m.id for m in path] != covers:
        raise ReplayError(
            f"Summary {summary.id} cannot be written again: messages it summarised were deleted."
        )
    return path
