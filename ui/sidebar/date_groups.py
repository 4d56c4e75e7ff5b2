"""The headings the conversation list is grouped under: Pinned, Today, Yesterday, Previous 7
days, then one per month ("March 2026")."""

from __future__ import annotations

from datetime import date, datetime


def date_group(updated_at: datetime, pinned: bool, today: date | None = None) -> str:
    """The heading of a conversation last active at `updated_at`."""
    if pinned:
        return "Pinned"
    today = today or date.today()
    days = (today - updated_at.date()).days
    if days <= 0:
        return "Today"
    if days == 1:
        return "Yesterday"
    if days < 7:
        return "Previous 7 days"
    return f"{updated_at:%B %Y}"
