"""`branchwise --self-test`: prove that an installed or frozen app works, without a display.

It walks the real path once: the inference worker loads a model on its thread, streams a short
greedy reply, the reply is rendered as the chat pane renders it and painted offscreen, and on
macOS the mlx.metallib must sit beside the libmlx the process actually loaded (MLX looks for it
there, and a bundle with a stray second libmlx fails with "Failed to load the default
metallib"). On Linux MLX must use the fast BLAS (inference/cpu/fast_blas.py), which the bundle
carries, unless BRANCHWISE_BLAS=bundled asks for MLX's own. Voice must work too: Qt's audio and
speech modules load, the built-in voice speaks, Qt's FFmpeg decodes it and Whisper transcribes it
on the worker (ui/voice/self_check.py). It prints one summary line and
returns 0, or prints the reason and returns 1.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEventLoop, QObject, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QImage, QPainter, QTextDocument
from PySide6.QtWidgets import QApplication

from app.generation.worker import GenerationRequest, InferenceWorker
from app.generation.worker_errors import WorkerFailure
from app.generation.worker_events import ModelLoaded
from app.paths import AppPaths
from ui.text.markdown_render import render

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtCore import SignalInstance

PROMPT = "Say hello in one short sentence."
MAX_TOKENS = 8
LOAD_TIMEOUT_S = 300.0
GENERATE_TIMEOUT_S = 300.0
RENDER_WIDTH = 640


class SelfTestError(Exception):
    """A step failed; the message says which and why."""


def run_self_test(model_path: Path | None, data_dir: str | None = None) -> int:
    """Run the self-test with `model_path`, or with the embedded default model when None."""
    if QApplication.instance() is None:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Branchwise")
    started = time.perf_counter()
    worker = InferenceWorker()
    try:
        path = model_path if model_path is not None else _default_model(worker, data_dir)
        summary = _check(worker, path)
    except SelfTestError as exc:
        print(f"self-test failed: {exc}", file=sys.stderr)
        return 1
    finally:
        worker.shutdown()
    summary["total"] = f"{time.perf_counter() - started:.1f} s"
    print("self-test ok: " + ", ".join(f"{key}={value}" for key, value in summary.items()))
    return 0


class _Relay(QObject):
    """Turns a worker call's callbacks into the signals `_wait` waits on."""

    done = Signal(Path)  # the model folder
    answered = Signal(bool)  # a worker call for the voice check came back
    failed = Signal(str)  # why not


def _default_model(worker: InferenceWorker, data_dir: str | None) -> Path:
    """The built-in model's folder, imported from the embedded GGUF first if need be; the import
    runs MLX, so it runs on the worker thread."""
    from app.library.install import ensure_default_model

    models_dir = AppPaths.resolve(data_dir).models_dir
    relay = _Relay()
    return _wait(
        relay.done,
        relay.failed,
        LOAD_TIMEOUT_S,
        "importing the built-in model",
        lambda: worker.call(
            lambda _engine: ensure_default_model(models_dir), relay.done.emit, relay.failed.emit
        ),
    )


def _check(worker: InferenceWorker, path: Path) -> dict[str, Any]:
    info = _wait(
        worker.modelLoaded,
        worker.loadFailed,
        LOAD_TIMEOUT_S,
        "loading the model",
        lambda: worker.load_model(path),
    )
    request = GenerationRequest(
        request_id=1,
        messages=[{"role": "user", "content": PROMPT}],
        params={"max_tokens": MAX_TOKENS, "temperature": 0.0},
    )
    result = _wait(
        worker.generationFinished,
        worker.generationFailed,
        GENERATE_TIMEOUT_S,
        "generating a reply",
        lambda: worker.submit(request),
    )
    stats = result.stats
    image = _render_offscreen(result.text)
    libmlx = _loaded_libmlx()
    voice = _check_voice(worker)
    return {
        "model": info.model_id,
        "tokens": stats["generated_tokens"],
        "decode": f"{stats['decode_tps']:.1f} tok/s",
        "render": f"{image.width()}x{image.height()}",
        "libmlx": libmlx,
        "metallib": _check_metallib(libmlx),
        "blas": _check_blas(info),
        "weights": info.weights_form or "unknown",
        "voice": voice,
    }


def _check_voice(worker: InferenceWorker) -> str:
    """Voice's modules, voices, decoder and transcription (ui.voice.self_check)."""
    from ui.voice.self_check import VoiceCheckError, check_voice

    relay = _Relay()

    def on_worker(fn: Callable[[], Any]) -> Any:
        answers: list[Any] = []

        def answered(value: Any) -> None:
            answers.append(value)
            relay.answered.emit(True)

        def call() -> None:
            worker.call(lambda _engine: fn(), answered, relay.failed.emit)

        _wait(relay.answered, relay.failed, GENERATE_TIMEOUT_S, "transcribing with Whisper", call)
        return answers[0]

    try:
        return check_voice(on_worker)
    except VoiceCheckError as error:
        raise SelfTestError(f"voice: {error}") from error


