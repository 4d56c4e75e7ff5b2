"""What compaction tells the window, as frozen dataclasses (the payloads of `Compaction`'s
signals)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SummaryProposal:
    """The branch shown in `conversation_id` has reached the threshold of its context: its
    last reply and prompt took `used` of `context` tokens. The window offers to summarise."""

    conversation_id: int
    used: int
    context: int


@dataclass(frozen=True)
class BranchCompacted:
    """A compacted branch was made: its `summary_id`, the leaf the person goes on from, how many
    messages the summary covers and the earlier tokens it stands for (None: not counted, e.g. a
    remote model), how many it keeps word for word, the last message of the full chat it
    compacts (`through`: one click back), and whether the chat's overflow policy made it."""

    conversation_id: int
    summary_id: int
    leaf_id: int
    covered: int
    stands_for: int | None
    kept: int
    through: int
    automatic: bool


@dataclass(frozen=True)
class BranchComparison:
    """The same question answered on a compacted branch (`with_summary`, a reply's id) and on
    the full chat (`full_chat`): the window shows them side by side."""

    conversation_id: int
    with_summary: int
    full_chat: int
