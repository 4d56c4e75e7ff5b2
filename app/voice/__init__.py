"""Voice, the part that needs no audio device: dictation's transcription as an operation on the
inference worker (`transcription`), the speech models in the library (`speech_models`), what a
reply sounds like read aloud (`spoken_text`: Markdown as prose, sentence by sentence as it
streams), the built-in natural voice (`natural_voice`, hibari on a thread of its own:
`synthesis`), the end of a person's turn in a voice conversation (`turn_taking`) and the voice
settings (`voice_settings`). Audio capture, playback, file decoding and the system's voices need
QtMultimedia and QtTextToSpeech, which load QtGui: they live in `ui.voice`.

May import: `PySide6.QtCore`, `app.operations`, `app.library`, `app.settings`, `app.gui_relay`,
`markdown_it` (a reply's Markdown read as prose), `numpy` (levels, samples), `hibari` (lazily,
on the synthesis thread or in `branchwise say`), `inference.speech.support` at import time (no
MLX), and `inference` lazily inside a job on the inference worker or in the command's process.

Never `ui`, never widgets, never QtMultimedia (it loads QtGui).
"""
