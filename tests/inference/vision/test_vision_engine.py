"""Images through the engine: replies equal mlx-vlm's own from-scratch generation, and the branch
cache keys every image by what the model sees, so reuse is exact and an image is encoded once."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from inference import Engine, PromptError, SamplingParams, load_model
from inference.loading.load import LoadedModel
from tests.engine_reference import Comparison, check_tokens
from tests.tiny_vision import VISION_KINDS, png_bytes
from tests.vision_reference import mlx_vlm_prompt_length, mlx_vlm_reference

MAX_TOKENS = 8
GREEDY = SamplingParams(max_tokens=MAX_TOKENS)
# A and B share a size (and so expand to the same token ids); C is another size.
A, B, C = png_bytes(40, 30, 1), png_bytes(40, 30, 2), png_bytes(90, 64, 3)


def image(data: bytes) -> dict[str, Any]:
    return {"type": "image", "image": data}


def words(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(parts)}


@pytest.fixture(scope="module", params=VISION_KINDS)
def loaded(request: pytest.FixtureRequest, tiny_vision_dir: Path) -> LoadedModel:
    return load_model(tiny_vision_dir / request.param)


def engine(loaded: LoadedModel, **kwargs: Any) -> Engine:
    return Engine(loaded, cache_budget_bytes=1 << 28, **kwargs)


def assert_reference(loaded: LoadedModel, messages: list[dict[str, Any]], got: tuple) -> None:
    check_tokens(
        got, mlx_vlm_reference(loaded, messages, MAX_TOKENS), Comparison(), loaded.model_type
    )


CONVERSATIONS = [
    [user(image(A), words("What is this?"))],
    [user(words("Compare these two:"), image(A), image(C))],
    [
        {"role": "system", "content": "You are a helpful assistant."},
        user(image(B), words("Hello")),
        {"role": "assistant", "content": "The cat sat on the mat."},
        user(words("And this one?"), image(C)),
    ],
    [user(words("Hello! How are you today?"))],
]


@pytest.mark.parametrize("messages", CONVERSATIONS, ids=["one", "two", "history", "no-image"])
def test_a_reply_equals_mlx_vlms_own_generation(
    loaded: LoadedModel, messages: list[dict[str, Any]]
) -> None:
    result = engine(loaded).generate(messages, GREEDY)
    assert_reference(loaded, messages, result.token_ids)
    assert result.stats.prompt_tokens == mlx_vlm_prompt_length(loaded, messages)


def test_a_vision_model_says_it_sees(loaded: LoadedModel) -> None:
    assert loaded.vision is not None
    assert loaded.text_only_reason == ""


def test_count_prompt_tokens_counts_every_image(loaded: LoadedModel) -> None:
    messages = [user(words("Compare these two:"), image(A), image(C))]
    counted = engine(loaded).count_prompt_tokens(messages)
    assert counted == mlx_vlm_prompt_length(loaded, messages)
    text_only = engine(loaded).count_prompt_tokens([user(words("Compare these two:"))])
    assert counted > text_only + 2 * 4  # both images' tokens are in


def test_the_same_ids_with_another_image_reuse_nothing_past_its_start(loaded: LoadedModel) -> None:
    run = engine(loaded)
    first = run.generate([user(words("Look:"), image(A))], GREEDY, "c")
    second = run.generate([user(words("Look:"), image(B))], GREEDY, "c")
    assert first.stats.prompt_tokens == second.stats.prompt_tokens  # same size: same ids
    start = (
        run._builder.chat_request([user(words("Look:"), image(B))], GREEDY, "c", "truncate_middle")
        .vision.spans[0]
        .start
    )
    assert second.stats.cached_tokens == start
    assert_reference(loaded, [user(words("Look:"), image(B))], second.token_ids)


def test_an_image_added_later_keeps_the_earlier_prefix(loaded: LoadedModel) -> None:
    run = engine(loaded)
    history = [
        user(image(A), words("What is it?")),
        {"role": "assistant", "content": "The cat sat on the mat."},
    ]
    run.generate([*history, user(words("Thanks"))], GREEDY, "c")
    follow = [*history, user(words("And now this:"), image(C))]
    second = run.generate(follow, GREEDY, "c")
    spans = run._builder.chat_request(follow, GREEDY, "c", "truncate_middle").vision.spans
    # Everything up to the new turn is reused (hybrid models from the message boundary's
    # checkpoint), the first image included; nothing of the new image is.
    assert spans[0].end + 8 < second.stats.cached_tokens <= spans[1].start
    assert run._caches.features.encoded == 2  # A once, C once
    assert_reference(loaded, follow, second.token_ids)


def test_the_branch_map_sees_the_cache_past_an_image_and_not_another_images(
    loaded: LoadedModel,
) -> None:
    run = engine(loaded)
    history = [
        user(image(A), words("What is it?")),
        {"role": "assistant", "content": "The cat sat on the mat."},
    ]
    run.generate([*history, user(words("Thanks"))], GREEDY, "c")
    swapped = [user(image(B), words("What is it?")), history[1]]  # B: A's size, so A's ids
    spans = run._builder.chat_request(
        [*history, user(words("Thanks"))], GREEDY, "c", "truncate_middle"
    ).vision.spans
    kept, other = run.cache_state([history, swapped])
    assert kept.memory_tokens > spans[0].end
    assert other.memory_tokens <= spans[0].start
    assert other.tokens == kept.tokens


def test_regenerate_edit_switch_and_follow_up_never_encode_again(loaded: LoadedModel) -> None:
    """A reply is written as its text (as the app stores it), so a turn after it resumes from
    the reply's end (hybrid models: from the checkpoint at that message boundary)."""
    run = engine(loaded)
    asked = [user(image(A), words("What is it?"))]
    image_end = run._builder.chat_request(asked, GREEDY, "c", "truncate_middle").vision.spans[0].end
    reply = run.generate(asked, GREEDY, "c")
    regenerated = run.generate(
        asked, SamplingParams(max_tokens=MAX_TOKENS, temperature=0.8, seed=3), "c"
    )
    if run._cache.rewinds_anywhere:
        assert regenerated.stats.cached_tokens == reply.stats.prompt_tokens - 1
    else:  # from the checkpoint at the end of the question
        assert image_end < regenerated.stats.cached_tokens < reply.stats.prompt_tokens
    branch = [*asked, {"role": "assistant", "content": "The cat sat on the mat."}]
    later = run.generate([*branch, user(words("Say more"))], GREEDY, "c")
    edited = run.generate([*branch, user(words("Shorter, please"))], GREEDY, "c")
    assert edited.stats.cached_tokens >= reply.stats.prompt_tokens
    followed = [
        *branch,
        user(words("Say more")),
        {"role": "assistant", "content": "It is a small grey cat."},
    ]
    run.generate([*followed, user(words("Thanks"))], GREEDY, "c")
    back = run.generate([*followed, user(words("Go on"))], GREEDY, "c")
    assert back.stats.cached_tokens >= later.stats.prompt_tokens
    assert run._caches.features.encoded == 1
    assert_reference(loaded, [*followed, user(words("Go on"))], back.token_ids)


