"""What one ChatGPT export node holds (`message.content` by `content_type`): visible text,
reasoning (`thoughts`), tool trace (code sent to a tool, a tool's output) and attached images;
and which nodes are hidden. Shapes as seen in exports 2024-2026 (see the history-import notes);
an unknown content type is kept in the trace by name, never dropped silently."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.importers import values as v
from app.importers.tree import ImportedAttachment

# Finds the bytes of an asset pointer's file in the export: (pointer, name) -> attachment.
AssetLookup = Callable[[str, str], ImportedAttachment]
_HIDDEN_CONTEXT = frozenset({"model_editable_context"})


@dataclass(slots=True)
class Parts:
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    attachments: list[ImportedAttachment] = field(default_factory=list)


def kind(message: dict[str, Any] | None, where: str) -> str:
    """ "hidden", "context" (custom instructions), "user" or "turn" (part of an answer)."""
    if message is None:
        return "hidden"
    author = v.opt_obj(message.get("author"), f"{where}.author")
    role = v.text(author.get("role"), f"{where}.author.role")
    meta = v.opt_obj(message.get("metadata"), f"{where}.metadata")
    content = v.opt_obj(message.get("content"), f"{where}.content")
    ctype = v.text(content.get("content_type"), f"{where}.content.content_type")
    if ctype == "user_editable_context" or meta.get("is_user_system_message") is True:
        return "context"
    if ctype in _HIDDEN_CONTEXT or role == "system":
        return "hidden"
    if meta.get("is_visually_hidden_from_conversation") is True:
        return "hidden"
    return "user" if role == "user" else "turn"


def context_text(message: dict[str, Any], where: str) -> str:
    """Custom instructions as system-prompt text."""
    content = v.opt_obj(message.get("content"), f"{where}.content")
    pieces = [
        v.text(content.get(key), f"{where}.content.{key}")
        for key in ("user_profile", "user_instructions")
    ]
    pieces += [
        v.text(p, f"{where}.content.parts")
        for p in v.arr(content.get("parts"), where)
        if isinstance(p, str)
    ]
    return "\n\n".join(p.strip() for p in pieces if p.strip())


def read_node(message: dict[str, Any], where: str, assets: AssetLookup, into: Parts) -> None:
    """Add the node's text, reasoning, trace and attachments to `into`."""
    author = v.opt_obj(message.get("author"), f"{where}.author")
    role = v.text(author.get("role"), f"{where}.author.role")
    tool = v.text(author.get("name"), f"{where}.author.name") or "tool"
    recipient = v.text(message.get("recipient"), f"{where}.recipient") or "all"
    content = v.opt_obj(message.get("content"), f"{where}.content")
    ctype = v.text(content.get("content_type"), f"{where}.content.content_type")
    meta = v.opt_obj(message.get("metadata"), f"{where}.metadata")
    names = _attachment_names(meta, where)
    if ctype in ("text", "multimodal_text"):
        words: list[str] = []
        for index, part in enumerate(v.arr(content.get("parts"), f"{where}.content.parts")):
            _part(part, f"{where}.content.parts[{index}]", assets, names, words, into)
        joined = "\n\n".join(w for w in words if w)
        if role == "tool":
            if joined.strip():
                into.trace.append(f"Output of {tool}:\n{joined}")
        elif recipient != "all":
            into.trace.append(f"Sent to {recipient}:\n{joined}")
        elif joined:
            into.text.append(v.strip_citations(joined) if role == "assistant" else joined)
    elif ctype == "code":
        code = v.text(content.get("text"), f"{where}.content.text")
        into.trace.append(f"Code for {recipient if recipient != 'all' else tool}:\n{code}")
    elif ctype == "execution_output":
        output = v.text(content.get("text"), f"{where}.content.text")
        into.trace.append(f"Output of {tool}:\n{output}")
    elif ctype == "thoughts":
        for index, thought in enumerate(v.arr(content.get("thoughts"), f"{where}.thoughts")):
            item = v.obj(thought, f"{where}.content.thoughts[{index}]")
            said = v.text(item.get("content"), f"{where}.thoughts[{index}].content")
            said = said or v.text(item.get("summary"), f"{where}.thoughts[{index}].summary")
            if said.strip():
                into.reasoning.append(said.strip())
    elif ctype == "reasoning_recap":
        return  # "Thought for 8s": the reasoning itself is kept
    elif ctype == "tether_browsing_display":
        result = v.text(content.get("result"), f"{where}.content.result")
        if result.strip():
            into.trace.append(f"Output of {tool}:\n{result}")
    elif ctype == "tether_quote":
        quote = v.text(content.get("text"), f"{where}.content.text")
        url = v.text(content.get("url"), f"{where}.content.url")
        into.trace.append(f"Quote from {url}:\n{quote}")
    else:
        into.trace.append(f"({ctype or 'unknown content'} from {tool if role == 'tool' else role})")


def _part(
    part: object,
    where: str,
    assets: AssetLookup,
    names: dict[str, str],
    words: list[str],
    into: Parts,
) -> None:
    if isinstance(part, str):
        words.append(v.clean(part))
        return
    item = v.obj(part, where)
    ptype = v.text(item.get("content_type"), f"{where}.content_type")
    if ptype == "audio_transcription":
        words.append(v.text(item.get("text"), f"{where}.text"))
    elif ptype in ("image_asset_pointer", "audio_asset_pointer"):
        pointer = v.text(item.get("asset_pointer"), f"{where}.asset_pointer")
        file_id = pointer.rsplit("/", 1)[-1]
        into.attachments.append(assets(file_id, names.get(file_id, file_id)))
    elif ptype == "real_time_user_audio_video_asset_pointer":
        audio = v.opt_obj(item.get("audio_asset_pointer"), f"{where}.audio_asset_pointer")
        pointer = v.text(audio.get("asset_pointer"), f"{where}.audio_asset_pointer")
        if pointer:
            file_id = pointer.rsplit("/", 1)[-1]
            into.attachments.append(assets(file_id, names.get(file_id, file_id)))
    else:
        into.trace.append(f"({ptype or 'unknown part'})")


def _attachment_names(meta: dict[str, Any], where: str) -> dict[str, str]:
    names = {}
    for index, item in enumerate(v.arr(meta.get("attachments"), f"{where}.attachments")):
        entry = v.obj(item, f"{where}.metadata.attachments[{index}]")
        file_id = v.ident(entry.get("id"), f"{where}.metadata.attachments[{index}].id")
        name = v.text(entry.get("name"), f"{where}.metadata.attachments[{index}].name")
        if file_id and name:
            names[file_id] = name
    return names
