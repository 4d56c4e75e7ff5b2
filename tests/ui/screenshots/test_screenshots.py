"""Screenshots of the main states (empty, streaming, branched `‹ 2/3 ›`, dark theme, 200 %
scaling, messages left out of a long chat) saved into tests/screenshots/ for a
person to look at; each must be a real picture."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget

from tests.paths import ROOT
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    ReasoningEngine,
    ScriptedEngine,
    ScriptedResult,
    running_app,
    scripted_worker,
    send_and_wait,
)
from ui.window.main_window import MainWindow

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

SHOTS = ROOT / "tests" / "screenshots"
QUESTION = "How do I read a file line by line in Python?"
REPLIES = [
    "## Reading a file line by line\n\n"
    "Open the file in a `with` block and loop over it; Python reads one line at a time, "
    "so even a huge file uses little memory:\n\n"
    '```python\nwith open("notes.txt", encoding="utf-8") as file:\n'
    "    for number, line in enumerate(file, start=1):\n"
    "        print(number, line.rstrip())\n```\n\n"
    "| Method | Memory | Best for |\n|---|---|---|\n"
    "| `for line in file` | one line | large files |\n"
    "| `file.readlines()` | whole file | small files |\n\n"
    "- `rstrip()` drops the newline at the end of each line.\n"
    "- See the [io docs](https://docs.python.org/3/library/io.html) for more.",
    "Use `pathlib`:\n\n```python\nfrom pathlib import Path\n\n"
    'for line in Path("notes.txt").read_text().splitlines():\n    print(line)\n```\n\n'
    "It reads the whole file at once, which is fine for small files.",
    "The simplest way is a `for` loop over the open file object. Each iteration gives you the "
    "next line, newline included, and the `with` block closes the file for you.",
    "You're welcome! Ask again any time.",
]


def _save(widget: QWidget, name: str) -> QImage:
    return _save_image(widget.grab().toImage(), name)


def _save_image(image: QImage, name: str) -> QImage:
    """A picture composed by the test (e.g. a window with its open menu drawn over it)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    assert image.save(str(path))
    _assert_real_picture(QImage(str(path)), name)
    return image


def settle() -> None:
    """Run what waits for the event loop (the layouts a resize, a restyle or a new chat asked
    for): a layout asks its parent's in turn, so one pass, or a qWait that one slow pass
    outlasts, leaves nested layouts half done (a reply's toolbar squashed in the picture)."""
    for _ in range(6):
        QApplication.processEvents()


def _save_light_and_dark(window: MainWindow, shots: dict[str, QWidget]) -> None:
    """Each widget in both themes (`name`-light, `name`-dark), `window` left light."""
    for theme in ("light", "dark"):
        window.set_theme(theme)
        settle()
        for name, widget in shots.items():
            _save(widget, f"{name}-{theme}")
    window.set_theme("light")


def _assert_real_picture(image: QImage, name: str) -> None:
    """Not blank: a real window shot has text and controls, so many distinct colours."""
    assert image.width() >= 600 and image.height() >= 400, name
    colours = {
        image.pixel(x, y) for y in range(0, image.height(), 3) for x in range(0, image.width(), 3)
    }
    assert len(colours) > 40, f"{name} looks blank ({len(colours)} colours)"


def test_screenshots_of_the_main_states(qtbot, tmp_path: Path) -> None:
    engine = ScriptedEngine(list(REPLIES), chars_per_step=4, step_s=0.01)
    with running_app(qtbot, tmp_path, tmp_path / "demo-model", scripted_worker(engine)) as app:
        window = app.window
        window.resize(1100, 760)
        window.set_theme("light")
        _save(window, "empty")

        composer = window.composer
        qtbot.keyClicks(composer.edit, QUESTION)
        composer.send()
        qtbot.waitUntil(lambda: "```python\nwith open" in _streamed(window), timeout=10000)
        _save(window, "streaming")
        qtbot.waitUntil(lambda: not app.controller.is_busy(), timeout=20000)

        reply = app.store.active_path(window.current_conversation_id)[-1]
        for _ in range(2):
            with qtbot.waitSignal(
                app.controller.busyChanged, timeout=20000, check_params_cb=lambda busy: not busy
            ):
                app.controller.regenerate(reply.id)
        latest = app.store.active_path(window.current_conversation_id)[-1]
        app.controller.switch_sibling(latest.id, -1)
        shown = window.chat_view.message_widget(
            str(app.store.active_path(window.current_conversation_id)[-1].id)
        )
        assert shown.nav.position_text == "2/3"
        send_and_wait(qtbot, app, "Thanks!")  # a message below the branch point
        _save(window, "branched")

        window.set_theme("dark")
        _save(window, "dark")
        window.set_theme("light")


THOUGHTS = (
    "The person wants the trains compared. The notes say the night train goes to Vienna; the "
    "price list has Paris-Vienna at 89 and Paris-Berlin at 59.\n\nBerlin is cheaper, but the "
    "notes name Vienna as the plan, so recommend Vienna and mention the saving."
)
ANSWER = (
    "Take the **night train to Vienna** (89 €), as your notes plan.\n\n"
    "If price matters most, Paris–Berlin is 30 € cheaper at 59 €."
)


