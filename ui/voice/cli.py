"""`branchwise transcribe AUDIO_FILE [--model FOLDER_OR_NAME] [--language CODE] [--json]
[--data-dir DIR]` prints what is said in an audio file (WAV, MP3, M4A, FLAC, OGG), decoded by
Qt's own FFmpeg and transcribed by Whisper in this process (with `--json`: the text, the
language, the audio's length and the timed segments).

`branchwise say TEXT --out FILE.wav [--voice NAME] [--speed X] [--data-dir DIR]` writes TEXT
said by the built-in voice as a 24 kHz 16-bit mono WAV.

Both need no window and no display. Exit status: 0 done, 2 refused (the message says why).
"""

from __future__ import annotations

import argparse
import json
import sys
import wave
from pathlib import Path

from app.library.model_check import LibraryError
from app.paths import AppPaths
from app.settings import Preferences
from app.voice.natural_voice import DEFAULT_VOICE, SAMPLE_RATE
from app.voice.voice_settings import MAX_SPEED, MIN_SPEED, VoiceSettings

REFUSED = 2


def _refuse(command: str, message: str, as_json: bool = False) -> int:
    if as_json:
        print(json.dumps({"error": message}, ensure_ascii=False))
    else:
        print(f"branchwise {command}: {message}", file=sys.stderr)
    return REFUSED


def transcribe_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="branchwise transcribe", description="Print what is said in an audio file."
    )
    parser.add_argument("audio", help="a WAV, MP3, M4A, FLAC or OGG file")
    parser.add_argument("--model", help="a Whisper folder, or a speech model's library name")
    parser.add_argument("--language", help="a language code such as en or de (default: detect)")
    parser.add_argument("--json", action="store_true", help="print text, language and segments")
    parser.add_argument("--data-dir", help="the app's data folder (default: the usual one)")
    args = parser.parse_args(argv)
    paths = AppPaths.resolve(args.data_dir)
    settings = VoiceSettings.of(Preferences(paths.settings_file))
    try:
        from app.voice.speech_models import resolve_speech_model

        folder = resolve_speech_model(paths.models_dir, args.model, settings.speech_model)
    except LibraryError as error:
        return _refuse("transcribe", str(error), args.json)
    from PySide6.QtCore import QCoreApplication, QLoggingCategory

    QLoggingCategory.setFilterRules("qt.multimedia.*=false")  # its start-up notes, on stderr

    from ui.voice.audio_files import AudioFileError, decode_audio_file

    _app = QCoreApplication.instance() or QCoreApplication([])
    try:
        audio = decode_audio_file(args.audio)
    except AudioFileError as error:
        return _refuse("transcribe", str(error), args.json)
    from app.voice.transcription import transcribe_pcm  # loads MLX

    try:
        transcript = transcribe_pcm(folder, audio.pcm, args.language or settings.language or None)
    except Exception as error:  # inference's refusals, a model that fails: said, never a trace
        return _refuse("transcribe", str(error), args.json)
    if args.json:
        segments = [{"start": s.start, "end": s.end, "text": s.text} for s in transcript.segments]
        print(
            json.dumps(
                {
                    "text": transcript.text,
                    "language": transcript.language,
                    "seconds": transcript.seconds,
                    "segments": segments,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        print(transcript.text)
    return 0


def say_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="branchwise say", description="Write text said by the built-in voice to a WAV file."
    )
    parser.add_argument("text", help="what to say")
    parser.add_argument("--out", required=True, help="the WAV file to write")
    parser.add_argument("--voice", default=DEFAULT_VOICE, help="a built-in voice's name")
    parser.add_argument("--speed", type=float, default=1.0, help="0.5 (slow) to 2 (fast)")
    parser.add_argument("--data-dir", help="the app's data folder (unused; as other commands)")
    args = parser.parse_args(argv)
    if not MIN_SPEED <= args.speed <= MAX_SPEED:
        return _refuse("say", f"--speed must be from {MIN_SPEED} to {MAX_SPEED}.")
    if not args.text.strip():
        return _refuse("say", "There is nothing to say.")
    from app.voice.natural_voice import NaturalVoice, natural_voices

    names = [v.name for v in natural_voices()]
    if args.voice not in names:
        return _refuse("say", f"No built-in voice '{args.voice}'; there is {', '.join(names)}.")
    pcm = NaturalVoice(args.voice).speak(args.text, args.speed)
    out = Path(args.out)
    try:
        with wave.open(str(out), "wb") as file:
            file.setnchannels(1)
            file.setsampwidth(2)
            file.setframerate(SAMPLE_RATE)
            file.writeframes(pcm)
    except OSError as error:
        return _refuse("say", f"{out} could not be written: {error.strerror or error}")
    print(f"{out}: {len(pcm) / 2 / SAMPLE_RATE:.2f} s")
    return 0
