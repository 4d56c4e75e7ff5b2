"""Chatting through other OpenAI-compatible servers (vLLM, SGLang, llama.cpp, Ollama,
mlx_lm.server…): saved connections with their keys, the `openai` client on the asyncio loop, the
tool calls a server streams put together, and a backend that delivers remote replies (calls
included) as the worker delivers local ones.

May import: `openai`, `keyring`, `PySide6.QtCore`, `app.paths`, `app.async_tasks`, `app.kept_files`,
`app.images` (images sent as parts) and `app.generation` (its result shapes and token coalescing).

Never `ui` or `inference`.
"""
