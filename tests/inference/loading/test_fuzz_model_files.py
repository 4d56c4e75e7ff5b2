"""Damaged or hostile model files never crash or hang the app: a seeded, bounded fuzz.

GGUF files (truncated at every header field, a huge value in every count, length and type id,
wrong magic and version, tensor types out of range, overlapping or misaligned tensors, random
byte flips, chat templates that loop or raise), safetensors headers (huge or past-the-end
lengths, huge offsets and shapes, truncation, garbage JSON), config.json (missing keys, wrong
types, negative and huge sizes) and tokenizer files (garbage, enormous, a looping or raising
chat template).

Structural faults must be refused by the Python checks alone, so those cases run in this
process (only plain Python reads them). Every case that gets past the checks, where native
readers run, goes through the real import or folder check in child processes
(tests/fuzz_files.py: one child for many cases, replaced if one crashes or hangs), and must end
in a clear refusal (or, for a harmless byte flip, a model that imports) with nothing left in the
library.
"""

from __future__ import annotations

import json
import random
import shutil
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gguf
import pytest
from gguf import GGMLQuantizationType as Type

import app.library.entries as library
import app.library.install as model_install
from app.library.embedded_model import embedded_gguf_path
from inference import ModelLoadError
from inference.importing.gguf_check import check_gguf
from inference.loading.folder_check import check_before_load
from tests.fuzz_files import header_parts, huge, outcomes_in_children, overwrite, write_case
from tests.tiny_gguf import tiny_model, write_gguf
from tests.tiny_models import build_model

SEED = 20261201
BYTE_FLIPS = 24
PER_CASE_S = 20.0
LOOPING_TEMPLATE = (
    "{% for a in range(100000) %}{% for b in range(100000) %}{{ '' }}{% endfor %}{% endfor %}"
)
RAISING_TEMPLATE = "{{ raise_exception('This template refuses every conversation.') }}"


@pytest.fixture(scope="module")
def base_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, config = tiny_model("llama")
    return write_gguf(model, config, tmp_path_factory.mktemp("gguf") / "tiny.gguf", Type.Q8_0)


@pytest.fixture(scope="module")
def base_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_model("llama", tmp_path_factory.mktemp("folder") / "tiny-llama")


def refused_in_python(path: Path) -> str | None:
    """check_gguf's message for `path`, or None when the header passes."""
    try:
        check_gguf(path)
    except ModelLoadError as error:
        return str(error)
    return None


# --- GGUF ------------------------------------------------------------------------------------


