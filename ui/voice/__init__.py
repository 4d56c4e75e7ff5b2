"""Voice in the window: the microphone (its permission, `microphone`; recording with a level,
`recorder`), audio files decoded by Qt's own FFmpeg (`audio_files`), sound played
(`pcm_player`), the system's voices (`system_voice`), a reply read aloud with either voice
(`read_aloud`), the composer's microphone button (`mic_button`), a reply's speaker button
(`speaker_button`), Preferences › Voice (`voice_page`) and `branchwise transcribe` / `branchwise
say` (`cli`).

QtMultimedia and QtTextToSpeech (PySide6-Addons) load QtGui, so audio lives here and not in
`app`; `app.voice` has the rest (transcription, the spoken text, the built-in voice). Both are
imported when voice is first used: the window shows without them, and where QtMultimedia cannot
load (Linux without PulseAudio's library), voice says so and the rest of the app runs.

May import: `PySide6`, `numpy` (samples), `ui.widgets`, `ui.text` and `app`.

Never `ui.window`.
"""
