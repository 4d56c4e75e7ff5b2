"""`branchwise replay --data-dir DIR --message ID [--json]`: generate a stored reply again from
its provenance and say whether it is identical, for scripts and support. Exits 0 when identical,
1 when different (the first differing token and what changed are printed), 2 when it cannot run
(no provenance, an imported reply, the model or an image gone, an unknown id).

It reads the store beside a running app (`Store.open_another`) and writes nothing: a replay
never changes the tree.
"""

from __future__ import annotations

import argparse
import json
import sys

from app.paths import AppPaths
from app.replay.outcome import ReplayOutcome
from app.replay.plan import ReplayError, plan_replay
from app.store.conversations import Store
from app.store.records import StoreError

IDENTICAL, DIFFERENT, CANNOT_RUN = 0, 1, 2


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="branchwise replay",
        description="Generate a reply again from its recorded provenance and compare the tokens.",
    )
    parser.add_argument("--data-dir", help="the app's data folder (default: the usual one)")
    parser.add_argument("--message", type=int, required=True, help="the reply's message id")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    args = parser.parse_args(argv)
    try:
        with Store.open_another(AppPaths.resolve(args.data_dir).database) as store:
            plan = plan_replay(store, args.message)
        from app.replay.run import run_replay  # loads MLX: only once there is a replay to run

        outcome = run_replay(plan)
    except (ReplayError, StoreError) as exc:
        _refuse(str(exc), args.json)
        return CANNOT_RUN
    except Exception as exc:  # the model failed to load or to run: said, never a traceback
        _refuse(f"The replay could not run: {exc}", args.json)
        return CANNOT_RUN
    _report(outcome, args.json)
    return IDENTICAL if outcome.identical else DIFFERENT


def _refuse(message: str, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"error": message}, ensure_ascii=False))
    else:
        print(f"branchwise replay: {message}", file=sys.stderr)


def _report(outcome: ReplayOutcome, as_json: bool) -> None:
    if as_json:
        print(json.dumps(outcome.as_json(), ensure_ascii=False, indent=2))
        return
    print(outcome.summary())
    if outcome.first_difference is not None:
        print(f"  recorded: {outcome.recorded_piece!r}")
        print(f"  now:      {outcome.replayed_piece!r}")
