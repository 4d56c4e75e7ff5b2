"""Tool use in the window: the tools button by the composer (which servers this chat may use,
disabled with the reason for a local model whose template takes none),
the card under the last message that asks before a call, shows it running or stops at the call
limit, and the folded results' Run again / Edit, all kept in step with the controller's tool
loop.

The card belongs to the open chat: switching chats shows what that chat waits for (an approval
asked while the person was elsewhere is still there when they come back).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Slot

from app.chat.knowledge.choice import chat_collections
from app.chat.tools.choice import CHAT_KEY, chat_servers, server_label, tools_off_reason
from app.chat.tools.payloads import CallLimit, CallSettled, ToolCallCard, ToolWait
from app.chat.tools.session import approval_text
from app.remote.connections import is_remote
from app.store.conversations import StoreError
from ui.chat.tool_card import ToolCard
from ui.chat.tool_result import ToolResultView
from ui.chat.tools_button import ServerChoice
from ui.dialogs.tools_page import ApprovalRow, ServerRow, ToolsPage
from ui.window.window_host import ChatPane

if TYPE_CHECKING:
    from ui.chat.message_widget import MessageWidget
    from ui.window.model_status_presenter import ModelStatusPresenter


class ToolHost(ChatPane, Protocol):
    model_status: ModelStatusPresenter


class ToolFeatures(QObject):
    def __init__(self, window: ToolHost) -> None:
        super().__init__(window.window())
        self._window = window
        controller = window.controller
        self.flow = controller.tool_flow
        self.session = controller.tool_session
        self.card = ToolCard()
        window.chat_view.add_footer(self.card)
        self.card.runRequested.connect(self._run)
        self.card.denyRequested.connect(lambda: self._for_chat(self.flow.deny))
        self.card.cancelRequested.connect(lambda: self._for_chat(self.flow.cancel))
        self.card.continueRequested.connect(lambda: self._for_chat(self.flow.continue_past_limit))
        self.card.stopRequested.connect(lambda: self._for_chat(self.flow.stop))
        for signal in (
            self.flow.approvalNeeded,
            self.flow.callRunning,
            self.flow.limitReached,
            self.flow.settled,
        ):
            signal.connect(self._on_flow)
        self.flow.notice.connect(window.show_notice)
        self.session.notice.connect(window.show_notice)
        self.session.serversChanged.connect(self.refresh_button)
        window.model_status.ready.connect(self.refresh_button)
        window.composer.tools.serversChosen.connect(self._on_servers_chosen)
        window.chat_view.messageWidgetCreated.connect(self._on_message_widget)

    # -- the open chat ------------------------------------------------------------------------

    def conversation_shown(self) -> None:
        """The window opened another chat: its card (asking again about calls left without
        results) and its tools."""
        cid = self._window.current_conversation_id
        if cid is not None:
            self.flow.resume(cid)
        self.show_pending()
        self.refresh_button()

    def show_pending(self) -> None:
        cid = self._window.current_conversation_id
        pending = None if cid is None else self.flow.pending(cid)
        if pending is None:
            self.card.clear()
        elif isinstance(pending, CallLimit):
            self.card.show_limit(pending.count, pending.limit)
        elif pending.waiting is ToolWait.APPROVAL:
            self.card.ask(pending)
        else:
            self.card.show_running(pending)
        if pending is not None:
            self._window.chat_view.scroll_to_bottom()

    @Slot()
    def refresh_button(self) -> None:
        window = self._window
        cid = window.current_conversation_id
        params: dict[str, Any] = {}
        remote = False
        if cid is not None:
            try:
                conversation = window.store.get_conversation(cid)  # read once for both
            except StoreError:
                pass
            else:
                params = conversation.params
                remote = is_remote(conversation.model_id)
        reason = tools_off_reason(window.controller.model_info, remote)
        allowed = chat_servers(params, window.controller.preferences.default_tool_servers)
        reads = bool(chat_collections(params)) and window.controller.knowledge.base is not None
        infos = [self.session.builtin_info(reads), *self.session.server_infos()]
        choices = [
            ServerChoice(
                i.name,
                server_label(i.name),
                i.status,
                i.tools,
                allowed is None or i.name in allowed,
            )
            for i in infos
            if i.enabled
        ]
        window.composer.tools.set_servers(choices, off_reason=reason)

    # -- Preferences › Tools --------------------------------------------------------------------

    def preferences_page(self) -> ToolsPage:
        """The Tools page, filled now and kept up to date while it is open; its changes to
        servers and approvals apply at once, its call limit with the dialog's OK
        (`apply_page`)."""
        preferences = self._window.controller.preferences
        page = ToolsPage(preferences.max_tool_calls, preferences.default_tool_servers)
        page.set_import_sources(self.session.import_sources())
        filler = _PageFiller(self, page)
        self.session.serversChanged.connect(filler.fill)
        page.enabledChanged.connect(self.session.set_enabled)
        page.restartRequested.connect(self.session.restart)
        page.importRequested.connect(self.session.import_from)
        page.revokeRequested.connect(filler.revoke)
        filler.fill()
        return page

    def apply_page(self, page: ToolsPage) -> None:
        preferences = self._window.controller.preferences
        preferences.max_tool_calls = page.max_calls.value()
        preferences.default_tool_servers = page.new_chat_servers()
        self.refresh_button()

    def approval_rows(self) -> list[ApprovalRow]:
        store = self._window.store

        def title(chat_id: int) -> str | None:
            try:
                return store.get_conversation(chat_id).title
            except StoreError:
                return None

        return [
            ApprovalRow(approval_text(a, title), a.description)
            for a in self.session.approval_list()
        ]

    def server_rows(self) -> list[ServerRow]:
        built_in = self.session.builtin_info()
        rows = [
            ServerRow(
                built_in.name,
                built_in.status,
                "Built into Branchwise: your conversations",
                True,
                built_in.tools,
                built_in=True,
            )
        ]
        return rows + [
            ServerRow(
                i.name,
                i.status,
                i.command,
                i.enabled,
                i.tools,
                i.error,
                i.stderr_tail,
                i.never_started,
            )
            for i in self.session.server_infos()
        ]

    # -- what the card and results ask ----------------------------------------------------------

    def _for_chat(self, action: Any) -> None:
        cid = self._window.current_conversation_id
        if cid is not None:
            action(cid)

    @Slot(object, str)
    def _run(self, arguments: dict[str, Any], remember: str) -> None:
        cid = self._window.current_conversation_id
        if cid is not None:
            self.flow.approve(cid, arguments, remember or None)

    @Slot(object)
    def _on_flow(self, change: ToolCallCard | CallLimit | CallSettled) -> None:
        if change.conversation_id == self._window.current_conversation_id:
            self.show_pending()

    @Slot(list)
    def _on_servers_chosen(self, names: list[str]) -> None:
        window = self._window
        cid = window.current_conversation_id
        if cid is None:
            return
        window.controller.change_params(cid, {CHAT_KEY: list(names)})
        self.refresh_button()

    @Slot(object)
    def _on_message_widget(self, widget: MessageWidget) -> None:
        result = widget.findChild(ToolResultView)
        if result is None:
            return
        message_id = int(widget.view.id)
        result.rerunRequested.connect(lambda: self.flow.rerun(message_id))
        result.editSubmitted.connect(lambda text: self.flow.edit_result(message_id, text))


class _PageFiller(QObject):
    """Keeps an open Tools page filled; goes with the page (so does its connection)."""

    def __init__(self, features: ToolFeatures, page: ToolsPage) -> None:
        super().__init__(page)
        self._features = features
        self._page = page

    @Slot()
    def fill(self) -> None:
        self._page.set_servers(self._features.server_rows())
        self._page.set_approvals(self._features.approval_rows())

    @Slot(int)
    def revoke(self, index: int) -> None:
        approvals = self._features.session.approval_list()
        if 0 <= index < len(approvals):
            self._features.session.revoke(approvals[index])
