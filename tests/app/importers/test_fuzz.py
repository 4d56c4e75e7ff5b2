"""Fuzzed files for every importer: values replaced by values of any type, keys dropped, files
cut short or with bytes changed. Whatever the damage, an import never raises, never reports an
importer fault (only clear refusals), and never leaves part of a conversation in the store.

And the fields the tree does not need (times, titles, model labels, metadata), given a value of
another type: the conversation still imports, with its messages, and the report warns."""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.importers import run
from app.importers.entries import IMPORTER_FAULT
from app.store.conversations import Store
from tests.app.importers import samples


def _write_json(name: str) -> Callable[[Path, Any], Path]:
    def write(folder: Path, data: Any) -> Path:
        path = folder / name
        path.write_bytes(json.dumps(data).encode())
        return path

    return write


def _write_lines(folder: Path, data: Any) -> Path:
    path = folder / "Char - 2025-05-11@19h32m07s.jsonl"
    path.write_bytes(b"\n".join(json.dumps(line).encode() for line in data))
    return path


def _write_jan(folder: Path, data: Any) -> Path:
    thread, messages = data
    base = folder / "data" / "threads" / "t1"
    base.mkdir(parents=True)
    (base / "thread.json").write_bytes(json.dumps(thread).encode())
    lines = messages if isinstance(messages, list) else [messages]
    (base / "messages.jsonl").write_bytes(b"\n".join(json.dumps(m).encode() for m in lines))
    return folder / "data"