def structural_gguf_cases(base: Path, folder: Path) -> list[tuple[str, Path]]:
    data = base.read_bytes()
    parts = header_parts(base)
    data_start = gguf.GGUFReader(base).data_offset
    cases = []
    for index, part in enumerate(parts):
        for cut in {part.offset, part.offset + part.size // 2}:
            cases.append(
                (
                    f"cut inside '{part.what}' at {cut}",
                    write_case(data, folder, f"cut-{index}-{cut}", lambda d, c=cut: d[:c]),
                )
            )
        if part.structural:
            for number, value in enumerate(huge(part.size)):
                name = f"huge-{index}-{number}"
                cases.append(
                    (
                        f"{value.hex()} in '{part.what}'",
                        write_case(data, folder, name, overwrite(part.offset, value)),
                    )
                )
    tensors = [p for p in parts if p.what.startswith("tensor ")]
    offsets = [p for p in tensors if p.what.endswith(": offset")]
    types = [p for p in tensors if p.what.endswith(": type")]
    first_offset = data[offsets[0].offset : offsets[0].offset + 8]
    special = {
        "wrong magic": overwrite(0, b"GGUG"),
        "version 1": overwrite(4, struct.pack("<I", 1)),
        "version 4": overwrite(4, struct.pack("<I", 4)),
        "big-endian version 3": overwrite(4, struct.pack(">I", 3)),
        "tensor type 99": overwrite(types[0].offset, struct.pack("<I", 99)),
        "tensor type 4 (removed from ggml)": overwrite(types[1].offset, struct.pack("<I", 4)),
        "tensor type F32 for Q8_0 data": overwrite(types[2].offset, struct.pack("<I", 0)),
        "two tensors at one offset": overwrite(offsets[1].offset, first_offset),
        "a misaligned tensor": overwrite(
            offsets[1].offset,
            struct.pack("<Q", struct.unpack("<Q", data[offsets[1].offset :][:8])[0] + 1),
        ),
        "cut in the tensor data": lambda d: d[: data_start + 64],
        "last byte missing": lambda d: d[:-1],
    }
    for number, (what, change) in enumerate(special.items()):
        cases.append((what, write_case(data, folder, f"special-{number}", change)))
    return cases


def test_every_structural_gguf_fault_is_refused_by_the_python_checks(
    base_gguf: Path, tmp_path: Path
) -> None:
    cases = structural_gguf_cases(base_gguf, tmp_path)
    assert len(cases) > 600  # every header field, cut twice and made huge
    missed = [what for what, path in cases if refused_in_python(path) is None]
    assert missed == []
    messages = [refused_in_python(path) or "" for _, path in cases]
    assert all("is damaged or incomplete" in m for m in messages)


def test_the_issue_headers_of_the_built_in_gguf_are_refused_before_mlx_reads_them(
    tmp_path: Path,
) -> None:
    """The three headers that made MLX's loader crash with SIGSEGV: a huge tensor count,
    metadata count or first key length (8 bytes at offset 8, 16 or 24)."""
    source = embedded_gguf_path()
    assert source is not None
    path = tmp_path / "SmolLM2-damaged.gguf"
    shutil.copyfile(source, path)
    for offset, message in ((8, "tensors"), (16, "metadata entries"), (24, "metadata key 1")):
        original = path.read_bytes()[offset : offset + 8]
        with path.open("r+b") as file:
            file.seek(offset)
            file.write(struct.pack("<Q", 0xFFFFFFFFFFFF))
        refused = refused_in_python(path)
        assert refused is not None and message in refused
        with path.open("r+b") as file:
            file.seek(offset)
            file.write(original)


def test_importing_the_crashing_header_is_a_clear_error_and_adds_nothing(tmp_path: Path) -> None:
    source = embedded_gguf_path()
    assert source is not None
    data = bytearray(source.read_bytes())
    data[8:16] = struct.pack("<Q", 0xFFFFFFFFFFFF)
    bad = tmp_path / "SmolLM2-damaged.gguf"
    bad.write_bytes(data)
    models = tmp_path / "models"
    models.mkdir()
    with pytest.raises(ModelLoadError, match=r"SmolLM2-damaged\.gguf is damaged or incomplete"):
        model_install.import_gguf_file(bad, models)
    assert list(models.iterdir()) == []


def native_gguf_cases(base: Path, folder: Path) -> list[tuple[str, Path]]:
    """Cases whose header is well-formed, so they reach MLX: huge metadata values, seeded byte
    flips anywhere, templates that loop or raise."""
    data = base.read_bytes()
    rng = random.Random(SEED)
    cases = []
    for index, part in enumerate(header_parts(base)):
        if not part.structural and part.size in (4, 8) and "element" not in part.what:
            for number, value in enumerate(huge(part.size)):
                name = f"value-{index}-{number}"
                cases.append(
                    (
                        f"{value.hex()} in '{part.what}'",
                        write_case(data, folder, name, overwrite(part.offset, value)),
                    )
                )
    data_start = gguf.GGUFReader(base).data_offset
    for number in range(BYTE_FLIPS):
        # Two in three in the header, the rest in the tensor data.
        low, high = (0, data_start) if number % 3 else (data_start, len(data))
        count = rng.randint(1, 3)
        spots = [(rng.randrange(low, high), rng.randrange(1, 256)) for _ in range(count)]

        def flip(d: bytearray, spots: list[tuple[int, int]] = spots) -> bytes:
            for spot, mask in spots:
                d[spot] ^= mask
            return bytes(d)

        cases.append(
            (
                f"bytes flipped at {[s for s, _ in spots]}",
                write_case(data, folder, f"flip-{number}", flip),
            )
        )
    model, config = tiny_model("llama")
    for name, template in (("looping", LOOPING_TEMPLATE), ("raising", RAISING_TEMPLATE)):
        path = write_gguf(
            model, config, folder / f"{name}-template.gguf", Type.Q8_0, chat_template=template
        )
        cases.append((f"a {name} chat template", path))
    return cases


def test_gguf_files_that_reach_mlx_end_in_a_clear_error_and_leave_nothing(
    base_gguf: Path, tmp_path: Path
) -> None:
    cases = native_gguf_cases(base_gguf, tmp_path)
    assert len(cases) >= BYTE_FLIPS + 20
    # What the Python checks refuse never reaches MLX; the rest is imported for real.
    native = [(what, path) for what, path in cases if refused_in_python(path) is None]
    models = tmp_path / "models"
    models.mkdir()
    outcomes = outcomes_in_children(
        "tests.fuzz_files:import_each",
        [path for _, path in native],
        models,
        log=tmp_path / "outcomes.jsonl",
        per_case_s=PER_CASE_S,
    )
    found = dict(zip([what for what, _ in native], outcomes, strict=True))
    unclear = {
        what: outcome
        for what, outcome in found.items()
        if outcome[0] not in ("refused", "imported")
    }
    assert unclear == {}
    assert list(models.iterdir()) == []
    # Values that would make the model absurd are refused, not imported.
    block_count = [o for w, o in found.items() if "llama.block_count: value" in w]
    assert block_count and all(o[0] == "refused" for o in block_count)
    looping, raising = found["a looping chat template"], found["a raising chat template"]
    assert looping[0] == "refused" and "did not finish" in looping[1]
    assert "tokenizer.chat_template" in looping[1] and "looping-template.gguf" in looping[1]
    assert raising[0] == "refused" and "refuses every conversation" in raising[1]


# --- model folders ---------------------------------------------------------------------------


def _rewrite_safetensors(header: Callable[[dict[str, Any]], Any]) -> Callable[[bytes], bytes]:
    """A change to a safetensors file's JSON header, the data kept as it is."""

    def change(data: bytes) -> bytes:
        (length,) = struct.unpack("<Q", data[:8])
        new = header(json.loads(data[8 : 8 + length]))
        text = new if isinstance(new, bytes) else json.dumps(new).encode()
        return struct.pack("<Q", len(text)) + text + data[8 + length :]

    return change


def _first_tensor(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], Any]:
    def change(header: dict[str, Any]) -> Any:
        name = next(key for key in header if key != "__metadata__")
        edit(header[name])
        return header

    return change


