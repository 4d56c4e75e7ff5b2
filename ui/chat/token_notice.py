"""What the composer says of the prompt's size against the model's context: the warning near or
over it, whether sending is blocked (only when the chat's overflow policy leaves nothing out),
and the tooltips of the count (with the most a chat's knowledge may add once sent)."""

from __future__ import annotations

# Warn once the prompt takes this share of the context window.
NEAR_CONTEXT_SHARE = 0.9
# What the chat's overflow policy does once the context is full.
_LEFT_OUT = {
    "truncate_middle": "turns from the middle of the chat are left out of the model's view",
    "rolling": "the oldest turns are left out of the model's view",
    "summarise": "turns from the middle are left out of the model's view until older turns "
    "are summarised",
}
TOKENS_TIP = "Tokens the model will read for this message, against its context window"
KNOWLEDGE_TIP = (
    f"{TOKENS_TIP}; the knowledge this chat reads adds up to the second number of excerpts,"
    " found when you send (counted exactly from then on)"
)


def context_notice(count: int, context_length: int, overflow: str | None) -> tuple[str, str]:
    """(kind, text) for a prompt of `count` tokens; kind is "", "warning" or "danger".
    `overflow` is the chat's policy; with one that leaves turns out, a full context only warns."""
    left_out = _LEFT_OUT.get(overflow or "")
    if count >= context_length and left_out:
        return "danger", (
            f"The {context_length:,}-token context is full ({count:,} tokens): {left_out} "
            "(dimmed), and the reply still gets room."
        )
    if count > context_length:
        return "danger", (
            f"Over the {context_length:,}-token context by {count - context_length:,} tokens:"
            " the reply cannot start; shorten the message or start a new chat."
        )
    if count >= NEAR_CONTEXT_SHARE * context_length:
        head = f"Near the {context_length:,}-token context: the prompt takes {count:,} tokens"
        if left_out:
            return "warning", f"{head}. Once it is full, {left_out}."
        return "warning", (
            f"{head}, so the reply will stop after at most {context_length - count:,} tokens."
        )
    return "", ""


def blocks_sending(count: int | None, context_length: int | None, overflow: str | None) -> bool:
    """Whether a prompt of `count` tokens is over the context with nothing to leave out."""
    return bool(count and context_length and count > context_length and overflow not in _LEFT_OUT)
