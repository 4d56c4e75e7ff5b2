"""The model library (issue 4, items 3, 4, 6 and 7): list, rename, delete, memory check, local
folders copied or linked, and the built-in default imported once."""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import mlx_lm
import pytest
from mlx_lm.utils import get_total_parameters

import app.library.entries as library
import app.library.install as model_install
from app.library.entries import LibraryError, ModelInfo
from app.library.entry_metadata import METADATA_FILE
from app.library.install import remove_abandoned_work
from app.library.model_support import refresh_support
from inference import ModelLoadError, load_model
from tests.paths import ROOT


@pytest.fixture
def models(tmp_path: Path) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def quantized_path(tmp_path_factory: pytest.TempPathFactory, llama_path: Path) -> Path:
    """The tiny llama quantized by mlx-lm's own converter: 4-bit, embeddings 8-bit."""

    def predicate(path: str, module: object, *_: object) -> bool | dict:
        if not hasattr(module, "to_quantized"):
            return False
        return {"group_size": 32, "bits": 8} if path.endswith("embed_tokens") else True

    out = tmp_path_factory.mktemp("quantized") / "tiny-llama-4bit"
    mlx_lm.convert(
        str(llama_path),
        str(out),
        quantize=True,
        q_group_size=32,
        q_bits=4,
        quant_predicate=predicate,
    )
    return out


def snapshot(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in sorted(folder.rglob("*"))}


def test_a_copied_folder_is_listed_with_what_the_model_list_shows(
    models: Path, quantized_path: Path
) -> None:
    entry = model_install.import_folder(quantized_path, models)
    (info,) = library.list_models(models)

    loaded, _ = mlx_lm.load(str(entry))
    assert info.path == entry and info.name == "tiny-llama-4bit" and not info.linked
    assert info.architecture == "llama"
    assert info.parameters == get_total_parameters(loaded)  # packed 4- and 8-bit weights unpacked
    assert info.quantization == "4-bit (embeddings 8-bit)"
    assert info.context_length == 4096
    assert info.size_bytes == sum(p.stat().st_size for p in entry.iterdir())
    assert info.weights_bytes == (entry / "model.safetensors").stat().st_size
    assert info.source == f"Copied from {quantized_path}"
    assert info.problem is None


def test_copy_takes_only_the_model_files_and_reports_bytes(
    models: Path, llama_path: Path, tmp_path: Path
) -> None:
    source = tmp_path / "downloaded"
    shutil.copytree(llama_path, source)
    (source / "notes.txt").write_text("not part of the model")
    (source / "pytorch_model.bin").write_bytes(b"\0" * 1000)
    seen: list[tuple[int, int]] = []

    entry = model_install.import_folder(source, models, progress=lambda *step: seen.append(step))

    copied = sorted(p.name for p in entry.iterdir())
    assert copied == sorted([*(p.name for p in llama_path.iterdir()), METADATA_FILE])
    total = sum(p.stat().st_size for p in llama_path.iterdir())
    assert seen[-1] == (total, total)
    assert library.find_model(models, entry.name).quantization == "f32"
    mlx_lm.load(str(entry))


def test_a_tiktoken_tokenizer_is_copied_with_the_model(
    models: Path, llama_path: Path, tmp_path: Path
) -> None:
    source = tmp_path / "tiktoken-model"
    shutil.copytree(llama_path, source)
    (source / "tiktoken.model").write_bytes(b"aGVsbG8= 0\n")
    (source / "cl100k_base.tiktoken").write_bytes(b"d29ybGQ= 1\n")
    (source / "notes.txt").write_text("not part of the model")

    entry = model_install.import_folder(source, models)

    assert (entry / "tiktoken.model").read_bytes() == b"aGVsbG8= 0\n"
    assert (entry / "cl100k_base.tiktoken").read_bytes() == b"d29ybGQ= 1\n"
    assert not (entry / "notes.txt").exists()


def test_listing_the_library_does_not_load_mlx(models: Path, llama_path: Path) -> None:
    model_install.import_folder(llama_path, models)
    code = (
        "import sys\n"
        "from app.library.entries import list_models\n"
        f"(info,) = list_models({str(models)!r})\n"
        "assert info.problem is None and info.architecture == 'llama', info\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mlx', 'mlx_lm', 'inference'}))\n"
    )
    root = ROOT
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.split() == ["['inference']"]  # only inference.model_files, no MLX


