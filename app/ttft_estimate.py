"""How long the first token would take if the person continued at a branch.

From a branch's cache state (tokens in memory, on disk, not cached; computed on the worker) and
rates measured on this machine from finished replies: the prefill rate (prompt tokens computed
per second before the first token) and the restore rate (saved-cache tokens read per second,
what remains of a reply's time to first token once its own prefill is accounted for). Tokens in
memory cost next to nothing (one concatenation per layer). Restore is measured in tokens, not
bytes: for one model every cached token has the same size, so the two are proportional.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# A reply that computed fewer prompt tokens than this says more about fixed overheads than
# about the prefill rate.
MIN_MEASURED_TOKENS = 32


@dataclass
class MeasuredRates:
    prefill_tps: float | None = None
    restore_tps: float | None = None

    def observe(self, stats: dict[str, Any]) -> None:
        """Learn from a finished reply's stats (GenerationStats as a dict)."""
        ttft = float(stats.get("ttft_s") or 0.0)
        computed = int(stats.get("prefill_tokens") or 0)
        disk = int(stats.get("disk_tokens") or 0)
        if ttft <= 0:
            return
        if disk == 0 and computed >= MIN_MEASURED_TOKENS:
            self.prefill_tps = computed / ttft
        elif disk >= MIN_MEASURED_TOKENS and self.prefill_tps:
            restoring = ttft - computed / self.prefill_tps
            if restoring > 0:
                self.restore_tps = disk / restoring


def estimate_ttft(state: dict[str, Any], rates: MeasuredRates) -> float | None:
    """Seconds to the first token at a branch with this cache state, or None before any rate
    has been measured."""
    if rates.prefill_tps is None:
        return None
    seconds = max(int(state["uncached_tokens"]), 1) / rates.prefill_tps
    disk = int(state["disk_tokens"])
    if disk:
        restore = rates.restore_tps or rates.prefill_tps  # unmeasured: no faster than compute
        seconds += disk / restore
    return seconds
