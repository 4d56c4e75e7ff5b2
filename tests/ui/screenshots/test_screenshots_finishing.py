"""Screenshots, light and dark, of the finishing touches (issue 18 item 9) into
tests/screenshots/: a long message of the person's folded under "Show more", and a reply that
is still streaming, with a table and the cursor where the text goes on (finishing-*)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.screenshots.test_screenshots import _save, _streamed
from tests.ui.window_harness import OFFSCREEN_NOISE, ScriptedEngine, running_app, scripted_worker

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

LONG_QUESTION = (
    "\n".join(
        f"{n}. {item}"
        for n, item in enumerate(
            [
                "Paris to Vienna, night train, leaves 19:40",
                "Paris to Berlin, day train, leaves 08:15",
                "Vienna to Budapest, regional, every two hours",
                "Berlin to Prague, EuroCity, leaves 10:30",
                "Prague to Vienna, Railjet, leaves 12:12",
                "Budapest to Zagreb, one train a day",
                "Zagreb to Ljubljana, leaves 15:05",
                "Ljubljana to Trieste, bus, leaves 18:00",
                "Trieste to Venice, regional, every hour",
                "Venice to Milan, Frecciarossa, every half hour",
                "Milan to Zurich, EuroCity, leaves 09:10",
                "Zurich to Munich, EuroCity, leaves 07:33",
                "Munich to Salzburg, regional, every hour",
                "Salzburg to Vienna, Railjet, every half hour",
            ],
            start=1,
        )
    )
    + "\n\nWhich of these legs are night trains, and how would you order a two-week trip?"
)
REPLY = (
    "Only the first leg is a night train. A two-week order that never doubles back:\n\n"
    "| Days | Leg | Train |\n|---|---|---|\n"
    "| 1–3 | Paris → Vienna | night train |\n"
    "| 4–5 | Vienna → Budapest | regional |\n"
    "| 6–7 | Budapest → Zagreb | daily train |\n"
    "| 8–9 | Zagreb → Ljubljana | afternoon train |\n\n"
    "From Ljubljana the bus to Trieste and the trains on to Venice and Milan take a day each, "
    "which leaves three spare days for whichever city you like best."
)


def test_screenshots_of_show_more_and_a_streaming_table(qtbot, tmp_path: Path) -> None:
    engine = ScriptedEngine([REPLY], chars_per_step=2, step_s=0.05)
    with running_app(qtbot, tmp_path, tmp_path / "demo-model", scripted_worker(engine)) as app:
        window = app.window
        window.resize(1100, 760)
        window.set_theme("light")
        window.composer.edit.setPlainText(LONG_QUESTION)
        window.composer.send()
        qtbot.waitUntil(lambda: "| 6–7 |" in _streamed(window), timeout=20000)

        path = app.store.active_path(window.current_conversation_id)
        question = window.chat_view.message_widget(str(path[-2].id))
        reply = window.chat_view.message_widget(str(path[-1].id))
        assert question.more_button is not None and question.more_button.isVisible()
        assert question.more_button.text() == "Show more"
        assert question.body.height() < question.body.document().size().height()
        for theme in ("light", "dark"):
            window.set_theme(theme)
            assert app.controller.is_busy(), "the reply finished before its screenshot"
            qtbot.wait(50)
            assert reply.body.stream_cursor_rect() is not None
            _save(window, f"finishing-{theme}")
        window.set_theme("light")
        app.controller.stop()
        qtbot.waitUntil(lambda: not app.controller.is_busy(), timeout=20000)
