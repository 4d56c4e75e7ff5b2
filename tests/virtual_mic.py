"""A virtual microphone for the tests, on Linux: a PulseAudio server of the test's own (its own
runtime folder), a null sink that plays nowhere, and a source remapped from the sink's monitor,
made the default input. Qt lists it as a microphone ("Remapped Monitor of Null Output"); a WAV
played into the sink with `paplay` is what that microphone hears, in real time.

`.ci/run` installs pulseaudio and pulseaudio-utils on Linux. Where they are missing the tests
that need them are skipped with the reason, except in CI (CI=true), where they fail: a skipped
check there would hide a missing install.

Qt's audio connects to its server once, when QtMultimedia first looks for devices in a process,
so the server runs for the whole test session (tests/conftest.py starts it before any test, and
points PULSE_SERVER at it): every window any test opens sees the same virtual microphone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import wave
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SINK = "branchwise_test_sink"
SOURCE = "branchwise_test_mic"


def missing() -> str | None:
    """Why a virtual microphone cannot be made here, or None."""
    if not sys_is_linux():
        return "the virtual microphone is PulseAudio's, on Linux"
    absent = [tool for tool in ("pulseaudio", "pactl", "paplay") if shutil.which(tool) is None]
    if absent:
        return f"{', '.join(absent)} not installed (apt-get install pulseaudio pulseaudio-utils)"
    return None


def sys_is_linux() -> bool:
    return os.uname().sysname == "Linux"


def require() -> None:
    """Skip with the reason where there is no virtual microphone; fail in CI."""
    reason = missing()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the microphone tests: {reason}")
    pytest.skip(reason)


def _pactl(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["pactl", *args], env=env, capture_output=True, text=True, timeout=20, check=True
    )
    return done.stdout.strip()


@contextmanager
def virtual_microphone() -> Iterator[dict[str, str]]:
    """Run a private PulseAudio server with the virtual microphone; yields its environment
    (also set in os.environ meanwhile) and stops the server at the end."""
    runtime = Path(tempfile.mkdtemp(prefix="bw-pulse-"))
    runtime.chmod(0o700)
    socket = runtime / "native"
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "PULSE_SERVER": f"unix:{socket}"}
    log = (runtime / "server.log").open("w")
    server = subprocess.Popen(
        [
            "pulseaudio",
            "-n",
            "--daemonize=no",
            "--exit-idle-time=-1",
            "--disallow-exit",
            "--log-target=stderr",
            "--log-level=error",
            f"--load=module-native-protocol-unix auth-anonymous=1 socket={socket}",
            f"--load=module-null-sink sink_name={SINK}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                _pactl(env, "info")
                break
            except subprocess.CalledProcessError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    said = (runtime / "server.log").read_text()
                    raise RuntimeError(f"PulseAudio did not start: {said}") from None
                time.sleep(0.1)
        _pactl(
            env,
            "load-module",
            "module-remap-source",
            f"master={SINK}.monitor",
            f"source_name={SOURCE}",
        )
        _pactl(env, "set-default-source", SOURCE)
        _pactl(env, "set-default-sink", SINK)
        saved = {"PULSE_SERVER": os.environ.get("PULSE_SERVER")}
        os.environ["PULSE_SERVER"] = env["PULSE_SERVER"]
        try:
            yield env
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        shutil.rmtree(runtime, ignore_errors=True)


def write_wav(path: Path, pcm: bytes, rate: int = 16_000) -> Path:
    with wave.open(str(path), "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(pcm)
    return path


def play(env: dict[str, str], wav: Path) -> subprocess.Popen[bytes]:
    """Play `wav` into the virtual microphone (in real time); returns the player."""
    return subprocess.Popen(["paplay", f"--device={SINK}", str(wav)], env=env)
