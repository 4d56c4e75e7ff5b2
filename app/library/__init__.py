"""The model library: the model folders in the models folder, what they are and whether they can
load (checks in a child process), adding them (copy, link, GGUF import, the embedded default),
downloads from the Hugging Face hub with a look first, and draft-model choices.

May import: `app.paths`, `app.settings`, `PySide6.QtCore`, `huggingface_hub`, `psutil` and
`inference`: only its MLX-free parts (`inference.loading.model_files`, `inference.vision.support`,
`inference.errors`, `inference.embedding.folder`) at import time; the heavy imports run lazily in
child processes.

Never `ui`.
"""
