"""Continue (issue 18 item 3): the engine goes on writing a partial reply, exactly as mlx-lm does
from scratch on the template's `continue_final_message` rendering, reusing the cached history."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference import Engine, LoadedModel, PromptError, SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import KINDS

PARAMS = SamplingParams(max_tokens=6, temperature=0.8, seed=5)
ASKED = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Tell me a story about a lighthouse."},
]
PARTIAL = {"role": "assistant", "content": "Once upon a time, on a rocky"}


@pytest.fixture(scope="module", params=KINDS)
def loaded(request: pytest.FixtureRequest, tiny_models_dir: Path) -> LoadedModel:
    return load_model(tiny_models_dir / request.param)


def test_continue_goes_on_from_the_partial_reply_exactly_and_reuses_the_history(
    loaded: LoadedModel,
) -> None:
    engine = Engine(loaded, 10**9)
    engine.generate(ASKED, PARAMS, "c")  # the history is cached by the first reply
    result = engine.generate([*ASKED, PARTIAL], PARAMS, "c", continue_reply=True)

    ids = loaded.tokenizer.apply_chat_template([*ASKED, PARTIAL], continue_final_message=True)
    closed = loaded.tokenizer.apply_chat_template([*ASKED, PARTIAL])
    assert len(ids) < len(closed) and closed[: len(ids)] == ids  # no end of turn yet
    assert result.stats.prompt_tokens == len(ids)  # the partial reply's turn left open
    assert result.stats.cached_tokens > 0
    ref = reference(loaded, ids, PARAMS, PARAMS.max_tokens)
    check_tokens(result.token_ids, ref, Comparison(), loaded.model_type)


def test_only_a_reply_can_be_continued(loaded: LoadedModel) -> None:
    with pytest.raises(PromptError, match="Only a reply can be continued"):
        Engine(loaded, 10**9).generate(ASKED, PARAMS, "c", continue_reply=True)
