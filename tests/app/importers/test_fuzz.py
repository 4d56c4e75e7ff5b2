"""Fuzzed files for every importer: values replaced by values of any type, keys dropped, files
cut short or with bytes changed. Whatever the damage, an import never raises, never reports an
importer fault (only clear refusals), and never leaves part of a conversation in the store."""

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
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=20) | st.sampled_from(["user", "assistant", "\ud83d", "", "1e400"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                  max_size=3),
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
            return raw[:at] + flip + raw[at + len(flip):] if flip else raw[:at]
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
    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(damaged(name))
    def run_case(case: tuple[Any, Callable[[bytes], bytes] | None]) -> None:
        _check(name, case)

    run_case()
