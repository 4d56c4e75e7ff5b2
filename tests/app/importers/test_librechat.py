"""LibreChat's export, flat and nested: parents from `parentMessageId`, agent parts, the
newest leaf shown, an unfinished reply kept as stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.importers.helpers import by_id, conversations, shape, write_json
from tests.app.importers.samples import librechat_export


@pytest.mark.parametrize("recursive", [False, True])
def test_the_tree_message_by_message(tmp_path: Path, recursive: bool) -> None:
    (conv,) = conversations(write_json(tmp_path / "lc.json", librechat_export(recursive)))
    assert shape(conv) == [
        ("u1", None, "user", "Start"),
        ("a1", "u1", "assistant", "Answer one."),
        ("u2", "a1", "user", "More"),
        ("a2", "u2", "assistant", "Partial"),
        ("a1b", "u1", "assistant", "Answer two."),
    ]
    messages = by_id(conv)
    assert messages["a1"].reasoning == "Hmm."
    assert messages["a2"].status == "stopped"
    assert messages["a1b"].model == "gpt-4o" and messages["u1"].model is None
    assert conv.active_leaf_id == "a2"  # the newest leaf
    assert conv.system_prompt == "System here."
    assert conv.title == "Libre"
