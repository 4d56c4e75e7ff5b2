"""Tool-use figures (issue 25 item 7): continuing after a tool result against a plain follow-up,
on one engine, runs alternating, each side's previous turn cached.

The model wears Qwen2.5's tools template (SmolLM2's own takes no tools; both frame turns in
ChatML, so its tokens fit). In a chat of about `--tool-history-tokens` tokens offering three
tools, the model calls `get_weather` (its call is the reply so far and its end of turn is forced,
so the cache holds what a model that called leaves there), then the conversation continues after
the tool's result. The plain side answers the same question in text and gets a follow-up of the
result's length instead. Rows:

* prompt tokens computed after the result, against the tool turn's tokens (what the template
  adds for the result): at most those + 8 (the end of the call's turn and the next header);
* time to first token after the result over a plain follow-up's (best of the runs; about 1);
* the same continuation from an empty cache, for scale.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.conversation import ask, history
from inference import Engine, GenerationResult, LoadedModel, SamplingParams
from tests.tiny_models import QWEN_TOOLS_TEMPLATE, WEATHER_TOOL

HEADER = ("measure", "after a tool result", "after a plain follow-up", "ratio", "target")
TOOLS = [
    WEATHER_TOOL,
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The local time in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_conversations",
            "description": "Search the person's chats",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    },
]
QUESTION = "What is the weather in Paris right now?"
# The call as Qwen's template renders it after the assistant header (what the model writes).
CALL_TEXT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ],
}
# The tool's result; each run's begins differently, so no run finds another's in the cache.
RESULT = (
    "{} in Paris, France: 21 C, light wind from the west at 12 km/h, humidity 48%, no "
    "rain expected before tomorrow evening."
)
SKIES = ("Sunny", "Cloudy", "Overcast", "Bright", "Hazy", "Mild", "Warm", "Fair")
ONE = SamplingParams(max_tokens=1)  # time to first token: the prompt is the work


@contextmanager
def tools_template(loaded: LoadedModel) -> Iterator[None]:
    """The model's tokenizer wears Qwen2.5's tools template for the section's duration."""
    tokenizer = loaded.tokenizer
    own = tokenizer.chat_template
    tokenizer.chat_template = QWEN_TOOLS_TEMPLATE
    try:
        yield
    finally:
        tokenizer.chat_template = own


def rows(loaded: LoadedModel, args: argparse.Namespace) -> list[tuple[str, ...]]:
    """The section's table: HEADER, then the prompt tokens and time-to-first-token rows."""
    with tools_template(loaded):
        return _measure(loaded, args)


def _measure(loaded: LoadedModel, args: argparse.Namespace) -> list[tuple[str, ...]]:
    engine = Engine(loaded)
    base = [*history(loaded, args.tool_history_tokens), ask(QUESTION)]
    eos = loaded.tokenizer.eos_token_id
    if eos is None:
        raise ValueError(
            f"{loaded.model_id}'s tokenizer names no end-of-sequence token, which the tools "
            "section forces to end the call's turn"
        )
    end_turn = SamplingParams(max_tokens=1, logit_bias={eos: 1e9})
    tool: list[GenerationResult] = []
    plain: list[GenerationResult] = []
    for run in range(args.runs):
        result = _result(run)
        after_tool = _after_tool(base, result)
        calling = [*base, {"role": "assistant", "content": CALL_TEXT}]
        engine.generate(calling, end_turn, f"tool-{run}", tools=TOOLS, continue_reply=True)
        tool.append(engine.generate(after_tool, ONE, f"tool-{run}", tools=TOOLS))
        reply = engine.generate(base, ONE, f"plain-{run}", tools=TOOLS)
        follow = [*base, {"role": "assistant", "content": reply.text}, ask(result)]
        plain.append(engine.generate(follow, ONE, f"plain-{run}", tools=TOOLS))
        print(
            f"tools run {run + 1}: after the result {tool[-1].stats.ttft_s * 1e3:.1f} ms "
            f"({tool[-1].stats.prefill_tokens} computed), plain follow-up "
            f"{plain[-1].stats.ttft_s * 1e3:.1f} ms ({plain[-1].stats.prefill_tokens} computed)",
            flush=True,
        )
    after_tool = _after_tool(base, _result(args.runs - 1))  # the last run's
    cold = Engine(loaded).generate(after_tool, ONE, "cold", tools=TOOLS).stats
    turn = _tool_turn_tokens(engine, base, after_tool)
    computed = max(r.stats.prefill_tokens for r in tool)
    best_tool = min(r.stats.ttft_s for r in tool)
    best_plain = min(r.stats.ttft_s for r in plain)
    return [
        HEADER,
        (
            f"prompt tokens computed (of {tool[-1].stats.prompt_tokens}; tool turn {turn})",
            str(computed),
            str(max(r.stats.prefill_tokens for r in plain)),
            "",
            f"<= {turn + 8}: {'yes' if computed <= turn + 8 else 'NO'}",
        ),
        (
            f"time to first token, ms (best of {args.runs})",
            f"{best_tool * 1e3:.1f}",
            f"{best_plain * 1e3:.1f}",
            f"{best_tool / best_plain:.2f}",
            "about 1",
        ),
        (
            f"from an empty cache, ms ({cold.prefill_tokens} computed)",
            f"{cold.ttft_s * 1e3:.1f}",
            "",
            f"{best_tool / cold.ttft_s:.3f}",
            "well below 1",
        ),
    ]


def _result(run: int) -> str:
    """The tool's result in run `run` (from 0)."""
    return RESULT.format(f"{SKIES[run % len(SKIES)]} (report {run + 1})")


def _after_tool(base: list[dict[str, str]], result: str) -> list[dict[str, Any]]:
    """The chat `base`, the model's call and the tool's `result`."""
    return [*base, CALL, {"role": "tool", "tool_call_id": "call_1", "content": result}]


def _tool_turn_tokens(
    engine: Engine, base: list[dict[str, str]], after_tool: list[dict[str, Any]]
) -> int:
    """The tokens the template adds to the chat for the tool's result (generation prompts
    alike on both sides, so they cancel out)."""
    with_call = engine.count_prompt_tokens([*base, CALL], tools=TOOLS)
    return engine.count_prompt_tokens(after_tool, tools=TOOLS) - with_call
