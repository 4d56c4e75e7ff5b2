"""What a signal carries is named where it is declared, and a dict is never it.

The source check reads every `Signal(...)` declared in app/ and ui/: each argument must be a
plain type (str, int, float, bool, bytes, list, Path, a Qt value such as QPoint) or a frozen
dataclass, so a payload's fields are a class a type checker and a reader can see, never keys
listed in a comment. `Signal(object)`
is allowed only where the payload cannot be a class of its own (ALLOWED_OBJECTS says why).

The session check connects to every signal of the controller and its parts while a person
loads a model, counts a draft, attaches a file, sends, regenerates side by side, outgrows a
chat's context and opens the branch map, and asserts that each emission carries what its signal
declares, never a dict.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, SignalInstance

from app.chat.branch_map_source import BranchMapSource
from app.chat.controller import ChatController
from app.generation.worker import InferenceWorker
from app.settings import Preferences
from app.store.conversations import Store
from tests.paths import ROOT
from tests.tiny_models import NO_EOS

PLAIN = (str, int, float, bool, bytes, list, Path)
# (module, class, signal) -> why it carries an object no class of its own describes.
ALLOWED_OBJECTS = {
    ("app.gui_relay", "GuiRelay", "_posted"): "a callback and the value for it",
    ("ui.chat.chat_view", "ChatView", "messageWidgetCreated"): "a widget, to extend",
    ("ui.chat.image_files", "ThumbnailCache", "_decoded"): "the cache's (path, edge) key",
    ("ui.chat.tool_card", "ToolCard", "runRequested"): "a tool's own JSON arguments",
    ("ui.single_instance", "SingleInstance", "activationRequested"): "a command line, as a list",
}
GREEDY = {"temperature": 0.0, "max_tokens": 4, "seed": 0, "logit_bias": NO_EOS}
TIMEOUT_MS = 60000

Key = tuple[str, str, str]


def _signal_calls(tree: ast.Module) -> Iterator[tuple[str, str, list[ast.expr]]]:
    """(class, signal, argument nodes) of every `name = Signal(...)` in a class body."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for statement in node.body:
            if (
                isinstance(statement, ast.Assign)
                and isinstance(statement.value, ast.Call)
                and isinstance(statement.value.func, ast.Name)
                and statement.value.func.id == "Signal"
                and isinstance(statement.targets[0], ast.Name)
            ):
                yield node.name, statement.targets[0].id, statement.value.args


def _resolved(node: ast.expr, namespace: dict[str, Any]) -> Any:
    """The object a declaration's argument names (`StreamUpdate`, `run.ImportReport`)."""
    if isinstance(node, ast.Name):
        return namespace[node.id] if node.id in namespace else getattr(builtins, node.id)
    if isinstance(node, ast.Attribute):
        return getattr(_resolved(node.value, namespace), node.attr)
    raise AssertionError(f"a signal's argument is not a name: {ast.unparse(node)}")


