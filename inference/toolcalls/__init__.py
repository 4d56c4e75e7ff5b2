"""Tool calls as each model family writes them: reading a reply into its reasoning, its answer and
its calls, and picking a model's format from its chat template.

`formats` is the dispatcher (`parse_reply`, `call_in_progress`, `TOOL_FORMATS`), `detect` picks a
format from a chat template (`tool_format_for`), `calls` holds the result types and the scanner
the families share, `values` types values written as text by the tool's schema, and one module per
family group reads that family's markup (`tagged`: Hermes/Qwen JSON and Kimi K2; `qwen_xml`:
Qwen3-Coder and Qwen3.5; `glm`, `kimi_k3`, `gemma`, `llama`, `mistral`, `harmony`, `deepseek`).

May import: the standard library only.

Never Qt, `app` or `ui`.
"""