def test_a_model_type_mlx_lm_stopped_supporting_is_listed_with_the_reason(
    models: Path, llama_path: Path, tmp_path: Path
) -> None:
    original = tmp_path / "my-model"
    shutil.copytree(llama_path, original)
    entry = model_install.import_folder(original, models, link=True)
    # The linked folder changes under the library to a type no code knows.
    config = json.loads((original / "config.json").read_text())
    (original / "config.json").write_text(json.dumps({**config, "model_type": "bert"}))

    refresh_support(models)  # what the inference worker does at start-up

    message = f"The model type 'bert' is not supported by mlx-lm {mlx_lm.__version__}."
    assert library.find_model(models, entry.name).problem == message
    with pytest.raises(ModelLoadError) as refused:
        load_model(original)
    assert str(refused.value) == message


def test_a_linked_folder_stays_where_it_is_and_survives_deleting_its_entry(
    models: Path, llama_path: Path, tmp_path: Path
) -> None:
    original = tmp_path / "my-model"
    shutil.copytree(llama_path, original)
    before = snapshot(original)

    entry = model_install.import_folder(original, models, link=True)
    info = library.find_model(models, entry.name)
    assert info.linked and info.path == original and info.source == f"Linked to {original}"
    assert info.size_bytes == sum(before.values())

    library.delete_model(models, entry.name)
    assert library.list_models(models) == []
    assert snapshot(original) == before


def test_rename_changes_the_name_shown_not_the_folder(models: Path, llama_path: Path) -> None:
    entry = model_install.import_folder(llama_path, models)
    info = library.rename_model(models, entry.name, "  My little llama ")
    assert (info.name, info.id, info.path) == ("My little llama", entry.name, entry)
    assert [i.name for i in library.list_models(models)] == ["My little llama"]
    with pytest.raises(LibraryError, match="cannot be empty"):
        library.rename_model(models, entry.name, "   ")


def test_delete_removes_the_entry_and_refuses_paths_outside_the_library(
    models: Path, llama_path: Path
) -> None:
    entry = model_install.import_folder(llama_path, models)
    with pytest.raises(LibraryError, match="no model"):
        library.delete_model(models, "../models")
    library.delete_model(models, entry.name)
    assert not entry.exists() and library.list_models(models) == []


def test_unfinished_work_folders_are_not_listed(models: Path, llama_path: Path) -> None:
    shutil.copytree(llama_path, models / ".staging-123")
    assert library.list_models(models) == []


def test_an_entry_whose_linked_folder_vanished_is_listed_with_the_problem(
    models: Path, llama_path: Path, tmp_path: Path
) -> None:
    original = tmp_path / "usb-stick-model"
    shutil.copytree(llama_path, original)
    model_install.import_folder(original, models, link=True)
    shutil.rmtree(original)
    (info,) = library.list_models(models)
    # Shown as missing (issue 45), never loaded, and it names where the folder was.
    assert info.missing and info.problem is not None
    assert info.problem.startswith(f"Missing: {original} is gone")
    assert (info.size_bytes, info.parameters) == (0, None)


def _info(weights_bytes: int) -> ModelInfo:
    return ModelInfo(
        id="big",
        folder=Path("big"),
        path=Path("big"),
        name="Big model",
        architecture="llama",
        parameters=None,
        quantization="bf16",
        size_bytes=weights_bytes,
        weights_bytes=weights_bytes,
        context_length=None,
        source="test",
    )


def test_memory_check_refuses_weights_larger_than_available_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        library.psutil, "virtual_memory", lambda: SimpleNamespace(available=8_000_000_000)
    )
    library.memory_check(_info(7_000_000_000))
    with pytest.raises(LibraryError) as refused:
        library.memory_check(_info(16_000_000_000))
    assert "Big model needs 16.0 GB" in str(refused.value)
    assert "only 8.0 GB is available" in str(refused.value)
    # Unloading the current model first frees its memory.
    library.memory_check(_info(16_000_000_000), reclaimable_bytes=9_000_000_000)


# --- checking folders before they are added ----------------------------------------------------


