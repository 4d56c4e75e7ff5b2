"""Tool use through Import Chats and `branchwise import`: a conversation with tool calls, their
results and the final reply, exported (`branchwise export`, or one conversation's JSON) and
imported into a fresh store, comes back with every call, call id and tool name, so the model
is shown the same history; a malformed call is left out with a warning, never the
conversation."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from app.generation.prompt_messages import chat_message
from app.importers import run
from app.importers.cli import main
from app.store.conversations import Store
from app.store.records import Message
from tests.app.importers.helpers import write_json

_WEATHER = {"id": "call_1", "name": "weather__get_weather", "arguments": {"city": "Oslo"}}
_TIME = {
    "id": "call_2",
    "name": "clock__now",
    "arguments": {"zone": "Europe/Oslo", "nested": {"a": [1, 2.5, None]}},
}


def _database(folder: Path) -> Path:
    return folder / "conversations.sqlite3"


def _tool_chat(store: Store) -> int:
    """A chat made as the app makes one: a reply with two calls, a result for each (the second
    failed), the final reply; and a sibling reply whose calls the person edited."""
    conversation = store.create_conversation(
        "Weather", model_id="local/model", system_prompt="Use tools."
    )
    question = store.append_message(conversation.id, None, "user", "Weather and time in Oslo?")
    reply = store.begin_reply(conversation.id, question.id, "local/model", {"temperature": 0.2})
    store.finish_reply(
        reply.id,
        "Let me check.",
        stats={"tokens": 12},
        reasoning="Two tools.",
        tool_calls=[_WEATHER, _TIME],
        provenance={"engine": "mlx"},
    )
    edited = store.edit_tool_calls(reply.id, [{**_WEATHER, "arguments": {"city": "Bergen"}}])
    store.add_tool_result(edited.id, "call_1", "weather__get_weather", "Rain, 9C")
    store.switch_to_sibling(reply.id)
    weather = store.add_tool_result(
        reply.id,
        "call_1",
        "weather__get_weather",
        "Sunny, 4C",
        stats={"server": "weather", "tool": "get_weather", "duration_s": 0.5, "chars": 9},
    )
    clock = store.add_tool_result(
        weather.id,
        "call_2",
        "clock__now",
        "The clock server is gone.",
        status="error",
        error="server exited",
    )
    final = store.begin_reply(conversation.id, clock.id, "local/model")
    store.finish_reply(final.id, "It is sunny and 4C in Oslo; I could not read the time.")
    return conversation.id


def _tree(store: Store, conversation_id: int) -> list[Message]:
    """Every message with its ids made positions in the tree (the import gives new ones)."""
    messages = store.all_messages(conversation_id)
    position = {m.id: i for i, m in enumerate(messages)}
    return [
        dataclasses.replace(
            m,
            id=position[m.id],
            conversation_id=0,
            parent_id=None if m.parent_id is None else position[m.parent_id],
        )
        for m in messages
    ]


def _prompt(store: Store, conversation_id: int) -> list[dict[str, Any]]:
    """The active path as the model is given it when the chat continues."""
    return [chat_message(m, m.content) for m in store.active_path(conversation_id)]


def _only(store: Store) -> int:
    (conversation,) = store.list_conversations(include_archived=True)
    return conversation.id


def test_branchwise_export_then_import_keeps_every_tool_call(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    with Store.open(_database(first)) as store:
        conversation_id = _tool_chat(store)
        before, prompt = _tree(store, conversation_id), _prompt(store, conversation_id)
    assert [m.tool_calls for m in before if m.tool_calls] == [
        (_WEATHER, _TIME),
        ({**_WEATHER, "arguments": {"city": "Bergen"}},),
    ]
    backup = tmp_path / "backup.json"
    assert main(["export", "--data-dir", str(first), "--out", str(backup)]) == 0
    assert main(["import", str(backup), "--data-dir", str(second)]) == 0
    with Store.open(_database(second)) as store:
        restored = _only(store)
        after = _tree(store, restored)
        assert [(m.role, m.tool_calls, m.tool_call_id, m.tool_name) for m in after] == [
            (m.role, m.tool_calls, m.tool_call_id, m.tool_name) for m in before
        ]
        # Everything else of each message too, the provenance included.
        assert after == before
        assert _prompt(store, restored) == prompt
        assert prompt[1]["tool_calls"][1]["function"] == {
            "name": "clock__now",
            "arguments": _TIME["arguments"],
        }
        assert prompt[2] == {
            "role": "tool",
            "content": "Sunny, 4C",
            "tool_call_id": "call_1",
            "name": "weather__get_weather",
        }
        # The restored chat goes on as one made here: its tool results are found under the call.
        reply = store.active_path(restored)[1]
        store.add_tool_result(reply.id, "call_2", "clock__now", "12:00")
    # And the backup imported again adds nothing.
    assert main(["import", str(backup), "--data-dir", str(second), "--json"]) == 0
    with Store.open(_database(second)) as store:
        assert len(store.all_messages(_only(store))) == len(before) + 1


def test_one_conversation_file_through_import_chats_keeps_every_tool_call(
    tmp_path: Path,
) -> None:
    with Store.open(_database(tmp_path / "first")) as store:
        conversation_id = _tool_chat(store)
        before, prompt = _tree(store, conversation_id), _prompt(store, conversation_id)
        exported = write_json(tmp_path / "weather.json", store.export_json(conversation_id))
    with Store.open(_database(tmp_path / "second")) as store:
        report = run.import_paths([exported], store)
        (outcome,) = report.outcomes
        assert (outcome.new_messages, outcome.reason, outcome.warnings) == (len(before), "", ())
        assert outcome.conversation_id is not None
        assert _tree(store, outcome.conversation_id) == before
        assert _prompt(store, outcome.conversation_id) == prompt


def test_a_malformed_tool_call_is_left_out_with_a_warning(tmp_path: Path) -> None:
    with Store.open(_database(tmp_path / "first")) as store:
        conversation_id = _tool_chat(store)
        before = _tree(store, conversation_id)
        data = store.export_json(conversation_id)
    reply, weather, clock = data["messages"][1], data["messages"][4], data["messages"][5]
    assert (reply["tool_calls"], weather["tool_call_id"], clock["tool_call_id"]) == (
        [_WEATHER, _TIME],
        "call_1",
        "call_2",
    )
    reply["tool_calls"] = [
        _WEATHER,
        {**_TIME, "arguments": "not an object"},
        {"id": "call_1", "name": "again", "arguments": {}},
        {"id": "call_4", "arguments": {}},
        "junk",
    ]
    data["messages"][2]["tool_calls"] = {"not": "a list"}  # the edited sibling
    weather["tool_name"] = 5
    with Store.open(_database(tmp_path / "second")) as store:
        report = run.import_paths([write_json(tmp_path / "bad.json", data)], store)
        (outcome,) = report.outcomes
        assert (outcome.new_messages, outcome.reason) == (len(before), "")
        assert outcome.conversation_id is not None
        assert list(outcome.warnings) == [
            "Message 2: tool call 2's arguments must be a mapping, not str; it was left out.",
            "Message 2: tool call 3 has the id 'call_1' of an earlier call; it was left out.",
            "Message 2: tool call 4 must have exactly id, name, arguments; it was left out.",
            "Message 2: tool call 5 must have exactly id, name, arguments; it was left out.",
            "Message 3: its tool calls are not a list (a dict); it was left out.",
            "Message 5: its tool_name is not text (a int); it was left out.",
            "Message 4 answers tool call 'call_1', which the reply above it does not make; it"
            " was kept as it is.",
            "Message 6 answers tool call 'call_2', which the reply above it does not make; it"
            " was kept as it is.",
        ]
        after = _tree(store, outcome.conversation_id)
        # Every message is there; only what was malformed is missing from it.
        assert [(m.role, m.content, m.tool_call_id) for m in after] == [
            (m.role, m.content, m.tool_call_id) for m in before
        ]
        assert [m.tool_calls for m in after[1:3]] == [(_WEATHER,), ()]
        assert [m.tool_name for m in after[4:6]] == [None, "clock__now"]
    # The preview (a dry run) warns the same, before anything is written.
    dry = run.import_paths([tmp_path / "bad.json"], None, dry_run=True)
    assert dry.outcomes[0].warnings == outcome.warnings


def test_an_older_export_without_tool_use_still_imports(tmp_path: Path) -> None:
    with Store.open(_database(tmp_path / "first")) as store:
        conversation = store.create_conversation("Plain")
        store.append_message(conversation.id, None, "user", "Hi")
        data = store.export_json(conversation.id)
    data["version"] = 2
    for message in data["messages"]:
        for key in ("tool_calls", "tool_call_id", "tool_name", "provenance"):
            del message[key]
    with Store.open(_database(tmp_path / "second")) as store:
        (outcome,) = run.import_paths([write_json(tmp_path / "v2.json", data)], store).outcomes
        assert (outcome.new_messages, outcome.warnings) == (1, ())
        assert json.dumps(store.export_json(_only(store))["messages"][0]["tool_calls"]) == "[]"
