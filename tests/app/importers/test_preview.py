"""The preview the window shows before an import: frozen data per input and format, and
nothing written."""

from __future__ import annotations

import dataclasses
import json
import threading
import zipfile
from pathlib import Path

import pytest

from app.importers.preview import ConversationPreview, preview
from tests.app.importers.helpers import write_json
from tests.app.importers.samples import chatgpt_conversation, claude_conversation


def test_preview_counts_per_format_without_writing(tmp_path: Path) -> None:
    export = tmp_path / "chatgpt.zip"
    data = chatgpt_conversation()
    data["mapping"]["u2"]["message"]["content"] = {
        "content_type": "multimodal_text",
        "parts": [
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-A"},
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-B"},
            "Thanks",
        ],
    }
    with zipfile.ZipFile(export, "w") as archive:
        archive.writestr("conversations.json", json.dumps([data, {"id": "p", "name": "Proj"}]))
        archive.writestr("file-A-a.png", b"png")
    claude = write_json(tmp_path / "claude.json", [claude_conversation()])
    found = preview([export, claude, tmp_path / "nothing-here"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.inputs[0].readable = False  # type: ignore[misc]  # frozen: safe across threads
    chatgpt_input, claude_input, missing = found.inputs
    (summary,) = chatgpt_input.formats
    assert summary.format == "chatgpt"
    assert summary.conversations == (ConversationPreview("conv-1", "Greetings", 7, 3, False),)
    assert (summary.messages, summary.branches) == (7, 3)
    assert summary.attachments_found == 1 and summary.attachments_missing == ("file-B",)
    assert (summary.first, summary.last) == (
        "1970-01-01T00:01:40+00:00",
        "1970-01-01T00:02:11+00:00",
    )
    assert chatgpt_input.problems == (
        "chatgpt.zip/conversations.json, entry 2 is not a conversation (it has no message "
        "mapping).",
    )
    (claude_summary,) = claude_input.formats
    assert claude_summary.format == "claude"
    assert claude_summary.messages == 6 and claude_summary.attachments_missing == ("photo.png",)
    assert any("not in the export" in w for w in claude_summary.warnings)
    assert missing.readable is False and missing.formats == ()
    assert not (tmp_path / "data").exists()


def test_a_cancelled_preview_stops_between_conversations(tmp_path: Path) -> None:
    export = write_json(tmp_path / "claude.json", [claude_conversation()] * 3)
    cancel = threading.Event()
    cancel.set()
    (item,) = preview([export], cancel).inputs
    assert item.formats == ()  # not one conversation read after the cancel
    assert len(preview([export]).inputs[0].formats[0].conversations) == 3
