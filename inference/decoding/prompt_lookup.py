"""Prompt-lookup drafting: guess the next tokens by finding the conversation's recent tokens
earlier in the conversation and copying what followed them there.

Rewriting, summarising, editing code and quoting all repeat long runs of the prompt, so the
last few tokens of the reply usually occurred before, followed by what the model is about to
write. The index maps every n-gram (of each length from `min_ngram` to `max_ngram`) to the
latest position after it, so a lookup costs a few dictionary reads however long the
conversation is; the longest n-gram that matches wins, because a longer match predicts better.
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_MIN_NGRAM = 2
DEFAULT_MAX_NGRAM = 4


class PromptLookup:
    """The n-gram index of one growing token sequence (prompt, then the reply as it comes)."""

    def __init__(
        self,
        tokens: Sequence[int],
        min_ngram: int = DEFAULT_MIN_NGRAM,
        max_ngram: int = DEFAULT_MAX_NGRAM,
    ) -> None:
        if not 1 <= min_ngram <= max_ngram:
            raise ValueError("need 1 <= min_ngram <= max_ngram")
        self._min, self._max = min_ngram, max_ngram
        self._tokens: list[int] = []
        # (n-gram) -> index of the token that followed its latest occurrence.
        self._follows: dict[tuple[int, ...], int] = {}
        self.extend(tokens)

    def extend(self, tokens: Sequence[int]) -> None:
        """Append tokens, indexing every n-gram whose next token is now known."""
        for token in tokens:
            end = len(self._tokens)
            for n in range(self._min, min(self._max, end) + 1):
                self._follows[tuple(self._tokens[end - n : end])] = end
            self._tokens.append(token)

    def draft(self, limit: int) -> list[int]:
        """Up to `limit` tokens that followed the longest earlier match of the sequence's end;
        empty when nothing matches."""
        if limit <= 0:
            return []
        size = len(self._tokens)
        for n in range(min(self._max, size), self._min - 1, -1):
            start = self._follows.get(tuple(self._tokens[size - n :]))
            if start is not None:
                return self._tokens[start : start + limit]
        return []
