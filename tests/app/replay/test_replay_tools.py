"""A reply offered tools, on a tiny model with a tools template and a token forced to write a
call, through the real worker: its provenance names the tools, the replay offers the same ones
and is identical, and the replayed reply kept as a sibling holds its call, not the markup."""

from __future__ import annotations

from pathlib import Path

from app.generation.reply_generation import ReplyGeneration
from app.generation.worker import InferenceWorker
from app.replay.plan import plan_replay
from app.replay.replays import Replays
from app.replay.run import run_replay
from app.store.conversations import Store
from tests.tiny_models import (
    FORCED_STOP,
    QWEN_TOOLS_TEMPLATE,
    WEATHER_TOOL,
    with_call_token,
    with_template,
)


def test_a_reply_that_called_a_tool_replays_with_the_same_tools(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    model = with_template(llama_path, tmp_path / "library" / "qwen-tools", QWEN_TOOLS_TEMPLATE)
    token = with_call_token(model)
    params = {
        "temperature": 0.0,
        "max_tokens": 3,
        "logit_bias": {str(token): 100.0},
        "stop": [FORCED_STOP],
        "speculation": "off",
    }
    worker = InferenceWorker()
    try:
        with qtbot.waitSignal(worker.modelLoaded, timeout=60000):
            worker.load_model(model)
        with Store.open(tmp_path / "data" / "conversations.sqlite3") as store:
            chat = store.create_conversation("Weather", params=params)
            question = store.append_message(chat.id, None, "user", "Weather in Paris?")
            replies = ReplyGeneration(
                store, [worker], lambda: "truncate_middle", worker.next_request_id
            )
            with qtbot.waitSignal(replies.ended, timeout=60000):
                reply_id = replies.start(
                    chat.id, question.id, "qwen-tools", worker, tools=[WEATHER_TOOL]
                )
            reply = store.get_message(reply_id)
            assert reply.tool_calls and reply.provenance["tools"] == [WEATHER_TOOL]

            plan = plan_replay(store, reply_id)
            assert plan.tools == [WEATHER_TOOL]
            outcome = run_replay(plan)
            assert outcome.identical, outcome.summary()
            assert [c["name"] for c in outcome.tool_calls] == ["get_weather"]

            kept = Replays(store, worker, lambda: None).keep(outcome)
            assert kept is not None
            sibling = store.get_message(kept)
            assert sibling.parent_id == question.id and sibling.content == reply.content
            assert [c["arguments"] for c in sibling.tool_calls] == [{"city": "Paris"}]
    finally:
        worker.shutdown()
