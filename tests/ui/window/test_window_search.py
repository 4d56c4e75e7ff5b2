"""Search (issue 18 item 5): one result per conversation with its number of matches and the
matching words highlighted; a jump to another branch updates the token meter."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    ScriptedEngine,
    running_app,
    scripted_worker,
    send_and_wait,
)
from ui.sidebar.list_models import IdRole, MatchCountRole, MessageIdRole, SpansRole
from ui.text.search_snippet import snippet_html

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def test_the_snippet_escapes_the_text_and_highlights_only_the_matches() -> None:
    html = snippet_html([("a <b>tag</b> and ", False), ("apple", True)], "#111", "#22f")
    assert "&lt;b&gt;tag&lt;/b&gt;" in html
    assert "<b style='color:#22f'>apple</b>" in html


def test_one_result_per_chat_with_its_matches_and_a_jump_updates_the_token_meter(
    qtbot, tmp_path: Path
) -> None:
    long_reply = "An apple tart needs " + "flour and butter, " * 60
    engine = ScriptedEngine(["An apple crumble.", long_reply, "Apple juice, cold."])
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        window = app.window
        send_and_wait(qtbot, app, "An apple dessert?")
        first = window.current_conversation_id
        crumble = app.store.active_path(first)[-1]
        with qtbot.waitSignal(
            app.controller.busyChanged, timeout=10000, check_params_cb=lambda busy: not busy
        ):
            app.controller.regenerate(crumble.id)  # the long tart reply is active now
        qtbot.waitUntil(lambda: window.composer.token_label.isVisible(), timeout=10000)
        long_count = window.composer.token_label.text()
        window.new_chat()
        send_and_wait(qtbot, app, "A drink with apple?")

        window.sidebar_commands.search("apple")
        results = window.sidebar.results.model()
        rows = {
            results.index(r, 0).data(IdRole): results.index(r, 0) for r in range(results.rowCount())
        }
        assert set(rows) == {str(first), str(window.current_conversation_id)}
        # The first chat: its question, both replies and its title (taken from the question).
        assert rows[str(first)].data(MatchCountRole) == 4
        assert any(
            match and text.lower() == "apple" for text, match in rows[str(first)].data(SpansRole)
        )

        window.open_conversation(first)  # the jump below stays in this chat
        qtbot.waitUntil(lambda: window.composer.token_label.text() == long_count, timeout=10000)
        window.sidebar_commands.search("crumble")
        hit = window.sidebar.results.model().index(0, 0)
        assert hit.data(MessageIdRole) == str(crumble.id)
        window.sidebar.searchHitActivated.emit(hit.data(IdRole), hit.data(MessageIdRole))
        assert app.store.active_path(first)[-1].id == crumble.id
        qtbot.waitUntil(lambda: window.composer.token_label.text() != long_count, timeout=10000)


def test_a_long_snippet_starts_near_its_first_match() -> None:
    from app.store.records import SearchHit as StoreHit
    from ui.window.conversation_views import search_hits

    lead = "word " * 30
    [hit] = search_hits([StoreHit(1, 2, "A title", ((lead, False), ("apple", True)), -1.0)])
    assert hit.spans[0][0].startswith("…") and len(hit.spans[0][0]) <= 25
    assert hit.spans[1] == ("apple", True)
