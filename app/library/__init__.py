"""The model library: the model folders in the models folder, what they are and whether they can
load (checks in a child process), adding them (copy, link, GGUF import, the embedded default),
downloads from the Hugging Face hub with a look first, and draft-model choices.

May import `app.paths`, `app.settings`, QtCore, and the MLX-free parts of `inference`
(`inference.loading.model_files`, `inference.errors`); the heavy imports run lazily in child
processes. Never `ui`.
"""
