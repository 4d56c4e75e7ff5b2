"""The best-of-N helper behind every `perf` test: retries only slow runs, never loosens a limit."""

from __future__ import annotations

from tests.perf import best_of


def test_a_fast_first_run_is_not_repeated() -> None:
    times = iter([0.1, 0.05])
    calls = []
    assert best_of(lambda: calls.append(1) or next(times), limit=0.2) == 0.1
    assert len(calls) == 1


def test_slow_runs_are_retried_and_the_best_one_is_kept() -> None:
    times = iter([0.9, 0.4, 0.7, 0.1])
    assert best_of(lambda: next(times), limit=0.3, runs=3) == 0.4  # still over: the test fails
