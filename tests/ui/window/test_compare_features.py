"""Regenerate ×N side by side, Compare Versions and the Branch Map in the real window with the
tiny llama: what a person sees and can do with them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from app.chat.branch_outline import OutlineNode, build_outline, walk
from app.store.conversations import Store
from tests.perf import best_of
from tests.tiny_models import NO_EOS
from tests.ui.window_harness import OFFSCREEN_NOISE, running_app, send_and_wait, set_params
from ui.chat.branch_map import BranchMapTree
from ui.chat.sibling_diff import word_diff

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)
SAMPLED = {"temperature": 0.9, "top_p": 0.95, "max_tokens": 6, "seed": 7, "logit_bias": NO_EOS}


def test_word_diff_marks_changed_words_and_keeps_the_layout() -> None:
    left, right = word_diff("The cat sat\non the mat.", "The dog sat\non the mat!")
    assert "".join(t for t, _ in left) == "The cat sat\non the mat."
    assert [t for t, changed in left if changed] == ["cat", "mat."]
    assert [t for t, changed in right if changed] == ["dog", "mat!"]
    same, _ = word_diff("same words", "same words")
    assert not any(changed for _, changed in same)


def test_regenerate_three_side_by_side_keep_one_compare_and_map(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window, ctl = app.window, app.controller
        window.new_chat()
        set_params(app, SAMPLED)
        send_and_wait(qtbot, app, "Hello there")
        features = window.compare
        reply_id = str(ctl.store.active_path(window.current_conversation_id)[-1].id)
        button = window.chat_view.message_widget(reply_id).regenerate_button
        assert [a.text() for a in button.menu().actions()] == [
            *(f"Regenerate ×{n} Side by Side" for n in (2, 3, 4)),
            "",
            "Compare with Other Models…",
        ]
        with qtbot.waitSignal(ctl.variants.ended, timeout=30000):
            button.menu().actions()[1].trigger()  # ×3
        view = features.view
        assert view is not None and len(view.columns) == 3
        assert all(c.text.toPlainText() for c in view.columns)
        assert all("6 tokens" in c.stats.text() for c in view.columns)
        cid = window.current_conversation_id
        first = ctl.store.active_path(cid)[1]
        siblings, _ = ctl.store.siblings(first.id)
        assert len(siblings) == 4
        view.columns[2].keep.click()
        assert ctl.store.active_path(cid)[-1].id == siblings[3].id
        assert not view.isVisible()

        # Compare: the kept version against the one before it, word by word.
        features.compare_focused()
        diff = features.diff
        assert diff is not None
        texts = [p.toPlainText() for p in diff.panes]
        assert texts == [siblings[2].content, siblings[3].content]

        # The branch map: one line per version of the reply, the kept one current.
        features.map_action.trigger()
        tree = features.dock.tree
        qtbot.waitUntil(
            lambda: tree.topLevelItemCount() == 1 and tree.topLevelItem(0).text(2) != "–",
            timeout=10000,
        )
        top = tree.topLevelItem(0)
        assert top.childCount() == 4
        current = top.child(3)
        assert current.font(0).bold() and current.text(0).startswith("●")
        assert current.text(2) == "in memory"
        spoken = current.data(0, Qt.ItemDataRole.AccessibleTextRole)
        assert spoken.startswith("current branch") and "version 4 of 4" in spoken
        # Enter on the first version switches to it, and the map follows.
        tree.setFocus()
        tree.setCurrentItem(top.child(0))
        qtbot.keyClick(tree, Qt.Key.Key_Return)
        assert ctl.store.active_path(cid)[-1].id == siblings[0].id
        qtbot.waitUntil(lambda: tree.topLevelItem(0).child(0).font(0).bold(), timeout=5000)


def _big_tree(store: Store, nodes: int) -> int:
    """A conversation whose outline has `nodes` lines: a long trunk with a fork every turn."""
    cid = store.create_conversation().id
    parent = None
    made = 0
    while made < nodes:
        user = store.append_message(cid, parent, "user", f"question {made} " * 6)
        main = store.append_message(cid, user.id, "assistant", f"answer {made} " * 20)
        store.append_message(cid, user.id, "assistant", f"other answer {made} " * 20)
        made += 2  # two reply versions (the next question joins the main one's run)
        parent = main.id
    return cid


# Building the outline and the map over a plain QTreeWidget filled with the same nodes' labels,
# the naive way (measured 1.8-2.0x, 3.7x on a first run): labels, fonts, cache columns and the
# current line may cost a few times that, never a walk of the tree per node.
MAX_MAP_OVER_PLAIN = 6.0


def _plain_tree_s(tree: QTreeWidget, nodes: list[OutlineNode]) -> float:
    """Fill `tree` with one item per node under its parent, all expanded: the least any map
    of these nodes does."""
    started = time.perf_counter()
    tree.setUpdatesEnabled(False)
    tree.clear()
    pending: list[tuple[QTreeWidgetItem | None, OutlineNode]] = [(None, n) for n in nodes]
    while pending:
        parent, node = pending.pop()
        item = QTreeWidgetItem([node.label, "", "", ""])
        if parent is None:
            tree.addTopLevelItem(item)
        else:
            parent.addChild(item)
        pending.extend((item, child) for child in node.children)
    tree.expandAll()
    tree.setUpdatesEnabled(True)
    return time.perf_counter() - started


@pytest.mark.perf
def test_the_map_of_a_300_node_tree_builds_in_a_small_multiple_of_a_plain_tree(
    qtbot, tmp_path: Path
) -> None:
    store = Store.open(tmp_path / "big.sqlite3")
    try:
        cid = _big_tree(store, 300)
        messages = store.all_messages(cid)
        active = {m.id for m in store.active_path(cid)}
        tree, plain = BranchMapTree(), QTreeWidget()
        plain.setHeaderLabels(["Branch", "Tokens", "Cache", "First token"])
        qtbot.addWidget(tree)
        qtbot.addWidget(plain)

        def share() -> float:
            started = time.perf_counter()
            tree.set_outline(build_outline(messages, active))
            mapped = time.perf_counter() - started
            return mapped / _plain_tree_s(plain, build_outline(messages, active))

        ratio = best_of(share, MAX_MAP_OVER_PLAIN)
        assert len(walk(build_outline(messages, active))) >= 300
        assert ratio < MAX_MAP_OVER_PLAIN, f"the map took {ratio:.1f}x a plain tree"
    finally:
        store.close()


def test_switching_conversation_mid_way_keeps_the_versions_marked_stopped(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window, ctl = app.window, app.controller
        window.new_chat()
        set_params(app, SAMPLED)
        send_and_wait(qtbot, app, "Hello there")
        ctl.update_settings(window.current_conversation_id, params={**SAMPLED, "max_tokens": 3000})
        with qtbot.waitSignal(ctl.variants.replyUpdated, timeout=30000):
            window.compare.regenerate_last(2)
        ids = ctl.variants.message_ids()
        with qtbot.waitSignal(ctl.variants.ended, timeout=30000):
            window.new_chat()
        kept = [ctl.store.get_message(i) for i in ids]
        assert all(m.status == "stopped" and m.content for m in kept)
        assert all(m.stats["generated_tokens"] < 3000 for m in kept)
