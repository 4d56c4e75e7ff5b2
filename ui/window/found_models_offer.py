"""The first start's offer of the models other apps hold: once the window is up, LM Studio's,
Ollama's and the Hugging Face cache's folders are scanned in the background, and if any model
there can be added, a notice offers to show them (Find Models on This Computer…). It happens
once: a preference remembers the look, found or not, so later starts never scan by themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer

from app.operations.found_models import ScanResult, scan_for_models
from app.settings import Preferences
from ui.chat.notice_banner import NoticeBanner

# After the window's first paint and the model's load have begun: the scan is file reading,
# but it must not compete with the window's start.
START_DELAY_MS = 3000


def offer_found_models(
    owner: QObject,
    models_dir: Path,
    preferences: Preferences,
    banner: NoticeBanner,
    show: Callable[[], object],
    delay_ms: int = START_DELAY_MS,
) -> bool:
    """Schedule the first start's scan; False when it was done before."""
    if preferences.found_models_offered:
        return False

    def scan() -> None:
        # Folders only: whether mlx-lm knows each model type is asked when they are shown.
        operation = scan_for_models(owner, models_dir, check_types=False)
        operation.on_success(lambda result: _offer(result, preferences, banner, show)).start()

    QTimer.singleShot(delay_ms, owner, scan)
    return True


def _offer(
    result: ScanResult, preferences: Preferences, banner: NoticeBanner, show: Callable[[], object]
) -> None:
    preferences.found_models_offered = True
    addable = [m for m in result.models if m.runnable and not m.in_library]
    if not addable:
        return
    apps = sorted({m.source.label for m in addable})
    count = f"{len(addable)} model{'s' if len(addable) > 1 else ''}"
    banner.show_notice(
        f"Branchwise found {count} on this computer ({', '.join(apps)}): you can use them "
        "without downloading them again.",
        action_text="Show Them",
        action=lambda: _open(show),
        sticky=True,
    )


def _open(show: Callable[[], object]) -> None:
    show()
