"""What a compaction summarises and keeps, and what the model is asked to write the summary.

A path is cut between turns (a turn starts at a message of the person's), so what follows the
summary still alternates as chat templates want. The last `keep_turns` turns are kept word for
word, but never all of them: at least one turn is summarised. A message of the person's that
awaits its answer is always kept, so it is answered on the compacted branch. A path that begins
with a summary (a compacted branch compacted again) has that summary summarised with the rest.

The model writes the summary as the next reply of the path it summarises: the path's own
prompt, then one more message of the person's asking for it. So the prompt it reads is the
path's prefix, which the cache holds already (only the request is read afresh), and the
summary is a reply like any other: stats, provenance, replay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.generation.prompt_messages import prompt_messages
from app.store.conversations import Store
from app.store.records import Message

INSTRUCTION = (
    "Summarise our conversation so far in a few short points, so that it can go on from your "
    "summary alone: keep every name, fact, number, decision, open question and request of "
    "mine. Write only the summary."
)


class CompactionRefused(Exception):
    """A path that cannot be compacted; the message says why, for the person."""


@dataclass(frozen=True)
class CompactionPlan:
    """`covered` is summarised, `kept` (after it, up to `through`, the message asked about)
    repeated word for word below the summary."""

    conversation_id: int
    covered: tuple[Message, ...]
    kept: tuple[Message, ...]
    instruction: str

    @property
    def through(self) -> Message:
        return (self.kept or self.covered)[-1]

    def record(self) -> dict[str, Any]:
        """The summary's record as it begins (`app.store.compaction_records`)."""
        return {
            "covers": [m.id for m in self.covered],
            "kept": [m.id for m in self.kept],
            "through": self.through.id,
            "stands_for": None,
            "instruction": self.instruction,
        }


def instruction(focus: str = "") -> str:
    """What the model is asked; `focus` (`/compact <focus>`) says what matters most."""
    focus = " ".join(focus.split())
    return f"{INSTRUCTION} Pay most attention to: {focus}" if focus else INSTRUCTION


def plan_compaction(path: Sequence[Message], keep_turns: int, focus: str = "") -> CompactionPlan:
    """The compaction of `path` (root first) keeping its last `keep_turns` turns; raises
    CompactionRefused when there is nothing to summarise or a message is still being written."""
    if any(m.status == "streaming" for m in path):
        raise CompactionRefused("A reply is still being written: summarise once it is done.")
    starts = [i for i, m in enumerate(path) if m.role == "user"]
    if not starts:
        raise CompactionRefused("There is nothing to summarise yet: say something first.")
    waiting = 1 if path[-1].role == "user" else 0  # the person's message awaiting its answer
    keep = min(max(keep_turns, waiting), len(starts) - 1)
    if keep < waiting:
        raise CompactionRefused(
            "There is nothing to summarise before this message: it is the chat's first."
        )
    cut = starts[len(starts) - keep] if keep else len(path)
    return CompactionPlan(
        path[0].conversation_id, tuple(path[:cut]), tuple(path[cut:]), instruction(focus)
    )


def summary_request(store: Store, plan: CompactionPlan, detail: int | None) -> list[dict]:
    """The messages the summary is written for: the covered path as any reply on it would
    see it, then the request."""
    messages = prompt_messages(store, plan.conversation_id, list(plan.covered), detail)
    return [*messages, {"role": "user", "content": plan.instruction}]
