"""A draft model for speculative decoding: a smaller model with the main model's tokenizer.

The draft model guesses the next tokens greedily from its own caches; the main model checks them
(inference.decoding.speculative), so the reply is the main model's whatever the draft model says.
Its caches are stored like the main model's, in a second `BranchCache` of the same engine: a branch
switch restores both, and their bytes share the engine's memory and disk budgets. With a cache
folder, they are saved under `drafts/` in it, filed by the draft model's identity as the main
model's are (inference.cache.files), so a follow-up after a restart restores both stacks.

Worker thread only, like every MLX object.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import mlx.core as mx
from mlx_lm.generate import generation_stream

from inference.cache.branch_cache import BranchCache
from inference.cache.files import CacheFolder
from inference.cache.key import cache_key, model_slug
from inference.cache.layers import is_segmentable, leaves
from inference.cache.stack import CacheStack
from inference.cache.trie import common_prefix_length
from inference.decoding.draft_length import PassTimes
from inference.decoding.sampling import token_id
from inference.errors import ModelLoadError

if TYPE_CHECKING:
    from inference.loading.load import LoadedModel

# Draft models' saved caches, apart from the main models' (a model may draft for itself, and two
# caches must never share one folder). Main models' folders are hex hashes: no clash.
DRAFTS_FOLDER = "drafts"


def check_draft_model(main: LoadedModel, draft: LoadedModel) -> None:
    """Raise ModelLoadError unless `draft` reads and writes tokens exactly as `main` does (same
    vocabulary, same special and end-of-sequence tokens): otherwise its guesses would be ids of
    other words."""
    problems: list[str] = []
    if main.tokenizer.get_vocab() != draft.tokenizer.get_vocab():
        problems.append("their vocabularies differ")
    if set(main.tokenizer.all_special_tokens) != set(draft.tokenizer.all_special_tokens):
        problems.append("their special tokens differ")
    if set(main.tokenizer.eos_token_ids) != set(draft.tokenizer.eos_token_ids):
        problems.append("they end replies with different tokens")
    if problems:
        raise ModelLoadError(
            f"“{draft.model_id}” cannot be the draft model for “{main.model_id}”: "
            f"{' and '.join(problems)}. A draft model must use the same tokenizer, "
            "e.g. a smaller model of the same family."
        )


class DraftCaches:
    """A checked draft model and the branch cache of its stacks, saved under
    `cache_dir/drafts/` when the engine has a cache folder."""

    def __init__(self, main: LoadedModel, draft: LoadedModel, cache_dir: Path | None) -> None:
        check_draft_model(main, draft)
        if not all(is_segmentable(leaf) for leaf in leaves(CacheStack.empty(draft.model).caches)):
            raise ModelLoadError(
                f"“{draft.model_id}” cannot be a draft model: its layers keep state that cannot "
                "be taken back when a guess is wrong (only attention-only models can draft)."
            )
        self.model = draft
        self.folder: CacheFolder | None = None
        if cache_dir is not None:
            root = cache_dir / DRAFTS_FOLDER
            self.folder = CacheFolder(root, model_slug(draft), cache_key(draft))
            self.folder.open()
        self.cache = BranchCache(draft.model, 0, self.folder)
        main_bytes, draft_bytes = _bytes_per_token(main), _bytes_per_token(draft)
        self._share = draft_bytes / (main_bytes + draft_bytes)
        # A pass here includes the draft model's own steps, so it is timed apart from lookup's.
        self.times = PassTimes()

    def split(self, total: int) -> tuple[int, int]:
        """(main, draft) byte budgets (memory or disk) out of `total`, in proportion to their
        caches' bytes per token, so both keep about as many tokens."""
        draft = int(total * self._share)
        return total - draft, draft

    def drafter(self, prompt: Sequence[int], owner: Hashable, chunk: int) -> DraftModelDrafter:
        return DraftModelDrafter(self.model, self.cache, prompt, owner, chunk)


def _bytes_per_token(loaded: LoadedModel) -> int:
    """The bytes a model's caches take after one token: one allocation step of every layer,
    the same number of tokens for any model, so the ratio of two is their ratio per token."""
    stack = CacheStack.empty(loaded.model)
    loaded.model(mx.array([[0]]), cache=stack.caches)
    stack.evaluate()
    return max(1, stack.nbytes)


class DraftModelDrafter:
    """Drafts with a draft model from a stack of its branch cache, kept in step with the
    tokens the main model chooses; `release` gives the stack back."""

    def __init__(
        self,
        draft: LoadedModel,
        cache: BranchCache,
        prompt: Sequence[int],
        owner: Hashable,
        chunk: int,
    ) -> None:
        self._model = draft.model
        self._cache = cache
        self._owner = owner
        self._chunk = chunk
        self._history = list(prompt)
        self._stack: CacheStack = cache.take(prompt, owner).stack

    def draft(self, limit: int) -> list[int]:
        if limit <= 0:
            return []
        stack = self._stack
        # Drop drafts the main model rejected; keep one token to feed (it gives the next guess).
        stack.rewind(min(common_prefix_length(stack.tokens, self._history), len(self._history) - 1))
        feed = self._history[len(stack.tokens) :]
        guesses: list[int] = []
        with mx.stream(generation_stream):
            while len(feed) > self._chunk:
                self._model(mx.array(feed[: self._chunk])[None], cache=stack.caches)
                stack.evaluate()
                stack.tokens.extend(feed[: self._chunk])
                feed = feed[self._chunk :]
            for _ in range(limit):
                logits = self._model(mx.array(feed)[None], cache=stack.caches)[0, -1]
                stack.tokens.extend(feed)
                guesses.append(token_id(mx.argmax(logits)))
                feed = guesses[-1:]
        return guesses

    def extend(self, tokens: Sequence[int]) -> None:
        self._history.extend(tokens)

    def ready(self) -> bool:
        """A model always has a guess."""
        return True

    def release(self) -> None:
        """Give the draft stack back to its branch cache (which drops it if it is unusable)."""
        self._cache.give_back(self._stack, self._owner)