def _broken_copy(llama_path: Path, tmp_path: Path, change: str) -> Path:
    folder = tmp_path / f"broken-{change}"
    shutil.copytree(llama_path, folder)
    config = json.loads((folder / "config.json").read_text())
    if change == "no config":
        (folder / "config.json").unlink()
    elif change == "no weights":
        (folder / "model.safetensors").unlink()
    elif change == "pickle weights":
        (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
    elif change == "gguf weights":
        (folder / "model.safetensors").rename(folder / "model.Q4_0.gguf")
    elif change == "remote code":
        config["auto_map"] = {"AutoModelForCausalLM": "modeling_custom.Model"}
    elif change == "unknown type":
        config["model_type"] = "bert"
    elif change == "missing shard":
        index = {"weight_map": {"a": "model.safetensors", "b": "model-00002-of-00002.safetensors"}}
        (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    elif change == "no tokenizer":
        (folder / "tokenizer.json").unlink()
    if change != "no config":
        (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("no config", "has no config.json"),
        ("no weights", "has no weights"),
        ("pickle weights", "only PyTorch pickle weights"),
        ("gguf weights", "import the .gguf file instead"),
        ("remote code", "never runs such code"),
        ("unknown type", "model type 'bert' is not supported by mlx-lm"),
        ("missing shard", "model-00002-of-00002.safetensors is missing"),
        ("no tokenizer", "has no tokenizer"),
    ],
)
def test_a_folder_that_cannot_load_is_refused_before_it_is_added(
    models: Path, llama_path: Path, tmp_path: Path, change: str, message: str
) -> None:
    folder = _broken_copy(llama_path, tmp_path, change)
    for link in (False, True):
        with pytest.raises(LibraryError, match=message):
            model_install.import_folder(folder, models, link=link)
    assert list(models.iterdir()) == []


def test_a_cancelled_copy_adds_nothing(models: Path, llama_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(model_install.Cancelled):
        model_install.import_folder(llama_path, models, cancel=cancel)
    assert list(models.iterdir()) == []


def test_a_full_disk_during_a_copy_is_reported_and_adds_nothing(
    models: Path, llama_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    existing = model_install.import_folder(llama_path, models)
    before = snapshot(models)

    def fill_disk(source: Path, target: Path, *args: object) -> None:
        (target / "model.safetensors").write_bytes(b"\0" * 4096)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(model_install, "_copy_model_files", fill_disk)
    with pytest.raises(LibraryError, match="The disk is full"):
        model_install.import_folder(llama_path, models)
    assert snapshot(models) == before
    assert [i.path for i in library.list_models(models)] == [existing]


# --- the built-in default ---------------------------------------------------------------------


def test_first_start_imports_the_built_in_model_and_later_starts_reuse_it(
    models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, int]] = []
    first = model_install.ensure_default_model(models, progress=lambda *step: seen.append(step))

    (info,) = library.list_models(models)
    assert info.path == first and info.builtin and info.problem is None
    assert info.name == "SmolLM2 135M Instruct" and info.architecture == "llama"
    assert info.quantization == "4-bit (embeddings 8-bit)"
    assert info.parameters == 134_515_008  # SmolLM2-135M's published parameter count
    assert seen and seen[-1][0] == seen[-1][1]

    def no_second_import(*args: object, **kwargs: object) -> Path:
        raise AssertionError("the default model was imported again")

    monkeypatch.setattr(model_install, "import_gguf_file", no_second_import)
    assert model_install.ensure_default_model(models) == first


def test_a_bad_gguf_adds_nothing_to_the_library(models: Path, tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    source.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelLoadError):
        model_install.import_gguf_file(source, models)
    assert list(models.iterdir()) == []


def test_work_left_by_an_interrupted_import_is_removed_but_partial_downloads_are_kept(
    tmp_path: Path,
) -> None:
    models = tmp_path / "models"
    for name in (".staging-1f2e", ".import-9a8b", ".download-org--model", "kept-model"):
        (models / name).mkdir(parents=True)
        (models / name / "weights.part").write_bytes(b"x" * 10)
    removed = remove_abandoned_work(models)
    assert sorted(p.name for p in removed) == [".import-9a8b", ".staging-1f2e"]
    assert sorted(p.name for p in models.iterdir()) == [".download-org--model", "kept-model"]


def test_a_vision_model_keeps_its_processor_and_says_it_reads_images(
    models: Path, tiny_vision_dir: Path, llama_path: Path, tmp_path: Path
) -> None:
    entry = model_install.import_folder(tiny_vision_dir / "qwen2_5_vl", models)
    assert (entry / "preprocessor_config.json").is_file()  # copied with the model files
    refresh_support(models)  # mlx-lm has no Qwen2.5-VL: loaded through mlx-vlm all the same
    (info,) = library.list_models(models)
    assert info.problem is None and info.sight == "Reads images"
    assert load_model(entry).vision is not None
    seeing_llama = tmp_path / "seeing-llama"
    shutil.copytree(llama_path, seeing_llama)
    config = json.loads((seeing_llama / "config.json").read_text())
    config["vision_config"] = {"model_type": "siglip_vision_model"}
    (seeing_llama / "config.json").write_text(json.dumps(config))
    blind = library.describe(model_install.import_folder(seeing_llama, models))
    assert blind.problem is None
    assert blind.sight.startswith("Text only: Images are not supported for 'llama' models")
    assert library.describe(model_install.import_folder(llama_path, models)).sight == ""
