"""Whether dictation can use a microphone now, and asking for it.

macOS asks the person once (`QMicrophonePermission`; the Info.plist's
NSMicrophoneUsageDescription is the question's text, the hardened runtime's audio-input
entitlement lets the app ask at all); once denied, only System Settings can grant it, so the
denied state offers to open that page. Elsewhere Qt reports it granted. No input device is a
state of its own, as is a QtMultimedia that cannot load.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import Enum

from PySide6.QtCore import QCoreApplication, QMicrophonePermission, Qt, QUrl
from PySide6.QtGui import QDesktopServices

# System Settings › Privacy & Security › Microphone.
PRIVACY_SETTINGS = "x-apple.systempreferences:com.apple.preference.security?Privacy_Microphone"


class MicState(Enum):
    READY = "ready"
    UNDETERMINED = "undetermined"  # macOS has not asked yet: the first press asks
    DENIED = "denied"
    NO_DEVICE = "no device"
    UNAVAILABLE = "unavailable"  # QtMultimedia could not load


def multimedia_problem() -> str | None:
    """Why Qt's audio cannot be used here, or None (imports QtMultimedia on first call)."""
    try:
        import PySide6.QtMultimedia  # noqa: F401
    except ImportError as error:
        hint = " Install PulseAudio's library (libpulse0)." if "libpulse" in str(error) else ""
        return f"Qt's audio could not load: {error}.{hint}"
    return None


def microphone_state() -> MicState:
    if multimedia_problem() is not None:
        return MicState.UNAVAILABLE
    app = QCoreApplication.instance()
    status = app.checkPermission(QMicrophonePermission()) if app is not None else None
    if status == Qt.PermissionStatus.Denied:
        return MicState.DENIED
    if status == Qt.PermissionStatus.Undetermined:
        return MicState.UNDETERMINED
    from PySide6.QtMultimedia import QMediaDevices

    return MicState.READY if QMediaDevices.audioInputs() else MicState.NO_DEVICE


def ask_for_microphone(done: Callable[[MicState], None]) -> None:
    """Ask the person for the microphone (macOS shows its question once); `done(state)` runs
    with the answer."""
    app = QCoreApplication.instance()
    if app is None:
        done(microphone_state())
        return
    app.requestPermission(QMicrophonePermission(), app, lambda *_: done(microphone_state()))


def open_privacy_settings() -> bool:
    """Open the system's microphone privacy page (macOS); False where there is none."""
    return sys.platform == "darwin" and QDesktopServices.openUrl(QUrl(PRIVACY_SETTINGS))


def state_text(state: MicState, problem: str | None = None) -> str:
    """What the microphone button says about `state`."""
    return {
        MicState.READY: "Dictate (click, or hold to talk)",
        MicState.UNDETERMINED: "Dictate: Branchwise will ask for the microphone first",
        MicState.DENIED: (
            "Branchwise may not use the microphone. Click to open System Settings › Privacy & "
            "Security › Microphone and allow it."
        ),
        MicState.NO_DEVICE: "No microphone: connect one (or turn one on) to dictate",
        MicState.UNAVAILABLE: problem or multimedia_problem() or "Audio is unavailable.",
    }[state]
