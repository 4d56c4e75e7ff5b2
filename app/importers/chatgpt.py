"""ChatGPT's data export: `conversations.json` (alone, or in the export zip with the uploaded
files at its root) and the 2026 split export (`export_manifest.json` listing
`conversations-NNN.json` shards, assets as `<id>.dat` named by
`conversation_asset_file_names.json`).

The tree comes from each node's `parent` (the `children` lists miss links in 2026 exports;
they only order siblings). Hidden nodes (`message: null`, system, visually hidden) are skipped;
custom instructions become the system prompt; each chain of assistant, reasoning and tool nodes
between two user messages becomes one assistant message per path (its id is the chain's last
node), with `thoughts` as reasoning and tool code and output as its trace.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterator
from typing import Any

from app.importers import chatgpt_content as content
from app.importers import forest, streams
from app.importers import values as v
from app.importers.entries import Entry, RefusedEntry, each
from app.importers.errors import ImportRefusedError
from app.importers.sources import Member, Source
from app.importers.tree import ImportedAttachment, ImportedConversation, ImportedMessage

FORMAT = "chatgpt"
MANIFEST = "export_manifest.json"
NAME_MAP = "conversation_asset_file_names.json"
MAX_ASSET_BYTES = 64 * 1024 * 1024
_SHARD = re.compile(r"(?:^|/)conversations(?:-\d+)?\.json$")
_FILE_ID = re.compile(r"^(file[-_][A-Za-z0-9]+)")


def conversation_files(source: Source) -> tuple[list[Member], list[RefusedEntry]]:
    """The conversation files in reading order; a shard the manifest lists but the export lacks
    is reported (the download was cut short), never taken as complete."""
    manifest = source.member(MANIFEST)
    if manifest is None:
        found = [m for m in source.members if _SHARD.search(m.name)]
        return sorted(found, key=lambda m: m.name), []
    with manifest.open() as raw:
        data = v.obj(streams.load(raw, 16 * 1024 * 1024, manifest.where), manifest.where)
    logical = v.opt_obj(
        v.opt_obj(data.get("logical_files"), "logical_files").get("conversations.json"),
        "conversations.json",
    )
    members, missing = [], []
    for index, name in enumerate(v.arr(logical.get("files"), f"{manifest.where}: files")):
        shard = v.text(name, f"{manifest.where}: files[{index}]")
        member = source.member(shard)
        if member is None:
            missing.append(
                RefusedEntry(
                    shard,
                    "The manifest lists this part of the export but it is missing: the "
                    "download looks cut short, so conversations in it are not here.",
                )
            )
        else:
            members.append(member)
    return members, missing


def read(source: Source) -> Iterator[Entry]:
    members, missing = conversation_files(source)
    yield from missing
    assets = _Assets(source)
    for member in members:
        with member.open() as raw:
            yield from each(
                streams.items(raw, member.size + 1, member.where),
                member.where,
                lambda item, where: convert(item, where, assets.find),
            )


class _Assets:
    """Uploaded and generated files in the export, found by their file id."""

    def __init__(self, source: Source) -> None:
        self._by_id: dict[str, Member] = {}
        self._names: dict[str, str] = {}
        self._loaded = False
        self._source = source

    def _load(self) -> None:
        self._loaded = True
        for member in self._source.members:
            base = member.basename
            if base.endswith(".dat"):
                self._by_id.setdefault(base[:-4], member)
            elif match := _FILE_ID.match(base):
                self._by_id.setdefault(match.group(1), member)
        names = self._source.member(NAME_MAP)
        if names is not None:
            with names.open() as raw:
                mapping = v.opt_obj(streams.load(raw, 64 * 1024 * 1024, names.where), NAME_MAP)
            for dat, original in mapping.items():
                if isinstance(original, str):
                    self._names[dat.removesuffix(".dat")] = v.clean(original)

    def find(self, file_id: str, name: str) -> ImportedAttachment:
        if not self._loaded:
            self._load()
        member = self._by_id.get(file_id)
        name = self._names.get(file_id, name)
        if member is None:
            return ImportedAttachment(name)
        if name == file_id and not member.basename.endswith(".dat"):
            name = member.basename
        if member.size > MAX_ASSET_BYTES:
            return ImportedAttachment(name)
        mime = mimetypes.guess_type(name)[0]
        return ImportedAttachment(name, data=member.read(MAX_ASSET_BYTES), mime_type=mime)


def convert(raw: Any, where: str, assets: content.AssetLookup) -> ImportedConversation:
    conv = v.obj(raw, where)
    if not isinstance(conv.get("mapping"), dict):
        raise ImportRefusedError(f"{where} is not a conversation (it has no message mapping).")
    source_id = v.ident(conv.get("conversation_id"), f"{where}.conversation_id") or v.ident(
        conv.get("id"), f"{where}.id"
    )
    if source_id is None:
        raise ImportRefusedError(f"{where} has no conversation id.")
    warnings: list[str] = []
    fallbacks = v.Fallbacks(warnings)
    default_model = fallbacks.text(conv.get("default_model_slug"), f"{where}.default_model_slug")
    nodes, ranks = _raw_nodes(conv["mapping"], where, fallbacks)
    times = {
        nid: fallbacks.time(message.get("create_time"), f"{where}: node {nid}.create_time")
        for nid, (_, message) in nodes.items()
        if message is not None
    }
    for nid in nodes:  # not in any children list: after the listed ones, by time
        ranks.setdefault(nid, (1.0, times.get(nid) or 0.0))
    system: list[str] = []
    turn = _Turns(default_model or None, assets, fallbacks, times)
    for node, parent in forest.arrange(
        (
            forest.Node(nid, parent, None, ranks.get(nid, (1.0,)))
            for nid, (parent, _) in nodes.items()
        ),
        warnings,
    ):
        message = nodes[node.id][1]
        at = f"{where}: node {node.id}"
        kind = content.kind(message, at)
        if kind == "context" and message is not None:
            system.append(content.context_text(message, at))
        turn.add(node.id, parent, kind, message, at)
    turn.close()
    tree = forest.build(turn.nodes, warnings)
    aliases = {**tree.aliases, **turn.aliases}
    pointer = v.ident(conv.get("current_node"), f"{where}.current_node")
    imported = ImportedConversation(
        FORMAT,
        source_id,
        fallbacks.text(conv.get("title"), f"{where}.title"),
        tree.messages,
        created_at=fallbacks.time(conv.get("create_time"), f"{where}.create_time"),
        updated_at=fallbacks.time(conv.get("update_time"), f"{where}.update_time"),
        system_prompt="\n\n".join(s for s in system if s),
        warnings=warnings,
    )
    return forest.finish(imported, pointer, aliases)


def _raw_nodes(
    mapping: dict[str, Any], where: str, fallbacks: v.Fallbacks
) -> tuple[dict[str, tuple[str | None, dict[str, Any] | None]], dict[str, tuple[float, ...]]]:
    nodes: dict[str, tuple[str | None, dict[str, Any] | None]] = {}
    ranks: dict[str, tuple[float, ...]] = {}
    for key, raw_node in mapping.items():
        at = f"{where}: node {key}"
        try:
            node = v.obj(raw_node, at)
        except ImportRefusedError as exc:  # nothing to place: its children start branches
            fallbacks.message_left_out(f"Node {key}", exc)
            continue
        node_id = v.ident(node.get("id"), f"{at}.id") or key
        message = node.get("message")
        nodes[node_id] = (
            v.ident(node.get("parent"), f"{at}.parent"),
            None if message is None else v.obj(message, f"{at}.message"),
        )
        for position, child in enumerate(v.arr(node.get("children"), f"{at}.children")):
            child_id = v.ident(child, f"{at}.children[{position}]")
            if child_id is not None:
                ranks.setdefault(child_id, (0.0, float(position)))
    return nodes, ranks


class _Turns:
    """Walks the nodes parents first and folds each answer's chain into one message."""

    def __init__(
        self,
        default_model: str | None,
        assets: content.AssetLookup,
        fallbacks: v.Fallbacks,
        times: dict[str, float | None],
    ) -> None:
        self.nodes: list[forest.Node] = []
        self._fallbacks = fallbacks
        self._times = times  # node id -> its create_time, read once
        self.aliases: dict[str, str] = {}
        self._default_model = default_model
        self._assets = assets
        # node id -> (the message the node hangs below, the answer chain reaching it)
        self._state: dict[str, tuple[str | None, tuple[str, ...]]] = {}
        self._messages: dict[str, tuple[dict[str, Any], str]] = {}
        self._has_children: set[str] = set()
        self._emitted: set[str] = set()
        self._position: dict[str, float] = {}  # node id -> place in the walk (sibling order)

    def add(
        self,
        node_id: str,
        parent: str | None,
        kind: str,
        message: dict[str, Any] | None,
        where: str,
    ) -> None:
        self._position[node_id] = float(len(self._position))
        above, chain = (None, ()) if parent is None else self._state[parent]
        if parent is not None:
            self._has_children.add(parent)
        if kind == "user" and message is not None:
            if chain:
                self._emit(above, chain)
                above = chain[-1]
            user = self._user(node_id, message, where)
            self.nodes.append(forest.Node(node_id, above, user, (self._position[node_id],)))
            self._state[node_id] = (node_id, ())
        elif kind == "turn" and message is not None:
            self._messages[node_id] = (message, where)
            self._state[node_id] = (above, (*chain, node_id))
        else:
            self._state[node_id] = (above, chain)

    def close(self) -> None:
        for node_id, (above, chain) in list(self._state.items()):
            if chain and node_id not in self._has_children:
                self._emit(above, chain)
            if above is not None and node_id not in self.aliases and node_id != above:
                self.aliases[node_id] = above

    def _emit(self, above: str | None, chain: tuple[str, ...]) -> None:
        anchor = chain[-1]
        if anchor in self._emitted:
            return
        self._emitted.add(anchor)
        for node_id in chain[:-1]:  # a pointer into the chain means its first answer
            self.aliases.setdefault(node_id, anchor)
        parts = content.Parts()
        status, created, model = "complete", [], None
        for node_id in chain:
            message, where = self._messages[node_id]
            content.read_node(message, where, self._assets, parts)
            when = self._times.get(node_id)
            if when is not None:
                created.append(when)
            meta = self._fallbacks.obj(message.get("metadata"), f"{where}.metadata")
            model = self._fallbacks.opt_text(meta.get("model_slug"), f"{where}.model_slug") or model
            status = "complete" if message.get("status") != "in_progress" else "stopped"
        answer = ImportedMessage(
            anchor,
            above,
            "assistant",
            "\n\n".join(parts.text),
            created_at=min(created) if created else None,
            model=model or self._default_model,
            reasoning="\n\n".join(parts.reasoning),
            attachments=tuple(parts.attachments),
            trace="\n\n".join(parts.trace),
            status=status,
        )
        self.nodes.append(forest.Node(anchor, above, answer, (self._position[anchor],)))

    def _user(self, node_id: str, message: dict[str, Any], where: str) -> ImportedMessage:
        parts = content.Parts()
        content.read_node(message, where, self._assets, parts)
        return ImportedMessage(
            node_id,
            None,
            "user",
            "\n\n".join(parts.text),
            created_at=self._times.get(node_id),
            attachments=tuple(parts.attachments),
        )


def no_assets(file_id: str, name: str) -> ImportedAttachment:
    """A bare conversations.json holds no files: every attachment is "not in the export"."""
    return ImportedAttachment(name)
