"""Finding the models other apps hold (issue 45, items 1 and 5): each app's layout read from its
small files, every model listed with its facts, every bad case with its reason, nothing added."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import app.discovery.folders as folders
from app.discovery.found import Format, FoundModel, Source
from app.discovery.locations import Location, standard_locations
from app.discovery.scan import scan
from app.library.model_support import folder_problems
from tests.fake_stores import OLLAMA_PARAMS, OLLAMA_SYSTEM, OLLAMA_TEMPLATE, FakeHome, build_home


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory, llama_path: Path) -> FakeHome:
    return build_home(tmp_path_factory.mktemp("stores"), llama_path)


@pytest.fixture(scope="module")
def found(fake: FakeHome, tmp_path_factory: pytest.TempPathFactory) -> dict[str, FoundModel]:
    models = tmp_path_factory.mktemp("library")
    locations = standard_locations(fake.home, fake.env)
    listed = scan(locations, models, check_types=False)
    assert not list(models.iterdir())  # a scan adds nothing
    return {model.name: model for model in listed}


def test_each_apps_folders_are_found_as_it_configures_them(fake: FakeHome) -> None:
    assert standard_locations(fake.home, fake.env) == [
        Location(
            Source.LMSTUDIO, fake.home / "Models elsewhere"
        ),  # settings.json's downloadsFolder
        Location(Source.LMSTUDIO, fake.lmstudio),
        Location(Source.HUGGINGFACE, fake.hf_cache),  # HF_HOME/hub
        Location(Source.OLLAMA, fake.ollama),  # OLLAMA_MODELS
    ]
    assert standard_locations(fake.home / "nobody", {}) == []


def test_runnable_models_are_listed_with_their_facts(found: dict[str, FoundModel]) -> None:
    mlx = found["mlx-community/tiny-llama-4bit"]
    assert (mlx.source, mlx.format, mlx.architecture, mlx.runnable) == (
        Source.LMSTUDIO,
        Format.MLX,
        "llama",
        True,
    )
    assert mlx.bytes > 0 and mlx.disk_needed == 0  # used where it lies
    gemma = found["tiny-gemma3-F32"]
    assert (gemma.format, gemma.architecture, gemma.runnable, gemma.chat_template) == (
        Format.GGUF,
        "gemma3",
        True,
        True,
    )
    assert gemma.disk_needed > 0 and gemma.reason is None
    assert found["moved-gemma"].source == Source.LMSTUDIO
    cached = found["mlx-community/tiny-llama"]
    assert cached.source == Source.HUGGINGFACE and cached.runnable
    assert cached.path.endswith("snapshots/rev1")  # read through its links
    assert not any("some-data" in name for name in found)  # a dataset is no model


def test_ollama_models_keep_their_layers(found: dict[str, FoundModel]) -> None:
    model = found["tinygemma:latest"]
    assert (model.source, model.format, model.architecture, model.runnable) == (
        Source.OLLAMA,
        Format.GGUF,
        "gemma3",
        True,
    )
    assert model.ollama is not None
    assert (model.ollama.system, model.ollama.params, model.ollama.template) == (
        OLLAMA_SYSTEM,
        OLLAMA_PARAMS,
        OLLAMA_TEMPLATE,
    )
    # The same bytes as LM Studio's copy: one model.
    assert model.origin == found["tiny-gemma3-F32"].origin


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("org/half-done", "download is unfinished"),
        ("org/blob-gone", "links to a file that is gone"),
        ("broken:7b", "missing from the store"),
        ("encoder", "architecture 'bert'"),
        ("mmproj-tiny-gemma3", "vision projector"),
    ],
)
def test_each_bad_case_is_listed_with_its_reason(
    found: dict[str, FoundModel], name: str, words: str
) -> None:
    model = found[name]
    assert not model.runnable and model.reason is not None and words in model.reason


def test_a_folder_without_read_access_is_listed_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tests run as root, whom chmod does not stop: the refusal the OS gives is played.
    locked = tmp_path / "shared" / "locked"
    locked.mkdir(parents=True)
    real = os.scandir

    def scandir(path: str | Path) -> object:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(folders.os, "scandir", scandir)
    (model,) = scan([Location(Source.FOLDER, tmp_path / "shared")], check_types=False)
    assert (model.path, model.format, model.runnable) == (str(locked), Format.UNKNOWN, False)
    assert model.reason is not None and "no permission" in model.reason


def test_a_model_type_mlx_lm_lacks_is_named(tmp_path: Path, llama_path: Path) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    for file in llama_path.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    (folder / "config.json").write_text('{"model_type": "nosuchmodel"}')
    problems = folder_problems([str(folder), str(llama_path)])
    assert "nosuchmodel" in str(problems[str(folder)]) and problems[str(llama_path)] is None


def test_found_models_print_as_the_issue_names_them(found: dict[str, FoundModel]) -> None:
    record = found["tiny-gemma3-F32"].as_json()
    assert list(record)[:8] == [
        "path",
        "source",
        "format",
        "name",
        "architecture",
        "bytes",
        "runnable",
        "reason",
    ]
    assert (record["source"], record["format"]) == ("lmstudio", "gguf")
