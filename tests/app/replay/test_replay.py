"""Provenance and replay end to end with the tiny llama on the real worker: a reply records its
model, digests, settings, the seed it was drawn with and its tokens; replaying a greedy and a
seeded reply is identical; a replay after the template or the weights changed says where the
tokens part and what changed; a model gone cannot be replayed (`branchwise replay` exits 2); a
replay never changes the tree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.generation.worker import InferenceWorker
from app.paths import AppPaths
from app.replay import cli
from app.replay.plan import ReplayError, plan_replay
from app.replay.run import run_replay
from app.settings import Preferences
from app.store.conversations import Store
from app.store.records import Message
from tests.tiny_models import NO_EOS, build_model

pytestmark = pytest.mark.usefixtures("free_drafts")

ROOT = Path(__file__).resolve().parents[3]

GREEDY = {"temperature": 0.0, "max_tokens": 12, "logit_bias": NO_EOS, "speculation": "off"}
SAMPLED = {**GREEDY, "temperature": 1.0, "seed": None}
ASK = "the cat sat on the mat and the dog sat on the log"


@pytest.fixture
def model(tmp_path: Path, llama_path: Path) -> Path:
    """A library of one model of its own, so a test may change it."""
    return Path(shutil.copytree(llama_path, tmp_path / "library" / "llama"))


@pytest.fixture
def controller(qtbot, tmp_path: Path, model: Path) -> Iterator[ChatController]:
    worker = InferenceWorker()
    ctl = ChatController(
        Store.open(AppPaths.resolve(tmp_path / "data").database),
        worker,
        Preferences(tmp_path / "settings.ini"),
        lambda progress: model,
        models_dir=model.parent,
    )
    with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
        ctl.start()
    yield ctl
    if ctl.worker._thread.is_alive():
        ctl.shutdown()


def reply_to(qtbot, ctl: ChatController, params: dict) -> Message:
    cid = ctl.new_conversation()
    ctl.update_settings(cid, params=params)
    with qtbot.waitSignal(ctl.worker.generationFinished, timeout=30000):
        assert ctl.send(cid, ASK)
    qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=5000)
    reply = ctl.store.active_path(cid)[-1]
    assert reply.status == "complete"
    return reply


def replay_cli(tmp_path: Path, message_id: int, capsys) -> tuple[int, dict]:
    code = cli.main(["--data-dir", str(tmp_path / "data"), "--message", str(message_id), "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_greedy_reply_records_its_provenance_and_replays_identically(
    qtbot, controller: ChatController, model: Path, tmp_path: Path, capsys
) -> None:
    reply = reply_to(qtbot, controller, GREEDY)
    origin = reply.provenance
    assert origin["model"]["name"] == "llama"
    assert origin["model"]["path"] == str(model.resolve())
    assert len(origin["model"]["weights_digest"]) == 32 and origin["template_digest"]
    assert origin["seed"] is None and origin["seed_drawn"] is False
    assert origin["sampling"]["temperature"] == 0.0 and origin["sampling"]["max_tokens"] == 12
    assert origin["overflow"] == "truncate_middle" and origin["context_length"] > 0
    assert set(origin["versions"]) == {"branchwise", "mlx", "mlx_lm"}
    assert len(origin["token_ids"]) == reply.stats["generated_tokens"] == 12
    count = len(controller.store.all_messages(reply.conversation_id))

    outcome = run_replay(plan_replay(controller.store, reply.id))
    assert outcome.identical and outcome.changed == () and outcome.text == reply.content
    code, printed = replay_cli(tmp_path, reply.id, capsys)
    assert code == cli.IDENTICAL and printed["identical"] is True
    # A replay writes nothing.
    assert len(controller.store.all_messages(reply.conversation_id)) == count


def test_a_sampled_reply_without_a_seed_records_the_one_drawn_and_replays_identically(
    qtbot, controller: ChatController
) -> None:
    reply = reply_to(qtbot, controller, SAMPLED)
    assert reply.provenance["seed_drawn"] is True
    seed = reply.provenance["seed"]
    assert isinstance(seed, int) and reply.provenance["sampling"]["seed"] == seed
    outcome = run_replay(plan_replay(controller.store, reply.id))
    assert outcome.identical, outcome.summary()


def test_a_replay_after_the_template_changed_says_where_and_what(
    qtbot, controller: ChatController, model: Path, tmp_path: Path, capsys
) -> None:
    reply = reply_to(qtbot, controller, GREEDY)
    config_file = model / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["chat_template"] = "SYSTEM: be brief.\n" + config["chat_template"]
    config_file.write_text(json.dumps(config))
    code, printed = replay_cli(tmp_path, reply.id, capsys)
    assert [c["key"] for c in printed["changed"]] == ["template_digest"]
    assert code == cli.DIFFERENT and printed["first_difference"] is not None
    assert "the chat template" in printed["summary"]


def test_a_replay_after_the_weights_changed_says_where_and_what(
    qtbot, controller: ChatController, model: Path, tmp_path: Path
) -> None:
    reply = reply_to(qtbot, controller, GREEDY)
    other = build_model("llama", tmp_path / "other", seed=7)
    shutil.copy(other / "model.safetensors", model / "model.safetensors")
    outcome = run_replay(plan_replay(controller.store, reply.id))
    assert [c.key for c in outcome.changed] == ["model.weights_digest"]
    assert not outcome.identical and outcome.first_difference is not None
    assert "the weights" in outcome.summary()


def test_a_reply_whose_model_is_gone_cannot_be_replayed(
    qtbot, controller: ChatController, model: Path, tmp_path: Path, capsys
) -> None:
    reply = reply_to(qtbot, controller, GREEDY)
    shutil.rmtree(model)
    with pytest.raises(ReplayError, match=r"llama.*missing"):
        plan_replay(controller.store, reply.id)
    code, printed = replay_cli(tmp_path, reply.id, capsys)
    assert code == cli.CANNOT_RUN and str(model) in printed["error"]
    # The command itself, as a script runs it (and loads no MLX to refuse).
    command = [
        sys.executable,
        "-m",
        "ui.entry",
        "replay",
        "--data-dir",
        str(tmp_path / "data"),
        "--message",
        str(reply.id),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and "is missing" in done.stderr


def test_each_regenerated_version_records_its_seed_and_replays_identically(
    qtbot, controller: ChatController
) -> None:
    first = reply_to(qtbot, controller, {**SAMPLED, "seed": 40})
    with qtbot.waitSignal(controller.variants.ended, timeout=60000):
        controller.regenerate_variants(first.id, 2)
    siblings, _ = controller.store.siblings(first.id)
    versions = siblings[1:]
    assert [v.provenance["seed"] for v in versions] == [40, 41]
    for version in versions:
        outcome = run_replay(plan_replay(controller.store, version.id))
        assert outcome.identical, outcome.summary()


def test_a_continued_reply_replays_from_the_text_it_went_on_from(
    qtbot, controller: ChatController
) -> None:
    first = reply_to(qtbot, controller, {**SAMPLED, "seed": 5})
    assert first.stats["finish_reason"] == "length"
    with qtbot.waitSignal(controller.worker.generationFinished, timeout=30000):
        assert controller.continue_reply(first.id)
    qtbot.waitUntil(lambda: not controller.is_busy(), timeout=5000)
    continued = controller.store.active_path(first.conversation_id)[-1]
    assert continued.id != first.id and continued.provenance["continued"] == first.content
    outcome = run_replay(plan_replay(controller.store, continued.id))
    assert outcome.identical, outcome.summary()


def test_a_stopped_reply_replays_as_far_as_it_went(qtbot, controller: ChatController) -> None:
    reply = reply_to(qtbot, controller, GREEDY)
    origin = {**reply.provenance, "token_ids": reply.provenance["token_ids"][:5]}
    stopped = controller.store.begin_reply(reply.conversation_id, reply.parent_id, "llama")
    controller.store.finish_reply(
        stopped.id, "cut", "stopped", stats={"finish_reason": "cancelled"}, provenance=origin
    )
    plan = plan_replay(controller.store, stopped.id)
    assert plan.params["max_tokens"] == 5 and "stopped after 5 tokens" in plan.notes[0]
    outcome = run_replay(plan)
    assert outcome.identical, outcome.summary()


def test_a_replay_computes_in_the_matrix_layout_its_reply_was_computed_in(
    qtbot, controller: ChatController, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The layout is measured per machine (and may be forced), so a replay loads the model in
    the layout recorded, whatever BRANCHWISE_CPU_LAYOUT now says."""
    import app.replay.run as replay_run
    from inference.cpu.weight_layout import AS_STORED

    reply = reply_to(qtbot, controller, GREEDY)
    assert reply.provenance["model"]["layout"] == AS_STORED
    monkeypatch.setenv("BRANCHWISE_CPU_LAYOUT", "transposed")
    asked: list[str] = []
    real = replay_run.default_engine_factory

    def spy(path: Path, progress, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(kwargs["layout"])
        engine, info = real(path, progress, **kwargs)
        assert "forced by the replayed reply's record" in info.matrix_layout
        return engine, info

    monkeypatch.setattr(replay_run, "default_engine_factory", spy)
    outcome = run_replay(plan_replay(controller.store, reply.id))
    assert asked == ["stored"] and outcome.identical, outcome.summary()
