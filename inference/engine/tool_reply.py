"""Tools on a chat request: the schemas checked against what the model's template can take, and
the finished reply read back into its calls.

A request offers tools through the chat template (`tools=` in its switches), so the prompt, the
context fit, the checkpoints at message boundaries and the cache keys all see them. The reply is
read with the format the template names (`inference.toolcalls`): its calls come back as plain
values with their ids, its answer without their markup, and a reply that stopped after calling
ends with "tool_calls".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from inference.errors import PromptError
from inference.prompt.reasoning import ReasoningFormat
from inference.prompt.tool_messages import clean_tools
from inference.toolcalls.detect import tool_format_for
from inference.toolcalls.formats import parse_reply

if TYPE_CHECKING:
    from mlx_lm.tokenizer_utils import TokenizerWrapper

    from inference.engine.request import Request
    from inference.engine.result import FinishReason
    from inference.prompt.chat_prompt import RenderedPrompt


def offered_tools(
    tokenizer: TokenizerWrapper, tools: Sequence[Mapping[str, Any]] | None
) -> tuple[list[dict[str, Any]], str | None]:
    """The checked schemas and the model's tool-call format; ([], None) when none are offered.
    Raises PromptError for a bad schema, or tools for a model whose template takes none."""
    if tools is None:
        return [], None
    clean = clean_tools(tools)
    if not clean:
        return [], None
    tool_format = tool_format_for(tokenizer.chat_template)
    if tool_format is None:
        raise PromptError(
            "This model's chat template takes no tools, so it cannot be offered any: send the "
            "request without tools, or use a model made for tool calling."
        )
    return clean, tool_format


def opens_thinking(tokenizer: TokenizerWrapper, prompt: RenderedPrompt) -> bool:
    """Whether the rendered prompt leaves a reasoning block open (the reply starts inside it)."""
    found = ReasoningFormat.of(tokenizer)
    return found is not None and prompt.text is not None and found.opened_by(prompt.text)


def read_reply(
    request: Request, text: str, finish: FinishReason
) -> tuple[tuple[dict[str, Any], ...], str | None, FinishReason]:
    """The reply's calls, its answer without them, and its finish reason ("tool_calls" when it
    ended by itself having called); nothing read when the request offered no tools."""
    if request.tool_format is None:
        return (), None, finish
    parsed = parse_reply(text, request.tool_format, request.starts_thinking, request.tools)
    calls = tuple(
        {"id": call.id, "name": call.name, "arguments": call.arguments}
        for call in parsed.tool_calls
    )
    if calls and finish == "stop":
        finish = "tool_calls"
    return calls, parsed.content or "", finish
