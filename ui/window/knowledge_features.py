"""Knowledge in the window: the composer's knowledge button kept in step with the open chat (its
menu lists the index's collections afresh each time it opens, so one added on the Knowledge page
shows at once), the person's choice written into the chat's params (the token meter and the
tools button follow it), and "Searching the knowledge…" on the person's message while its
retrieval runs. A reply's sources are part of its view (`MessageView.sources`), shown by the
message itself; a source's *Show* opens it in its page as the index holds it (`SourceDialog`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt, Slot

from app.chat.knowledge.choice import CHAT_KEY, chat_collections
from app.chat.knowledge.turns import KnowledgeSearch
from app.store.conversations import StoreError
from ui.chat.message_widget import MessageWidget
from ui.chat.source_dialog import SourceDialog, place_of
from ui.widgets.view_models import SourceView
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from ui.window.token_counter import TokenCounter
    from ui.window.tool_features import ToolFeatures

SEARCHING = "Searching the knowledge…"


class KnowledgeHost(ChatPane, Protocol):
    token_counter: TokenCounter
    tools: ToolFeatures


class KnowledgeFeatures(QObject):
    def __init__(self, window: KnowledgeHost) -> None:
        super().__init__(window.window())
        self._window = window
        self._searching: KnowledgeSearch | None = None
        button = window.composer.knowledge
        button.collectionsChosen.connect(self._on_chosen)
        menu = button.menu()
        if menu is not None:
            menu.aboutToShow.connect(self.refresh_button)
        window.controller.knowledge.turns.searching.connect(self._on_searching)
        window.chat_view.messageWidgetCreated.connect(self._on_message_widget)

    def conversation_shown(self) -> None:
        self.refresh_button()

    @Slot()
    def refresh_button(self) -> None:
        window = self._window
        knowledge = window.controller.knowledge
        cid = window.current_conversation_id
        chosen: tuple[str, ...] = ()
        if cid is not None:
            try:
                chosen = chat_collections(window.store.get_conversation(cid).params)
            except StoreError as exc:
                window.show_notice(str(exc))
        window.composer.knowledge.set_collections(knowledge.names(), chosen)

    @Slot(list)
    def _on_chosen(self, names: list[str]) -> None:
        window = self._window
        if window.current_conversation_id is None:
            window.new_chat()
        cid = window.current_conversation_id
        if cid is None:
            return  # no chat could be made (a notice said why)
        window.controller.change_params(cid, {CHAT_KEY: list(names)})
        window.token_counter.schedule()  # the draft may now bring excerpts
        window.tools.refresh_button()  # the knowledge tools come and go with it

    @Slot(object)
    def _on_searching(self, search: KnowledgeSearch) -> None:
        self._searching = search if search.running else None
        widget = self._window.chat_view.message_widget(str(search.message_id))
        if widget is not None:
            widget.set_progress_note(SEARCHING if search.running else "")

    @Slot(object)
    def _on_message_widget(self, widget: MessageWidget) -> None:
        """Its sources' Show answered here; a message shown anew while its retrieval still runs
        (a re-render) says so again."""
        widget.sourceShowRequested.connect(self.show_source)
        search = self._searching
        if search is not None and widget.view.id == str(search.message_id):
            widget.set_progress_note(SEARCHING)

    @Slot(object)
    def show_source(self, source: SourceView) -> SourceDialog:
        """The source's excerpt in its page, read from the index now (a few indexed queries)."""
        context = self._window.controller.knowledge.excerpt_context(place_of(source))
        dialog = SourceDialog(source, context, self._window.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog
