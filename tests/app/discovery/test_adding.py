"""Adding what a scan found (issue 45, items 2 and 4): a folder used where it lies, shown as
missing once it is gone; a GGUF imported once, Ollama's defaults kept; `branchwise models`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.chat.new_chat import new_chat_params, with_model_defaults
from app.discovery.adding import AlreadyInLibrary, add_found
from app.discovery.cli import main
from app.discovery.describe import describe_folder
from app.discovery.found import Source
from app.library.entries import list_models
from app.library.entry_metadata import read_metadata
from tests.fake_stores import OLLAMA_SYSTEM, OLLAMA_TEMPLATE, FakeHome, build_home


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory, llama_path: Path) -> FakeHome:
    return build_home(tmp_path_factory.mktemp("stores"), llama_path)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_line_scans_adds_once_and_lists(
    fake: FakeHome,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OLLAMA_MODELS", str(fake.ollama))
    data = ["--data-dir", str(tmp_path / "data")]
    # GGUF files only: no MLX folder, so no child process asks mlx-lm (the window's scan does).
    repo = str(fake.lmstudio / "lmstudio-community")
    code, out, _ = _run(capsys, "scan", "--json", "--in", repo, "--source", "lmstudio", *data)
    listed = {record["name"]: record for record in json.loads(out)}
    assert code == 0 and listed["tiny-gemma3-F32"]["runnable"] is True
    assert listed["tiny-gemma3-F32"]["source"] == "lmstudio"
    assert "vision projector" in listed["mmproj-tiny-gemma3"]["reason"]

    code, out, err = _run(capsys, "add", "tinygemma", *data)  # an Ollama name: its GGUF imported
    assert (code, out.strip()) == (0, "tinygemma:latest")
    assert err.startswith("Importing tinygemma:latest: about ")  # the disk it takes, first
    gguf = fake.lmstudio / "lmstudio-community" / "tiny-gemma-GGUF" / "tiny-gemma3-F32.gguf"
    code, out, err = _run(capsys, "add", str(gguf), *data)  # LM Studio's copy of the same file
    assert code == 1 and "in the library already" in err and not out

    code, out, _ = _run(capsys, "list", "--json", *data)
    (entry,) = json.loads(out)
    assert (entry["name"], entry["chat_template"], entry["problem"]) == (
        "tinygemma:latest",
        True,
        None,
    )
    meta = read_metadata(Path(entry["path"]))
    # Ollama's system prompt, stop words and parameters are the model's defaults; its Go
    # template is kept for reference (the GGUF's own Jinja template is the one used).
    assert meta["defaults"] == {
        "system_prompt": OLLAMA_SYSTEM,
        "params": {"temperature": 0.3, "repetition_penalty": 1.1, "stop": ["<end_of_turn>"]},
    }
    assert meta["ollama_template"] == OLLAMA_TEMPLATE
    config = json.loads((Path(entry["path"]) / "config.json").read_text())
    assert config["eos_token_id"] == [1, 5]  # <eos>, and the template's <end_of_turn>

    code, out, err = _run(capsys, "add", "no-such-model:1b", *data)
    assert code == 1 and "no folder, file or Ollama model" in err


def test_a_new_chat_takes_the_models_defaults_where_the_person_chose_none() -> None:
    own = {"temperature": 0.3, "repetition_penalty": 1.1, "stop": ["<end_of_turn>"], "top_k": "x"}
    chosen = {"temperature": 0.9}  # the person's own new-chat default wins
    params = with_model_defaults(new_chat_params(chosen), chosen, own)
    assert (params["temperature"], params["repetition_penalty"]) == (0.9, 1.1)
    assert params["stop"] == ["<end_of_turn>"] and params["top_k"] == 0  # a bad value is left out


def test_a_folder_is_used_where_it_lies_and_shown_missing_once_gone(
    tmp_path: Path, llama_path: Path
) -> None:
    snapshot = tmp_path / "hub" / "models--org--tiny" / "snapshots" / "rev"
    shutil.copytree(llama_path, snapshot)
    models = tmp_path / "models"
    found = describe_folder(snapshot, Source.HUGGINGFACE, "org/tiny")
    entry = add_found(found, models)
    assert [p.name for p in entry.iterdir()] == ["branchwise.json"]  # nothing copied
    with pytest.raises(AlreadyInLibrary, match="in the library already"):
        add_found(found, models)
    (info,) = list_models(models)
    assert (info.name, info.path, info.linked, info.missing) == ("org/tiny", snapshot, True, False)

    shutil.rmtree(snapshot.parent.parent)  # the cache was cleared
    (info,) = list_models(models)
    assert info.missing and info.problem is not None and "Missing" in info.problem