def _declared() -> dict[Key, tuple[type, ...]]:
    """Every signal declared in app/ and ui/, with the types it declares."""
    found: dict[Key, tuple[type, ...]] = {}
    for package in ("app", "ui"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            calls = list(_signal_calls(tree))
            if not calls:
                continue
            module_name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            namespace = vars(importlib.import_module(module_name))
            for class_name, signal, args in calls:
                types = tuple(_resolved(arg, namespace) for arg in args)
                found[(module_name, class_name, signal)] = types
    return found


def _is_frozen_dataclass(kind: type) -> bool:
    return dataclasses.is_dataclass(kind) and kind.__dataclass_params__.frozen


def _is_qt_value(kind: type) -> bool:
    return kind.__module__.startswith("PySide6.") and not issubclass(kind, QObject)


def test_every_signal_names_a_plain_type_or_a_frozen_dataclass() -> None:
    declared = _declared()
    assert len(declared) > 100, "the scan must find the app's signals"
    wrong = [
        f"{'.'.join(key)}: {kind.__name__}"
        for key, types in declared.items()
        for kind in types
        if kind is not object
        and kind not in PLAIN
        and not _is_frozen_dataclass(kind)
        and not _is_qt_value(kind)
    ]
    assert wrong == [], "a payload must be a plain type or a frozen dataclass"
    objects = {key for key, types in declared.items() if object in types}
    assert objects == set(ALLOWED_OBJECTS), "Signal(object) only where ALLOWED_OBJECTS says why"


class _Recorder:
    """Every emission of the signals of the objects it watches, with what each declares."""

    def __init__(self) -> None:
        self.declared = _declared()
        self.emitted: list[tuple[str, tuple[type, ...], tuple[Any, ...]]] = []

    def watch(self, obj: QObject) -> None:
        for cls in type(obj).__mro__:
            for (module, class_name, signal), types in self.declared.items():
                if (module, class_name) == (cls.__module__, cls.__qualname__):
                    self._connect(getattr(obj, signal), f"{class_name}.{signal}", types)

    def _connect(self, signal: SignalInstance, name: str, types: tuple[type, ...]) -> None:
        # A plain function runs on the thread that emits: the worker's payloads are checked
        # as they leave the worker thread, before any queued connection copies them.
        signal.connect(lambda *args: self.emitted.append((name, types, args)))

    def names(self) -> set[str]:
        return {name for name, _, _ in self.emitted}


@pytest.fixture
def session(qtbot, tmp_path: Path, llama_path: Path) -> Iterator[tuple[ChatController, _Recorder]]:
    worker = InferenceWorker()
    ctl = ChatController(
        Store.open(tmp_path / "chat.sqlite3"),
        worker,
        Preferences(tmp_path / "settings.ini"),
        lambda _progress: llama_path,
    )
    recorder = _Recorder()
    for part in (
        ctl,
        worker,
        worker.relay,
        ctl.tool_flow,
        ctl.tool_session,
        ctl.variants,
        ctl.compare,
        ctl.replays,
        ctl.server,
    ):
        recorder.watch(part)
    with qtbot.waitSignal(worker.modelLoaded, timeout=TIMEOUT_MS):
        ctl.start()
    yield ctl, recorder
    ctl.shutdown()


def test_a_chat_session_emits_what_each_signal_declares_and_never_a_dict(
    qtbot, session: tuple[ChatController, _Recorder], tmp_path: Path
) -> None:
    ctl, recorder = session
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    with qtbot.waitSignal(ctl.tokenCount, timeout=TIMEOUT_MS):
        ctl.counts.request_token_count(cid, "What is in the notes?")
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\nThe walrus is large.\n", encoding="utf-8")
    with qtbot.waitSignal(ctl.attachmentReady, timeout=TIMEOUT_MS) as attached:
        ctl.counts.attach_file(cid, str(notes))
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=TIMEOUT_MS):
        assert ctl.send(cid, "What is in the notes?", [attached.args[0].record])
    qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=TIMEOUT_MS)
    reply = ctl.store.active_path(cid)[-1]
    with qtbot.waitSignal(ctl.variants.ended, timeout=TIMEOUT_MS):
        assert ctl.regenerate_variants(reply.id, 2)
    # A chat that outgrows its context under the "stop" policy fails its reply.
    full = ctl.new_conversation()
    ctl.update_settings(full, params={**GREEDY, "overflow": "stop", "context_length": 256})
    with qtbot.waitSignal(ctl.contextFull, timeout=TIMEOUT_MS):
        assert ctl.send(full, "Tell me about the walrus. " * 200)
    qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=TIMEOUT_MS)
    source = BranchMapSource(ctl.store, ctl.worker)
    recorder.watch(source)
    with qtbot.waitSignal(source.statesReady, timeout=TIMEOUT_MS):
        source.refresh(cid)

    expected = {
        "InferenceWorker.loadProgress",
        "InferenceWorker.modelLoaded",
        "InferenceWorker.memoryChanged",
        "InferenceWorker.prefillProgress",
        "ChatController.prefillProgress",
        "InferenceWorker.generationFailed",
        "ChatController.contextFull",
        "ChatController.modelStatus",
        "ChatController.tokenCount",
        "ChatController.attachmentReady",
        "InferenceWorker.tokensReady",
        "InferenceWorker.generationFinished",
        "ChatController.streamUpdated",
        "ChatController.busyChanged",
        "VariantGeneration.started",
        "SiblingReplies.replyUpdated",
        "SiblingReplies.replyFinished",
        "BranchMapSource.outlineReady",
        "BranchMapSource.statesReady",
    }
    assert expected <= recorder.names(), "the session must reach every kind of payload"
    wrong = [
        (name, args)
        for name, types, args in recorder.emitted
        if len(args) != len(types)
        or any(
            isinstance(arg, dict) or not isinstance(arg, kind)
            for arg, kind in zip(args, types, strict=False)
        )
    ]
    assert wrong == []
