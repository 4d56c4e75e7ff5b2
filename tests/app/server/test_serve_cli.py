"""`branchwise serve`: the headless server as a person starts it, in its own process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import openai
import pytest

from tests.paths import ROOT

READY_WITHIN_S = 60
EXITS_WITHIN_S = 10


def _serve(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("QT_QPA_PLATFORM", None)  # no display is needed, and none is asked for
    return subprocess.Popen(
        [sys.executable, "-m", "ui.entry", "serve", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _ready_url(process: subprocess.Popen[str]) -> str:
    """The URL from the line printed once the server answers (the read is bounded)."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(READY_WITHIN_S)
    assert lines and "http://" in lines[0], f"no URL printed: {lines!r}"
    return next(word for word in lines[0].split() if word.startswith("http://"))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_prints_its_url_answers_and_stops_on_a_signal(
    llama_path: Path, tmp_path: Path, signum: int
) -> None:
    process = _serve("--model", str(llama_path), "--port", "0", "--data-dir", str(tmp_path))
    try:
        url = _ready_url(process)
        client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=30)
        reply = client.chat.completions.create(
            model="llama", messages=[{"role": "user", "content": "Hello!"}], max_tokens=4
        )
        client.close()
        assert reply.usage.completion_tokens >= 1
        sent = time.monotonic()
        process.send_signal(signum)
        code = process.wait(EXITS_WITHIN_S)
        assert time.monotonic() - sent < EXITS_WITHIN_S
        assert code == 0, process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()


def test_serve_refuses_a_network_bind_without_a_key(llama_path: Path, tmp_path: Path) -> None:
    process = _serve("--model", str(llama_path), "--host", "0.0.0.0", "--data-dir", str(tmp_path))
    _out, err = process.communicate(timeout=READY_WITHIN_S)
    assert process.returncode == 2
    assert "API key" in err


def test_the_serve_path_never_imports_qt_widgets() -> None:
    probe = (
        "import sys, ui.entry, app.server.serve_cli, app.server.openai_server\n"
        "assert 'PySide6.QtWidgets' not in sys.modules, 'QtWidgets was imported'\n"
        "assert 'mlx.core' not in sys.modules, 'MLX was imported'\n"
    )
    subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        check=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
