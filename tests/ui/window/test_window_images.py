"""Images in the window, as a person attaches them: a screenshot pasted from the clipboard, a
file dropped on the window and one chosen with the paperclip, each a chip with its size and
tokens; the full-size view; sending to a tiny real vision model (SmolVLM's layout), the sent
message's thumbnails, Regenerate and an edit that swaps an image; an image gone from the data
folder; a text-only model, whose chips say it cannot see them and whose Send is refused; and the
draft's images counted again once a vision model is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QGuiApplication, QImage
from PySide6.QtWidgets import QFileDialog

from app.generation.worker import InferenceWorker
from app.generation.worker_events import ModelLoaded
from app.sizes import format_size
from tests.pictures import picture_bytes
from tests.tiny_vision import build_vision_model
from tests.ui.image_pictures import IMAGE_TOKENS, SeeingEngine, drawn_png, thumbnails_shown
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    SHORT,
    running_app,
    scripted_worker,
    set_params,
)
from ui.chat.image_chips import MISSING
from ui.chat.inline_editor import InlineEditor

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def _idle(qtbot, app, action) -> None:
    with qtbot.waitSignal(
        app.controller.busyChanged, timeout=60000, check_params_cb=lambda busy: not busy
    ):
        action()


def _widget(app, message_id: int):
    return app.window.chat_view.message_widget(str(message_id))


def test_images_from_paste_drop_and_paperclip_go_to_a_vision_model(
    qtbot, tmp_path: Path, monkeypatch
) -> None:
    model = build_vision_model("smolvlm", tmp_path / "SmolVLM-tiny")
    chart = tmp_path / "chart.png"
    chart.write_bytes(drawn_png(64, 48))
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(picture_bytes((30, 20), "JPEG"))
    other = tmp_path / "other.png"
    other.write_bytes(drawn_png(48, 64, hue=20, title="Other"))
    with running_app(qtbot, tmp_path / "data", model) as app:
        window, composer = app.window, app.window.composer
        chips = composer.attached.images
        counts: list[int] = []
        app.controller.tokenCount.connect(lambda count: counts.append(count.count))
        set_params(app, SHORT)
        QGuiApplication.clipboard().setImage(QImage.fromData(drawn_png(80, 60, hue=120)))
        composer.edit.setFocus()
        composer.edit.paste()  # the platform's Paste key
        qtbot.waitUntil(lambda: len(chips.chips) == 1, timeout=20000)
        assert composer.text() == ""  # the picture went to a chip, not into the text
        dropped = QMimeData()
        dropped.setUrls([QUrl.fromLocalFile(str(chart))])
        window.dropEvent(
            QDropEvent(
                QPointF(20, 20),
                Qt.DropAction.CopyAction,
                dropped,
                Qt.MouseButton.LeftButton,
                Qt.KeyboardModifier.NoModifier,
            )
        )
        qtbot.waitUntil(lambda: len(chips.chips) == 2, timeout=20000)
        monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *_a, **_k: ([str(photo)], ""))
        qtbot.mouseClick(composer.attach_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(chips.chips) == 3, timeout=20000)

        pasted, dropped_chip, chosen = chips.chips
        assert pasted.image.name == "Pasted image.png" and pasted.image.format == "PNG"
        size = format_size(chart.stat().st_size)
        assert dropped_chip.details_label.text() == f"64×48 · {size}"
        tokens = dropped_chip.image.tokens
        assert tokens > 0 and dropped_chip.note_label.text() == f"≈ {tokens:,} tokens"
        assert chosen.image.format == "JPEG"
        qtbot.mouseClick(dropped_chip, Qt.MouseButton.LeftButton)
        viewer = chips.viewer
        assert viewer.isVisible() and "64×48 px" in viewer.caption.text()
        qtbot.keyClick(viewer, Qt.Key.Key_Escape)
        assert not viewer.isVisible()
        # The draft's count has the images in it (the tiny model states no context length,
        # so the composer shows no meter: the counts are read from the controller).
        qtbot.waitUntil(lambda: bool(counts) and counts[-1] > 2 * tokens, timeout=20000)
        with_three = counts[-1]
        qtbot.mouseClick(chosen.remove_button, Qt.MouseButton.LeftButton)
        assert [c.image.name for c in chips.chips] == ["Pasted image.png", "chart.png"]
        qtbot.waitUntil(lambda: counts[-1] < with_three, timeout=20000)

        assert composer.text() == "" and composer.button.isEnabled()  # pictures alone may go
        composer.edit.setPlainText("What is in these pictures?")
        assert composer.button.isEnabled()
        _idle(qtbot, app, composer.send)
        assert chips.chips == [] and composer.attachments() == []
        cid = window.current_conversation_id
        user, reply = app.store.active_path(cid)
        assert reply.status == "complete", reply.error
        assert [a["name"] for a in user.attachments] == ["Pasted image.png", "chart.png"]
        shown = _widget(app, user.id).image_chips
        assert [c.image.name for c in shown.chips] == ["Pasted image.png", "chart.png"]
        qtbot.waitUntil(lambda: thumbnails_shown(shown))
        assert all(c.remove_button is None for c in shown.chips)
        qtbot.mouseClick(shown.chips[1], Qt.MouseButton.LeftButton)
        assert shown.viewer.isVisible() and "64×48 px" in shown.viewer.caption.text()
        shown.viewer.close()

        _idle(qtbot, app, lambda: app.controller.regenerate(reply.id))
        again = app.store.active_path(cid)
        assert again[0].id == user.id and again[-1].id != reply.id
        assert again[-1].status == "complete", again[-1].error  # the images went again

        # The editor drops the pasted picture and adds two: a sibling with the new images.
        widget = _widget(app, user.id)
        widget.start_editing()
        editor = widget.findChild(InlineEditor)
        assert [c.image.name for c in editor.attached.images.chips] == [
            "Pasted image.png",
            "chart.png",
        ]
        assert not widget.image_chips.isVisible()  # the editor shows them, removable
        qtbot.mouseClick(editor.attached.images.chips[0].remove_button, Qt.MouseButton.LeftButton)
        editor.imagesRequested.emit([str(other)])  # as its image button's file dialog does
        qtbot.waitUntil(lambda: len(editor.attached.images.chips) == 2, timeout=20000)
        editor.edit.insertFromMimeData(_image_mime(drawn_png(30, 30, hue=300)))  # pasted
        qtbot.waitUntil(lambda: len(editor.attached.images.chips) == 3, timeout=20000)
        assert editor.save_button.isEnabled()  # the images changed, though the text did not
        _idle(qtbot, app, editor.save_button.click)
        edited = app.store.active_path(cid)[0]
        assert edited.id != user.id and edited.parent_id == user.parent_id
        assert [a["name"] for a in edited.attachments] == [
            "chart.png",
            "other.png",
            "Pasted image.png",
        ]
        assert [a["name"] for a in app.store.get_message(user.id).attachments] == [
            "Pasted image.png",
            "chart.png",
        ]
        assert app.store.active_path(cid)[-1].status == "complete"

        # An image file gone from the data folder: a placeholder chip, never a crash.
        app.store.images.path(edited.attachments[1]["sha256"]).unlink()
        window.open_conversation(app.controller.new_conversation())
        window.open_conversation(cid)
        gone = _widget(app, edited.id).image_chips.chips[1]
        assert gone.note_label.text() == MISSING
        qtbot.mouseClick(gone, Qt.MouseButton.LeftButton)  # nothing to open, nothing breaks


def test_a_text_only_model_refuses_images_with_its_reason(qtbot, tmp_path: Path) -> None:
    engine = SeeingEngine(["A picture, I am told."])
    worker = scripted_worker(engine, model_id="SmolLM2", vision=False, text_only_reason="")
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", worker) as app:
        composer = app.window.composer
        composer.edit.insertFromMimeData(_image_mime(drawn_png(40, 30)))  # pasted
        qtbot.waitUntil(lambda: len(composer.attached.images.chips) == 1)
        chip = composer.attached.images.chips[0]
        assert chip.note_label.text() == "SmolLM2 can't see images"
        composer.edit.setPlainText("What is this?")
        assert not composer.button.isEnabled()
        assert composer.notice.isVisible()
        assert composer.notice.text().startswith("SmolLM2 can't see images: it is a text-only")
        assert "Remove the images" in composer.button.toolTip()
        composer.send()  # Enter: refused, nothing lost
        assert composer.text() == "What is this?" and engine.prompts == []
        cid = app.window.current_conversation_id
        with qtbot.waitSignal(app.controller.notice) as notice:
            assert not app.controller.send(cid, "What is this?", composer.attachments())
        assert notice.args[0].startswith("SmolLM2 can't see images")
        assert app.store.active_path(cid) == []

        qtbot.mouseClick(chip.remove_button, Qt.MouseButton.LeftButton)
        assert composer.button.isEnabled() and not composer.notice.isVisible()
        _idle(qtbot, app, composer.send)
        assert engine.prompts[-1][-1]["content"] == "What is this?"


def _image_mime(png: bytes) -> QMimeData:
    mime = QMimeData()
    mime.setImageData(QImage.fromData(png))
    return mime


def test_loading_a_vision_model_counts_the_drafts_images_for_it(qtbot, tmp_path: Path) -> None:
    engine = SeeingEngine(["I see a chart."])

    def factory(path: Path, _progress: object) -> tuple[SeeingEngine, ModelLoaded]:
        # Folders named like a vision model see; the others are text only.
        return engine, ModelLoaded(
            path.name,
            str(path),
            engine.context_length,
            model_type="scripted",
            weights_bytes=1_000_000,
            vision="VLM" in path.name,
        )

    worker = InferenceWorker(engine_factory=factory)
    with running_app(qtbot, tmp_path / "data", tmp_path / "SmolLM2", worker) as app:
        composer = app.window.composer
        composer.attachRequested.emit([str(_picture(tmp_path))])
        qtbot.waitUntil(lambda: len(composer.attached.images.chips) == 1)
        assert composer.attached.images.chips[0].note_label.text() == "SmolLM2 can't see images"
        composer.edit.setPlainText("And now?")
        assert not composer.button.isEnabled()

        app.controller.load_model(tmp_path / "SmolVLM")
        qtbot.waitUntil(lambda: app.controller.model_info.model_id == "SmolVLM")
        qtbot.waitUntil(lambda: composer.attached.images.chips[0].image.tokens == IMAGE_TOKENS)
        assert len(composer.attached.images.chips) == 1  # counted again, not attached twice
        assert composer.attached.images.chips[0].note_label.text() == f"≈ {IMAGE_TOKENS} tokens"
        assert composer.button.isEnabled() and not composer.notice.isVisible()
        _idle(qtbot, app, composer.send)
        parts = engine.prompts[-1][-1]["content"]
        assert [p["type"] for p in parts] == ["image", "text"]

        # Back on the text-only model, editing that message says so and will not save it
        # with its image; without the image it saves.
        app.controller.load_model(tmp_path / "SmolLM2")
        qtbot.waitUntil(lambda: app.controller.model_info.model_id == "SmolLM2")
        user = app.store.active_path(app.window.current_conversation_id)[0]
        widget = _widget(app, user.id)
        widget.start_editing()
        editor = widget.findChild(InlineEditor)
        assert editor.attached.images.chips[0].note_label.text() == "SmolLM2 can't see images"
        editor.edit.setPlainText("Without the picture, then?")
        assert not editor.save_button.isEnabled()
        assert editor.save_button.toolTip().startswith("SmolLM2 can't see images: it is a text")
        qtbot.mouseClick(editor.attached.images.chips[0].remove_button, Qt.MouseButton.LeftButton)
        assert editor.save_button.isEnabled()
        _idle(qtbot, app, editor.save_button.click)
        assert app.store.active_path(app.window.current_conversation_id)[0].attachments == ()


def _picture(folder: Path) -> Path:
    picture = folder / "chart.png"
    picture.write_bytes(drawn_png(64, 48))
    return picture
