"""Remembered tool approvals: "always for this tool in this chat" and "always for this tool".

Kept in `<data folder>/tool_approvals.json`. Each approval is tied to the hash of what the tool
said about itself when it was approved (its description and arguments), so a server that
changes a tool's description is asked about again; the old description is kept to show what
changed. There is no "allow everything": an approval names one tool of one server.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.kept_files import set_aside
from app.mcp.json_file import JsonFileError, read_object, write_object
from app.mcp.tool_info import ToolInfo

APPROVALS_NAME = "tool_approvals.json"
_VERSION = 1
_WHAT = "The remembered tool approvals"


@dataclass(frozen=True)
class Approval:
    server: str
    tool: str
    definition_hash: str
    description: str  # as approved, to show what changed when it no longer applies
    chat_id: int | None  # None: in every chat
    granted_at: float

    def covers(self, tool: ToolInfo, chat_id: int | None) -> bool:
        return (
            self.server == tool.server
            and self.tool == tool.name
            and self.definition_hash == tool.definition_hash
            and (self.chat_id is None or self.chat_id == chat_id)
        )


class ToolApprovals:
    def __init__(self, path: Path) -> None:
        """Read the approvals; a file that cannot be read is set aside (never lost), `notice`
        says so, and no approval applies."""
        self._path = path
        self.notice: str | None = None
        self._writable = True
        try:
            self._items = _parse(read_object(path, _WHAT))
        except JsonFileError as exc:
            self._items = []
            try:
                aside = set_aside(path)
            except OSError as move_error:
                # Never write over what could not be read: approvals last this session only.
                self._writable = False
                self.notice = (
                    f"{exc} It could not be set aside ({move_error}); approvals given "
                    "now are forgotten when Branchwise quits."
                )
            else:
                self.notice = f"{exc} It was kept as {aside.name}; every tool asks again."

    def approvals(self) -> list[Approval]:
        """Every remembered approval, newest first."""
        return sorted(self._items, key=lambda a: a.granted_at, reverse=True)

    def is_approved(self, tool: ToolInfo, chat_id: int | None) -> bool:
        """Whether `tool` may run in chat `chat_id` without asking."""
        return any(a.covers(tool, chat_id) for a in self._items)

    def changed_since_approval(self, tool: ToolInfo, chat_id: int | None) -> Approval | None:
        """The approval that would apply had the tool not changed its description since."""
        for approval in self.approvals():
            same_scope = approval.chat_id is None or approval.chat_id == chat_id
            same_tool = approval.server == tool.server and approval.tool == tool.name
            if same_tool and same_scope and approval.definition_hash != tool.definition_hash:
                return approval
        return None

    def approve(self, tool: ToolInfo, chat_id: int | None) -> Approval:
        """Remember "always for this tool" (`chat_id` None) or "… in this chat"."""
        approval = Approval(
            tool.server, tool.name, tool.definition_hash, tool.description, chat_id, time.time()
        )
        self._items = [a for a in self._items if not _same_slot(a, approval)] + [approval]
        self._save()
        return approval

    def revoke(self, approval: Approval) -> None:
        self._items = [a for a in self._items if a != approval]
        self._save()

    def revoke_chat(self, chat_id: int) -> None:
        """Forget the approvals given in one chat (when it is deleted)."""
        self._items = [a for a in self._items if a.chat_id != chat_id]
        self._save()

    def _save(self) -> None:
        if not self._writable:
            return
        data = {"version": _VERSION, "approvals": [asdict(a) for a in self._items]}
        write_object(self._path, data)


def _same_slot(a: Approval, b: Approval) -> bool:
    return (a.server, a.tool, a.chat_id) == (b.server, b.tool, b.chat_id)


def _parse(data: dict[str, Any] | None) -> list[Approval]:
    if data is None:
        return []
    items = data.get("approvals")
    if data.get("version") != _VERSION or not isinstance(items, list):
        raise JsonFileError(f"{_WHAT} are in a form this version does not know.")
    try:
        return [_approval(item) for item in items]
    except (TypeError, ValueError, KeyError) as exc:
        raise JsonFileError(f"{_WHAT} hold an entry that cannot be read ({exc}).") from exc


def _approval(item: Any) -> Approval:
    chat_id = item["chat_id"]
    fields = (item["server"], item["tool"], item["definition_hash"], item["description"])
    if not all(isinstance(f, str) for f in fields):
        raise ValueError("server, tool, hash and description must be text")
    if chat_id is not None and (isinstance(chat_id, bool) or not isinstance(chat_id, int)):
        raise ValueError("chat_id must be a whole number or null")
    granted = item["granted_at"]
    if isinstance(granted, bool) or not isinstance(granted, (int, float)):
        raise ValueError("granted_at must be a number")
    return Approval(*fields, chat_id, float(granted))
