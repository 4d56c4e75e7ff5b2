"""One check of message roles, statuses and content: the store's JSON import and the server's
chat requests refuse wrong types with a sentence (they leaked a TypeError / a 500 before)."""

from __future__ import annotations

import pytest

from app.server import openai_schema
from app.server.guard import ApiError
from app.store import export as store_export
from app.store.records import InvalidInputError

WRONG = [{"a": 1}, ["user"], 3, None, True]


def _export(role: object = "user", status: object = "complete") -> dict:
    message = {
        "id": 1,
        "parent_id": None,
        "role": role,
        "content": "hi",
        "created_at": 1.0,
        "status": status,
    }
    return {
        "format": "branchwise-conversation",
        "version": 2,
        "conversation": {"title": "t", "created_at": 1.0, "updated_at": 1.0},
        "messages": [message],
    }


@pytest.mark.parametrize("value", WRONG)
def test_the_store_import_refuses_a_role_or_status_of_the_wrong_type(value: object) -> None:
    with pytest.raises(InvalidInputError, match=r"messages\[0\]: Unknown role"):
        store_export.from_json(_export(role=value))
    with pytest.raises(InvalidInputError, match=r"messages\[0\]: Unknown status"):
        store_export.from_json(_export(status=value))


@pytest.mark.parametrize("value", [*WRONG, "robot"])
def test_a_chat_request_with_a_bad_role_is_a_400_naming_the_field(value: object) -> None:
    body = {"model": "m", "messages": [{"role": value, "content": "hi"}]}
    with pytest.raises(ApiError) as caught:
        openai_schema.parse_chat(body, 16)
    assert caught.value.status == 400
    assert caught.value.param == "messages[0].role"
    assert "Unknown role" in caught.value.message


@pytest.mark.parametrize(
    "content",
    [{"text": "x"}, [{"type": "image_url"}], [{"type": "text", "text": {"x": 1}}], ["x"], 5],
)
def test_a_chat_request_with_bad_content_is_a_400(content: object) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": content}]}
    with pytest.raises(ApiError) as caught:
        openai_schema.parse_chat(body, 16)
    # An image part names itself more precisely (messages[0].content[0].image_url).
    assert caught.value.status == 400
    assert caught.value.param.startswith("messages[0].content")


def test_good_messages_still_parse() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "developer", "content": "be brief"},
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
        ],
    }
    parsed = openai_schema.parse_chat(body, 16)
    assert parsed.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "ab"},
    ]


def test_a_tool_message_without_its_call_id_is_a_400_naming_the_field() -> None:
    body = {"model": "m", "messages": [{"role": "tool", "content": "21"}]}
    with pytest.raises(ApiError) as caught:
        openai_schema.parse_chat(body, 16)
    assert caught.value.status == 400
    assert caught.value.param == "messages[0].tool_call_id"
