"""Voice in the window: the microphone (its permission, `microphone`; recording with a level,
`recorder`), audio files decoded by Qt's own FFmpeg (`audio_files`) and offered for transcription
(`file_transcription`), sound played (`pcm_player`), the one PCM format they share (`formats`),
the system's voices (`system_voice`), a reply read aloud with either voice (`read_aloud`), the
composer's microphone (`mic_button`), a reply's speaker button (`speaker_button`), the voice
conversation's bar (`conversation_bar`), Preferences › Voice (`voice_page`), `branchwise
transcribe` / `branchwise say` (`cli`) and what `--self-test` checks of voice (`self_check`).

QtMultimedia and QtTextToSpeech (PySide6-Addons) load QtGui, so audio lives here and not in
`app`; `app.voice` has the rest (transcription, the spoken text, the built-in voice). Both are
imported when voice is first used: the window shows without them, and where QtMultimedia cannot
load (Linux without PulseAudio's library), voice says so and the rest of the app runs.

May import: `PySide6`, `numpy` (samples), `ui.widgets`, `ui.text` and `app`.

Never `ui.window`.
"""
