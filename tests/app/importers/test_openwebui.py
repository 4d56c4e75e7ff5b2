"""Open WebUI's chat export: parents and sibling order from the history, `currentId` shown,
reasoning taken out of the text, the system prompt, inline images kept."""

from __future__ import annotations

from pathlib import Path

from tests.app.importers.helpers import by_id, conversations, refusals, shape, write_json
from tests.app.importers.samples import openwebui_export


def test_the_tree_message_by_message(tmp_path: Path) -> None:
    path = write_json(tmp_path / "chat-export-1700000000000.json", openwebui_export())
    (conv,) = conversations(path)
    assert shape(conv) == [
        ("u1", None, "user", "Question?"),
        ("a1", "u1", "assistant", "The answer."),
        ("u2", "a1", "user", "Ok"),
        ("a2", "u2", "assistant", "Bye."),
        ("a1b", "u1", "assistant", "Other answer."),
    ]
    messages = by_id(conv)
    assert messages["a1"].reasoning == "Think & answer."
    assert messages["a1"].model == "qwen3:14b"
    image, document = messages["u1"].attachments
    assert image.data == b"\x89PNG\r\n\x1a\n" and image.mime_type == "image/png"
    assert (document.name, document.missing) == ("doc.pdf", True)
    assert conv.active_leaf_id == "a1b"
    assert conv.system_prompt == "Be kind."
    assert (conv.source_id, conv.title, conv.created_at) == ("owui-1", "Web chat", 1700000000.0)
    # The folder record first in the file is refused on its own; the chat still came in.
    (refused,) = refusals(path)
    assert refused.where.endswith("entry 1")


def test_a_single_chat_object_is_read_too(tmp_path: Path) -> None:
    (conv,) = conversations(write_json(tmp_path / "one.json", openwebui_export()[1]))
    assert len(conv.messages) == 5