def test_screenshots_of_thinking_and_attachments(qtbot, tmp_path: Path) -> None:
    engine = ReasoningEngine([f"<think>\n{THOUGHTS}\n</think>\n\n{ANSWER}"], step_s=0.002)
    notes = tmp_path / "trip-notes.md"
    notes.write_text("# Trip\nTake the night train to Vienna on Friday.\n")
    prices = tmp_path / "prices.csv"
    prices.write_text("route,price\nParis-Vienna,89\nParis-Berlin,59\n")
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", scripted_worker(engine)) as app:
        window = app.window
        window.resize(1100, 760)
        window.set_theme("light")
        composer = window.composer
        composer.attachRequested.emit([str(notes), str(prices)])
        qtbot.waitUntil(lambda: len(composer.attached.files.chips) == 2)
        qtbot.keyClicks(composer.edit, "Which train should I take?")
        files = composer.attached.files
        qtbot.waitUntil(lambda: files.chips[1].isVisible() and files.y() >= 0)
        qtbot.wait(100)  # the window lays the taller composer out
        _save(window, "attachments-in-composer")
        with qtbot.waitSignal(
            app.controller.busyChanged, timeout=20000, check_params_cb=lambda busy: not busy
        ):
            composer.send()
        path = app.store.active_path(window.current_conversation_id)
        user = window.chat_view.message_widget(str(path[0].id))
        assert len(user.chips.chips) == 2
        reply = window.chat_view.message_widget(str(path[-1].id))
        section = reply.thinking_section
        assert not section.expanded
        _save(window, "attachments-and-thinking-collapsed")
        qtbot.mouseClick(section.toggle, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(section.text.isVisible)
        _save(window, "thinking-expanded")


def _streamed(window) -> str:
    path = window.store.active_path(window.current_conversation_id)
    widget = window.chat_view.message_widget(str(path[-1].id))
    return widget.view.content if widget is not None else ""


_SCALED = textwrap.dedent(
    """
    import sys
    from PySide6.QtCore import QTimer
    from ui.main import launch, parse_args, run

    data_dir, model, out = sys.argv[1:4]
    launched = launch(parse_args(["--data-dir", data_dir, "--model", model]))
    store, window = launched.store, launched.window
    conversation = store.create_conversation(title="Scaled to 200%")
    question = store.append_message(conversation.id, None, "user", "Explain recursion briefly.")
    for text in ("A function that calls itself on a smaller problem until a base case.",
                 "Recursion solves a problem by solving **smaller copies** of it:\\n\\n"
                 "```python\\ndef factorial(n):\\n    return 1 if n <= 1 else n * factorial(n - 1)"
                 "\\n```"):
        store.append_message(conversation.id, question.id, "assistant", text,
                             model_id="demo", params={})
    window.resize(900, 640)
    window.open_conversation(conversation.id)

    def shoot():
        window.grab().save(out)
        window.close()

    QTimer.singleShot(300, shoot)
    sys.exit(run(launched))
    """
)


def test_screenshot_at_200_percent_scaling(tmp_path: Path, llama_path: Path) -> None:
    out = SHOTS / "scaled-200.png"
    SHOTS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QT_SCALE_FACTOR": "2"}
    subprocess.run(
        [sys.executable, "-c", _SCALED, str(tmp_path), str(llama_path), str(out)],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
    )
    image = QImage(str(out))
    assert image.width() >= 1800, "900 logical pixels at 200 % are 1800 device pixels"
    _assert_real_picture(image, "scaled-200")


class _LongChatEngine(ScriptedEngine):
    """A scripted engine whose chat outgrew its context: the middle turns were left out, part
    of the prompt came from saved caches, and the reply filled what was left."""

    context_length = 2048
    disk_budget_bytes = 30 * 2**30

    def generate(self, messages: list[dict], params: object, **kwargs: object) -> ScriptedResult:
        result = super().generate(messages, params, **kwargs)
        stats = {
            **result.stats,
            "prompt_tokens": 1900,
            "cached_tokens": 1880,
            "disk_tokens": 1500,
            "prefill_tokens": 20,
        }
        middle = tuple(range(2, len(messages) - 3))
        return dataclasses.replace(
            result, finish_reason="context", stats=stats, dropped_messages=middle
        )

    def cache_bytes(self) -> int:
        return 48_200_000

    def disk_bytes(self) -> int:
        return 412_000_000


_LONG_CHAT = [
    (
        "Let's plan a week in Lisbon. Where should we stay?",
        "Alfama for character, Baixa for convenience, Príncipe Real for quiet evenings.",
    ),
    (
        "What should we eat on the first day?",
        "Pastéis de nata at Manteigaria, then grilled sardines by the river.",
    ),
    (
        "Is a day trip to Sintra worth it?",
        "Yes: take the early train from Rossio and start at Pena Palace before the crowds.",
    ),
    ("And Cascais?", "An easy half day: the coastal path to Boca do Inferno is lovely."),
]


def test_screenshots_of_left_out_messages(qtbot, tmp_path: Path) -> None:
    engine = _LongChatEngine(["Day seven: a slow morning in Belém, then the tram back to"])
    with running_app(qtbot, tmp_path, tmp_path / "demo-model", scripted_worker(engine)) as app:
        window, store = app.window, app.store
        window.resize(1100, 860)
        window.set_theme("light")
        cid = window.current_conversation_id
        store.rename(cid, "A week in Lisbon")
        parent = None
        for question, answer in _LONG_CHAT:
            parent = store.append_message(cid, parent, "user", question).id
            parent = store.append_message(cid, parent, "assistant", answer).id
        window.open_conversation(cid)
        window._render()
        send_and_wait(qtbot, app, "Summarise the whole week in one line per day.")
        qtbot.wait(300)  # the finished reply's layout settles
        window.chat_view.scroll_to_bottom()
        path = store.active_path(cid)
        dimmed = [
            m.id
            for m in path
            if window.chat_view.message_widget(str(m.id)) is not None
            and window.chat_view.message_widget(str(m.id)).view.left_out
        ]
        assert dimmed == [m.id for m in path[2:-4]]  # the prompt's latest turn and a half kept
        _save(window, "left-out-light")
        window.set_theme("dark")
        _save(window, "left-out-dark")
        window.set_theme("light")
