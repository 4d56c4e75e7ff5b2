"""What a replay found: identical, or where the tokens first part and which recorded items
differ now (another weights digest, template, version, prompt). Plain, frozen values: the
window shows them, `branchwise replay --json` prints them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from app.store.provenance import IDENTITY_ITEMS, item


@dataclass(frozen=True)
class ChangedItem:
    key: str  # "model.weights_digest"
    label: str  # "the weights"
    recorded: Any
    now: Any


@dataclass(frozen=True)
class ReplayOutcome:
    message_id: int
    identical: bool
    # The index of the first generated token that differs (the shorter run's length when one
    # is a prefix of the other); None when identical.
    first_difference: int | None
    recorded_tokens: int
    replayed_tokens: int
    changed: tuple[ChangedItem, ...]
    notes: tuple[str, ...]
    # The replayed reply, for keeping it as a sibling.
    text: str
    reasoning: str
    provenance: dict[str, Any]
    tool_calls: tuple[dict[str, Any], ...] = ()
    # The tokens around the first difference, as text: what the reply said, what it says now.
    recorded_piece: str = ""
    replayed_piece: str = ""

    def summary(self) -> str:
        """One paragraph for the person."""
        if self.first_difference is None:
            head = f"Identical: all {self.recorded_tokens} tokens are the same."
        else:
            head = (
                f"Different: the tokens first differ at token {self.first_difference + 1} "
                f"(of {self.recorded_tokens} recorded, {self.replayed_tokens} now)."
            )
        if self.changed:
            head += " Changed since: " + "; ".join(_changed(c) for c in self.changed) + "."
        elif not self.identical:
            head += " No recorded item differs now."
        return " ".join([head, *self.notes])

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("provenance")
        data["summary"] = self.summary()
        return data


def compare(
    message_id: int,
    recorded: dict[str, Any],
    now: dict[str, Any],
    texts: tuple[str, str],
    notes: Sequence[str] = (),
    tool_calls: tuple[dict[str, Any], ...] = (),
) -> ReplayOutcome:
    """The outcome of a replay whose provenance is `now` against the reply's `recorded` one;
    `texts` is the replayed reply's (answer, reasoning), `tool_calls` the calls it made."""
    old = [int(t) for t in recorded.get("token_ids") or ()]
    new = [int(t) for t in now.get("token_ids") or ()]
    first = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), None)
    if first is None and len(old) != len(new):
        first = min(len(old), len(new))
    changed = tuple(
        ChangedItem(key, label, item(recorded, key), item(now, key))
        for key, label in IDENTITY_ITEMS
        if item(recorded, key) is not None and item(recorded, key) != item(now, key)
    )
    return ReplayOutcome(
        message_id=message_id,
        identical=first is None,
        first_difference=first,
        recorded_tokens=len(old),
        replayed_tokens=len(new),
        changed=changed,
        notes=tuple(notes),
        text=texts[0],
        reasoning=texts[1],
        provenance=now,
        tool_calls=tool_calls,
    )


def _changed(change: ChangedItem) -> str:
    if change.key.startswith("versions."):
        return f"{change.label} ({change.recorded} then, {change.now} now)"
    return f"{change.label} ({_short(change.recorded)} then, {_short(change.now)} now)"


def _short(value: Any) -> str:
    text = str(value)
    return text[:12] if len(text) > 16 and " " not in text else text
