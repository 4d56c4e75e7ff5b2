"""Files in the forms other apps wrote before today's: SillyTavern's 2023 chats (dates as epoch
milliseconds and `humanizedDateTime` text), a Claude export with a null message, and
text-generation-webui's `data`/`data_visible` history. Each imports whole; what cannot be read
is left out with a warning."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from app.importers import run
from app.store.conversations import Store
from tests.app.importers.helpers import conversations, read_entries, write_json, write_jsonl
from tests.app.importers.samples import claude_conversation


def _sillytavern_2023(create_date: object, send_dates: list[object]) -> list[dict[str, Any]]:
    header = {
        "user_name": "You",
        "character_name": "Coding Sensei",
        "create_date": create_date,
        "chat_metadata": {},
    }
    texts = ["Welcome to the dojo.", "Teach me Python.", "First, indentation."]
    return [
        header,
        *(
            {
                "name": "You" if i % 2 else "Coding Sensei",
                "is_user": bool(i % 2),
                "is_name": True,
                "send_date": when,
                "mes": text,
            }
            for i, (text, when) in enumerate(zip(texts, send_dates, strict=True))
        ),
    ]


@pytest.mark.parametrize(
    "create_date, send_dates, expected",
    [
        (
            1684080986211,
            [1684080986211, 1684081046000, "1684081106000"],
            [1684080986.211, 1684081046.0, 1684081106.0],
        ),
        (
            "2023-1-22 @14h 3m 12s 34ms",
            ["2023-1-22 @14h 3m 12s 34ms", "January 22, 2023 2:03pm", "2023-01-22T14:05:00Z"],
            [
                datetime(2023, 1, 22, 14, 3, 12, 34000).timestamp(),
                datetime(2023, 1, 22, 14, 3).timestamp(),
                1674396300.0,
            ],
        ),
        (
            "2025-05-11@19h32m07s",
            ["May 11, 2025 7:32 pm", "2025-05-11@19h33m00s", None],
            [
                datetime(2025, 5, 11, 19, 32).timestamp(),
                datetime(2025, 5, 11, 19, 33).timestamp(),
                None,
            ],
        ),  # no date (the writer gives it its parent's)
    ],
)
def test_sillytavern_dates_of_every_form_import(
    tmp_path: Path, create_date: object, send_dates: list[object], expected: list[float | None]
) -> None:
    path = write_jsonl(
        tmp_path / "Coding Sensei - 2023-5-14 @19h 36m 26s 211ms.jsonl",
        _sillytavern_2023(create_date, send_dates),
    )
    (conv,) = conversations(path)
    assert [m.role for m in conv.messages] == ["assistant", "user", "assistant"]
    assert [m.created_at for m in conv.messages] == expected
    assert conv.source_id == f"Coding Sensei|{create_date}"
    assert conv.warnings == []


def test_a_sillytavern_date_that_cannot_be_read_is_left_out_with_a_warning(
    tmp_path: Path,
) -> None:
    lines = _sillytavern_2023({"when": "later"}, ["someday", True, 1684081106000])
    (conv,) = conversations(write_jsonl(tmp_path / "Coding Sensei.jsonl", lines))
    assert [m.content for m in conv.messages][2] == "First, indentation."
    assert conv.source_id == "Coding Sensei"  # the file's name stands in for the lost date
    assert conv.messages[0].created_at is None and conv.messages[2].created_at == 1684081106.0
    assert len(conv.warnings) == 3
    assert "line 2.send_date is not a time that can be read ('someday')" in conv.warnings[0]


def test_a_null_claude_message_is_left_out_and_the_rest_imports(tmp_path: Path) -> None:
    data = claude_conversation()
    data["chat_messages"].insert(2, None)
    path = write_json(tmp_path / "conversations.json", [data])
    with Store.open(tmp_path / "store" / "conversations.sqlite3") as store:
        report = run.import_paths([path], store)
        (outcome,) = report.inputs[0].outcomes
        assert outcome.status == "imported" and outcome.new_messages == 6
        assert [m.content for m in store.all_messages(outcome.conversation_id)][:2] == [
            "Read this\nplease",
            "It says hello.",
        ]
    (warning,) = [w for w in outcome.warnings if "Message 3" in w]
    assert "must be an object, not nothing" in warning and warning.endswith("left out.")


def test_textgen_webui_history_before_internal_and_visible(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "logs" / "Example.json",
        {
            "data": [["<|BEGIN-VISIBLE-CHAT|>", "Hello there."], ["What is 2+2?", "It is 4."]],
            "data_visible": [["", "Hello there."], ["What is 2+2?", "It is 4."]],
        },
    )
    formats, _ = read_entries(path)
    assert formats == ["textgen"]
    (conv,) = conversations(path)
    assert [(m.role, m.content) for m in conv.messages] == [
        ("assistant", "Hello there."),
        ("user", "What is 2+2?"),
        ("assistant", "It is 4."),
    ]
    assert conv.title == "What is 2+2?" and conv.source_id == "Example"
