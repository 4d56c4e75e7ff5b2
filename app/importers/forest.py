"""The shared tree rules every reader follows: parent pointers into an ordered tree (a missing
parent starts a root, a cycle is broken, hidden nodes are skipped with their children attached
to the nearest imported ancestor), per-turn versions into siblings, the active leaf, the title.

All walks are iterative (real exports hold chains deeper than Python's recursion limit).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.importers.tree import ImportedConversation, ImportedMessage

TITLE_CHARS = 80
UNTITLED = "Untitled conversation"
_PLACEHOLDER_TITLES = frozenset({"", "untitled", "new chat", "new conversation"})


@dataclass(slots=True)
class Node:
    """One node of the source's tree; `message` None: hidden (skipped). `rank` orders siblings
    (the source's child-list index, version index or time); ties keep file order."""

    id: str
    parent: str | None
    message: ImportedMessage | None
    rank: tuple[float, ...] = ()


@dataclass(slots=True)
class Tree:
    messages: list[ImportedMessage]  # parents first, siblings in the source's order
    aliases: dict[str, str]  # a hidden node's id -> its nearest imported ancestor


def arrange(nodes: Iterable[Node], warnings: list[str]) -> list[tuple[Node, str | None]]:
    """Every node once, parents first, siblings by rank, with its parent after the repairs: a
    duplicate id keeps the first node, a missing parent makes a root, a loop is cut."""
    by_id: dict[str, Node] = {}
    for node in nodes:
        if node.id in by_id:
            warnings.append(f"Message {node.id} appears twice; the first one was kept.")
            continue
        by_id[node.id] = node
    order = {node_id: i for i, node_id in enumerate(by_id)}
    parent: dict[str, str | None] = {}
    for node in by_id.values():
        up = node.parent
        if up is not None and (up not in by_id or up == node.id):
            warnings.append(
                f"Message {node.id}: its parent {up} is not in the export; it starts a branch."
            )
            up = None
        parent[node.id] = up
    _break_cycles(parent, warnings)
    children: dict[str | None, list[str]] = {}
    for node_id in by_id:
        children.setdefault(parent[node_id], []).append(node_id)
    for siblings in children.values():
        siblings.sort(key=lambda i: (by_id[i].rank, order[i]))
    arranged: list[tuple[Node, str | None]] = []
    stack = list(reversed(children.get(None, [])))
    while stack:
        node_id = stack.pop()
        arranged.append((by_id[node_id], parent[node_id]))
        stack.extend(reversed(children.get(node_id, [])))
    return arranged


def build(nodes: Iterable[Node], warnings: list[str]) -> Tree:
    """The imported messages of `nodes`: hidden ones skipped, each message's parent its nearest
    imported ancestor."""
    messages: list[ImportedMessage] = []
    aliases: dict[str, str] = {}
    visible: dict[str, str | None] = {}  # node id -> the imported message at or above it
    for node, parent in arrange(nodes, warnings):
        above = None if parent is None else visible[parent]
        message = node.message
        if message is None:
            visible[node.id] = above
            if above is not None:
                aliases[node.id] = above
            continue
        if message.parent_id != above or message.source_id != node.id:
            message = dataclasses.replace(message, parent_id=above, source_id=node.id)
        messages.append(message)
        visible[node.id] = node.id
    return Tree(messages, aliases)


def _break_cycles(parent: dict[str, str | None], warnings: list[str]) -> None:
    done: set[str] = set()
    for start in parent:
        path: list[str] = []
        on_path: set[str] = set()
        node: str | None = start
        while node is not None and node not in done:
            if node in on_path:
                closer = path[-1]
                warnings.append(f"Message {closer} closed a loop of parents; it starts a branch.")
                parent[closer] = None
                break
            path.append(node)
            on_path.add(node)
            node = parent[node]
        done.update(path)


def versions(
    slots: Sequence[tuple[Sequence[ImportedMessage], int]],
) -> tuple[list[ImportedMessage], str | None]:
    """Per-turn versions (LM Studio, SillyTavern swipes, text-generation-webui): every version of
    turn i is a child of the selected version of turn i - 1; only the selected one continues.
    Ids come from the parent's id, the role and the text, so a later, longer file finds the
    same ones. Returns the messages and the last selected one (the active leaf)."""
    messages: list[ImportedMessage] = []
    parent: str | None = None
    for alternatives, selected in slots:
        if not alternatives:
            continue
        chosen = min(max(selected, 0), len(alternatives) - 1)
        taken: set[str] = set()
        next_parent = parent
        for position, version in enumerate(alternatives):
            base = content_id(parent, version.role, version.content, version.reasoning)
            source_id, n = base, 1
            while source_id in taken:
                n += 1
                source_id = f"{base}#{n}"
            taken.add(source_id)
            messages.append(dataclasses.replace(version, source_id=source_id, parent_id=parent))
            if position == chosen:
                next_parent = source_id
        parent = next_parent
    return messages, parent


def content_id(parent: str | None, role: str, content: str, reasoning: str = "") -> str:
    digest = hashlib.sha256("\x00".join((parent or "", role, content, reasoning)).encode())
    return digest.hexdigest()[:24]


def finish(
    conversation: ImportedConversation, pointer: str | None, aliases: dict[str, str] | None = None
) -> ImportedConversation:
    """Set the active leaf (the source's pointer, descending to a leaf by last children, else
    the newest leaf) and a title when the source has none."""
    messages = conversation.messages
    children: dict[str | None, list[str]] = {}
    for message in messages:
        children.setdefault(message.parent_id, []).append(message.source_id)
    known = {m.source_id for m in messages}
    if pointer is not None and pointer not in known and aliases:
        pointer = aliases.get(pointer)
    if pointer in known:
        while children.get(pointer):
            pointer = children[pointer][-1]
        leaf = pointer
    else:
        leaves = [
            (m.created_at or float("-inf"), i, m.source_id)
            for i, m in enumerate(messages)
            if m.source_id not in children
        ]
        leaf = max(leaves)[2] if leaves else None
    conversation.active_leaf_id = leaf
    title = " ".join(conversation.title.split())
    if title.lower() in _PLACEHOLDER_TITLES:
        title = _first_user_line(messages, leaf) or UNTITLED
    conversation.title = title
    return conversation


def _first_user_line(messages: list[ImportedMessage], leaf: str | None) -> str:
    by_id = {m.source_id: m for m in messages}
    path: list[ImportedMessage] = []
    node = by_id.get(leaf) if leaf is not None else None
    while node is not None:
        path.append(node)
        node = by_id.get(node.parent_id) if node.parent_id is not None else None
    for message in reversed(path):
        if message.role == "user":
            for line in message.content.splitlines():
                if line.strip():
                    return line.strip()[:TITLE_CHARS]
    return ""
