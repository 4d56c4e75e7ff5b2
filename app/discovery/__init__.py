"""Models found on this computer: what LM Studio, the Hugging Face cache, Ollama and any folder
the person picks already hold, listed with whether Branchwise can run each (and why not), read
from headers and small files only (a GGUF's header, an MLX folder's config.json, an Ollama
manifest), never whole weight files; and each added to the library where it lies (an MLX folder
or a Hugging Face snapshot linked in place) or imported (a GGUF), at most once. Also the
`branchwise models` command.

May import: `app.library`, `app.paths`, `app.settings`, `app.sizes`, `inference`: only its
MLX-free parts (`inference.importing.gguf_check`, `inference.importing.gguf_support`,
`inference.loading.model_files`, `inference.vision.support`, `inference.errors`) at import
time; MLX runs only where the library runs it (a GGUF import on the worker or in a child
process).

Never `ui`, never Qt: the command line uses it without a window, and the window runs it through
`app.operations`.
"""
