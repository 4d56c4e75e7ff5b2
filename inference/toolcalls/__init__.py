"""Tool calls as each model family writes them: reading a reply into its reasoning, its answer and
its calls, and picking a model's format from its chat template.

`formats` is the dispatcher (`parse_reply`, `call_in_progress`, `TOOL_FORMATS`), `detect` picks a
format from a chat template (`tool_format_for`), `calls` holds the result types and the scanner
the families share, and one module per family group reads that family's markup (`tagged`:
Hermes/Qwen, Qwen3-Coder XML, GLM, Kimi K2; `gemma`, `llama`, `mistral`, `harmony`, `deepseek`).

May import: the standard library, mlx-lm's tool parsers and `inference.prompt.reasoning`; never Qt,
`app` or `ui`.
"""
