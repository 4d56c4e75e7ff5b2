"""Each host protocol, checked against the class that fills it.

The project's parts type what they are given by protocols of exactly what they use (the window's
helpers, the controller's token counts, the worker's engine…). Whether the real class fills each one
is the type checker's to say: it reads the functions below, each of which hands the filling class
back as the protocol, and refuses any whose class lacks a member or has one of another type. They
are never called. At run time the test checks that no protocol in `app`, `inference` or `ui` is
missing from this list, so a new one is checked as soon as it is written.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from tests.paths import ROOT

if TYPE_CHECKING:
    import threading
    from multiprocessing.synchronize import Event as ProcessEvent

    from PySide6.QtCore import Signal

    from app.generation.knowledge_index import IndexKnowledge
    from app.generation.knowledge_retrieval import KnowledgeBase
    from app.generation.reply_generation import ReplyBackend
    from app.generation.worker import InferenceWorker
    from app.generation.worker_engine import EngineLike
    from app.generation.worker_generation import GenerationSignals
    from app.knowledge.embedder import Embedder
    from app.knowledge.pause import CancelFlag as IndexCancelFlag
    from app.knowledge.pause import Gate, PauseGate
    from app.knowledge.reader_process import _ChildGate
    from app.knowledge.worker_embedder import WorkerEmbedder, WorkerQueue, _Model
    from app.operations.knowledge_pause import GenerationActivity
    from app.operations.operation import EngineQueue
    from app.qt_signal import QtSignal
    from app.remote.backend import RemoteBackend
    from app.remote.connections import FileKeys, KeyringKeys, KeyStore
    from app.store.conversations import Store
    from app.store.reply_writer import ReplySink
    from inference.decoding.draft_model import DraftModelDrafter
    from inference.decoding.speculative import Drafter, PromptLookupDrafter
    from inference.embedding.encoder import MlxEmbedder
    from inference.embedding.static_model import StaticEmbedder
    from inference.engine.engine import Engine
    from inference.engine.request import CancelFlag
    from inference.engine.variants import _AllSet
    from tests.app.knowledge.documents import HashEmbedder
    from ui.sidebar.project_menus import MenuHost
    from ui.sidebar.sidebar import Sidebar
    from ui.window.compaction_features import CompactionHost
    from ui.window.compare_features import CompareHost
    from ui.window.composer_extras import ExtrasHost
    from ui.window.conversation_files import FilesHost
    from ui.window.history_import import ImportHost
    from ui.window.knowledge_commands import KnowledgePageHost
    from ui.window.knowledge_features import KnowledgeHost
    from ui.window.main_window import MainWindow
    from ui.window.model_compare import ModelCompareHost
    from ui.window.model_picker import PickerHost
    from ui.window.model_status_presenter import StatusHost
    from ui.window.preset_features import PresetHost
    from ui.window.project_commands import ProjectHost
    from ui.window.settings_commands import SettingsHost
    from ui.window.sidebar_commands import SidebarHost
    from ui.window.stream_presenter import StreamHost
    from ui.window.tool_features import ToolHost
    from ui.window.voice_conversation import ConversationVoice, ConversationWindow
    from ui.window.voice_features import VoiceFeatures, VoiceHost
    from ui.window.voice_reading import ReadingHost
    from ui.window.window_host import (
        ChatPane,
        ChatWindow,
        ConversationList,
        MenuWindow,
        WindowWidget,
    )

PACKAGES = ("app", "inference", "ui")


# -- the window and its helpers ---------------------------------------------------------------


def _window_widget(window: MainWindow) -> WindowWidget:
    return window


def _chat_window(window: MainWindow) -> ChatWindow:
    return window


def _chat_pane(window: MainWindow) -> ChatPane:
    return window


def _menu_window(window: MainWindow) -> MenuWindow:
    return window


def _voice_host(window: MainWindow) -> VoiceHost:
    return window


def _reading_host(window: MainWindow) -> ReadingHost:
    return window


def _conversation_window(window: MainWindow) -> ConversationWindow:
    return window


def _conversation_voice(features: VoiceFeatures) -> ConversationVoice:
    return features


def _conversation_list(window: MainWindow) -> ConversationList:
    return window


def _status_host(window: MainWindow) -> StatusHost:
    return window


def _sidebar_host(window: MainWindow) -> SidebarHost:
    return window


def _files_host(window: MainWindow) -> FilesHost:
    return window


def _import_host(window: MainWindow) -> ImportHost:
    return window


def _settings_host(window: MainWindow) -> SettingsHost:
    return window


def _knowledge_page_host(window: MainWindow) -> KnowledgePageHost:
    return window


def _tool_host(window: MainWindow) -> ToolHost:
    return window


def _stream_host(window: MainWindow) -> StreamHost:
    return window


def _compaction_host(window: MainWindow) -> CompactionHost:
    return window


def _compare_host(window: MainWindow) -> CompareHost:
    return window


def _picker_host(window: MainWindow) -> PickerHost:
    return window


def _extras_host(window: MainWindow) -> ExtrasHost:
    return window


def _model_compare_host(window: MainWindow) -> ModelCompareHost:
    return window


def _knowledge_host(window: MainWindow) -> KnowledgeHost:
    return window


def _project_host(window: MainWindow) -> ProjectHost:
    return window


def _preset_host(window: MainWindow) -> PresetHost:
    return window


def _project_menus_host(sidebar: Sidebar) -> MenuHost:
    return sidebar


# -- generation: the backends, the worker's signals, the engine -------------------------------


def _local_backend(worker: InferenceWorker) -> ReplyBackend:
    return worker


def _remote_backend(remote: RemoteBackend) -> ReplyBackend:
    return remote


def _generation_signals(worker: InferenceWorker) -> GenerationSignals:
    return worker


def _engine_queue(worker: InferenceWorker) -> EngineQueue:
    return worker


def _engine(engine: Engine) -> EngineLike:
    return engine


def _reply_sink(store: Store) -> ReplySink:
    return store


def _prompt_lookup_drafter(drafter: PromptLookupDrafter) -> Drafter:
    return drafter


def _draft_model_drafter(drafter: DraftModelDrafter) -> Drafter:
    return drafter


def _event_cancel_flag(event: threading.Event) -> CancelFlag:
    return event


def _variants_cancel_flag(flag: _AllSet) -> CancelFlag:
    return flag


# -- knowledge folders -----------------------------------------------------------------------


def _knowledge_base(base: IndexKnowledge) -> KnowledgeBase:
    return base


def _test_embedder(embedder: HashEmbedder) -> Embedder:
    return embedder


def _worker_generation_activity(worker: InferenceWorker) -> GenerationActivity:
    return worker


def _pause_gate(gate: PauseGate) -> Gate:
    return gate


def _child_gate(gate: _ChildGate) -> Gate:
    return gate


def _thread_cancel_flag(event: threading.Event) -> IndexCancelFlag:
    return event


def _process_cancel_flag(event: ProcessEvent) -> IndexCancelFlag:
    return event


# -- knowledge: the embedders, what they need of the worker -----------------------------------


def _static_embedder(embedder: StaticEmbedder) -> Embedder:
    return embedder


def _mlx_embedder(embedder: MlxEmbedder) -> Embedder:
    return embedder


def _worker_embedder(embedder: WorkerEmbedder) -> Embedder:
    return embedder


def _worker_model(embedder: MlxEmbedder) -> _Model:
    return embedder


def _worker_queue(worker: InferenceWorker) -> WorkerQueue:
    return worker


# -- a signal as host protocols declare one ---------------------------------------------------


def _qt_signal(signal: Signal) -> QtSignal:
    return signal


# -- where API keys are kept ------------------------------------------------------------------


def _keyring_keys(keys: KeyringKeys) -> KeyStore:
    return keys


def _file_keys(keys: FileKeys) -> KeyStore:
    return keys


def _protocols_in(package: str) -> set[str]:
    """`module.Name` of each class in `package` that derives from `typing.Protocol` directly."""
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                (isinstance(base, ast.Name) and base.id == "Protocol")
                or (isinstance(base, ast.Attribute) and base.attr == "Protocol")
                for base in node.bases
            ):
                found.add(f"{module}.{node.name}")
    return found


def _checked_here() -> set[str]:
    """`module.Name` of each protocol a function of this module returns (read through the
    imports above, so two protocols of one name are told apart)."""
    tree = ast.parse((ROOT / "tests" / "test_protocols.py").read_text(encoding="utf-8"))
    imported = {
        alias.asname or alias.name: f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    return {
        imported[node.returns.id]
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and isinstance(node.returns, ast.Name)
        and node.returns.id in imported
    }


def test_every_protocol_is_checked_against_its_class() -> None:
    protocols = set().union(*(_protocols_in(package) for package in PACKAGES))
    assert len(protocols) >= 25  # the scan still finds them
    assert protocols - _checked_here() == set()
