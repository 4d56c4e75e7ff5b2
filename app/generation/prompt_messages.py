"""A path of the tree as the model's chat messages: the system prompt, each message with its
knowledge excerpts and attached files wrapped ahead of its text, a reply's tool calls in
OpenAI's shape and each tool result as a `tool` message, exactly as stored, so every later turn
renders the earlier ones token for token the same and the cache reuses them.

A message with images becomes content parts: each image (its file in the image store, in the
order attached), then one text part with the wrapped files and the person's text. A message
without images stays a plain string, so a text-only chat renders exactly as it always has. An
image whose file is gone leaves the history readable; `missing_image` says which, so a reply
on that branch fails with that sentence instead of reaching the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app.generation.attachments import with_attachments
from app.generation.knowledge_block import with_knowledge
from app.images.store import ImageStore, is_image_record
from app.store.compaction_records import path_summary
from app.store.conversations import Store
from app.store.records import Message

# What the model reads ahead of a compacted branch's summary.
SUMMARY_INTRO = (
    "The conversation so far has been summarised; the earlier messages are not shown. Summary:"
)

# The image detail a model is given (its id; None: no model named), as Preferences keeps it
# per model: the longest edge in pixels, None for what the model's processor takes.
ImageDetailFor = Callable[[str | None], int | None]


def no_detail(_model_id: str | None) -> None:
    """Every model sees images as its processor sizes them (tests, callers without settings)."""
    return None


def call_entries(message: Message) -> list[dict[str, Any]]:
    """A reply's calls as chat templates take them: `{"id", "type": "function", "function":
    {"name", "arguments": dict}}`."""
    return [
        {
            "id": call["id"],
            "type": "function",
            "function": {"name": call["name"], "arguments": call["arguments"]},
        }
        for call in message.tool_calls
    ]


def chat_message(message: Message, content: str | list[dict[str, Any]]) -> dict[str, Any]:
    """One stored message as a chat message; `content` is its text (or parts) as the prompt
    shows it."""
    if message.role == "tool":
        entry: dict[str, Any] = {"role": "tool", "content": content}
        if message.tool_call_id:
            entry["tool_call_id"] = message.tool_call_id
        if message.tool_name:
            entry["name"] = message.tool_name
        return entry
    entry = {"role": message.role, "content": content}
    if message.role == "assistant" and message.tool_calls:
        entry["tool_calls"] = call_entries(message)
    return entry


def message_content(
    text: str,
    attachments: Sequence[dict[str, Any]],
    images: ImageStore,
    detail: int | None = None,
) -> str | list[dict[str, Any]]:
    """What the model is given for a message (or a draft): its knowledge excerpts, then its
    text with the wrapped files, preceded by image parts when it has images. `detail` is the
    longest edge, in pixels, the model is shown each image at (None: what its processor
    takes)."""
    wrapped = with_knowledge(with_attachments(text, attachments), attachments)
    pictures = [item for item in attachments if is_image_record(item)]
    if not pictures:
        return wrapped
    parts: list[dict[str, Any]] = []
    for record in pictures:
        part: dict[str, Any] = {"type": "image", "image": str(images.path(record["sha256"]))}
        if detail is not None:
            part["detail"] = detail
        parts.append(part)
    return [*parts, {"type": "text", "text": wrapped}]


def prompt_messages(
    store: Store, conversation_id: int, path: list[Message], detail: int | None = None
) -> list[dict]:
    """The chat messages for the model: the conversation's system prompt, if any, then `path`
    (a message's images and attached files ahead of its text; a reply's answer without its
    reasoning, as reasoning templates drop earlier thoughts themselves). A compacted branch's
    summary goes in the system message, after the system prompt: it stands where the earlier
    turns stood, and any template that takes a system prompt takes it, user and assistant
    still alternating after it."""
    system = store.get_conversation(conversation_id).system_prompt
    if (summary := path_summary(path)) is not None:
        system, path = summary_system(system, summary.content), path[1:]
    messages = [{"role": "system", "content": system}] if system.strip() else []
    messages += [
        chat_message(m, message_content(m.content, m.attachments, store.images, detail))
        for m in path
    ]
    return messages


def summary_system(system: str, summary: str) -> str:
    """The system message of a compacted branch: the chat's system prompt, then its summary."""
    told = f"{SUMMARY_INTRO}\n\n{summary.strip()}"
    return f"{system.rstrip()}\n\n{told}" if system.strip() else told


def missing_image(store: Store, path: list[Message]) -> str | None:
    """Why `path` cannot be continued when an image it holds is gone from the data folder (a
    sentence naming the image), else None."""
    for message in path:
        for record in message.attachments:
            if is_image_record(record) and not store.images.exists(record["sha256"]):
                return (
                    f"The image {record['name']} is missing from the data folder, so this "
                    "branch cannot be continued. Edit the message to attach it again, or "
                    "continue from another branch."
                )
    return None
