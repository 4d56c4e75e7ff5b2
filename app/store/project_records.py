"""What the store says of projects: their fields, a deletion that can be undone, the
instructions a reply was generated with, and how instructions and a chat's own system prompt
make the one system prompt the model reads. No SQL here (`app.store.projects` has it)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

# Between a project's instructions and a chat's own system prompt. Fixed, so the instructions
# are the same bytes at the very start of every chat of the project, whatever follows them.
INSTRUCTIONS_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class ProjectFields:
    """What a person sets on a project (its settings dialog)."""

    name: str
    instructions: str = ""
    model_id: str | None = None  # a library model's folder name, or a remote model id
    preset_id: int | None = None  # the preset its new chats start from
    tool_servers: tuple[str, ...] | None = None  # None: what Preferences gives new chats
    # Knowledge collections its new chats read (by name; app.chat.new_chat gives them to them).
    knowledge: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Project(ProjectFields):
    """A stored project: `Project(fields..., id=, uid=, ...)`."""

    id: int = 0
    uid: str = ""
    collapsed: bool = False  # its group is folded in the sidebar
    created_at: float = 0.0
    updated_at: float = 0.0
    instructions_version: int = 0  # 0: never had instructions


@dataclass(frozen=True, slots=True)
class ProjectDeletion:
    """A project deleted softly, with what `Store.restore_project` needs to undo it: its chats,
    and whether they were deleted with it or moved out of it."""

    project_id: int
    name: str
    chat_ids: tuple[int, ...]
    chats_deleted: bool


@dataclass(frozen=True, slots=True)
class InstructionsUsed:
    """The project instructions a reply was asked with, as its provenance records them
    (`as_provenance`): the project, the version of its instructions and their digest."""

    project_uid: str
    project: str
    version: int
    digest: str

    def as_provenance(self) -> dict[str, Any]:
        return {
            "project_uid": self.project_uid,
            "project": self.project,
            "version": self.version,
            "digest": self.digest,
        }


def instructions_digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def with_instructions(instructions: str, system_prompt: str) -> str:
    """The system prompt a project's chat is asked with: the project's instructions first,
    exactly as written (the shared prefix the branch cache stores once), then the chat's own."""
    if not instructions.strip():
        return system_prompt
    if not system_prompt.strip():
        return instructions
    return instructions + INSTRUCTIONS_SEPARATOR + system_prompt