def test_one_image_in_five_branches_is_encoded_once(loaded: LoadedModel) -> None:
    run = engine(loaded)
    for question in ["Colours?", "Shapes?", "Count them", "Is it a cat?", "Describe it"]:
        result = run.generate([user(image(A), words(question))], GREEDY, "c")
        assert_reference(loaded, [user(image(A), words(question))], result.token_ids)
    assert run._caches.features.encoded == 1


def test_encoder_output_counts_in_the_cache_budget(loaded: LoadedModel) -> None:
    run = engine(loaded)
    run.generate([user(image(A), image(C), words("Both?"))], GREEDY, "c")
    features = run._caches.features
    assert features.nbytes() > 0
    assert run.cache_bytes() >= features.nbytes() + run._cache.nbytes()
    assert run.cache_budget_bytes == 1 << 28
    run.cache_budget_bytes = 0
    assert features.nbytes() == 0


def test_another_branch_between_two_turns_leaves_no_positions_behind(
    loaded: LoadedModel,
) -> None:
    """mlx-vlm's Qwen keeps `_rope_deltas` between calls; the engine passes positions itself,
    so a request on another branch (another image, then no image) cannot shift this one's."""
    run = engine(loaded)
    asked = [user(image(C), words("What is it?"))]
    first = run.generate(asked, GREEDY, "c")
    run.generate([user(words("Look:"), image(A), image(B))], GREEDY, "d")
    run.generate([user(words("Plain text"))], GREEDY, "e")
    follow = [*asked, {"role": "assistant", "content": first.text}, user(words("Go on"))]
    image_end = run._builder.chat_request(asked, GREEDY, "c", "truncate_middle").vision.spans[0].end
    result = run.generate(follow, GREEDY, "c")
    assert result.stats.cached_tokens > image_end  # the image is not computed again
    assert_reference(loaded, follow, result.token_ids)


