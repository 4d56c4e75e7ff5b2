"""How long the first token would take if the person continued at a branch.

From a branch's cache state (tokens in memory, on disk, not cached; computed on the worker) and
rates measured on this machine from finished replies. Prefill time is modelled as
`a·n + b·n·(c + n/2)` for `n` tokens computed after `c` cached ones: a cost per token (the
weights) plus one that grows with the context each token attends to. `a` and `b` are fitted by
least squares to the recent replies, so a follow-up after a long history (small `n`, large `c`)
and a fresh long prompt are both predicted well; with a single kind of reply seen so far, the
context term is left out. The restore rate is saved-cache tokens read per second: what remains of
a reply's time to first token once its own prefill is accounted for. Tokens in memory cost next
to nothing (one concatenation per layer).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inference.engine.cache_state import PathCacheState

# A reply that computed fewer prompt tokens than this says more about fixed overheads than
# about the prefill rate.
MIN_MEASURED_TOKENS = 32
# Recent replies the prefill model is fitted to (the machine's load changes over time).
KEPT_OBSERVATIONS = 16


@dataclass
class MeasuredRates:
    # (tokens computed, tokens cached before them, seconds) of recent replies
    samples: deque[tuple[int, int, float]] = field(
        default_factory=lambda: deque(maxlen=KEPT_OBSERVATIONS)
    )
    restore_tps: float | None = None

    def observe(self, stats: dict[str, Any]) -> None:
        """Learn from a finished reply's stats (GenerationStats as a dict)."""
        ttft = float(stats.get("ttft_s") or 0.0)
        computed = int(stats.get("prefill_tokens") or 0)
        cached = int(stats.get("cached_tokens") or 0)
        disk = int(stats.get("disk_tokens") or 0)
        if ttft <= 0:
            return
        if disk == 0 and computed >= MIN_MEASURED_TOKENS:
            self.samples.append((computed, cached, ttft))
        elif disk >= MIN_MEASURED_TOKENS and self.samples:
            restoring = ttft - self.prefill_seconds(computed, cached)
            if restoring > 0:
                self.restore_tps = disk / restoring

    def prefill_seconds(self, computed: int, cached: int) -> float:
        """Predicted seconds to compute `computed` tokens after `cached` ones (needs a sample)."""
        per_token, per_context = self._fit()
        return computed * per_token + per_context * computed * (cached + computed / 2)

    def _fit(self) -> tuple[float, float]:
        """(a, b) of `a·n + b·n·(c + n/2)`, least squares over the samples, neither negative."""
        rows = [(n, n * (c + n / 2), t) for n, c, t in self.samples]
        sxx = sum(x * x for x, _, _ in rows)
        syy = sum(y * y for _, y, _ in rows)
        sxy = sum(x * y for x, y, _ in rows)
        sxt = sum(x * t for x, _, t in rows)
        syt = sum(y * t for _, y, t in rows)
        det = sxx * syy - sxy * sxy
        # Samples of one shape (every one a fresh prompt, say) cannot tell the two terms apart:
        # then a single rate per token, as measured.
        if det <= 1e-9 * sxx * syy:
            return sxt / sxx, 0.0
        a = (sxt * syy - syt * sxy) / det
        b = (syt * sxx - sxt * sxy) / det
        if a < 0:
            return 0.0, syt / syy
        if b < 0:
            return sxt / sxx, 0.0
        return a, b


def estimate_ttft(state: PathCacheState, rates: MeasuredRates) -> float | None:
    """Seconds to the first token at a branch with this cache state, or None before any rate
    has been measured."""
    if not rates.samples:
        return None
    uncached = max(state.uncached_tokens, 1)
    disk = state.disk_tokens
    cached = state.memory_tokens + disk
    seconds = rates.prefill_seconds(uncached, cached)
    if disk:
        if rates.restore_tps:
            seconds += disk / rates.restore_tps
        else:  # unmeasured: no faster than computing them
            seconds += rates.prefill_seconds(disk, 0)
    return seconds
