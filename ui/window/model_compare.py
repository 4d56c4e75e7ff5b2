"""Compare Models, wired into the window: send one message to 2-4 models and see their answers
side by side.

Three ways in: the composer's *Compare with…* button beside Send (the draft goes to the models),
the Compare button on a message of the person's, and *Compare with Other Models…* in a reply's
regenerate menu (both: the message asked again), plus Chat › Compare Models… (Ctrl+Shift+M: the
draft if there is one, else the last message). Each opens the chooser (the chat's own model
checked, library models, then the servers' models once they answer); its Send starts the run.
The answers stream in the same columns as Regenerate ×N (`ui.chat.columns_view`), titled with
each model's name (or "Model A"… in blind mode until one is kept), with how the run uses
memory above them and where each column stands until its answer begins.

The composer's draft is cleared only once the compare began, and put back otherwise, so the
person's words are never lost. When the chat's model follows a branch (a kept answer, a switch
to another model's branch), the window says so; the model picker shows it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QToolButton

from app.async_tasks import spawn
from app.chat.compare_actions import library_model, remote_model
from app.generation.compare_generation import CompareProgress, CompareStarted, blind_label
from app.generation.compare_plan import CompareModel
from app.remote.connections import is_remote
from app.sizes import format_bytes
from app.store.conversations import DEFAULT_TITLE, StoreError
from ui.chat.columns_view import ColumnHeading, ColumnsView
from ui.chat.message_toolbar import COMPARE_BUTTON
from ui.chat.message_widget import MessageWidget
from ui.widgets.icon_button import icon_button
from ui.window.conversation_views import title_from
from ui.window.window_host import ChatPane, MenuWindow

if TYPE_CHECKING:
    import asyncio

    from app.chat.branch_model import ModelFollowed
    from ui.dialogs.compare_chooser import CompareChooser
    from ui.window.branch_commands import BranchCommands
    from ui.window.models import WindowModels

_KEPT_HINT = "Every answer is kept as a branch: ‹ k/n › steps through them, each with its model."


class ModelCompareHost(ChatPane, MenuWindow, Protocol):
    """The window as Compare Models uses it."""

    models: WindowModels
    branches: BranchCommands

    def is_empty(self, conversation_id: int) -> bool: ...


class ModelCompare(QObject):
    def __init__(self, window: ModelCompareHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._controller = window.controller
        self._compare = window.controller.compare
        self.chooser: CompareChooser | None = None
        self._asking: asyncio.Task[None] | None = None  # the servers asked for their models
        self.view: ColumnsView | None = None
        self._models: tuple[CompareModel, ...] = ()  # the columns of the last compare
        self._message_ids: tuple[int, ...] = ()
        self._known_names: dict[str, str] = {}  # model id -> the name it is shown by
        self.button = icon_button(
            "columns",
            "Compare with…",
            "Compare with…: send this message to 2-4 models and keep every answer as a branch",
            "CompareButton",
        )
        self.button.setText("Compare with…")
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        window.composer.add_beside_send(self.button)
        self.button.clicked.connect(self.choose_for_draft)
        self.action = QAction("Compare &Models…", window.window())
        self.action.setShortcut(QKeySequence("Ctrl+Shift+M"))
        self.action.triggered.connect(self.choose)
        window.addAction(self.action)
        menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
        if isinstance(chat := menus.get("Chat"), QMenu):  # a menu action's menu: any QObject
            chat.addAction(self.action)
        c = self._compare
        c.started.connect(self._on_started)
        c.progress.connect(self._on_progress)
        c.revealed.connect(self._on_revealed)
        self._controller.modelFollowed.connect(self._on_followed)
        self._controller.busyChanged.connect(self._refresh_button)
        window.composer.draftChanged.connect(self._refresh_button)
        window.chat_view.messageWidgetCreated.connect(self._attach)
        self._refresh_button()

    # -- ways in -------------------------------------------------------------------------------

    def choose(self) -> CompareChooser | None:
        """The draft when there is one, else the last message of the person's on screen."""
        if self._window.composer.text().strip():
            return self.choose_for_draft()
        users = [v for v in self._window.branches.path_views() if v.role == "user"]
        if not users:
            self._window.show_notice("Write a message first: it is what the models answer.")
            return None
        return self.choose_for_message(int(users[-1].id))

    def choose_for_draft(self) -> CompareChooser | None:
        return self._open_chooser(None)

    def choose_for_message(self, message_id: int) -> CompareChooser | None:
        return self._open_chooser(message_id)

    @Slot(object)
    def _attach(self, widget: MessageWidget) -> None:
        for button in widget.findChildren(QToolButton):
            if button.property(COMPARE_BUTTON):
                button.clicked.connect(
                    lambda _=False, w=widget: self.choose_for_message(int(w.view.id))
                )
        regenerate = widget.regenerate_button
        menu = regenerate.menu() if regenerate is not None else None
        if menu is not None:
            menu.addSeparator()
            action = menu.addAction("Compare with Other Models…")
            action.triggered.connect(
                lambda _=False, w=widget: self.choose_for_message(int(w.view.id))
            )

    def _refresh_button(self, *_changed: object) -> None:
        """Compare with… can send what Send could (it is told of a busy change, a draft's)."""
        composer = self._window.composer
        has_words = bool(composer.text().strip()) or bool(composer.attachments())
        self.button.setEnabled(has_words and composer.can_send)

    # -- the chooser ---------------------------------------------------------------------------

    def _open_chooser(self, message_id: int | None) -> CompareChooser | None:
        from ui.dialogs.compare_chooser import CompareChooser  # when first used: a fast start

        window = self._window
        if window.current_conversation_id is None:
            window.new_chat()
        cid = window.current_conversation_id
        assert cid is not None
        policy = self._controller.preferences.cpu_float32
        models = [
            library_model(info, policy) for info in window.models.library() if info.problem is None
        ]
        try:
            own = self._controller.store.get_conversation(cid).model_id
        except StoreError as exc:
            window.show_notice(str(exc))
            return None
        own = own or window.models.loaded_id()
        models.sort(key=lambda m: m.model_id != own)  # the chat's own model first, then A-Z
        if self.chooser is not None:
            self.chooser.close()
        self.chooser = chooser = CompareChooser(
            models,
            [own] if own else [],
            lambda chosen: self._controller.compare_plan(cid, chosen),
            window.window(),
        )
        if own and is_remote(own):
            chooser.add_models([remote_model(own)], [own])
        chooser.accepted.connect(lambda: self._send(cid, message_id, chooser))
        chooser.open()
        if self._controller.connections is not None:
            # Held: the loop keeps only a weak reference to a task.
            self._asking = spawn(self._offer_remote_models(chooser))
        return chooser

    async def _offer_remote_models(self, chooser: CompareChooser) -> None:
        from app.remote.client import remote_model_ids

        assert self._controller.connections is not None
        model_ids = await remote_model_ids(self._controller.connections)
        if self.chooser is chooser:
            chooser.add_models([remote_model(model_id) for model_id in model_ids])

    def _send(self, cid: int, message_id: int | None, chooser: CompareChooser) -> bool:
        models, blind = chooser.chosen(), chooser.blind.isChecked()
        if message_id is not None:
            return self._controller.compare_on(message_id, models, blind)
        composer = self._window.composer
        text = composer.text().strip()
        first = self._window.is_empty(cid)
        if not self._controller.send_to_models(cid, text, composer.attachments(), models, blind):
            return False  # the draft stays in the composer, with its files
        composer.set_text("")
        composer.clear_attachments()
        if first and self._controller.store.get_conversation(cid).title == DEFAULT_TITLE:
            self._controller.rename_conversation(cid, title_from(text))
        self._window.chat_view.scroll_to_bottom()
        return True

    # -- the columns ---------------------------------------------------------------------------

    def _headings(self, blind: bool) -> list[ColumnHeading]:
        if blind:
            return [
                ColumnHeading(blind_label(i), "name hidden until you keep an answer")
                for i in range(len(self._models))
            ]
        return [ColumnHeading(m.name, _where(m)) for m in self._models]

    @Slot(object)
    def _on_started(self, started: CompareStarted) -> None:
        if self.view is not None:
            self.view.unfollow()
            self.view.finished.disconnect(self._on_closed)  # the new run is not its to reveal
            self.view.close()
        self._models, self._message_ids = started.models, started.message_ids
        self._known_names.update((m.model_id, m.name) for m in started.models)
        count = len(started.models)
        self.view = view = ColumnsView(
            self._headings(started.blind),
            f"{count} Models Side by Side",
            _KEPT_HINT,
            self._window.window(),
        )
        view.setObjectName("CompareView")
        view.set_notice(started.notice)
        for i, state in enumerate(started.states):
            view.set_state(i, state)
        view.follow(self._compare)
        view.keepRequested.connect(self._keep)
        view.finished.connect(self._on_closed)
        view.show()

    @Slot(object)
    def _on_progress(self, progress: CompareProgress) -> None:
        if self.view is not None:
            self.view.set_state(progress.index, progress.text)

    def _keep(self, index: int) -> None:
        blind = bool(self._compare.hidden_ids())
        if self._compare.is_busy():
            self._compare.stop()  # the others keep what they wrote, marked stopped
        if self._compare.keep(index) is None or self.view is None:
            return
        if not blind:
            self.view.close()
            return
        # Blind: the pick is made, so the names show here, the kept one marked.
        self.view.mark_kept(index)
        self.view.set_hint(
            f"You kept {blind_label(index)}: {self._models[index].name}. " + _KEPT_HINT
        )

    @Slot(int)
    def _on_revealed(self, _conversation_id: int) -> None:
        if self.view is not None:
            self.view.set_headings(self._headings(False))

    @Slot(int)
    def _on_closed(self, _result: int) -> None:
        # Closing without a pick ends the blind test: the names may show in the chat now.
        self._compare.reveal()

    @Slot(object)
    def _on_followed(self, followed: ModelFollowed) -> None:
        if followed.conversation_id != self._window.current_conversation_id:
            return
        name = self._name(followed.model_id)
        self._window.banner.show_notice(
            f"This branch was written by {name}: the chat goes on with it.", kind="info"
        )

    def reply_label(self, message_id: int, model_id: str) -> str:
        """How a reply's model is named under it: hidden in a blind compare not yet decided."""
        if message_id in self._compare.hidden_ids() and message_id in self._message_ids:
            return blind_label(self._message_ids.index(message_id))
        return self._name(model_id)

    def _name(self, model_id: str) -> str:
        """A model's name as the library or its server gives it (the library is read once per
        model: this runs for every reply shown)."""
        if model_id not in self._known_names:
            self._known_names[model_id] = (
                remote_model(model_id).name
                if is_remote(model_id)
                else self._window.models.display_name(model_id) or model_id
            )
        return self._known_names[model_id]


def _where(model: CompareModel) -> str:
    """Where a column's model runs, under its name."""
    if not model.local:
        return "on a server"
    return f"on this computer · {format_bytes(model.weights_bytes)}"
