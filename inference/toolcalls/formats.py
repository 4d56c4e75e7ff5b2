"""Every tool-call format Branchwise reads, and the two questions asked of a reply.

`parse_reply(text, tool_format, thinking=False)` reads a finished reply: the reasoning is split off
first (the family's block, opening the reply or opened by the prompt, so a call drafted while
thinking is not a call), then the family's reader finds the calls in the answer. It never
raises on the reply's text: a call that cannot be read stays in the answer and is listed as
malformed.

`call_in_progress(text, tool_format, thinking=False)` answers a streaming window: has the reply
begun a call, and to which tool (so it can show "Calling get_weather…" instead of markup).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from inference.toolcalls.calls import ParsedReply, Scan, Tools, reply_of
from inference.toolcalls.deepseek import deepseek_calling, deepseek_extract
from inference.toolcalls.gemma import gemma4_calling, gemma4_extract
from inference.toolcalls.glm import glm47_calling, glm47_extract
from inference.toolcalls.harmony import harmony_calling, harmony_extract
from inference.toolcalls.kimi_k3 import ENDS as KIMI_K3_ENDS
from inference.toolcalls.kimi_k3 import THINK as KIMI_K3_THINK
from inference.toolcalls.kimi_k3 import kimi_k3_calling, kimi_k3_extract
from inference.toolcalls.llama import llama3_calling, llama3_extract
from inference.toolcalls.mistral import MARKER, mistral_calling, mistral_extract
from inference.toolcalls.qwen_xml import qwen3_coder_calling, qwen3_coder_extract
from inference.toolcalls.tagged import (
    hermes_calling,
    hermes_extract,
    kimi_k2_calling,
    kimi_k2_extract,
)

_THINK = ("<think>", "</think>")


@dataclass(frozen=True)
class ToolFormat:
    """How one family writes calls.

    `reasoning`: its (start, end) thought markers (harmony reads its channels itself, so has
    none); `ends`: end-of-turn markers a decoder may leave at the end of the text; `markers`:
    strings one of which a reply must hold (or, for `bare`, start with) before it can hold a
    call, so a streaming check costs a substring search until then; `extract` reads the answer
    into a `Scan`; `calling` names the call begun in a partial answer. `calls_close_reasoning`:
    a reply that ends still inside its reasoning, with whole calls as the last thing in it,
    made those calls (the family's template renders them after the closed block; see
    docs/tool-calls.md for which families and why).
    """

    name: str
    families: str
    reasoning: tuple[tuple[str, str], ...]
    ends: tuple[str, ...]
    markers: tuple[str, ...]
    extract: Callable[[str, Scan, Tools], None]
    calling: Callable[[str], str | None]
    bare: tuple[str, ...] = ()
    calls_close_reasoning: bool = False


_QWEN_ENDS = ("<|im_end|>", "<|endoftext|>")
_FORMATS = (
    ToolFormat(
        name="hermes",
        families="Qwen2.5, Qwen3, Hermes 2 Pro/3: <tool_call>{json}</tool_call>",
        reasoning=(_THINK,),
        ends=_QWEN_ENDS,
        markers=("<tool_call>",),
        extract=hermes_extract,
        calling=hermes_calling,
        calls_close_reasoning=True,
    ),
    ToolFormat(
        name="qwen3_coder",
        families="Qwen3-Coder, Qwen3.5: <tool_call><function=…><parameter=…>",
        reasoning=(_THINK,),
        ends=_QWEN_ENDS,
        markers=("<tool_call>", "<function="),
        extract=qwen3_coder_extract,
        calling=qwen3_coder_calling,
        calls_close_reasoning=True,
    ),
    ToolFormat(
        name="llama3_json",
        families="Llama 3.1–3.3 and 4: bare JSON, <|python_tag|>, pythonic lists",
        reasoning=(),
        ends=("<|eot_id|>", "<|eom_id|>", "<|eot|>", "<|eom|>", "<|end_of_text|>"),
        markers=("<|python_tag|>", "<|python_start|>"),
        extract=llama3_extract,
        calling=llama3_calling,
        bare=("{", "["),
    ),
    ToolFormat(
        name="mistral",
        families="Mistral v3 JSON list, v11+ name[ARGS]{…}, Magistral [THINK]",
        reasoning=(("[THINK]", "[/THINK]"), _THINK),
        ends=("</s>",),
        markers=(MARKER,),
        extract=mistral_extract,
        calling=mistral_calling,
    ),
    ToolFormat(
        name="harmony",
        families="gpt-oss: channels and to=functions.name",
        reasoning=(),
        ends=("<|return|>", "<|call|>", "<|end|>", "<|endoftext|>"),
        markers=("to=",),
        extract=harmony_extract,
        calling=harmony_calling,
    ),
    ToolFormat(
        name="gemma4",
        families="Gemma 4: <|tool_call>call:name{…}<tool_call|>",
        reasoning=(("<|channel>thought", "<channel|>"),),
        ends=("<turn|>", "<eos>", "<|tool_response>"),
        markers=("<|tool_call>",),
        extract=gemma4_extract,
        calling=gemma4_calling,
    ),
    ToolFormat(
        name="glm47",
        families="GLM-4.5 to GLM-5: <tool_call>name<arg_key>…</arg_key><arg_value>…",
        reasoning=(_THINK,),
        ends=("<|user|>", "<|observation|>", "<|endoftext|>"),
        markers=("<tool_call>",),
        extract=glm47_extract,
        calling=glm47_calling,
    ),
    ToolFormat(
        name="kimi_k2",
        families="Kimi K2: <|tool_calls_section_begin|>… functions.name:0 …",
        reasoning=(_THINK,),
        ends=("<|im_end|>",),
        markers=("<|tool_calls_section_begin|>", "<|tool_call_begin|>"),
        extract=kimi_k2_extract,
        calling=kimi_k2_calling,
        calls_close_reasoning=True,
    ),
    ToolFormat(
        name="kimi_k3",
        families="Kimi K3: <|open|>tools<|sep|><|open|>call tool=… channels",
        reasoning=(KIMI_K3_THINK,),
        ends=KIMI_K3_ENDS,
        markers=("<|open|>tools<|sep|>", "<|open|>call"),
        extract=kimi_k3_extract,
        calling=kimi_k3_calling,
    ),
    ToolFormat(
        name="deepseek",
        families="DeepSeek V3, R1, V3.1 (tool▁calls markers), V3.2 to V4.1 (DSML)",
        reasoning=(_THINK,),
        ends=("<｜end▁of▁sentence｜>",),
        markers=("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "｜DSML｜"),
        extract=deepseek_extract,
        calling=deepseek_calling,
        calls_close_reasoning=True,
    ),
)
# name -> format, for every family Branchwise reads
TOOL_FORMATS: dict[str, ToolFormat] = {form.name: form for form in _FORMATS}


def parse_reply(
    text: str, tool_format: str, thinking: bool = False, tools: Tools = None
) -> ParsedReply:
    """Read a finished reply. `thinking`: the generation prompt opened the reasoning block, so
    the reply starts inside it (formats without such a block, Llama's and harmony's, ignore
    it). `tools`: the OpenAI-style tool schemas the model was given, which
    type the values of the formats that write them as text (Qwen3-Coder, GLM); without them such
    values stay strings (GLM: read as JSON where they are JSON).

    Raises ValueError only for an unknown `tool_format` (a caller's mistake, not the reply's)."""
    form = _format(tool_format)
    text = _without_ends(text, form.ends)
    scan = Scan()
    if form.reasoning:
        reasoning, answer = _split(text, form.reasoning, thinking, form)
        if form.calls_close_reasoning and not answer.strip() and _left_open(text, form):
            reasoning, answer = _calls_at_end(reasoning, form, tools)
        scan.reasoning.append(reasoning)
    else:
        answer = text
    form.extract(answer, scan, tools)
    return reply_of(text, scan)


def _left_open(text: str, form: ToolFormat) -> bool:
    return not any(end in text for _, end in form.reasoning)


def _calls_at_end(reasoning: str, form: ToolFormat, tools: Tools) -> tuple[str, str]:
    """(reasoning, answer) of a reply that ended inside its reasoning: the calls it ends with,
    when it ends with whole calls and nothing else, are the answer."""
    starts = sorted(i for marker in form.markers for i in _positions(reasoning, marker))
    for start in starts:
        tail = Scan()
        form.extract(reasoning[start:], tail, tools)
        if tail.calls and not tail.malformed and not "".join(tail.content).strip():
            return reasoning[:start], reasoning[start:]
    return reasoning, ""


def _positions(text: str, marker: str) -> list[int]:
    found: list[int] = []
    at = text.find(marker)
    while at >= 0:
        found.append(at)
        at = text.find(marker, at + 1)
    return found


def call_in_progress(text: str, tool_format: str, thinking: bool = False) -> str | None:
    """For a reply still streaming: None while it has begun no call (outside its reasoning);
    otherwise the name of the last call begun, or "" while that name is not complete yet."""
    form = _format(tool_format)
    if not any(marker in text for marker in form.markers) and not (
        form.bare and text.lstrip().startswith(form.bare)
    ):
        return None
    answer = _split(text, form.reasoning, thinking, form)[1] if form.reasoning else text
    return form.calling(answer)


def _format(name: str) -> ToolFormat:
    try:
        return TOOL_FORMATS[name]
    except KeyError:
        known = ", ".join(TOOL_FORMATS)
        raise ValueError(f"unknown tool format {name!r} (known: {known})") from None


def _without_ends(text: str, ends: tuple[str, ...]) -> str:
    stripped = text.rstrip()
    while ends and stripped.endswith(ends):
        marker = next(m for m in ends if stripped.endswith(m))
        stripped = stripped[: -len(marker)].rstrip()
    return stripped


def _split(
    text: str, markers: tuple[tuple[str, str], ...], thinking: bool, form: ToolFormat
) -> tuple[str, str]:
    """(reasoning, answer). The reasoning block opens the reply, or the prompt opened it; a
    reasoning marker anywhere else is text (a call's argument may quote `<think>`). The block
    ends at its first end marker."""
    body = text.lstrip()
    opened = next(((s, e) for s, e in markers if body.startswith(s)), None)
    if opened is not None:
        inner, ends = body[len(opened[0]) :], (opened[1],)
    elif thinking or _lone_end(text, markers, form):
        inner, ends = text, tuple(e for _, e in markers)
    else:
        return "", text
    hits = [(i, e) for e in ends if (i := inner.find(e)) >= 0]
    if not hits:
        return inner, ""
    at, end = min(hits)
    return inner[:at], inner[at + len(end) :]


def _lone_end(text: str, markers: tuple[tuple[str, str], ...], form: ToolFormat) -> bool:
    """An end marker with no start before it: the prompt opened the block after all (R1-style
    templates do, and a caller may not know), unless the marker sits inside a call (the text
    before it does not read cleanly)."""
    for _, end in markers:
        at = text.find(end)
        if at >= 0:
            before = Scan()
            form.extract(text[:at], before, None)
            if not before.malformed:
                return True
    return False
