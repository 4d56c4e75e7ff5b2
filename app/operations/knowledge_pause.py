"""The pause gate of knowledge indexing (`app.knowledge.pause`) held while the inference worker
generates a reply, so an index run never competes with the chat for the machine.

Apart from the operations (`knowledge`) so the window can wire it at start without loading the
index's modules (numpy among them) before it shows.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from app.knowledge.pause import PauseGate
from app.qt_signal import QtSignal


class GenerationActivity(Protocol):
    """The inference worker, as far as knowing when a reply generates goes: each started
    request id is followed by a finished or a failed payload with the same `request_id`."""

    generationStarted: Final[QtSignal]
    generationFinished: Final[QtSignal]
    generationFailed: Final[QtSignal]


def pause_while_generating(gate: PauseGate, worker: GenerationActivity) -> None:
    """Hold `gate` from each generation's start to its end. Connected directly (no receiver),
    so the gate closes on the worker thread before the reply's prefill begins."""
    worker.generationStarted.connect(gate.hold)
    worker.generationFinished.connect(lambda finished: _release(gate, finished))
    worker.generationFailed.connect(lambda failure: _release(gate, failure))


def _release(gate: PauseGate, ended: Any) -> None:
    gate.release(ended.request_id)
