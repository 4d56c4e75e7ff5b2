"""The branch map's outline: a conversation tree reduced to its branch points.

A straight run of messages (each with exactly one reply below it) is one outline node, so a
300-turn conversation with three edits is a handful of lines, not 300. A node starts at a
message whose parent has several versions (or at the root) and ends at the last message before
the next fork or at a leaf; its children are the runs that start at that fork's versions. Per
node: its first words, how many versions its first message has, whether it lies on the active
path, what it summarises when it is a compacted branch, and the messages from the root to its
end (for the cache state and the switch). Plain
values only, built on the GUI thread from the store's rows (no MLX).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.store.compaction_records import covered_ids, stands_for
from app.store.conversations import Message

FIRST_WORDS = 8


@dataclass
class OutlineNode:
    first_id: int  # the run's first message: switching to the node shows its latest branch
    last_id: int  # the run's last message: the cache state is that of the path to it
    label: str  # the first words of the first message
    role: str
    versions: int  # how many siblings the first message has (itself included)
    version: int  # its position among them, 1-based
    messages: int  # messages in the run
    on_active_path: bool
    children: list[OutlineNode] = field(default_factory=list)
    # A compacted branch (its first message a summary): what it summarises, in words.
    summarises: str = ""


def first_words(text: str, count: int = FIRST_WORDS) -> str:
    words = text.split()
    if not words:
        return "(empty)"
    return " ".join(words[:count]) + (" …" if len(words) > count else "")


def build_outline(messages: Sequence[Message], active_ids: set[int]) -> list[OutlineNode]:
    """The outline of a conversation's `messages` (any order), the runs on the active path
    (`active_ids`: the ids from the root to the active leaf) marked."""
    children: dict[int | None, list[Message]] = {}
    by_id = {m.id: m for m in messages}
    for message in sorted(messages, key=lambda m: m.id):
        children.setdefault(message.parent_id, []).append(message)

    def run_from(start: Message, version: int, versions: int) -> OutlineNode:
        last, count = start, 1
        while len(below := children.get(last.id, ())) == 1:
            last, count = below[0], count + 1
        return OutlineNode(
            first_id=start.id,
            last_id=last.id,
            label=first_words(start.content),
            role=start.role,
            versions=versions,
            version=version,
            messages=count,
            on_active_path=start.id in active_ids,
            summarises=summarised(start, by_id) if start.role == "summary" else "",
        )

    roots: list[OutlineNode] = []
    pending: list[tuple[list[OutlineNode], list[Message]]] = [(roots, children.get(None, []))]
    while pending:
        into, starts = pending.pop()
        for version, start in enumerate(starts, 1):
            node = run_from(start, version, len(starts))
            into.append(node)
            below = children.get(node.last_id, [])
            if below:
                pending.append((node.children, below))
    return roots


def summarised(summary: Message, by_id: Mapping[int, Message]) -> str:
    """What a compacted branch's summary stands for: "12 messages, “Plan a trip…” to “Which
    month?”, 3,410 tokens" (its ends by their first words, while the tree has them)."""
    covers = covered_ids(summary)
    ends = [by_id[i] for i in (covers[:1] + covers[-1:]) if i in by_id]
    span = f", “{first_words(ends[0].content, 4)}” to “{first_words(ends[-1].content, 4)}”"
    tokens = stands_for(summary)
    return f"{len(covers)} messages{span if ends else ''}" + (
        f", {tokens:,} tokens" if tokens is not None else ""
    )


def walk(nodes: Sequence[OutlineNode]) -> list[OutlineNode]:
    """Every node, parents before children, in display order."""
    out: list[OutlineNode] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def paths_to(messages: Sequence[Message], ids: Sequence[int]) -> dict[int, list[Message]]:
    """The messages from the root to each of `ids`, root first."""
    by_id = {m.id: m for m in messages}
    out: dict[int, list[Message]] = {}
    for message_id in ids:
        path: list[Message] = []
        current: int | None = message_id
        while current is not None:
            message = by_id[current]
            path.append(message)
            current = message.parent_id
        out[message_id] = path[::-1]
    return out
