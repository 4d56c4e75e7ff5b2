"""A reply's tool calls, one after another: ask before each (unless the person chose "always"
for that tool), run it, store its result as a `tool` message under the call, and once every call
of the reply has a result, let the model go on below them.

Nothing here runs a tool by itself: a call runs only on the person's Run (or a remembered
"always" for that very tool and description). Every change is a new node: arguments edited
before Run make a sibling reply (results already given to its other calls are copied, never run
again); a re-run or an edited result is a sibling result; a denied or cancelled call, a timeout or
a crashed server is an error result the model reads. Switching branches runs nothing: a branch
whose calls are answered already holds their results.

One reply's calls are limited (Preferences, 8 by default): past the limit the loop waits for the
person's Continue. A call that repeats one already answered since the person's last message (the
same tool, the same arguments) is asked about even under "always": a model going round in
circles stops at the second time, not at the limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.chat.tools import turns as tool_turns
from app.chat.tools.choice import chat_tools
from app.chat.tools.payloads import CallLimit, CallSettled, ToolCallCard, ToolWait, call_card
from app.chat.tools.runs import ToolRunner
from app.chat.tools.turn_state import ToolTurn, result_stats
from app.mcp.approvals import ToolApprovals
from app.mcp.results import ToolFailure, ToolResult, cap_text, result_cap
from app.mcp.tool_info import ToolInfo
from app.store.conversations import Store, StoreError
from app.store.records import Message, Status

DENIED_TEXT = "The person denied this call; it did not run."
REMEMBER = ("chat", "tool")  # "always for this tool in this chat", "always for this tool"


class ToolFlow(QObject):
    approvalNeeded = Signal(ToolCallCard)
    callRunning = Signal(ToolCallCard)
    settled = Signal(CallSettled)
    limitReached = Signal(CallLimit)
    conversationChanged = Signal(int)  # a result was stored
    notice = Signal(str)

    def __init__(
        self,
        store: Store,
        runner: ToolRunner,
        approvals: ToolApprovals,
        continue_reply: Callable[[int, int], bool],
        max_calls: Callable[[], int],
        context_tokens: Callable[[int], int | None],
        default_servers: Callable[[], list[str] | None] = lambda: None,
        parent: QObject | None = None,
    ) -> None:
        """`continue_reply(conversation_id, parent_id)` asks the model to go on below a result
        (with the chat's tools); `context_tokens(conversation_id)` sizes the result cap;
        `default_servers()` are those a chat that chose none may use (None: all)."""
        super().__init__(parent)
        self.store = store
        self.runner = runner
        self.approvals = approvals
        self._continue = continue_reply
        self._max_calls = max_calls
        self._context_tokens = context_tokens
        self._default_servers = default_servers
        self._turns: dict[int, ToolTurn] = {}
        # Calls allowed past the limit by the person's Continue, per (chat, their message).
        self._extra: dict[tuple[int, int | None], int] = {}

    # --- what the window asks ----------------------------------------------------------------

    def pending(self, conversation_id: int) -> ToolCallCard | CallLimit | None:
        """What the chat waits for now, as its card shows it (what `approvalNeeded`,
        `callRunning` or `limitReached` said), or None."""
        turn = self._turns.get(conversation_id)
        if turn is None or turn.waiting is None:
            return None
        if turn.waiting is ToolWait.LIMIT:
            return self._limit_payload(turn)
        return self._call_payload(turn, turn.waiting)

    def is_running(self, conversation_id: int) -> bool:
        turn = self._turns.get(conversation_id)
        return turn is not None and turn.run is not None

    # --- the loop ------------------------------------------------------------------------------

    def reply_finished(self, conversation_id: int, reply_id: int) -> None:
        """A reply ended by calling tools: answer its calls."""
        try:
            path = self.store.active_path(conversation_id)
        except StoreError as exc:
            self.notice.emit(str(exc))
            return
        if not path or path[-1].id != reply_id or not path[-1].tool_calls:
            return
        self._begin(tool_turns.LoopStart(path, reply_id, reply_id, list(path[-1].tool_calls)))

    def resume(self, conversation_id: int) -> None:
        """A chat opened whose last reply has calls without results (the app quit while asking,
        or the loop was stopped): ask about them again. Nothing runs by itself here, not even
        under "always": the person left these calls unanswered."""
        if conversation_id in self._turns:
            return
        try:
            path = self.store.active_path(conversation_id)
        except StoreError as exc:
            self.notice.emit(str(exc))
            return
        reply, calls = tool_turns.calling_reply(path), tool_turns.unanswered(path)
        if reply is not None and calls and reply.status == "complete":
            self._begin(tool_turns.LoopStart(path, reply.id, path[-1].id, calls), ask_always=True)

    def approve(
        self,
        conversation_id: int,
        arguments: dict[str, Any] | None = None,
        remember: str | None = None,
    ) -> None:
        """Run the call asked about; `arguments` as the person edited them (a sibling reply
        holds them when they differ); `remember` "chat" or "tool" keeps the answer."""
        turn = self._turns.get(conversation_id)
        if (
            turn is None
            or turn.waiting is not ToolWait.APPROVAL
            or turn.call is None
            or turn.tool is None
        ):
            return
        if remember in REMEMBER:
            self.approvals.approve(turn.tool, conversation_id if remember == "chat" else None)
        if arguments is not None and arguments != turn.call["arguments"]:
            self._edit_arguments(turn, arguments)
        else:
            self._run(turn)

    def deny(self, conversation_id: int) -> None:
        """Refuse the call asked about: the model reads that it was denied and goes on."""
        turn = self._turns.get(conversation_id)
        if turn is None or turn.waiting is not ToolWait.APPROVAL or turn.call is None:
            return
        self._store_result(turn, ToolResult(DENIED_TEXT, ToolFailure.DENIED))

    def cancel(self, conversation_id: int) -> None:
        """Cancel the call running in this chat; it ends as a cancelled (error) result."""
        turn = self._turns.get(conversation_id)
        if turn is not None and turn.run is not None:
            turn.run.cancel()

    def continue_past_limit(self, conversation_id: int) -> None:
        """Let the reply make as many calls again as the limit allows."""
        turn = self._turns.get(conversation_id)
        if turn is not None and turn.waiting is ToolWait.LIMIT:
            key = (conversation_id, turn.user_id)
            self._extra[key] = self._extra.get(key, 0) + self._max_calls()
            turn.limit += self._max_calls()
            turn.waiting = None
            self.settled.emit(CallSettled(conversation_id, None))
            self._advance(turn)

    def stop(self, conversation_id: int) -> None:
        """Leave the loop: calls not yet answered stay unanswered (nothing more runs)."""
        turn = self._turns.pop(conversation_id, None)
        if turn is not None:
            if turn.run is not None:
                turn.run.cancel()
            self.settled.emit(CallSettled(conversation_id, None))

    def rerun(self, tool_message_id: int) -> None:
        """Run a stored call again: its new result is a sibling of the old one; the reply's
        later calls keep the results they had, and the model goes on below."""
        try:
            message = self.store.get_message(tool_message_id)
            if message.role == "tool" and message.parent_id is not None:
                self._branch_from_result(message, rerun=True)
        except StoreError as exc:
            self.notice.emit(str(exc))

    def edit_result(self, tool_message_id: int, text: str) -> None:
        """A sibling result with the person's text; the model goes on below it."""
        try:
            original = self.store.get_message(tool_message_id)
            if original.role != "tool":
                return
            later = self._later_results(original)
            edited = self.store.edit_message(tool_message_id, text)
            self.conversationChanged.emit(edited.conversation_id)
            self._branch_from_result(edited, rerun=False, later=later)
        except StoreError as exc:
            self.notice.emit(str(exc))

    # --- inside --------------------------------------------------------------------------------

    def _begin(
        self,
        start: tool_turns.LoopStart,
        reused: dict[str, Message] | None = None,
        ask_always: bool = False,
    ) -> None:
        """Answer the calls of `start`; `reused`: results to copy instead of running again."""
        before = start.before
        conversation_id = before[-1].conversation_id
        old = self._turns.get(conversation_id)
        if old is not None and old.run is not None:
            old.run.cancel()
        user_id = next((m.id for m in reversed(before) if m.role == "user"), None)
        limit = self._max_calls() + self._extra.get((conversation_id, user_id), 0)
        count = tool_turns.calls_since_person(before)
        turn = ToolTurn(
            conversation_id,
            start.reply_id,
            start.leaf_id,
            start.calls,
            count,
            limit,
            user_id,
            reused=reused or {},
            approved=set(start.approved),
            ask_always=ask_always,
        )
        self._turns[conversation_id] = turn
        self._advance(turn)

    def _later_results(self, message: Message) -> dict[str, Message]:
        return tool_turns.later_results(
            self.store.active_path(message.conversation_id), self.store.path_to(message.id), message
        )

    def _branch_from_result(
        self, message: Message, rerun: bool, later: dict[str, Message] | None = None
    ) -> None:
        """Answer the reply's calls again from `message`'s (re-run) or after it (edited)."""
        start = tool_turns.restart_from_result(self.store.path_to(message.id), rerun)
        if start is not None:
            self._begin(start, self._later_results(message) if later is None else later)

    def _advance(self, turn: ToolTurn) -> None:
        while turn.remaining:
            call = turn.remaining[0]
            reused = turn.reused.pop(call["id"], None)
            if reused is not None and turn.call is None:
                self._copy_result(turn, reused)
                continue
            if turn.count >= turn.limit:
                turn.waiting = ToolWait.LIMIT
                self.limitReached.emit(self._limit_payload(turn))
                return
            turn.call, turn.tool = call, self.tool_for(turn.conversation_id, call["name"])
            if turn.tool is None:
                unknown = f"There is no tool named {call['name']} in this chat; it did not run."
                self._store_result(turn, ToolResult(unknown, ToolFailure.BAD_ARGUMENTS))
                return
            if call["id"] in turn.approved or (
                not turn.ask_always
                and self.approvals.is_approved(turn.tool, turn.conversation_id)
                and not self._repeated(turn)
            ):
                self._run(turn)
                return
            turn.waiting = ToolWait.APPROVAL
            self.approvalNeeded.emit(self._call_payload(turn, ToolWait.APPROVAL))
            return
        del self._turns[turn.conversation_id]
        self._continue(turn.conversation_id, turn.leaf_id)

    def _run(self, turn: ToolTurn) -> None:
        assert turn.call is not None and turn.tool is not None
        turn.waiting = ToolWait.RUNNING
        turn.started = time.monotonic()
        self.callRunning.emit(self._call_payload(turn, ToolWait.RUNNING))
        this = turn

        def done(result: ToolResult) -> None:
            if self._turns.get(this.conversation_id) is this:
                this.run = None
                self._store_result(this, result)

        turn.run = self.runner.start(turn.tool, turn.call["arguments"], done, turn.conversation_id)

    def _store_result(self, turn: ToolTurn, result: ToolResult) -> None:
        call = turn.call
        assert call is not None
        tool = turn.tool
        shown = cap_text(result.text, result_cap(self._context_tokens(turn.conversation_id)))
        stats = result_stats(tool, call["name"], result, shown)
        status = "error" if result.is_error else "complete"
        if self._saved(turn, call["id"], call["name"], shown, status, stats) is None:
            return
        turn.settle_call()
        self.settled.emit(CallSettled(turn.conversation_id, call["id"]))
        self.conversationChanged.emit(turn.conversation_id)
        self._advance(turn)

    def _copy_result(self, turn: ToolTurn, old: Message) -> None:
        """A result given before to the same call, put on the new branch as it was."""
        status = "error" if old.status == "error" else "complete"
        message = self._saved(
            turn,
            old.tool_call_id or "",
            old.tool_name or "",
            old.content,
            status,
            {**old.stats, "reused_from": old.id},
        )
        if message is not None:
            self.conversationChanged.emit(turn.conversation_id)

    def _saved(
        self,
        turn: ToolTurn,
        call_id: str,
        name: str,
        text: str,
        status: Status,
        stats: dict[str, Any],
    ) -> Message | None:
        """The result stored below the turn's leaf, which it becomes; None if it failed."""
        try:
            message = self.store.add_tool_result(
                turn.leaf_id, call_id, name, text, status=status, stats=stats
            )
        except StoreError as exc:
            self._fail(turn, f"The tool result could not be saved: {exc}")
            return None
        turn.remaining.pop(0)
        turn.leaf_id = message.id
        turn.count += 1
        return message

    def _edit_arguments(self, turn: ToolTurn, arguments: dict[str, Any]) -> None:
        """The reply again as a sibling with these arguments for the call asked about; results
        its earlier calls had are copied over, so nothing runs twice."""
        assert turn.call is not None
        reply = self.store.get_message(turn.reply_id)
        calls = [
            {**c, "arguments": arguments} if c["id"] == turn.call["id"] else dict(c)
            for c in reply.tool_calls
        ]
        path = self.store.active_path(turn.conversation_id)
        given = tool_turns.answered(path, reply)
        try:
            sibling = self.store.edit_tool_calls(reply.id, calls)
        except StoreError as exc:
            self._fail(turn, f"The edited call could not be saved: {exc}")
            return
        turn.reply_id = turn.leaf_id = sibling.id
        index = [c["id"] for c in calls].index(turn.call["id"])
        turn.reused = {c["id"]: given[c["id"]] for c in calls[:index] if c["id"] in given}
        turn.approved.add(turn.call["id"])
        turn.remaining = calls
        turn.count -= len(turn.reused)  # copied below again, counted once
        turn.settle_call()
        self.conversationChanged.emit(turn.conversation_id)
        self._advance(turn)  # copies the earlier results, then runs the edited call

    def _fail(self, turn: ToolTurn, message: str) -> None:
        self._turns.pop(turn.conversation_id, None)
        self.settled.emit(CallSettled(turn.conversation_id, None))
        self.notice.emit(message)

    def tool_for(self, conversation_id: int, model_name: str) -> ToolInfo | None:
        """The chat's tool the model calls `model_name`; raises StoreError."""
        return next((t for t in self.offered(conversation_id) if t.model_name == model_name), None)

    def offered(self, conversation_id: int) -> list[ToolInfo]:
        """The tools this chat may use now (its allowed servers, ready)."""
        params = self.store.get_conversation(conversation_id).params
        return chat_tools(self.runner.available(), params, self._default_servers())

    def _repeated(self, turn: ToolTurn) -> bool:
        """The call asked about repeats one answered since the person's last message."""
        return turn.call is not None and tool_turns.repeats_answered_call(
            self.store.path_to(turn.leaf_id), turn.call
        )

    def _call_payload(self, turn: ToolTurn, waiting: ToolWait) -> ToolCallCard:
        tool = turn.tool
        changed = tool and self.approvals.changed_since_approval(tool, turn.conversation_id)
        return call_card(
            turn.conversation_id,
            turn.reply_id,
            turn.call or {},
            tool,
            changed.description if changed else None,
            self._repeated(turn),
            waiting,
        )

    def _limit_payload(self, turn: ToolTurn) -> CallLimit:
        count = tool_turns.calls_since_person(self.store.active_path(turn.conversation_id))
        return CallLimit(turn.conversation_id, count, self._max_calls())
