"""Bad input gets a clear InferenceError and leaves the engine usable; stop strings; counts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inference import (
    Engine,
    InferenceError,
    LoadedModel,
    ModelLoadError,
    PromptError,
    SamplingError,
    SamplingParams,
    load_model,
)
from inference.decoding.sampling import StopMatcher
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import NO_EOS

HELLO = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture(scope="module")
def llama(llama_path: Path) -> LoadedModel:
    return load_model(llama_path)


@pytest.fixture
def copy_of_llama(llama_path: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(llama_path, tmp_path / "model"))


def edit_config(folder: Path, **changes: object) -> None:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))


def test_loaded_model_reports_what_the_app_shows(llama: LoadedModel, llama_path: Path) -> None:
    assert llama.model_id == llama_path.name == "llama"
    assert llama.model_type == "llama"
    assert llama.context_length == 4096
    assert llama.path == llama_path
    assert 100_000 < llama.weights_bytes < 10_000_000  # float32 tiny model, about 0.5 MB
    assert llama.config["num_hidden_layers"] == 2


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="no model folder"):
        load_model(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("config.json", "no config.json"),
        ("model.safetensors", "no model.*safetensors"),
        ("tokenizer.json", "could not be loaded|no tokenizer"),
    ],
)
def test_folder_with_a_missing_file(copy_of_llama: Path, missing: str, message: str) -> None:
    (copy_of_llama / missing).unlink()
    if missing == "tokenizer.json":
        (copy_of_llama / "tokenizer_config.json").unlink()
    with pytest.raises(ModelLoadError, match=message):
        load_model(copy_of_llama)


def test_corrupt_safetensors(copy_of_llama: Path) -> None:
    weights = copy_of_llama / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(ModelLoadError, match="could not be loaded"):
        load_model(copy_of_llama)


def test_unreadable_config(copy_of_llama: Path) -> None:
    (copy_of_llama / "config.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match="cannot be read"):
        load_model(copy_of_llama)


def test_unsupported_model_type_is_named(copy_of_llama: Path) -> None:
    edit_config(copy_of_llama, model_type="brainwave9")
    with pytest.raises(ModelLoadError, match="'brainwave9' is not supported"):
        load_model(copy_of_llama)


@pytest.mark.parametrize(
    "remote", [{"auto_map": {"AutoModel": "modeling.Net"}}, {"model_file": "net.py"}]
)
def test_models_that_need_remote_code_are_refused(
    copy_of_llama: Path, remote: dict[str, object]
) -> None:
    (copy_of_llama / "net.py").write_text("raise SystemExit('remote code ran')\n")
    edit_config(copy_of_llama, **remote)
    with pytest.raises(ModelLoadError, match=r"'llama' needs Python code .*trust_remote_code"):
        load_model(copy_of_llama)


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([], "empty"),
        ("hello", "must be a list"),
        ([{"role": "wizard", "content": "hi"}], "Message 1 has the unknown role 'wizard'"),
        ([{"role": "user", "content": None}], "Message 1 .user. has no text"),
        ([*HELLO, "hi"], "Message 2 is not"),
    ],
)
def test_bad_messages_are_refused_and_the_engine_stays_exact(
    llama: LoadedModel, messages: object, message: str
) -> None:
    engine = Engine(llama, 10**8)
    with pytest.raises(PromptError, match=message):
        engine.generate(messages, SamplingParams(max_tokens=2))  # type: ignore[arg-type]
    assert_still_exact(engine)


def test_a_prompt_longer_than_the_context_says_by_how_much(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**8)
    long = [{"role": "user", "content": "the cat sat on the mat " * 900}]
    tokens = engine.count_prompt_tokens(long)
    assert tokens > 4096
    # The reply's room (its max_tokens, at most a quarter of the context) is kept free.
    with pytest.raises(PromptError, match=f"{tokens} tokens, {tokens - 4096 + 2} too many"):
        engine.generate(long, SamplingParams(max_tokens=2))
    assert engine.cache_bytes() == 0
    assert_still_exact(engine)


@pytest.mark.parametrize(
    "settings",
    [
        {"max_tokens": 0},
        {"max_tokens": -3},
        {"temperature": -1.0},
        {"top_p": 0.0},
        {"top_k": -1},
        {"min_p": 2.0},
        {"repetition_penalty": 0.0},
        {"seed": -1},
        {"stop": [""]},
    ],
)
def test_out_of_range_sampling_settings_are_refused(settings: dict[str, object]) -> None:
    name = next(iter(settings))
    with pytest.raises(SamplingError, match=name if name != "stop" else "stop strings"):
        SamplingParams(**settings)  # type: ignore[arg-type]


def test_every_refusal_shares_one_base_class() -> None:
    assert all(issubclass(e, InferenceError) for e in (ModelLoadError, PromptError, SamplingError))


def test_count_prompt_tokens_matches_the_rendered_prompt(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**8)
    ids = llama.tokenizer.apply_chat_template(HELLO, add_generation_prompt=True)
    assert engine.count_prompt_tokens(HELLO) == len(ids)
    assert engine.context_length == 4096


def test_stop_string_cuts_the_reply_and_never_streams_it(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**8)
    full = engine.generate(HELLO, SamplingParams(max_tokens=12))
    assert len(full.text) > 6
    stop = full.text[3:6]
    streamed: list[str] = []
    cut = engine.generate(
        HELLO, SamplingParams(max_tokens=12, stop=[stop]), on_token=streamed.append
    )
    assert cut.finish_reason == "stop"
    assert cut.text == full.text[: full.text.index(stop)]
    assert "".join(streamed) == cut.text


def test_stop_matcher_holds_back_a_possible_start_of_a_stop_string() -> None:
    matcher = StopMatcher(["</end>", "STOP"])
    assert matcher.feed("hello </") == ("hello ", False)
    assert matcher.feed("e") == ("", False)
    assert matcher.feed("x more S") == ("</ex more ", False)
    assert matcher.feed("TOP and") == ("", True)
    assert matcher.feed("tail") == ("tail", False)
    assert matcher.flush() == ""
    assert StopMatcher([]).feed("anything") == ("anything", False)


def test_streamed_text_is_the_result_text(llama: LoadedModel) -> None:
    engine = Engine(llama, 10**8)
    streamed: list[str] = []
    params = SamplingParams(max_tokens=8, logit_bias=NO_EOS)
    result = engine.generate(HELLO, params, on_token=streamed.append)
    assert "".join(streamed) == result.text
    assert result.finish_reason == "length"
    assert result.stats.generated_tokens == len(result.token_ids) == 8


def assert_still_exact(engine: Engine) -> None:
    result = engine.generate(HELLO, SamplingParams(max_tokens=4))
    ids = engine.model.tokenizer.apply_chat_template(HELLO, add_generation_prompt=True)
    ref = reference(engine.model, ids, SamplingParams(max_tokens=4), 4)
    check_tokens(result.token_ids, ref, Comparison(), "after an error")
