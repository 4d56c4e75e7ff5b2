"""Chatting through other OpenAI-compatible servers (vLLM, SGLang, llama.cpp, Ollama,
mlx_lm.server…): saved connections with their keys, the `openai` client on the asyncio loop, the
tool calls a server streams put together, and a backend that delivers remote replies (calls
included) as the worker delivers local ones.

May import `app.paths`, `app.async_tasks`, `app.kept_files`, `app.generation` (its result
shapes) and QtCore; never `ui` or `inference`.
"""
