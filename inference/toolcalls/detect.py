"""Which tool-call format a model writes, read from its chat template's Jinja source.

Each family's template spells out the markup it renders past calls with, so a marker found in the
source names the format, the way mlx-lm's `_infer_tool_parser` guesses its parser (a private
function, and without Llama or harmony). Order matters where families share a marker: GLM and
Qwen3-Coder templates also write `<tool_call>`, which alone means Hermes/Qwen JSON.

A template with none of these takes no tools (SmolLM2's ignores `tools` entirely), or writes them
in a way Branchwise cannot read back: either way the model gets no tools.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

_RULES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("harmony", lambda t: "to=functions." in t or ("<|channel|>" in t and "<|call|>" in t)),
    ("gemma4", lambda t: "<|tool_call>" in t and "<tool_call|>" in t),
    ("glm47", lambda t: "<arg_key>" in t),
    ("qwen3_coder", lambda t: "<function=" in t and "<parameter=" in t),
    ("kimi_k3", lambda t: "<|open|>tools<|sep|>" in t or "<|open|>call tool=" in t),
    ("kimi_k2", lambda t: "<|tool_calls_section_begin|>" in t),
    # V3.2 to V4.1 (DSML, spaced or not) and the older tool▁call markers.
    ("deepseek", lambda t: "tool▁call▁begin" in t or "｜DSML｜" in t),
    ("mistral", lambda t: "[TOOL_CALLS]" in t),
    # Llama 3.1/3.3 name <|python_tag|>; 3.2 and 4 render {"name": …, "parameters": …} calls
    # and send results as the ipython role.
    ("llama3_json", lambda t: "<|python_tag|>" in t or ("ipython" in t and '"parameters"' in t)),
    ("hermes", lambda t: "<tool_call>" in t),
)


def tool_format_for(chat_template: str | Mapping[str, str] | None) -> str | None:
    """The name of the format (a key of `TOOL_FORMATS`) the template's model writes calls in, or
    None when the template takes no tools. Only a single template is read: a tokenizer's named
    set of templates (a mapping) and no template at all both give None."""
    if not isinstance(chat_template, str):
        return None
    return next((name for name, holds in _RULES if holds(chat_template)), None)