def _with(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda entry: entry.__setitem__(key, value)


def safetensors_changes(length: int) -> dict[str, Callable[[bytes], bytes]]:
    rng = random.Random(SEED)
    garbage = bytes(rng.randrange(256) for _ in range(200))

    def header_length(value: int) -> Callable[[bytes], bytes]:
        return lambda data: struct.pack("<Q", value) + data[8:]

    def overlap(header: dict[str, Any]) -> Any:
        names = [key for key in header if key != "__metadata__"]
        header[names[1]]["data_offsets"] = header[names[0]]["data_offsets"]
        return header

    return {
        "a header length of 2**64-1": header_length(2**64 - 1),
        "a header length of 2**40": header_length(2**40),
        "a header length past the end": header_length(length - 7),
        "a header length of 0": header_length(0),
        "a header length 10 bytes short": lambda d: header_length(
            struct.unpack("<Q", d[:8])[0] - 10
        )(d),
        "cut to 4 bytes": lambda d: d[:4],
        "cut inside the header": lambda d: d[:64],
        "cut inside the data": lambda d: d[: length // 2],
        "the last byte missing": lambda d: d[:-1],
        "garbage JSON": _rewrite_safetensors(lambda _: garbage),
        "a JSON list": _rewrite_safetensors(lambda _: [1, 2, 3]),
        "an entry that is a string": _rewrite_safetensors(
            lambda h: {**h, next(k for k in h if k != "__metadata__"): "x"}
        ),
        "a huge end offset": _rewrite_safetensors(_first_tensor(_with("data_offsets", [0, 2**62]))),
        "huge offsets": _rewrite_safetensors(
            _first_tensor(_with("data_offsets", [2**62, 2**62 + 4]))
        ),
        "a huge shape": _rewrite_safetensors(_first_tensor(_with("shape", [2**40, 2**40]))),
        "a negative shape": _rewrite_safetensors(_first_tensor(_with("shape", [-1, 64]))),
        "a shape that is text": _rewrite_safetensors(_first_tensor(_with("shape", "64x64"))),
        "an unknown dtype": _rewrite_safetensors(_first_tensor(_with("dtype", "Q9"))),
        "overlapping tensors": _rewrite_safetensors(overlap),
    }


def config_changes() -> dict[str, Callable[[dict[str, Any]], Any]]:
    def without(key: str) -> Callable[[dict[str, Any]], Any]:
        return lambda config: {k: v for k, v in config.items() if k != key}

    def setting(key: str, value: Any) -> Callable[[dict[str, Any]], Any]:
        return lambda config: {**config, key: value}

    return {
        "no hidden_size": without("hidden_size"),
        "no num_hidden_layers": without("num_hidden_layers"),
        "no model_type": without("model_type"),
        "hidden_size as text": setting("hidden_size", "64"),
        "num_hidden_layers of 2.5": setting("num_hidden_layers", 2.5),
        "vocab_size true": setting("vocab_size", True),
        "rope_theta as text": setting("rope_theta", "fast"),
        "rms_norm_eps as a list": setting("rms_norm_eps", [1e-6]),
        "rope_scaling a number": setting("rope_scaling", 5),
        "a negative hidden_size": setting("hidden_size", -64),
        "a zero head_dim": setting("head_dim", 0),
        "a negative intermediate_size": setting("intermediate_size", -1),
        "a billion layers": setting("num_hidden_layers", 10**9),
        "a huge hidden_size": setting("hidden_size", 2**40),
        "a huge vocab_size": setting("vocab_size", 2**31),
        "a huge context": setting("max_position_embeddings", 10**15),
        "a JSON list": lambda _: [1, 2],
    }


def tokenizer_changes() -> dict[str, tuple[str, Callable[[Path], None]]]:
    rng = random.Random(SEED + 1)

    def garbage(name: str) -> Callable[[Path], None]:
        data = bytes(rng.randrange(256) for _ in range(4096))
        return lambda folder: (folder / name).write_bytes(data)

    def template_config(template: str) -> Callable[[Path], None]:
        def change(folder: Path) -> None:
            config = json.loads((folder / "tokenizer_config.json").read_text())
            config["chat_template"] = template
            (folder / "tokenizer_config.json").write_text(json.dumps(config))

        return change

    def enormous(folder: Path) -> None:
        # Sparse: 200 MB on paper, nothing on disk; refused by its size before it is read.
        with (folder / "tokenizer.json").open("r+b") as file:
            file.truncate(200 * 1024 * 1024)

    return {
        "tokenizer.json of random bytes": ("tokenizer.json", garbage("tokenizer.json")),
        "tokenizer.json with a wrong structure": (
            "tokenizer.json",
            lambda folder: (folder / "tokenizer.json").write_text('{"model": {"type": 5}}'),
        ),
        "an enormous tokenizer.json": ("tokenizer.json", enormous),
        "tokenizer_config.json of random bytes": (
            "tokenizer_config.json",
            garbage("tokenizer_config.json"),
        ),
        "a looping template in tokenizer_config.json": (
            "tokenizer_config.json",
            template_config(LOOPING_TEMPLATE),
        ),
        "a raising template in tokenizer_config.json": (
            "tokenizer_config.json",
            template_config(RAISING_TEMPLATE),
        ),
        "a template that writes megabytes": (
            "tokenizer_config.json",
            template_config("{% for a in range(100000) %}{{ 'xxxxxxxxxxxxxxxxxxxx' }}{% endfor %}"),
        ),
        "a template that does not parse": ("tokenizer_config.json", template_config("{% for %}")),
        "a looping chat_template.jinja": (
            "chat_template.jinja",
            lambda folder: (folder / "chat_template.jinja").write_text(LOOPING_TEMPLATE),
        ),
    }


def folder_cases(base: Path, root: Path) -> list[tuple[str, str, Path]]:
    """(kind, what, folder) for every damaged copy of the tiny model folder."""
    cases = []

    def copy(name: str) -> Path:
        folder = root / f"case-{len(cases)}-{name.replace(' ', '-')[:40]}"
        shutil.copytree(base, folder)
        return folder

    weights = (base / "model.safetensors").read_bytes()
    for what, change in safetensors_changes(len(weights)).items():
        folder = copy(what)
        (folder / "model.safetensors").write_bytes(change(weights))
        cases.append(("safetensors", what, folder))
    config = json.loads((base / "config.json").read_text())
    for what, change in config_changes().items():
        folder = copy(what)
        (folder / "config.json").write_text(json.dumps(change(dict(config))))
        cases.append(("config", what, folder))
    for what, (_, change) in tokenizer_changes().items():
        folder = copy(what)
        change(folder)
        cases.append(("tokenizer", what, folder))
    return cases


def test_safetensors_and_config_faults_are_refused_by_the_python_checks(
    base_folder: Path, tmp_path: Path
) -> None:
    checked = [
        (kind, what, folder)
        for kind, what, folder in folder_cases(base_folder, tmp_path)
        if kind == "safetensors"
        or what.startswith(("a negative", "a zero", "a huge", "a billion", "a JSON", "rope_theta"))
    ]
    assert len(checked) >= 25
    missed = []
    for _, what, folder in checked:
        try:
            check_before_load(folder)
        except ModelLoadError:
            continue
        missed.append(what)
    assert missed == []


def test_damaged_model_folders_end_in_a_clear_error_and_stay_as_they_were(
    base_folder: Path, tmp_path: Path
) -> None:
    cases = folder_cases(base_folder, tmp_path / "cases")
    outcomes = outcomes_in_children(
        "tests.fuzz_files:check_each",
        [folder for _, _, folder in cases],
        log=tmp_path / "outcomes.jsonl",
        per_case_s=PER_CASE_S,
    )
    found = {what: outcome for (_, what, _), outcome in zip(cases, outcomes, strict=True)}
    assert {what: o for what, o in found.items() if o[0] != "refused"} == {}
    for what, (name, _) in tokenizer_changes().items():
        assert name in found[what][1] or "tokenizer" in found[what][1], what
    assert "did not finish" in found["a looping template in tokenizer_config.json"][1]
    assert "(in chat_template.jinja)" in found["a looping chat_template.jinja"][1]
    assert "refuses every conversation" in found["a raising template in tokenizer_config.json"][1]
    assert "200 MB" in found["an enormous tokenizer.json"][1]
    assert "num_hidden_layers" in found["a billion layers"][1]


def test_importing_a_folder_with_a_looping_template_adds_nothing(
    base_folder: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "looping-model"
    shutil.copytree(base_folder, folder)
    (folder / "chat_template.jinja").write_text(LOOPING_TEMPLATE)
    models = tmp_path / "models"
    models.mkdir()
    for link in (False, True):
        with pytest.raises(library.LibraryError, match=r"chat_template\.jinja.*did not finish"):
            model_install.import_folder(folder, models, link=link)
    assert list(models.iterdir()) == []


def test_the_library_still_lists_entries_whose_files_were_damaged_after_they_joined(
    base_folder: Path, tmp_path: Path
) -> None:
    """A linked folder can change after its check; listing the library reads its headers in
    the window's process, so a damaged one must show as an entry, not break the list."""
    cases = folder_cases(base_folder, tmp_path / "models")
    listed = {info.folder: info for info in library.list_models(tmp_path / "models")}
    assert sorted(listed) == sorted(folder for _, _, folder in cases)
    damaged_length = next(f for _, what, f in cases if what == "a header length of 2**40")
    assert listed[damaged_length].parameters is None
    assert listed[damaged_length].quantization == "unknown"