def test_a_prefill_cancelled_in_an_image_resumes_exactly(loaded: LoadedModel) -> None:
    """Cancelled once prefill is past an image's first token: a model whose image tokens attend
    causally stops inside the image and resumes there; one whose image tokens attend both ways
    (Gemma 4) has no chunk end inside an image, so it stops at the image's end."""
    run = engine(loaded, prefill_chunk_tokens=3)
    messages = [user(words("Look at this picture:"), image(C), words("What is it?"))]
    span = run._builder.chat_request(messages, GREEDY, "c", "truncate_middle").vision.spans[0]
    cancel = threading.Event()
    reported: list[int] = []

    def stop_in_the_image(done: int, total: int) -> None:
        reported.append(done)
        if done > span.start:
            cancel.set()

    stopped = run.generate(messages, GREEDY, "c", on_progress=stop_in_the_image, cancel=cancel)
    assert stopped.finish_reason == "cancelled"
    resumed = run.generate(messages, GREEDY, "c")
    assert loaded.vision is not None
    if loaded.vision.atomic_images:
        assert not [done for done in reported if span.start < done < span.end]
        assert resumed.stats.cached_tokens == span.end
    else:
        assert span.start < resumed.stats.cached_tokens < span.end
    assert_reference(loaded, messages, resumed.token_ids)


def test_saved_caches_hold_images_across_a_restart(loaded: LoadedModel, tmp_path: Path) -> None:
    messages = [user(image(A), words("What is it?"))]
    first = engine(loaded, cache_dir=tmp_path)
    reply = first.generate(messages, GREEDY, "c")
    first.close()
    again = engine(loaded, cache_dir=tmp_path)
    same = again.generate(messages, GREEDY, "c")
    assert same.stats.disk_tokens > 0
    if again._cache.rewinds_anywhere:
        assert same.stats.cached_tokens == reply.stats.prompt_tokens - 1
    else:  # from the checkpoint at the end of the question, past the image
        span = again._builder.chat_request(messages, GREEDY, "c", "truncate_middle").vision
        assert same.stats.cached_tokens > span.spans[0].end
    assert same.token_ids == reply.token_ids
    assert again._caches.features.encoded == 0  # A's tokens came from disk
    other = again.generate([user(image(B), words("What is it?"))], GREEDY, "c")
    assert other.stats.cached_tokens < reply.stats.prompt_tokens - 1  # B is not A
    assert again._caches.features.encoded == 1


def test_the_detail_limit_is_part_of_an_images_identity(loaded: LoadedModel) -> None:
    run = engine(loaded)
    large = png_bytes(200, 150, 5)
    full = run.generate([user({"type": "image", "image": large}, words("Hi"))], GREEDY, "c")
    small = run.generate(
        [user({"type": "image", "image": large, "detail": 32}, words("Hi"))], GREEDY, "c"
    )
    # Another picture for the model (SmolVLM and Gemma 3 scale it back up to their working
    # size; Qwen and Gemma 4, which size a picture by a budget, give it fewer tokens): nothing
    # from the image on is reused.
    assert small.stats.cached_tokens < full.stats.prompt_tokens - 8
    if loaded.vision is not None and (loaded.vision.family.mrope or loaded.model_type == "gemma4"):
        assert small.stats.prompt_tokens < full.stats.prompt_tokens
    assert run._caches.features.encoded == 2


def test_an_image_file_path_works_and_a_missing_one_is_named(
    loaded: LoadedModel, tmp_path: Path
) -> None:
    picture = tmp_path / "holiday.png"
    picture.write_bytes(A)
    run = engine(loaded)
    by_path = run.generate([user(image(str(picture)), words("Hi"))], GREEDY, "c")
    by_bytes = run.generate([user(image(A), words("Hi"))], GREEDY, "d")
    assert by_path.token_ids == by_bytes.token_ids
    picture.unlink()
    with pytest.raises(PromptError, match=r"holiday\.png is missing"):
        run.generate([user(image(str(picture)), words("Hi"))], GREEDY, "c")


def test_a_text_only_model_refuses_an_image_by_name(llama_path: Path) -> None:
    loaded = load_model(llama_path)
    assert loaded.vision is None
    run = Engine(loaded, cache_budget_bytes=1 << 26)
    with pytest.raises(PromptError, match=f"{loaded.model_id} cannot see images"):
        run.generate([user(image(A), words("What is it?"))], GREEDY)
    with pytest.raises(PromptError, match="cannot see images"):
        run.count_prompt_tokens([user(image(A), words("What is it?"))])
    # Text parts alone are fine for a text model: they read as the text they hold.
    joined = run.count_prompt_tokens([user(words("What "), words("is it?"))])
    assert joined == run.count_prompt_tokens([{"role": "user", "content": "What is it?"}])


def test_regenerate_times_n_with_an_image_equals_each_seed_alone(loaded: LoadedModel) -> None:
    from dataclasses import replace

    messages = [user(image(A), words("What is this?"))]
    params = SamplingParams(max_tokens=MAX_TOKENS, temperature=0.8)
    run = engine(loaded)
    variants = run.generate_variants(messages, params, seeds=[1, 2, 3], conversation_id="c")
    alone = [
        engine(loaded).generate(messages, replace(params, seed=s)).token_ids for s in (1, 2, 3)
    ]
    assert [v.token_ids for v in variants] == alone
    assert run._caches.features.encoded == 1
