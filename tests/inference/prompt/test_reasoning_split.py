"""Splitting a streamed reply into reasoning and answer, however the deltas cut the markers."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from inference.prompt.reasoning import HARMONY_TRANSITIONS, ReasoningFormat, ReplySplitter

THINK = ReasoningFormat.block("<think>", "</think>")
HARMONY = ReasoningFormat(HARMONY_TRANSITIONS, "header")
# Text that looks like the markers in part ("<", "/", "think") without being one.
PROSE = st.text(alphabet="ab <>/thinkTH\n", max_size=40).filter(
    lambda t: "<think>" not in t and "</think>" not in t
)


def _cuts(text: str, points: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(p % (len(text) + 1) for p in points)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _stream(fmt: ReasoningFormat, deltas: list[str], inside: bool = False) -> ReplySplitter:
    """Feed the deltas, checking that nothing shown is ever taken back."""
    splitter = ReplySplitter(fmt, starts_inside=inside)
    shown_reasoning = shown_answer = ""
    for delta in [*deltas, None]:
        reasoning, answer = splitter.finish() if delta is None else splitter.feed(delta)
        shown_reasoning += reasoning
        shown_answer += answer
        assert splitter.answer == shown_answer
    assert splitter.answer == shown_answer
    assert splitter.reasoning == shown_reasoning.rstrip()
    return splitter


@given(PROSE, PROSE, st.lists(st.integers(min_value=0), max_size=12))
def test_think_blocks_split_the_same_however_the_deltas_fall(
    reasoning: str, answer: str, points: list[int]
) -> None:
    raw = f"<think>{reasoning}</think>{answer}"
    splitter = _stream(THINK, _cuts(raw, points))
    assert splitter.reasoning == reasoning.strip()
    assert splitter.answer == answer.lstrip()


@given(PROSE, PROSE, st.lists(st.integers(min_value=0), max_size=12))
def test_a_reply_that_starts_inside_the_block_needs_no_opening_tag(
    reasoning: str, answer: str, points: list[int]
) -> None:
    splitter = _stream(THINK, _cuts(f"{reasoning}</think>{answer}", points), inside=True)
    assert (splitter.reasoning, splitter.answer) == (reasoning.strip(), answer.lstrip())


@given(PROSE, st.lists(st.integers(min_value=0), max_size=12))
def test_a_reply_without_a_block_is_all_answer(answer: str, points: list[int]) -> None:
    splitter = _stream(THINK, _cuts(answer, points))
    assert (splitter.reasoning, splitter.answer) == ("", answer.lstrip())


def test_a_half_written_tag_is_held_back_until_it_is_known() -> None:
    splitter = ReplySplitter(THINK)
    assert splitter.feed("Hello <thi") == ("", "Hello ")
    assert splitter.feed("s is not a tag") == ("", "<this is not a tag")
    splitter = ReplySplitter(THINK)
    assert splitter.feed("<thi") == ("", "")
    assert splitter.feed("nk>\nPondering") == ("Pondering", "")
    assert splitter.thinking


def test_a_reply_cut_off_while_thinking_keeps_its_reasoning() -> None:
    splitter = ReplySplitter(THINK)
    splitter.feed("<think>\nStill going </thi")
    splitter.finish()
    assert (splitter.reasoning, splitter.answer) == ("Still going </thi", "")


@given(st.lists(st.integers(min_value=0), max_size=16))
def test_harmony_channels_split_into_analysis_and_final(points: list[int]) -> None:
    raw = (
        "<|channel|>analysis<|message|>User asks the capital. Simple."
        "<|end|><|start|>assistant<|channel|>final<|message|>Paris."
    )
    splitter = _stream(HARMONY, _cuts(raw, points))
    assert (splitter.reasoning, splitter.answer) == ("User asks the capital. Simple.", "Paris.")


def test_thinking_time_and_token_count_cover_the_reasoning_only() -> None:
    now = [100.0]
    splitter = ReplySplitter(THINK, clock=lambda: now[0])
    for delta, at in [("<think>", 100.0), ("one", 100.5), (" two", 101.0), ("</think>", 102.5)]:
        now[0] = at
        splitter.feed(delta)
    for delta in ["The", " answer"]:
        now[0] += 1
        splitter.feed(delta)
    splitter.finish()
    assert splitter.reasoning_deltas == 4
    assert splitter.reasoning_s == 2.5
    assert (splitter.reasoning, splitter.answer) == ("one two", "The answer")


def test_no_format_passes_everything_through() -> None:
    splitter = ReplySplitter(None)
    assert splitter.feed("<think>x</think>") == ("", "<think>x</think>")
    assert not splitter.thinking


@given(PROSE, PROSE, st.lists(st.integers(min_value=0), max_size=12))
def test_kimi_k3_channels_split_and_their_markup_never_shows(
    reasoning: str, answer: str, points: list[int]
) -> None:
    from pathlib import Path
    from types import SimpleNamespace

    template = Path(__file__).parents[1] / "toolcalls" / "templates" / "kimi-k3.jinja"
    tokenizer = SimpleNamespace(get_vocab=dict, chat_template=template.read_text())
    k3 = ReasoningFormat.of(tokenizer)  # read from the template's channel markers
    assert k3 is not None and k3.start == "<|open|>think<|sep|>"
    tools = '<|open|>tools<|sep|><|open|>call tool="f"<|sep|><|close|>call<|sep|>'
    raw = (
        f"<|open|>think<|sep|>{reasoning}<|close|>think<|sep|><|open|>response<|sep|>"
        f"{answer}<|close|>response<|sep|>{tools}<|close|>message<|sep|>"
    )
    splitter = _stream(k3, _cuts(raw, points))
    assert splitter.reasoning == reasoning.strip()
    # The tools section stays for the tool-call reader, which hides it as it streams.
    assert splitter.answer == (answer + tools).lstrip()
