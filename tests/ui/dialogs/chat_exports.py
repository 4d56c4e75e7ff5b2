"""A small ChatGPT export zip for the window's import tests and screenshots: conversations with
edits and regenerations (branches), reasoning, a tool trace, an image found in the zip and one
missing, and a project record that is no conversation (refused on its own)."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path
from typing import Any

from tests.app.importers.samples import chatgpt_conversation

# 2026-03-02 10:00 UTC: the samples' times (100 s and on) moved to a believable date.
_EPOCH = 1_772_445_600.0
TITLES = ("Greetings", "Trip to Vienna", "Sourdough starter")


def conversation(index: int, title: str) -> dict[str, Any]:
    data = copy.deepcopy(chatgpt_conversation())
    data.update(title=title, id=f"conv-{index}", conversation_id=f"conv-{index}")
    for node in data["mapping"].values():
        message = node["message"]
        if message is not None and message["create_time"] is not None:
            message["create_time"] += _EPOCH + index * 86_400
    data["create_time"] += _EPOCH + index * 86_400
    data["update_time"] += _EPOCH + index * 86_400
    return data


def with_images(data: dict[str, Any]) -> dict[str, Any]:
    """u2 carries an image the zip holds (cat.png) and one it does not (gone.jpg)."""
    u2 = data["mapping"]["u2"]["message"]
    u2["content"] = {
        "content_type": "multimodal_text",
        "parts": [
            {
                "content_type": "image_asset_pointer",
                "asset_pointer": "file-service://file-AbC123",
                "size_bytes": 4,
            },
            {"content_type": "image_asset_pointer", "asset_pointer": "sediment://file_missing9"},
            "Thanks",
        ],
    }
    u2["metadata"] = {
        "attachments": [
            {"id": "file-AbC123", "name": "cat.png"},
            {"id": "file_missing9", "name": "gone.jpg"},
        ]
    }
    return data


def chatgpt_export(path: Path, titles: tuple[str, ...] = TITLES) -> Path:
    """The zip at `path`: one conversation per title (7 messages and 3 branches each), the
    first with the images, then a project record."""
    chats = [conversation(i, title) for i, title in enumerate(titles)]
    with_images(chats[0])
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "conversations.json", json.dumps([*chats, {"id": "proj", "name": "A project"}])
        )
        archive.writestr("file-AbC123-cat.png", b"\x89PNG")
    return path
