"""The cache half of the worker's engine interface, for stand-in engines that keep no cache
(the scripted window engine, the synthetic worker engine)."""

from __future__ import annotations


class CachelessEngine:
    disk_error = None
    disk_budget_bytes = 0

    def cache_bytes(self) -> int:
        return 0

    def clear_cache(self) -> None:
        pass

    def forget(self, conversation_id: object, keep_saved: bool = False) -> None:
        pass

    def disk_bytes(self) -> int:
        return 0

    def save_pending(self, seconds: float) -> bool:
        return False

    def clear_saved_caches(self) -> None:
        pass
