"""The rows of a reply's Details: every recorded item; for a reply imported from another app,
its source and model and "unknown" for the rest; for a reply written before provenance was
recorded, its model id and "unknown". Neither can be replayed, and each says why."""

from __future__ import annotations

from app.replay.details import UNKNOWN, reply_details
from app.store.provenance import imported_provenance
from app.store.records import Message
from inference.cpu.weight_layout import TRANSPOSED
from tests.app.store.test_store_provenance import ORIGIN


def _reply(provenance: dict, model_id: str | None = "llama") -> Message:
    return Message(
        7,
        1,
        6,
        role="assistant",
        content="Hi.",
        created_at=0.0,
        status="complete",
        model_id=model_id,
        params={},
        stats={},
        error=None,
        provenance=provenance,
    )


def test_a_recorded_reply_shows_each_item_and_can_be_replayed() -> None:
    details = reply_details(_reply(ORIGIN))
    rows = dict(details.rows)
    assert details.replayable and details.why_not is None
    assert rows["Model"] == "llama" and rows["Library path"] == "/models/llama"
    assert rows["Weights form"] == "float32 (from 4-bit)"
    transposed = {**ORIGIN, "model": {**ORIGIN["model"], "layout": TRANSPOSED}}
    assert dict(reply_details(_reply(transposed)).rows)["Weights form"] == (
        "float32 (from 4-bit), matrices transposed"
    )
    assert rows["Seed"] == "1234 (drawn for this reply)"
    assert rows["Tools offered"] == "get_weather"
    assert rows["Context"] == "4096 tokens (the model's), overflow: rolling"
    assert rows["Versions"] == "Branchwise 0.1.0, MLX 0.32.4, mlx-lm 0.32.2"
    assert rows["Tokens"] == "3 generated"
    assert "temperature 0.7" in rows["Sampling"]


def test_an_imported_reply_keeps_its_source_and_model_and_says_the_rest_is_unknown() -> None:
    details = reply_details(_reply(imported_provenance("chatgpt", "gpt-4o"), "gpt-4o"))
    rows = dict(details.rows)
    assert rows["Source"] == "imported from chatgpt" and rows["Model"] == "gpt-4o"
    assert rows["Weights digest"] == rows["Seed"] == rows["Versions"] == UNKNOWN
    assert not details.replayable and "Imported" in (details.why_not or "")


def test_a_reply_from_before_provenance_says_it_is_unknown() -> None:
    details = reply_details(_reply({}))
    rows = dict(details.rows)
    assert rows["Model"] == "llama" and rows["Chat template digest"] == UNKNOWN
    assert not details.replayable and "before" in (details.why_not or "")