FORMATS: dict[str, tuple[Callable[[], Any], Callable[[Path, Any], Path]]] = {
    "chatgpt": (lambda: [samples.chatgpt_conversation()], _write_json("conversations.json")),
    "claude": (lambda: [samples.claude_conversation()], _write_json("conversations.json")),
    "openwebui": (samples.openwebui_export, _write_json("chat-export.json")),
    "librechat": (lambda: samples.librechat_export(True), _write_json("lc.json")),
    "lmstudio": (samples.lmstudio_conversation, _write_json("1.conversation.json")),
    "sillytavern": (samples.sillytavern_lines, _write_lines),
    "textgen": (samples.textgen_history, _write_json("20260503-10-00-00.json")),
    "jan": (lambda: list(samples.jan_thread()), _write_jan),
    "chatbox": (samples.chatbox_export, _write_json("chatbox.json")),
    "branchwise": (samples.branchwise_export, _write_json("chat.json")),
}

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(["user", "assistant", "\ud83d", "", "1e400"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


@st.composite
def damaged(draw: st.DrawFn, name: str) -> tuple[Any, Callable[[bytes], bytes] | None]:
    make, _ = FORMATS[name]
    data = make()
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(JSON_VALUES)
    cut = None
    if draw(st.booleans()):
        position = draw(st.floats(0, 1))
        flip = draw(st.one_of(st.none(), st.binary(min_size=1, max_size=3)))

        def cut(raw: bytes) -> bytes:
            at = int(len(raw) * position)
            return raw[:at] + flip + raw[at + len(flip) :] if flip else raw[:at]

    return data, cut


def _check(name: str, case: tuple[Any, Callable[[bytes], bytes] | None]) -> None:
    data, cut = case
    _, write = FORMATS[name]
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), copy.deepcopy(data))
        if cut is not None:
            for file in [path] if path.is_file() else sorted(path.rglob("*.json*")):
                file.write_bytes(cut(file.read_bytes()))
        with Store.open(Path(folder) / "store" / "conversations.sqlite3") as store:
            report = run.import_paths([path], store)
            for item in report.inputs:
                assert IMPORTER_FAULT not in (item.error or "")
                for outcome in item.outcomes:
                    assert IMPORTER_FAULT not in outcome.reason, outcome.reason
                    if outcome.status == "imported":
                        stored = store.all_messages(outcome.conversation_id)
                        assert len(stored) == outcome.new_messages > 0
            written = {o.conversation_id for i in report.inputs for o in i.outcomes}
            for conversation in store.list_conversations(include_archived=True):
                assert conversation.id in written  # nothing from a refused conversation


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_fuzzed_files_never_break_an_import(name: str) -> None:
    @settings(
        max_examples=40,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(damaged(name))
    def run_case(case: tuple[Any, Callable[[bytes], bytes] | None]) -> None:
        _check(name, case)

    run_case()


# Every field of each sample that the tree does not need, and the kind of value it holds.
# Branchwise's own files are not here: they are written by this app and read strictly.
OPTIONAL_FIELDS: dict[str, list[tuple[tuple[Any, ...], str]]] = {
    "chatgpt": [
        ((0, "title"), "text"),
        ((0, "create_time"), "time"),
        ((0, "update_time"), "time"),
        ((0, "default_model_slug"), "text"),
        ((0, "mapping", "a1", "message", "create_time"), "time"),
        ((0, "mapping", "a1", "message", "metadata", "model_slug"), "text"),
        ((0, "mapping", "u2", "message", "create_time"), "time"),
    ],
    "claude": [
        ((0, "name"), "text"),
        ((0, "created_at"), "time"),
        ((0, "updated_at"), "time"),
        ((0, "chat_messages", 0, "created_at"), "time"),
        ((0, "chat_messages", 4, "created_at"), "time"),
    ],
    "openwebui": [
        ((1, "title"), "text"),
        ((1, "created_at"), "time"),
        ((1, "updated_at"), "time"),
        ((1, "chat", "params"), "object"),
        ((1, "chat", "params", "system"), "text"),
        ((1, "chat", "history", "messages", "a1", "timestamp"), "time"),
        ((1, "chat", "history", "messages", "a1", "model"), "text"),
    ],
    "librechat": [
        (("title",), "text"),
        (("options",), "object"),
        (("options", "promptPrefix"), "text"),
        (("messages", 0, "createdAt"), "time"),
        (("messages", 0, "children", 0, "model"), "text"),
        (("messages", 0, "children", 0, "createdAt"), "time"),
    ],
    "lmstudio": [
        (("name",), "text"),
        (("createdAt",), "time"),
        (("systemPrompt",), "text"),
        (("perChatPredictionConfig",), "object"),
        (("perChatPredictionConfig", "fields"), "list"),
        (("messages", 1, "versions", 1, "steps", 1, "genInfo"), "object"),
        (("messages", 1, "versions", 1, "steps", 1, "genInfo", "indexedModelIdentifier"), "text"),
    ],
    "sillytavern": [
        ((0, "character_name"), "text"),
        ((0, "create_date"), "time"),
        ((1, "send_date"), "time"),
        ((1, "extra"), "object"),
        ((1, "swipe_info"), "list"),
        ((1, "swipe_info", 1), "object"),
        ((1, "swipe_info", 1, "extra"), "object"),
        ((1, "swipe_info", 1, "send_date"), "time"),
        ((3, "extra"), "object"),
        ((3, "extra", "model"), "text"),
        ((3, "extra", "reasoning"), "text"),
    ],
    "textgen": [
        (("metadata",), "object"),
        (("metadata", "assistant_0"), "object"),
        (("metadata", "user_1", "timestamp"), "time"),
        (("metadata", "assistant_1", "versions"), "list"),
        (("metadata", "assistant_1", "versions", 1), "object"),
        (("metadata", "assistant_1", "versions", 1, "timestamp"), "time"),
        (("metadata", "assistant_1", "current_version_index"), "index"),
    ],
    "jan": [
        ((0, "title"), "text"),
        ((0, "created"), "time"),
        ((0, "updated"), "time"),
        ((0, "assistants"), "list"),
        ((0, "assistants", 0), "object"),
        ((0, "assistants", 0, "instructions"), "text"),
        ((1, 1, "created_at"), "time"),
        ((1, 2, "metadata"), "object"),
    ],
    "chatbox": [
        (("session:cb-1", "name"), "text"),
        (("session:cb-1", "messages", 1, "timestamp"), "time"),
        (("session:cb-1", "messages", 2, "model"), "text"),
    ],
}
# text-generation-webui keeps a turn's other versions in its metadata: losing that loses them.
_HOLDS_VERSIONS = {
    ("metadata",),
    ("metadata", "assistant_1", "versions"),
    ("metadata", "assistant_1", "versions", 1),
}
_SMALL = st.integers(-(2**40), 2**40)
_FINITE = st.floats(allow_nan=False, allow_infinity=False)  # JSON has no infinity
# For each kind, values of every other JSON type (None is "missing", not another type).
_OTHER_TYPES = {
    "time": st.booleans()
    | st.lists(_SMALL, max_size=2)
    | st.dictionaries(st.text(max_size=4), _SMALL, max_size=2),
    "text": st.booleans()
    | _SMALL
    | _FINITE
    | st.lists(st.text(max_size=4), max_size=2)
    | st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2),
    "object": st.booleans() | _SMALL | st.text(max_size=8) | st.lists(_SMALL, max_size=2),
    "list": st.booleans()
    | _SMALL
    | st.text(max_size=8)
    | st.dictionaries(st.text(max_size=4), _SMALL, max_size=2),
    "index": st.booleans() | st.text(max_size=8) | st.lists(_SMALL, max_size=2),
}


