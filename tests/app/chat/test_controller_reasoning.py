"""Reasoning models and attached files through the controller, the real worker and tiny models:
the model info names the template's switch, the chat's Think setting reaches the template,
reasoning is stored apart from the answer, and attached files are read once, counted, refused
when they cannot fit, and still part of the prompt after the file is gone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.chat.prompt_counts import FileAttached
from app.generation.think_settings import THINK
from app.generation.worker import InferenceWorker
from app.settings import Preferences
from app.store.conversations import Store
from tests.reasoning_models import STRIPPING_TEMPLATE, SWITCH_TEMPLATE, with_template
from tests.tiny_models import NO_EOS

GREEDY = {"temperature": 0.0, "max_tokens": 6, "seed": 0, "logit_bias": NO_EOS}


def _controller(qtbot, folder: Path, model: Path) -> ChatController:
    store = Store.open(folder / "chat.sqlite3")
    worker = InferenceWorker()
    ctl = ChatController(store, worker, Preferences(folder / "settings.ini"), lambda _: model)
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        ctl.start()
    return ctl


@pytest.fixture
def make_controller(qtbot, tmp_path: Path, tiny_models_dir: Path) -> Iterator:
    made: list[ChatController] = []

    def make(template: str | None) -> ChatController:
        model = tiny_models_dir / "llama"
        if template is not None:
            model = with_template(model, tmp_path / f"model{len(made)}", template)
        ctl = _controller(qtbot, tmp_path / f"data{len(made)}", model)
        made.append(ctl)
        return ctl

    yield make
    for ctl in made:
        ctl.shutdown()


def _send(qtbot, ctl: ChatController, cid: int, text: str, attachments: list | None = None):
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.send(cid, text, attachments)
    return ctl.store.active_path(cid)[-1]


def test_the_think_switch_is_offered_and_reaches_the_template(qtbot, make_controller) -> None:
    ctl = make_controller(SWITCH_TEMPLATE)
    assert ctl.model_info.think_switch == "enable_thinking"
    assert ctl.model_info.effort_switch is None
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    on = _send(qtbot, ctl, cid, "Hello")
    ctl.update_settings(cid, params={**GREEDY, THINK: False})
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.regenerate(on.id)
    off = ctl.store.active_path(cid)[-1]
    # Off, the template closes an empty block in the prompt: a few more prompt tokens.
    assert off.stats["prompt_tokens"] > on.stats["prompt_tokens"]


def test_a_reply_inside_an_opened_block_is_stored_as_reasoning(qtbot, make_controller) -> None:
    ctl = make_controller(STRIPPING_TEMPLATE)
    assert ctl.model_info.reasons is True
    assert ctl.model_info.think_switch is None
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    streamed: list[dict] = []
    ctl.streamUpdated.connect(streamed.append)
    reply = _send(qtbot, ctl, cid, "Hello")
    # The random model never closes the block: all six tokens are reasoning, no answer.
    assert reply.content == ""
    assert reply.reasoning
    assert reply.stats["reasoning_tokens"] == 6
    assert reply.stats["reasoning_s"] > 0
    assert streamed and all(p.thinking for p in streamed)
    assert streamed[-1].reasoning.strip() == reply.reasoning


def test_a_model_without_reasoning_streams_as_before(qtbot, make_controller) -> None:
    ctl = make_controller(None)
    assert ctl.model_info.reasons is False
    assert ctl.model_info.think_switch is None
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    reply = _send(qtbot, ctl, cid, "Hello")
    assert reply.content and reply.reasoning == ""
    assert "reasoning_tokens" not in reply.stats


def _attach(qtbot, ctl: ChatController, cid: int, path: Path) -> dict:
    with qtbot.waitSignal(ctl.attachmentReady, timeout=30000) as ready:
        ctl.counts.attach_file(cid, str(path))
    assert ready.args[0].conversation_id == cid
    return ready.args[0].record


def test_attached_files_are_counted_sent_and_survive_the_file_going(
    qtbot, make_controller, tmp_path: Path
) -> None:
    ctl = make_controller(None)
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=GREEDY)
    notes = tmp_path / "notes.md"
    notes.write_text("# Paris\nThe capital of France is Paris.\n")
    table = tmp_path / "cities.csv"
    table.write_text("city,country\nParis,France\nBerlin,Germany\n")
    files = [_attach(qtbot, ctl, cid, notes), _attach(qtbot, ctl, cid, table)]
    assert [f["name"] for f in files] == ["notes.md", "cities.csv"]
    assert all(f["tokens"] > 5 for f in files)

    counts: list[dict] = []
    ctl.tokenCount.connect(counts.append)
    with qtbot.waitSignal(ctl.tokenCount, timeout=30000):
        ctl.counts.request_token_count(cid, "Compare", files)
    with qtbot.waitSignal(ctl.tokenCount, timeout=30000):
        ctl.counts.request_token_count(cid, "Compare")
    with_files, without = counts[0].count, counts[1].count
    assert with_files - without >= sum(f["tokens"] for f in files)

    reply = _send(qtbot, ctl, cid, "Compare", files)
    user = ctl.store.active_path(cid)[0]
    assert (user.content, user.attachments) == ("Compare", tuple(files))
    assert reply.stats["prompt_tokens"] == with_files

    notes.unlink()
    table.unlink()
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.regenerate(reply.id)
    again = ctl.store.active_path(cid)[-1]
    assert again.id != reply.id
    # The same prompt, files included, read from the store: reused whole from the cache.
    assert again.stats["prompt_tokens"] == reply.stats["prompt_tokens"]
    assert again.stats["cached_tokens"] >= reply.stats["prompt_tokens"] - 1


def test_files_that_cannot_be_attached_are_refused_with_a_reason(
    qtbot, make_controller, tmp_path: Path
) -> None:
    ctl = make_controller(None)
    cid = ctl.new_conversation()
    notices: list[str] = []
    ctl.notice.connect(notices.append)
    ready: list[FileAttached] = []
    ctl.attachmentReady.connect(ready.append)

    binary = tmp_path / "weights.bin"
    binary.write_bytes(bytes(range(256)))
    huge = tmp_path / "huge.txt"
    huge.write_text("Tell me a story about a cat and a dog. " * 1500)
    for path in (binary, huge, tmp_path / "missing.txt"):
        with qtbot.waitSignal(ctl.notice, timeout=30000):
            ctl.counts.attach_file(cid, str(path))
    assert ready == []
    assert "weights.bin is a binary file" in notices[0]
    context = ctl.model_info.context_length
    assert notices[1].startswith("huge.txt needs ")
    assert f"context of {context:,} tokens" in notices[1]
    needed = int(notices[1].split(" needs ")[1].split(" tokens")[0].replace(",", ""))
    assert needed > context
    assert "missing.txt could not be read" in notices[2]

    # A file the model could take but this chat's own, shorter context cannot.
    story = tmp_path / "story.txt"
    story.write_text("Tell me a story about a cat and a dog. " * 60)
    assert _attach(qtbot, ctl, cid, story)["tokens"] > 300
    ctl.update_settings(cid, params={**GREEDY, "context_length": 300})
    with qtbot.waitSignal(ctl.notice, timeout=30000):
        ctl.counts.attach_file(cid, str(story))
    assert notices[3].startswith("story.txt needs ")
    assert "more than this chat's context of 300 tokens holds" in notices[3]
