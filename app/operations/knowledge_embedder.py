"""The app's one knowledge embedder: the model the preference names
(`app.knowledge.embedder_choice.PreferredEmbedder`), shared by the index runs that make vectors
and the chat's searches that compare with them, so both always speak of the same model.

It is made when first asked for, on whichever thread asks (an index run, a retrieval on the
inference worker): its module imports numpy, and the built-in model's files load in a fraction
of a second, neither of which the window waits for at start. Calls are taken one at a time, so
a preference changed meanwhile makes one new embedder, not two.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.knowledge.embedder import Embedder
    from app.knowledge.embedder_choice import PreferredEmbedder
    from app.knowledge.worker_embedder import WorkerQueue


def shared_embedder(
    setting: Callable[[], str | None], models_dir: Path, worker: WorkerQueue
) -> Callable[[], Embedder | None]:
    """The embedder the preference `setting()` names now (None: BM25 alone)."""
    lock = threading.Lock()
    made: list[PreferredEmbedder] = []

    def embedder() -> Embedder | None:
        with lock:
            if not made:
                from app.knowledge.embedder_choice import PreferredEmbedder

                made.append(PreferredEmbedder(setting, models_dir, worker))
            return made[0]()

    return embedder
