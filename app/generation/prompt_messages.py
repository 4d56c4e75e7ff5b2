"""A path of the tree as the model's chat messages: the system prompt, each message with its
attached files wrapped ahead of its text, a reply's tool calls in OpenAI's shape and each tool
result as a `tool` message, exactly as stored, so every later turn renders the earlier ones
token for token the same and the cache reuses them."""

from __future__ import annotations

from typing import Any

from app.generation.attachments import with_attachments
from app.store.conversations import Store
from app.store.records import Message


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


def chat_message(message: Message, content: str) -> dict[str, Any]:
    """One stored message as a chat message; `content` is its text as the prompt shows it."""
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


def prompt_messages(store: Store, conversation_id: int, path: list[Message]) -> list[dict]:
    """The chat messages for the model: the conversation's system prompt, if any, then `path`
    (a message's attached files wrapped ahead of its text; a reply's answer without its
    reasoning, as reasoning templates drop earlier thoughts themselves)."""
    system = store.get_conversation(conversation_id).system_prompt
    messages = [{"role": "system", "content": system}] if system.strip() else []
    messages += [chat_message(m, with_attachments(m.content, m.attachments)) for m in path]
    return messages
