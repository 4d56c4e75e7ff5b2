"""Gemma 4, GLM (4.5 to 5) and Kimi K2 calls, as their templates render them; each case where
mlx-lm's own parser goes wrong is named."""

from __future__ import annotations

from inference import parse_reply

Q = '<|"|>'


def calls(text: str, fmt: str, **kwargs: object) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_reply(text, fmt, **kwargs).tool_calls]


# --- Gemma 4 ----------------------------------------------------------------------------------


def test_gemma4_call_after_its_thought_channel() -> None:
    text = (
        "<|channel>thought\nThe user wants London's weather.<channel|>"
        f"<|tool_call>call:get_weather{{location:{Q}London{Q},unit:{Q}celsius{Q}}}<tool_call|>"
    )
    reply = parse_reply(text, "gemma4")
    assert reply.reasoning == "The user wants London's weather."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("get_weather", {"location": "London", "unit": "celsius"})
    ]
    assert reply.content is None


def test_gemma4_values_nest_and_strings_hold_markup() -> None:
    text = (
        f"<|tool_call>call:search{{query:{Q}echo {{a, [b]}}: c{Q},filters:{{tags:[{Q}x{Q},{Q}y{Q}],"
        "limit:5,exact:false,score:0.5,none:null}}<tool_call|>"
    )
    assert calls(text, "gemma4") == [
        (
            "search",
            {
                "query": "echo {a, [b]}: c",
                "filters": {
                    "tags": ["x", "y"],
                    "limit": 5,
                    "exact": False,
                    "score": 0.5,
                    "none": None,
                },
            },
        )
    ]


def test_gemma4_dotted_names_and_blanks_which_mlx_lm_rejects() -> None:
    text = f"<|tool_call>call:tools.shell-exec{{cmd:{Q}ls{Q}, dry_run:true}}<tool_call|>"
    assert calls(text, "gemma4") == [("tools.shell-exec", {"cmd": "ls", "dry_run": True})]


def test_gemma4_parallel_calls_and_empty_arguments() -> None:
    text = (
        "Checking both.<|tool_call>call:ping{}<tool_call|>"
        "<|tool_call>call:add{a:1,b:2}<tool_call|><|tool_response>"
    )
    reply = parse_reply(text, "gemma4")
    assert reply.content == "Checking both."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("ping", {}),
        ("add", {"a": 1, "b": 2}),
    ]


def test_gemma4_malformed_and_truncated() -> None:
    for text in (
        "<|tool_call>this isn't valid<tool_call|>",
        f"<|tool_call>call:add{{a:{Q}open}}<tool_call|>",
        "<|tool_call>call:calculator{lhs:1",
        "<|tool_call>call:add{a:1} extra<tool_call|>",
    ):
        reply = parse_reply(text, "gemma4")
        assert reply.tool_calls == [] and reply.malformed == [text] and reply.content == text


# --- GLM --------------------------------------------------------------------------------------

GLM45 = """<think>The user asks about the weather.</think>
<tool_call>get_weather
<arg_key>city</arg_key>
<arg_value>Beijing</arg_value>
<arg_key>zip</arg_key>
<arg_value>94103</arg_value>
<arg_key>days</arg_key>
<arg_value>3</arg_value>
</tool_call>"""

ZIP_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"zip": {"type": "string"}}},
    },
}


def test_glm45_call_typed_by_schema_and_json() -> None:
    reply = parse_reply(GLM45, "glm47", tools=[ZIP_TOOL])
    assert reply.reasoning == "The user asks about the weather."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Beijing", "zip": "94103", "days": 3})
    ]
    # Without the schema a value that reads as JSON is JSON.
    assert parse_reply(GLM45, "glm47").tool_calls[0].arguments["zip"] == 94103


def test_glm47_compact_parallel_and_no_argument_calls() -> None:
    text = (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>"
        '<tool_call>search<arg_key>tags</arg_key><arg_value>["a", "b"]</arg_value></tool_call>'
        "<tool_call>get_time</tool_call>"
    )
    assert calls(text, "glm47") == [
        ("get_weather", {"city": "Beijing"}),
        ("search", {"tags": ["a", "b"]}),
        ("get_time", {}),
    ]


def test_glm_prose_in_a_block_is_malformed_not_a_call() -> None:
    # mlx-lm turns this into a call named "this".
    for text in (
        "<tool_call>this is not a call</tool_call>",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beij",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_val",
        "<tool_call>get_weather<arg_key>city</arg_key></tool_call>",
    ):
        reply = parse_reply(text, "glm47")
        assert reply.tool_calls == [] and reply.malformed == [text], text


def test_glm_last_value_close_left_out_and_blanks_kept() -> None:
    # vLLM reads a call whose last </arg_value> the model left out, and keeps a string's blanks.
    text = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>  Beijing  \n</tool_call>"
    reply = parse_reply(text, "glm47")
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("get_weather", {"city": "  Beijing  "})
    ]
    assert reply.malformed == []


def test_glm_call_inside_thinking_is_ignored() -> None:
    reply = parse_reply("<think>" + GLM45.split("</think>")[1] + "</think>Sunny.", "glm47")
    assert reply.tool_calls == [] and reply.content == "Sunny."


# --- Kimi K2 ----------------------------------------------------------------------------------

KIMI = (
    "I'll check both cities.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    '<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_call_begin|>'
    'functions.get_weather:1<|tool_call_argument_begin|>{"city": "Shanghai"}<|tool_call_end|>'
    "<|tool_calls_section_end|>"
)


def test_kimi_k2_parallel_calls_keep_their_ids() -> None:
    reply = parse_reply(KIMI, "kimi_k2")
    assert reply.content == "I'll check both cities."
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("functions.get_weather:0", "get_weather", {"city": "Beijing"}),
        ("functions.get_weather:1", "get_weather", {"city": "Shanghai"}),
    ]


def test_kimi_k2_thinking_and_a_drafted_call() -> None:
    reply = parse_reply("<think>First I draft: " + KIMI + "</think>" + KIMI, "kimi_k2")
    assert len(reply.tool_calls) == 2
    assert reply.reasoning is not None and "functions.get_weather:0" in reply.reasoning


def test_kimi_k2_non_object_arguments_and_truncation() -> None:
    not_object = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
        '"text"<|tool_call_end|><|tool_calls_section_end|>'
    )
    reply = parse_reply(not_object, "kimi_k2")  # mlx-lm accepts a string as the arguments
    assert reply.tool_calls == [] and len(reply.malformed) == 1
    cut = KIMI[: KIMI.index('{"city": "Shanghai"}') + 8]
    reply = parse_reply(cut, "kimi_k2")
    assert [c.arguments for c in reply.tool_calls] == [{"city": "Beijing"}]
    assert len(reply.malformed) == 1 and reply.malformed[0].endswith('{"city":')
