"""Knowledge excerpts in a user turn: the excerpts retrieved for a message, kept on it as records
(`app.knowledge.excerpts.Excerpt.as_record`, in its `attachments` list beside files and images),
rendered ahead of its files and the person's text in one fixed wrapper.

Each excerpt is numbered from [1] in the order retrieved (best first) so the model can cite it,
headed by its collection, its file's name (never the folder it lies in), its page and heading,
then its text in a fence it cannot close. The block depends on nothing but the stored records,
so a later turn, a regenerate or a branch switch renders the turn token for token as before and
the engine's cache reuses it, whatever happened to the files since. It goes into the turn that
asked and nowhere else: never the system prompt, never an earlier message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from app.generation.attachments import fence_for
from app.knowledge.excerpts import Excerpt, is_excerpt_record

INTRO = "Excerpts from the person's documents, retrieved for this message (cite them as [1], [2]…):"


def excerpts_of(attachments: Sequence[Mapping[str, Any]]) -> list[Excerpt]:
    """The knowledge excerpts a message keeps, in the order retrieved (damaged records, which
    the store never lets in, are left out rather than failing a whole chat)."""
    found = []
    for record in attachments:
        if is_excerpt_record(record):
            try:
                found.append(Excerpt.from_record(record))
            except ValueError:
                continue
    return found


def source_line(number: int, excerpt: Excerpt) -> str:
    """The heading of excerpt `number` as the model reads it."""
    parts = [f"Collection: {excerpt.collection}", f"File: {PurePath(excerpt.path).name}"]
    if excerpt.page is not None:
        parts.append(f"Page: {excerpt.page}")
    if excerpt.heading:
        parts.append(f"Section: {excerpt.heading}")
    if excerpt.whole_document:
        parts.append("(the whole file)")
    return f"[{number}] " + " · ".join(parts)


def knowledge_block(attachments: Sequence[Mapping[str, Any]]) -> str:
    """The excerpts of a message as its turn shows them ("" when it has none)."""
    excerpts = excerpts_of(attachments)
    if not excerpts:
        return ""
    entries = [excerpt_entry(number, e) for number, e in enumerate(excerpts, start=1)]
    return "\n\n".join([INTRO, *entries])


def excerpt_entry(number: int, excerpt: Excerpt) -> str:
    """One excerpt: its heading, then its text in a fence it cannot close."""
    fence = fence_for(excerpt.text)
    return f"{source_line(number, excerpt)}\n{fence}\n{excerpt.text}\n{fence}"


def with_knowledge(text: str, attachments: Sequence[Mapping[str, Any]]) -> str:
    """`text` (a message's files and words, as `with_attachments` wrote them) preceded by the
    message's knowledge excerpts, when it has any."""
    block = knowledge_block(attachments)
    return f"{block}\n\n{text}" if block else text


def without_excerpts(attachments: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A message's attachments less its knowledge excerpts: what an edit carries over (the new
    version retrieves its own)."""
    return [item for item in attachments if not is_excerpt_record(item)]
