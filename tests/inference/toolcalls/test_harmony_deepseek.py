"""gpt-oss (harmony) and DeepSeek calls, which mlx-lm has no parser for, written as OpenAI's
harmony guide and DeepSeek's templates and encoders render them."""

from __future__ import annotations

from inference import parse_reply


def calls(text: str, fmt: str, thinking: bool = False) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_reply(text, fmt, thinking).tool_calls]


# --- harmony ----------------------------------------------------------------------------------

ANALYSIS = (
    '<|channel|>analysis<|message|>User asks: "What is the weather in Tokyo?" We need to use '
    "get_current_weather tool.<|end|>"
)


def test_harmony_call_in_the_channel_part_with_its_reasoning() -> None:
    text = (
        ANALYSIS + "<|start|>assistant<|channel|>commentary to=functions.get_current_weather "
        '<|constrain|>json<|message|>{"location":"Tokyo"}<|call|>'
    )
    reply = parse_reply(text, "harmony")
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("get_current_weather", {"location": "Tokyo"})
    ]
    assert reply.reasoning is not None and reply.reasoning.startswith("User asks:")
    assert reply.content is None and reply.malformed == []


def test_harmony_recipient_in_the_role_part_and_call_token_stripped_by_the_decoder() -> None:
    text = ANALYSIS + (
        "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}"
    )
    assert calls(text, "harmony") == [("get_time", {})]


def test_harmony_final_answer_and_preamble() -> None:
    final = ANALYSIS + "<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>"
    reply = parse_reply(final, "harmony")
    assert reply.content == "It is sunny." and reply.tool_calls == []
    preamble = (
        "<|channel|>commentary<|message|>Let me check the weather.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city":"Paris"}<|call|>'
    )
    reply = parse_reply(preamble, "harmony")
    assert reply.content == "Let me check the weather."
    assert [c.name for c in reply.tool_calls] == ["get_weather"]


def test_harmony_parallel_messages_come_in_order() -> None:
    one = (
        "<|start|>assistant<|channel|>commentary to=functions.{0} <|constrain|>json"
        '<|message|>{{"n":{1}}}<|call|>'
    )
    text = ANALYSIS + one.format("a", 1) + one.format("b", 2)
    assert calls(text, "harmony") == [("a", {"n": 1}), ("b", {"n": 2})]


def test_harmony_recipient_named_in_reasoning_text_is_no_call() -> None:
    text = (
        "<|channel|>analysis<|message|>I could send to=functions.delete_all but will not.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Nothing was deleted.<|return|>"
    )
    reply = parse_reply(text, "harmony")
    assert reply.tool_calls == [] and reply.content == "Nothing was deleted."


def test_harmony_truncated_calls_are_malformed() -> None:
    cut_body = ANALYSIS + (
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"location":"Tok'
    )
    reply = parse_reply(cut_body, "harmony")
    assert reply.tool_calls == [] and len(reply.malformed) == 1
    assert reply.malformed[0].endswith('{"location":"Tok')
    assert reply.malformed[0] in (reply.content or "")
    header = "<|start|>assistant<|channel|>commentary to=functions.get_wea"
    reply = parse_reply(ANALYSIS + header, "harmony")
    assert reply.tool_calls == [] and reply.malformed == [header]


def test_plain_text_from_a_harmony_model_is_the_answer() -> None:
    reply = parse_reply("Just text.", "harmony")
    assert reply.content == "Just text." and reply.reasoning is None


# --- DeepSeek ---------------------------------------------------------------------------------

V3 = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
    '{"location": "Tokyo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>'
)


def test_deepseek_v3_type_name_and_code_block() -> None:
    reply = parse_reply("Let me look.\n\n" + V3, "deepseek")
    assert reply.content == "Let me look."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("get_weather", {"location": "Tokyo"})
    ]


def test_deepseek_v31_parallel_calls() -> None:
    text = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"location": "Tokyo"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )
    assert calls(text, "deepseek") == [("get_weather", {"location": "Tokyo"}), ("get_time", {})]


DSML = (
    '<｜DSML｜{block}>\n<｜DSML｜invoke name="get_weather">\n'
    '<｜DSML｜parameter name="location" string="true">Hangzhou</｜DSML｜parameter>\n'
    '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n'
    '</｜DSML｜invoke>\n<｜DSML｜invoke name="get_time">\n</｜DSML｜invoke>\n</｜DSML｜{block}>'
)


def test_deepseek_v32_and_v4_dsml_in_thinking_mode() -> None:
    for block in ("function_calls", "tool_calls"):  # V3.2, V4
        text = "The user wants the weather; use the tool.</think>\n\n" + DSML.format(block=block)
        reply = parse_reply(text, "deepseek", thinking=True)
        assert reply.reasoning == "The user wants the weather; use the tool."
        assert [(c.name, c.arguments) for c in reply.tool_calls] == [
            ("get_weather", {"location": "Hangzhou", "days": 3}),
            ("get_time", {}),
        ]
        assert reply.content is None


def test_deepseek_call_drafted_while_thinking_is_ignored() -> None:
    text = "Maybe " + DSML.format(block="function_calls") + " — no need.</think>It is 3 pm."
    reply = parse_reply(text, "deepseek", thinking=True)
    assert reply.tool_calls == [] and reply.content == "It is 3 pm."


def test_deepseek_a_string_false_value_that_is_not_json_stays_its_text() -> None:
    # vLLM and SGLang keep such a value as written (SGLang's test_deepseekv32_detector streams
    # Cyrillic prose in a string="false" parameter); the call is still the model's.
    not_json = DSML.format(block="tool_calls").replace(">3<", ">three<")
    reply = parse_reply(not_json, "deepseek")
    assert [c.name for c in reply.tool_calls] == ["get_weather", "get_time"]
    assert reply.tool_calls[0].arguments["days"] == "three"
    assert reply.malformed == []


def test_deepseek_malformed_and_truncated_calls() -> None:
    stray = DSML.format(block="tool_calls").replace('"get_weather">\n', '"get_weather">\noops\n')
    reply = parse_reply(stray, "deepseek")
    assert [c.name for c in reply.tool_calls] == ["get_time"]
    assert len(reply.malformed) == 1

    cut = V3[: V3.index("```<｜tool▁call▁end｜>")]
    reply = parse_reply(cut, "deepseek")
    assert reply.tool_calls == [] and len(reply.malformed) == 1
    assert '"location": "Tokyo"' in (reply.content or "")

    cut_dsml = (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="loc'
    )
    reply = parse_reply(cut_dsml, "deepseek")
    assert reply.tool_calls == [] and len(reply.malformed) == 1


def test_harmony_text_before_the_first_header_is_kept() -> None:
    text = "Sure." + ANALYSIS + "<|start|>assistant<|channel|>final<|message|>Done.<|return|>"
    assert parse_reply(text, "harmony").content == "Sure.\n\nDone."