@st.composite
def retyped(draw: st.DrawFn, name: str) -> list[tuple[tuple[Any, ...], object]]:
    """One to three of the sample's optional fields, each with a value of another type."""
    fields = draw(
        st.lists(st.sampled_from(OPTIONAL_FIELDS[name]), min_size=1, max_size=3, unique=True)
    )
    return [(path, draw(_OTHER_TYPES[kind])) for path, kind in fields]


def _imported(name: str, data: Any) -> tuple[list[tuple[str, str]], list[str], int]:
    """(role, text) of every stored message, the warnings of the one conversation imported,
    and how many entries were refused (a sample may hold one that is no conversation)."""
    with tempfile.TemporaryDirectory() as folder:
        path = FORMATS[name][1](Path(folder), copy.deepcopy(data))
        with Store.open(Path(folder) / "store" / "conversations.sqlite3") as store:
            report = run.import_paths([path], store)
            outcomes = [o for i in report.inputs for o in i.outcomes]
            (outcome,) = [o for o in outcomes if o.status != "refused"]
            assert outcome.status == "imported"
            stored = store.all_messages(outcome.conversation_id)
            refused = len(outcomes) - 1
            return sorted((m.role, m.content) for m in stored), outcome.warnings, refused


# One value of each other type, for each kind: every field is given each of them once before
# hypothesis draws combinations.
_EACH_OTHER_TYPE = {
    "time": [True, [1], {"at": 1}],
    "text": [True, 7, 1.5, ["a"], {"a": "b"}],
    "object": [True, 7, "text", [1]],
    "list": [True, 7, "text", {"a": 1}],
    "index": [True, "first", [1]],
}


def _retype(name: str, changes: list[tuple[tuple[Any, ...], object]]) -> Any:
    """The sample with each path given its value; a parent replaced after its children."""
    data = FORMATS[name][0]()
    for path, value in sorted(changes, key=lambda change: -len(change[0])):
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = value
    return data


@pytest.mark.parametrize("name", sorted(OPTIONAL_FIELDS))
def test_a_field_the_tree_does_not_need_never_refuses_a_conversation(name: str) -> None:
    clean, clean_warnings, clean_refused = _imported(name, FORMATS[name][0]())

    def check(changes: list[tuple[tuple[Any, ...], object]]) -> None:
        messages, warnings, refused = _imported(name, _retype(name, changes))
        changed = {path for path, _ in changes}
        assert refused == clean_refused
        assert len(warnings) > len(clean_warnings), f"no warning for {changes}"
        assert set(messages) <= set(clean)
        if not _HOLDS_VERSIONS & changed:
            assert messages == clean

    for path, kind in OPTIONAL_FIELDS[name]:
        for value in _EACH_OTHER_TYPE[kind]:
            check([(path, value)])

    @settings(
        max_examples=25,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(retyped(name))
    def run_case(changes: list[tuple[tuple[Any, ...], object]]) -> None:
        check(changes)

    run_case()


def _with_null(data: Any, path: tuple[Any, ...]) -> Any:
    """`data` with a null entry at `path` (a list index is inserted before, a key added)."""
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, list):
        parent.insert(path[-1], None)
    else:
        parent[path[-1]] = None
    return data


# Where each format keeps its messages, and a place there for a null entry.
NULL_ENTRIES: dict[str, tuple[Any, ...]] = {
    "chatgpt": (0, "mapping", "junk"),
    "claude": (0, "chat_messages", 2),
    "openwebui": (1, "chat", "history", "messages", "junk"),
    "librechat": ("messages", 0),
    "lmstudio": ("messages", 2),
    "sillytavern": (2,),
    "textgen": ("internal", 2),
    "jan": (1, 2),
    "chatbox": ("session:cb-1", "messages", 2),
}


@pytest.mark.parametrize("name", sorted(NULL_ENTRIES))
def test_a_null_message_entry_is_left_out_with_a_warning(name: str) -> None:
    clean, clean_warnings, clean_refused = _imported(name, FORMATS[name][0]())
    damaged = _with_null(FORMATS[name][0](), NULL_ENTRIES[name])
    messages, warnings, refused = _imported(name, damaged)
    assert messages == clean and refused == clean_refused
    (added,) = [w for w in warnings if w not in clean_warnings]
    assert "left out" in added, added
