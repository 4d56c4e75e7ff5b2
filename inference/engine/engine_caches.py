"""The engine's stored caches: the main model's branch cache and, with a draft model, the draft
model's, sharing one memory budget and one disk budget, plus the saved-caches folder.

Worker thread only, like the engine that owns it.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from inference.cache.branch_cache import BranchCache
from inference.cache.files import CacheFolder, default_disk_budget, folder_bytes
from inference.cache.key import cache_key, model_slug
from inference.decoding.draft_model import DraftCaches
from inference.vision.features import FeatureCache

if TYPE_CHECKING:
    from inference.loading.load import LoadedModel

# A vision model's encoder outputs may take this fraction (1/8) of the cache budget: one
# image's are a few MB, so a chat's images stay encoded while its prefixes take the rest.
FEATURE_SHARE = 8
# Stored caches may use this share of the machine's memory unless the app sets a budget.
DEFAULT_BUDGET_FRACTION = 0.2


def default_cache_budget() -> int:
    """The default byte budget for stored caches: a fifth of the machine's memory."""
    return int(psutil.virtual_memory().total * DEFAULT_BUDGET_FRACTION)


class EngineCaches:
    """The main branch cache (`main`), the draft model's (`draft`, or None) and their budgets.

    `cache_dir` keeps caches across restarts (within `disk_budget_bytes`, by default the smaller
    of 30 GiB and a quarter of the free space).
    """

    def __init__(
        self,
        model: LoadedModel,
        cache_budget_bytes: int | None,
        cache_dir: str | Path | None,
        disk_budget_bytes: int | None,
    ) -> None:
        self._loaded = model
        budget = default_cache_budget() if cache_budget_bytes is None else cache_budget_bytes
        self._cache_dir = None if cache_dir is None else Path(cache_dir)
        folder = None
        if self._cache_dir is not None:
            folder = CacheFolder(self._cache_dir, model_slug(model), cache_key(model))
            folder.open()
        self._folder = folder
        self.main = BranchCache(model.model, budget, folder)
        self.draft: DraftCaches | None = None
        vision = model.vision
        # A vision model's encoder outputs, by image digest, within the same budget.
        self.features = (
            FeatureCache(vision.model, vision.image_token_id, 0) if vision is not None else None
        )
        self.cache_budget_bytes = budget
        self._other_disk_bytes = self._count_other_disk_bytes()
        if self._cache_dir is not None:
            self.disk_budget_bytes = (
                default_disk_budget(self._cache_dir)
                if disk_budget_bytes is None
                else disk_budget_bytes
            )

    def set_draft_model(self, draft: LoadedModel | None) -> DraftCaches | None:
        """Keep `draft`'s caches beside the main model's (None: no draft model), splitting the
        budgets between them; raises ModelLoadError for a draft model that cannot serve."""
        total, disk_total = self.cache_budget_bytes, self.disk_budget_bytes
        self.draft = None if draft is None else DraftCaches(self._loaded, draft, self._cache_dir)
        self.cache_budget_bytes = total
        self.disk_budget_bytes = disk_total
        self._other_disk_bytes = self._count_other_disk_bytes()
        return self.draft

    def _count_other_disk_bytes(self) -> int:
        """Bytes saved in the cache folder by other models (counted once, at opening: only
        this engine writes there while it runs)."""
        if self._cache_dir is None:
            return 0
        own = [self._folder, self.draft.folder if self.draft is not None else None]
        return folder_bytes(self._cache_dir) - sum(
            folder_bytes(folder.folder) for folder in own if folder is not None
        )

    def all(self) -> list[BranchCache]:
        """The main model's branch cache, then the draft model's if there is one."""
        return [self.main, *([self.draft.cache] if self.draft is not None else [])]

    @property
    def cache_budget_bytes(self) -> int:
        draft = self.draft.cache.budget_bytes if self.draft is not None else 0
        features = self.features.budget_bytes if self.features is not None else 0
        return self.main.budget_bytes + draft + features

    @cache_budget_bytes.setter
    def cache_budget_bytes(self, value: int) -> None:
        if self.features is not None:
            self.features.budget_bytes = value // FEATURE_SHARE
            value -= self.features.budget_bytes
        if self.draft is None:
            self.main.budget_bytes = value
        else:
            self.main.budget_bytes, self.draft.cache.budget_bytes = self.draft.split(value)

    @property
    def disk_budget_bytes(self) -> int:
        draft = self.draft.cache.disk_budget_bytes if self.draft is not None else 0
        return self.main.disk_budget_bytes + draft

    @disk_budget_bytes.setter
    def disk_budget_bytes(self, value: int) -> None:
        value = max(0, int(value))
        if self.draft is None:
            self.main.disk_budget_bytes = value
        else:
            self.main.disk_budget_bytes, self.draft.cache.disk_budget_bytes = self.draft.split(
                value
            )

    @property
    def disk_error(self) -> str | None:
        draft = self.draft.cache.disk_error if self.draft is not None else None
        return self.main.disk_error or draft

    def nbytes(self) -> int:
        features = self.features.nbytes() if self.features is not None else 0
        return features + sum(cache.nbytes() for cache in self.all())

    def disk_bytes(self) -> int:
        return self._other_disk_bytes + sum(cache.disk_bytes() for cache in self.all())

    def clear(self) -> None:
        if self.features is not None:
            self.features.clear()
        for cache in self.all():
            cache.clear()

    def clear_saved(self) -> None:
        for cache in self.all():
            cache.clear_saved()

    def forget(self, conversation_id: Hashable, keep_saved: bool) -> None:
        for cache in self.all():
            cache.forget(conversation_id, keep_saved)

    def save_pending(self, seconds: float) -> bool:
        """Save unsaved caches for about `seconds`, the main model's first; True while some
        remain."""
        deadline = time.monotonic() + seconds
        remaining = False
        for cache in self.all():
            remaining = cache.save_some(max(0.0, deadline - time.monotonic())) or remaining
        return remaining
