"""Starting coroutines on the app's asyncio loop: the qasync loop, which is the Qt event loop, so
slots called by Qt run while it is running and their tasks run between Qt events."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

NO_LOOP = (
    "Remote servers need Branchwise's asyncio event loop, and it is not running (a start-up "
    "without qasync)."
)


def spawn[T](coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T] | None:
    """Run `coroutine` as a task on the running loop; None (the coroutine discarded unstarted)
    when no loop is running, so the caller can say so instead of waiting forever."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        coroutine.close()
        return None
    return loop.create_task(coroutine)
