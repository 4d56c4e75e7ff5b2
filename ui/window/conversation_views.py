"""The store's records turned into the widgets' view models (string ids, plain values).

Sibling positions come from one read of the conversation's whole tree rather than a
`store.siblings` call per message, so a 500-message conversation costs two queries, not 500.
An image's file is looked for in the image store once per render: a file gone shows as missing.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from app.chat.branch_outline import first_words
from app.chat.knowledge.sources import ReplySources
from app.images.store import ImageError, ImageStore, StoredImage, is_image_record
from app.knowledge.excerpts import is_excerpt_record
from app.mcp.tool_info import ToolLabel
from app.store.compaction_records import copy_of, covered_ids, kept_ids, path_summary, stands_for
from app.store.conversations import DEFAULT_TITLE
from ui.widgets.view_models import (
    AttachmentView,
    ConversationRow,
    ImageView,
    MessageView,
    ProjectRow,
    SearchHit,
    SourceView,
    SummaryView,
    ToolCallView,
)

if TYPE_CHECKING:
    from app.store.conversations import Conversation, Message
    from app.store.conversations import SearchHit as StoreSearchHit
    from app.store.project_records import Project


# (message id, model id) -> the name a reply's model is shown by.
ReplyLabel = Callable[[int, str], str]


def message_views(
    path: Sequence[Message],
    tree: Iterable[Message],
    images: ImageStore,
    tools: Mapping[str, ToolLabel] | None = None,
    reply_label: ReplyLabel | None = None,
    sources: Mapping[int, ReplySources] | None = None,
) -> list[MessageView]:
    """The active path as MessageViews, each with its `index/count` among its siblings, its
    images found in `images`, its calls' tools named as `tools` says (by call id; else by
    the name the model called), for a reply whose versions several models wrote, its
    model named by `reply_label`, and for a reply whose turn read knowledge, its `sources`
    (by the reply's id)."""
    tools = tools or {}
    sources = sources or {}
    children: dict[int | None, list[int]] = defaultdict(list)
    models: dict[int, str | None] = {}
    by_id: dict[int, Message] = {}
    for message in tree:  # parents first, ids ascending: the order store.siblings uses
        children[message.parent_id].append(message.id)
        by_id[message.id] = message
        models[message.id] = message.model_id if message.role == "assistant" else None
    left_out = _left_out(path)
    compacted = path_summary(path) is not None
    views = []
    for message in path:
        siblings = children[message.parent_id]
        views.append(
            MessageView(
                id=str(message.id),
                role=message.role,
                content=message.content,
                status=message.status,
                sibling_index=siblings.index(message.id) + 1 if message.id in siblings else 1,
                sibling_count=max(1, len(siblings)),
                stats=message.stats,
                error=message.error,
                left_out=message.id in left_out,
                reasoning=message.reasoning,
                attachments=tuple(
                    AttachmentView.from_record(item)
                    for item in message.attachments
                    if not is_image_record(item) and not is_excerpt_record(item)
                ),
                images=tuple(
                    image_view(item, images)
                    for item in message.attachments
                    if is_image_record(item)
                ),
                trace=message.trace,
                model_label=_model_label(message),
                model_name=_model_name(message, siblings, models, reply_label),
                tool_calls=tuple(_call_view(call, tools) for call in message.tool_calls),
                tool_name=message.tool_name,
                summary=summary_view(message, by_id) if message.role == "summary" else None,
                kept_copy=copy_of(message) is not None,
                compacted=compacted,
                sources=source_views(sources.get(message.id)),
            )
        )
    return views


def source_views(found: ReplySources | None) -> tuple[SourceView, ...]:
    if found is None:
        return ()
    return tuple(
        SourceView(
            s.number,
            s.excerpt.collection,
            s.excerpt.path,
            s.excerpt.page,
            s.excerpt.heading,
            s.excerpt.text,
            s.state.value,
            s.excerpt.start,
            s.excerpt.end,
            s.excerpt.document_sha256,
        )
        for s in found.sources
    )


def _call_view(call: dict[str, Any], tools: Mapping[str, ToolLabel]) -> ToolCallView:
    label = tools.get(call["id"], ToolLabel("", call["name"]))
    arguments = json.dumps(call["arguments"], ensure_ascii=False)
    return ToolCallView(call["id"], label.name, arguments, label.server)


def _model_label(message: Message) -> str:
    """A finished reply without statistics was not written here (an import): its model is a
    label only (e.g. "gpt-4o"), shown where the statistics line goes."""
    written_here = bool(message.stats) or copy_of(message) is not None  # a copy has none
    if message.role == "assistant" and message.status == "complete" and not written_here:
        return message.model_id or ""
    return ""


def _model_name(
    message: Message,
    siblings: list[int],
    models: Mapping[int, str | None],
    reply_label: ReplyLabel | None,
) -> str:
    """The model of a reply whose versions were written by more than one model."""
    if reply_label is None or message.role != "assistant" or not message.model_id:
        return ""
    if len({models.get(i) for i in siblings} - {None}) < 2:
        return ""
    return reply_label(message.id, message.model_id)


def summary_view(summary: Message, by_id: Mapping[int, Message]) -> SummaryView:
    """What a summary stands for, its covered messages named by their first words (those
    deleted since by none)."""
    covers = covered_ids(summary)
    ends = [by_id.get(i) for i in (covers[:1] + covers[-1:])]
    first, last = (first_words(m.content, 6) if m is not None else "" for m in ends or [None, None])
    return SummaryView(
        len(covers),
        stands_for(summary),
        len(kept_ids(summary)),
        first,
        last,
        bool(summary.compaction.get("edited")),
    )


def image_view(record: dict[str, Any], images: ImageStore) -> ImageView:
    """An image record as its chip shows it; a record the store cannot name a file for (its
    file gone, or a digest that is no digest) shows as missing."""
    try:
        found = StoredImage.from_record(record)
        path = str(images.path(found.sha256)) if images.exists(found.sha256) else None
    except ImageError:
        return ImageView(str(record.get("name", "image")), 0, 0, 0, "", 0, "", None)
    return ImageView(
        found.name,
        found.size,
        found.width,
        found.height,
        found.format,
        int(record.get("tokens", 0)),
        found.sha256,
        path,
    )


def _left_out(path: Sequence[Message]) -> set[int]:
    """The messages the overflow policy left out of the latest finished reply's prompt."""
    for message in reversed(path):
        if message.role == "assistant" and message.stats:
            return set(message.stats.get("dropped_message_ids", ()))
    return set()


_TITLE_CHARS = 48


def title_from(text: str) -> str:
    """A conversation title from its first message: the first line, shortened at a word."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), DEFAULT_TITLE)
    if len(line) <= _TITLE_CHARS:
        return line
    cut = line[:_TITLE_CHARS].rsplit(" ", 1)[0] or line[:_TITLE_CHARS]
    return cut.rstrip(" ,.;:") + "…"


def conversation_rows(conversations: Iterable[Conversation]) -> list[ConversationRow]:
    return [
        ConversationRow(
            id=str(c.id),
            title=c.title,
            pinned=c.pinned,
            updated_at=datetime.fromtimestamp(c.updated_at),
            project_id="" if c.project_id is None else str(c.project_id),
        )
        for c in conversations
    ]


def project_rows(
    projects: Iterable[Project], conversations: Iterable[Conversation]
) -> list[ProjectRow]:
    """The sidebar's project groups, in the store's order, each with its count of chats."""
    counts = Counter(c.project_id for c in conversations)
    return [ProjectRow(str(p.id), p.name, p.collapsed, counts[p.id]) for p in projects]


# A result shows two lines or so of its snippet: the text before the first match is cut to this
# many characters, so the highlighted words are in sight.
_LEAD_CHARS = 24


def _lead_to_match(spans: tuple[tuple[str, bool], ...]) -> tuple[tuple[str, bool], ...]:
    if len(spans) < 2 or spans[0][1] or len(spans[0][0]) <= _LEAD_CHARS:
        return spans
    lead = spans[0][0][-_LEAD_CHARS:]
    cut = lead.find(" ")  # start at a word
    return (("…" + (lead[cut + 1 :] if 0 <= cut < len(lead) - 1 else lead), False), *spans[1:])


def search_hits(hits: Iterable[StoreSearchHit]) -> list[SearchHit]:
    """One result per conversation, at its best match (the store ranks best first), with the
    number of its matches. A title match has no message: its message id is the empty string."""
    best: dict[int, StoreSearchHit] = {}
    counts: Counter[int] = Counter()
    for hit in hits:
        best.setdefault(hit.conversation_id, hit)
        counts[hit.conversation_id] += 1
    views = []
    for cid, hit in best.items():
        # Line breaks and runs of spaces become one space: the snippet shows as one paragraph.
        spans = _lead_to_match(
            tuple((re.sub(r"\s+", " ", text), match) for text, match in hit.spans)
        )
        views.append(
            SearchHit(
                conversation_id=str(cid),
                message_id="" if hit.message_id is None else str(hit.message_id),
                title=hit.title,
                snippet="".join(text for text, _ in spans).strip(),
                spans=spans,
                matches=counts[cid],
            )
        )
    return views