def _check_blas(info: ModelLoaded) -> str:
    blas = info.blas or "unknown"
    wanted = sys.platform.startswith("linux") and os.environ.get("BRANCHWISE_BLAS") != "bundled"
    if wanted and not info.blas_in_use:
        raise SelfTestError(f"MLX does not use the fast BLAS: {blas}")
    return blas


class _Outcome(QObject):
    """Receives the worker's cross-thread signals on the GUI thread and ends the wait."""

    def __init__(self, loop: QEventLoop) -> None:
        super().__init__()
        self._loop = loop
        self.value: Any = None
        self.error: str | None = None

    @Slot(object)
    def succeeded(self, value: Any) -> None:
        self.value = value
        self._loop.quit()

    @Slot(object)
    def failed(self, value: Any) -> None:
        # The worker's signals carry a WorkerFailure; the import's relay its message.
        self.error = value.message if isinstance(value, WorkerFailure) else str(value)
        self._loop.quit()


def _wait(
    done: SignalInstance,
    failed: SignalInstance,
    timeout_s: float,
    step: str,
    start: Callable[[], None],
) -> Any:
    loop = QEventLoop()
    outcome = _Outcome(loop)
    done.connect(outcome.succeeded)
    failed.connect(outcome.failed)
    timer = QTimer(singleShot=True, interval=int(timeout_s * 1000))
    timer.timeout.connect(loop.quit)
    timer.start()
    start()
    loop.exec()
    done.disconnect(outcome.succeeded)
    failed.disconnect(outcome.failed)
    if outcome.error is not None:
        raise SelfTestError(f"{step}: {outcome.error}")
    if outcome.value is None:
        raise SelfTestError(f"{step}: no answer within {timeout_s:.0f} s")
    return outcome.value


def _render_offscreen(reply: str) -> QImage:
    """Paint the exchange as the chat pane would; a blank image means fonts or rendering broke."""
    document = QTextDocument()
    document.setHtml(render(f"**You:** {PROMPT}\n\n**Branchwise:** {reply}", dark=False))
    document.setTextWidth(RENDER_WIDTH)
    size = document.size().toSize()
    if size.isEmpty():
        raise SelfTestError("rendering the reply: the document has no size")
    background = QColor("white")
    image = QImage(size, QImage.Format.Format_RGB32)
    image.fill(background)
    painter = QPainter(image)
    document.drawContents(painter)
    painter.end()
    if not _has_ink(image, background):
        raise SelfTestError("rendering the reply: nothing was painted (no usable font?)")
    return image


def _has_ink(image: QImage, background: QColor) -> bool:
    blank = background.rgb()
    return any(
        image.pixel(x, y) != blank
        for y in range(0, image.height(), 2)
        for x in range(0, image.width(), 2)
    )


def _loaded_libmlx() -> Path:
    """The one libmlx this process loaded (two copies would split MLX's state)."""
    loaded = {Path(name) for name in _loaded_images() if Path(name).name.startswith("libmlx")}
    if len(loaded) != 1:
        found = ", ".join(sorted(map(str, loaded))) or "none"
        raise SelfTestError(f"expected exactly one loaded libmlx, found {found}")
    return loaded.pop()


def _loaded_images() -> list[str]:
    if sys.platform == "darwin":
        import ctypes

        dyld = ctypes.CDLL("/usr/lib/libSystem.B.dylib")
        dyld._dyld_image_count.restype = ctypes.c_uint32
        dyld._dyld_get_image_name.argtypes = [ctypes.c_uint32]
        dyld._dyld_get_image_name.restype = ctypes.c_char_p
        return [dyld._dyld_get_image_name(i).decode() for i in range(dyld._dyld_image_count())]
    # Linux: the sixth column of a mapping is the file it maps.
    with open("/proc/self/maps", encoding="utf-8") as maps:
        return [
            fields[5].rstrip("\n")
            for fields in (line.split(maxsplit=5) for line in maps)
            if len(fields) == 6 and fields[5].startswith("/")
        ]


def _check_metallib(libmlx: Path) -> str:
    if sys.platform != "darwin":
        return "n/a"
    metallib = libmlx.parent / "mlx.metallib"
    if not metallib.is_file():
        raise SelfTestError(f"{metallib} is missing beside the loaded {libmlx}")
    return "ok"
