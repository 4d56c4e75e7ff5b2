"""Cancel lands within one prefill chunk or one token, and the next request is still exact."""

from __future__ import annotations

import threading
from pathlib import Path

import mlx.core as mx
import pytest

from inference import Engine, GenerationResult, LoadedModel, SamplingParams, load_model
from tests.engine_reference import Comparison, Reference, check_tokens, reference
from tests.tiny_models import KINDS

CHUNK = 16
PARAMS = SamplingParams(max_tokens=4, temperature=0.8, seed=11)
LONG = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Tell me a story about a cat and a dog in Paris. " * 8},
]


@pytest.fixture(scope="module", params=KINDS)
def loaded(request: pytest.FixtureRequest, tiny_models_dir: Path) -> LoadedModel:
    return load_model(tiny_models_dir / request.param)


def expected(loaded: LoadedModel, messages: list[dict[str, str]]) -> Reference:
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    return reference(loaded, ids, PARAMS, PARAMS.max_tokens)


def test_cancel_mid_prefill_stops_within_a_chunk_and_resumes_exactly(
    loaded: LoadedModel,
) -> None:
    engine = Engine(loaded, 10**9, prefill_chunk_tokens=CHUNK)
    cancel = threading.Event()
    progress: list[tuple[int, int]] = []

    def on_progress(done: int, total: int) -> None:
        progress.append((done, total))
        if done >= 2 * CHUNK:
            cancel.set()

    result = engine.generate(LONG, PARAMS, "c", on_progress=on_progress, cancel=cancel)
    assert result.finish_reason == "cancelled" and result.token_ids == () and result.text == ""
    stopped_at, total = progress[-1]
    assert CHUNK * 2 <= stopped_at <= CHUNK * 3 < total  # no chunk ran after the cancel

    resumed = engine.generate(LONG, PARAMS, "c")
    assert resumed.stats.cached_tokens == stopped_at  # the partial prefill was kept
    ref = expected(loaded, LONG)
    check_tokens(resumed.token_ids, ref, Comparison(), loaded.model_type)


def test_cancel_mid_decode_stops_within_a_token_and_the_conversation_goes_on_exactly(
    loaded: LoadedModel,
) -> None:
    engine = Engine(loaded, 10**9, prefill_chunk_tokens=CHUNK)
    cancel = threading.Event()

    def on_progress(done: int, total: int) -> None:
        if done == total:  # reported when the first token is out
            cancel.set()

    result = engine.generate(LONG, PARAMS, "c", on_progress=on_progress, cancel=cancel)
    assert result.finish_reason == "cancelled" and len(result.token_ids) == 1
    ref = expected(loaded, LONG)
    check_tokens(result.token_ids, ref, Comparison(), loaded.model_type, complete=False)

    # The app keeps the partial reply; the next turn builds on it.
    reply = {"role": "assistant", "content": result.text}
    follow = [*LONG, reply, {"role": "user", "content": "go on"}]
    after = engine.generate(follow, PARAMS, "c")
    assert after.stats.cached_tokens >= len(LONG[1]["content"]) // 4  # the history was reused
    ref = expected(loaded, follow)
    check_tokens(after.token_ids, ref, Comparison(), loaded.model_type)


def test_a_cancel_set_before_the_call_computes_nothing(loaded: LoadedModel) -> None:
    engine = Engine(loaded, 10**9, prefill_chunk_tokens=CHUNK)
    cancel = threading.Event()
    cancel.set()
    result = engine.generate(LONG, PARAMS, "c", cancel=cancel)
    assert result.finish_reason == "cancelled"
    assert result.stats.cached_tokens == 0 and engine.cache_bytes() == 0


def test_an_error_in_a_callback_leaves_the_engine_exact(loaded: LoadedModel) -> None:
    engine = Engine(loaded, 10**9, prefill_chunk_tokens=CHUNK)

    def broken(text: str) -> None:
        raise RuntimeError("the window went away")

    with pytest.raises(RuntimeError):
        engine.generate(LONG, PARAMS, "c", on_token=broken)
    again = engine.generate(LONG, PARAMS, "c")
    ref = expected(loaded, LONG)
    check_tokens(again.token_ids, ref, Comparison(), loaded.model_type)


def test_cancel_set_from_another_thread_stops_the_worker_within_a_token(
    tiny_models_dir: Path,
) -> None:
    """The real arrangement: model, engine and generation on a worker thread; the cancel comes
    from elsewhere."""
    first_token, cancel = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def worker() -> None:
        engine = Engine(load_model(tiny_models_dir / "llama"), 10**8)

        def on_progress(done: int, total: int) -> None:
            if done == total:
                first_token.set()

        outcome["result"] = engine.generate(
            LONG, SamplingParams(max_tokens=3000), on_progress=on_progress, cancel=cancel
        )
        mx.clear_streams()  # this thread's streams go with it, not at interpreter exit

    thread = threading.Thread(target=worker)
    thread.start()
    assert first_token.wait(60)
    cancel.set()
    thread.join(60)
    assert not thread.is_alive()
    result = outcome["result"]
    assert isinstance(result, GenerationResult)
    assert result.finish_reason == "cancelled" and 0 < len(result.token_ids) < 3000
