"""Saved caches: a new engine on the same folder finds them, exactly; damaged files, a changed
model and a full disk never cost a wrong token or a crash."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import pytest

import inference.cache.files as cache_files
from inference import Engine, LoadedModel, SamplingParams, load_model
from tests.engine_reference import Comparison, check_tokens, reference
from tests.tiny_models import NO_EOS

SYSTEM = {"role": "system", "content": "You are a helpful assistant. " * 6}
GREEDY = SamplingParams(max_tokens=5, logit_bias=NO_EOS)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


@pytest.fixture(params=["llama", "qwen3_5"])
def loaded(request: pytest.FixtureRequest, tiny_models_dir: Path) -> LoadedModel:
    return load_model(tiny_models_dir / request.param)


def history(engine: Engine, cid: object = "c") -> list[dict[str, str]]:
    """A two-turn conversation, generated and saved."""
    path = [SYSTEM, user("Tell me a story about Paris.")]
    for follow in ("go on", "and then?"):
        reply = engine.generate(path, GREEDY, cid)
        path = [*path, {"role": "assistant", "content": reply.text}, user(follow)]
    engine.flush()
    return path


def exact(engine: Engine, messages: list[dict[str, str]], cid: object = "c"):
    result = engine.generate(messages, GREEDY, cid)
    loaded = engine.model
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    check_tokens(result.token_ids, reference(loaded, ids, GREEDY, 5), Comparison(), "disk")
    return result


def test_a_new_engine_on_the_same_folder_finds_the_saved_caches(
    loaded: LoadedModel, tmp_path: Path
) -> None:
    first = Engine(loaded, 10**9, cache_dir=tmp_path)
    path = history(first)
    assert first.disk_bytes() > 0
    first.close()
    again = Engine(loaded, 10**9, cache_dir=tmp_path)
    assert again.cache_bytes() == 0  # files load lazily, on the first request that can use them
    result = exact(again, path)
    stats = result.stats
    assert stats.disk_tokens == stats.cached_tokens
    # The history, at least up to its last user turn (a checkpoint, for models that need one).
    asked = loaded.tokenizer.apply_chat_template(path[:-2], add_generation_prompt=False)
    assert stats.cached_tokens >= len(asked)
    assert stats.prefill_tokens < stats.prompt_tokens // 3


def test_a_damaged_or_truncated_file_is_removed_never_loaded(
    loaded: LoadedModel, tmp_path: Path
) -> None:
    first = Engine(loaded, 10**9, cache_dir=tmp_path)
    path = history(first)
    first.close()
    files = sorted(tmp_path.rglob("*.safetensors"), key=lambda p: p.stat().st_size)
    flipped, cut = files[-1], files[-2]
    data = bytearray(flipped.read_bytes())
    data[len(data) // 2] ^= 0xFF
    flipped.write_bytes(bytes(data))
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    again = Engine(loaded, 10**9, cache_dir=tmp_path)
    exact(again, path)  # no crash, and still the from-scratch tokens
    assert not cut.exists() and not flipped.exists()


def test_a_garbage_index_vouches_for_nothing(loaded: LoadedModel, tmp_path: Path) -> None:
    first = Engine(loaded, 10**9, cache_dir=tmp_path)
    path = history(first)
    first.close()
    (index,) = tmp_path.rglob("index.json")
    index.write_text("{not json")
    again = Engine(loaded, 10**9, cache_dir=tmp_path)
    assert exact(again, path).stats.disk_tokens == 0
    assert not list(tmp_path.rglob("*.safetensors"))


def test_a_model_changed_in_place_misses_and_its_old_caches_go(
    tiny_models_dir: Path, tmp_path: Path
) -> None:
    folder = Path(shutil.copytree(tiny_models_dir / "llama", tmp_path / "model"))
    caches = tmp_path / "caches"
    first = Engine(load_model(folder), 10**9, cache_dir=caches)
    path = history(first)
    first.close()
    old = {p.parent for p in caches.rglob("index.json")}
    config = json.loads((folder / "config.json").read_text())
    config["rms_norm_eps"] = 1e-5  # a different model: its caches mean something else
    (folder / "config.json").write_text(json.dumps(config))
    changed = load_model(folder)
    again = Engine(changed, 10**9, cache_dir=caches)
    result = exact(again, path)
    assert result.stats.disk_tokens == 0
    assert not any(p.exists() for p in old)


def test_a_full_disk_keeps_the_caches_in_memory_and_says_so_once(
    loaded: LoadedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache_files.mx, "save_safetensors", full)
    engine = Engine(loaded, 10**9, cache_dir=tmp_path)
    path = history(engine)
    assert engine.disk_error is not None and "No space left" in engine.disk_error
    assert engine.disk_bytes() == 0
    assert not list(tmp_path.rglob("*.tmp*"))
    assert exact(engine, path).stats.cached_tokens > 0  # served from memory, as before


def test_the_disk_budget_holds_and_the_oldest_go_first(loaded: LoadedModel, tmp_path: Path) -> None:
    engine = Engine(loaded, 10**9, cache_dir=tmp_path)
    history(engine, "old")
    one = engine.disk_bytes()
    engine.disk_budget_bytes = int(one * 1.5)
    path = [SYSTEM, user("Write code about the sea.")]
    engine.generate(path, GREEDY, "new")
    engine.flush()
    assert engine.disk_bytes() <= engine.disk_budget_bytes
    engine.close()
    again = Engine(loaded, 10**9, cache_dir=tmp_path)
    assert exact(again, path, "new").stats.disk_tokens > len(SYSTEM["content"]) // 8


def test_a_budget_smaller_than_one_branch_saves_nothing_and_stops_trying(
    loaded: LoadedModel, tmp_path: Path
) -> None:
    engine = Engine(loaded, 10**9, cache_dir=tmp_path)
    engine.disk_budget_bytes = 0
    path = [SYSTEM, user("Tell me a story about Paris.")]
    engine.generate(path, GREEDY, "c")
    # Each file the budget drops was once saved and dropped again forever: flush never ended.
    assert engine.save_pending(5.0) is False
    assert engine.disk_bytes() == 0
    assert exact(engine, path).stats.cached_tokens > 0  # still served from memory


def test_forgetting_a_conversation_deletes_the_files_only_it_used(
    loaded: LoadedModel, tmp_path: Path
) -> None:
    engine = Engine(loaded, 10**9, cache_dir=tmp_path)
    a = history(engine, 1)
    b = [SYSTEM, user("Write code about the sea.")]
    engine.generate(b, GREEDY, 2)
    engine.flush()
    both = engine.disk_bytes()
    engine.forget(1)
    engine.flush()
    assert 0 < engine.disk_bytes() < both
    engine.close()
    kept = exact(Engine(loaded, 10**9, cache_dir=tmp_path), b, 2).stats
    assert kept.disk_tokens == kept.cached_tokens > len(SYSTEM["content"]) // 8
    gone = exact(Engine(loaded, 10**9, cache_dir=tmp_path), a, 1).stats
    assert gone.disk_tokens < kept.disk_tokens  # only the prefix b shares is left of a


def test_forgetting_but_keeping_the_files_frees_memory_and_an_undo_reloads_them(
    loaded: LoadedModel, tmp_path: Path
) -> None:
    engine = Engine(loaded, 10**9, cache_dir=tmp_path)
    a = history(engine, 1)
    engine.generate([SYSTEM, user("Write code about the sea.")], GREEDY, 2)
    engine.flush()
    memory, files = engine.cache_bytes(), engine.disk_bytes()
    engine.forget(1, keep_saved=True)
    assert engine.cache_bytes() < memory
    assert engine.disk_bytes() == files
    undone = exact(engine, a, 1).stats  # the deletion undone: its files load again
    assert undone.disk_tokens > len(SYSTEM["content"]) // 8
    engine.forget(1)  # purged: now its files go
    engine.flush()
    assert engine.disk_bytes() < files


def test_clearing_saved_caches_deletes_them(loaded: LoadedModel, tmp_path: Path) -> None:
    engine = Engine(loaded, 10**9, cache_dir=tmp_path)
    path = history(engine)
    engine.clear_saved_caches()
    assert engine.disk_bytes() == 0
    assert not list(tmp_path.rglob("*.safetensors"))
    assert exact(engine, path).stats.cached_tokens > 0  # memory is untouched
