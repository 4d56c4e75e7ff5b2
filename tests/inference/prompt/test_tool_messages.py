"""Tool calls handed to each template in the form it renders: a mapping for those that apply
`tojson` or walk the arguments, JSON text for those that paste them in (DeepSeek's)."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pytest

from inference.prompt.chat_prompt import validate_messages
from inference.prompt.tool_messages import for_template
from tests.tiny_models import QWEN_TOOLS_TEMPLATE

TEMPLATES = Path(__file__).parents[1] / "toolcalls" / "templates"
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "a1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ],
}


def _render_call(template: str, messages: list[dict]) -> str:
    env = jinja2.Environment()
    env.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False)
    tool = messages[0]["tool_calls"][0]
    return env.from_string(template).render(
        messages=messages, message=messages[0], tool=tool, tools=None, user_messages=[]
    )


@pytest.mark.parametrize("name", ["deepseek-v3.1.jinja", "deepseek-v3.jinja"])
def test_a_template_that_pastes_arguments_gets_json_text(name: str) -> None:
    template = (TEMPLATES / name).read_text(encoding="utf-8")
    messages = for_template(validate_messages([CALL]), template)
    arguments = messages[0]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {"city": "Paris"}
    assert '{"city": "Paris"}' in _render_call(template, messages)


@pytest.mark.parametrize(
    "template",
    [
        QWEN_TOOLS_TEMPLATE,
        (TEMPLATES / "mistral-v3.jinja").read_text(encoding="utf-8"),
        (TEMPLATES / "llama-3.1.jinja").read_text(encoding="utf-8"),
        (TEMPLATES / "glm-4.5.jinja").read_text(encoding="utf-8"),
    ],
)
def test_templates_that_read_a_mapping_get_one(template: str) -> None:
    messages = for_template(validate_messages([CALL]), template)
    assert messages[0]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}
    assert messages[0]["content"] == ""
