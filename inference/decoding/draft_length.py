"""How many tokens to draft: only as many as pay for themselves on this machine.

A verification pass over the pending token and k drafts costs about `single + k * extra`
seconds, and yields 1 + a + a² + ... + a^k tokens on average when each draft is accepted with
probability a. On a GPU the extra tokens are nearly free (`extra` << `single`): drafting wins
whenever drafts are sometimes right. On a CPU, MLX's matrix products cost in proportion to their
rows, so a pass over k + 1 tokens costs about k + 1 steps and drafting cannot win: it is then
declined, and decoding runs at plain speed. `PassTimes` measures the two costs (kept by the
engine across replies: a property of the machine and model), `DraftLength` tracks the acceptance
rate within one reply and picks the length with the best expected tokens per second.
"""

from __future__ import annotations

DEFAULT_MAX_DRAFT = 8
# Drafting must promise this many times plain speed: estimates are noisy, and a pass's own
# bookkeeping is not free.
MIN_GAIN = 1.1
# Until measured otherwise, a draft is assumed right this often (prompt lookup drafts only where
# the conversation repeats itself) and an extra token nearly free.
PRIOR_RATE = 0.8
_SMOOTHING = 0.7  # weight kept by a running estimate at each new measurement
# While drafting is declined, the acceptance estimate drifts back this much toward the prior
# each pass, so a reply that turns to copying gets drafts again.
_RECOVERY = 0.05
# While drafting is declined, one pass in this many still drafts a token (where the drafter has
# one), so a cost estimate spoilt by a moment of load is measured again; it costs at most about
# one step in this many.
PROBE_EVERY = 64
# Drafted passes measured before the engine may give up on speculation for good.
_SETTLED = 8


class PassTimes:
    """Running estimates of a verification pass's cost: `single` seconds for one token, `extra`
    seconds for each drafted token more (drafting included)."""

    def __init__(self) -> None:
        self.single: float | None = None
        self.extra: float | None = None
        self.drafted_passes = 0

    def record(self, drafted: int, seconds: float) -> None:
        if drafted == 0:
            self.single = _blend(self.single, seconds)
        elif self.single is not None:
            self.extra = _blend(self.extra, max(0.0, seconds - self.single) / drafted)
            self.drafted_passes += 1

    def cost_ratio(self, drafted: int) -> float:
        """A pass with `drafted` drafts over a plain step's cost (1 + drafted·extra/single);
        assumed cheap until both are measured, so the first drafts measure it."""
        if self.single is None or self.extra is None or self.single <= 0:
            return 1.0
        return 1.0 + drafted * self.extra / self.single

    def may_pay(self, maximum: int = DEFAULT_MAX_DRAFT) -> bool:
        """False once measured that even a fully accepted draft of `maximum` tokens would not
        beat plain decoding: speculation is then not worth starting on this machine."""
        if self.drafted_passes < _SETTLED:
            return True
        return (maximum + 1) / self.cost_ratio(maximum) > MIN_GAIN


class DraftLength:
    """The draft length for the next pass of one reply (0: do not draft)."""

    def __init__(self, times: PassTimes, maximum: int = DEFAULT_MAX_DRAFT, start: int = 2) -> None:
        self._times = times
        self.maximum = maximum
        # The acceptance run's guide: doubled after a fully accepted draft, cut to one more than
        # the accepted run after a rejection.
        self.run = min(start, maximum)
        self.rate = PRIOR_RATE
        self._declined = 0

    def limit(self) -> int:
        """The length with the best expected tokens per second, or 0 when none beats plain
        decoding by MIN_GAIN."""
        if self._times.single is None:
            return 0  # the first pass of all is a plain step: it measures `single`
        best, best_gain = 0, MIN_GAIN
        for k in range(1, self.run + 1):
            expected = sum(self.rate**i for i in range(k + 1))
            gain = expected / self._times.cost_ratio(k)
            if gain > best_gain:
                best, best_gain = k, gain
        if best == 0:
            self.rate += (PRIOR_RATE - self.rate) * _RECOVERY
            self._declined += 1
            if self._declined >= PROBE_EVERY:
                self._declined = 0
                return 1
        return best

    def update(self, drafted: int, accepted: int, seconds: float) -> None:
        """Record a pass: `drafted` tokens checked, `accepted` agreed with, in `seconds`."""
        self._times.record(drafted, seconds)
        if drafted == 0:
            return
        # Each accepted draft is a success; the first rejected one (if any) a failure.
        rejected = 1 if accepted < drafted else 0
        self.rate = _blend(self.rate, accepted / (accepted + rejected))
        if accepted == drafted:
            self.run = min(self.maximum, self.run * 2)
        else:
            self.run = max(1, accepted + 1)


def _blend(old: float | None, new: float) -> float:
    return new if old is None else old * _SMOOTHING + new * (1 - _SMOOTHING)
