"""Conversation paths rendered to token ids with the model's own chat template."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from inference.errors import PromptError
from inference.prompt.tool_messages import as_mapping, clean_tool_calls, clean_tool_message

if TYPE_CHECKING:
    from mlx_lm.tokenizer_utils import TokenizerWrapper

ROLES = ("system", "user", "assistant", "tool")


def validate_messages(messages: object) -> list[dict[str, Any]]:
    """Plain `{"role", "content"}` dicts, or PromptError naming the first bad message. An
    assistant message may hold `tool_calls` (its content may then be empty or None), and a
    `tool` message answers one (`tool_call_id`, `name`); see inference.prompt.tool_messages.
    Anything may be passed (the server hands on JSON): that is what the checks are for."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise PromptError("Messages must be a list of {'role', 'content'} entries.")
    entries = cast("Sequence[object]", messages)
    if not entries:
        raise PromptError("There is nothing to answer: the message list is empty.")
    clean: list[dict[str, Any]] = []
    for index, entry in enumerate(entries, start=1):
        message = as_mapping(entry)
        if message is None:
            raise PromptError(f"Message {index} is not a {{'role', 'content'}} entry.")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise PromptError(
                f"Message {index} has the unknown role {role!r}; the roles are {', '.join(ROLES)}."
            )
        if role == "tool":
            clean.append(clean_tool_message(message, index))
            continue
        calls = message.get("tool_calls")
        if calls is not None and role != "assistant":
            raise PromptError(f"Message {index} ({role}) has tool calls; only replies make them.")
        if calls is not None and content is None:
            content = ""
        # A list is parts already checked by inference.vision.prompt.split_images.
        if not isinstance(content, str | list):
            raise PromptError(f"Message {index} ({role}) has no text content.")
        plain: dict[str, Any] = {"role": role, "content": content}
        if calls is not None:
            plain["tool_calls"] = clean_tool_calls(calls, index)
        clean.append(plain)
    return clean


def render_ids(
    tokenizer: TokenizerWrapper,
    messages: list[dict[str, Any]],
    add_generation_prompt: bool,
    continue_final: bool = False,
    **template_kwargs: Any,
) -> list[int]:
    """Token ids of `messages` through the tokenizer's chat template; `template_kwargs` are its
    switches (e.g. `enable_thinking`); with `continue_final`, the last message (a partial reply)
    is left open for the model to go on writing."""
    # Passed only when asked: transformers refuses it together with a generation prompt.
    extra = {"continue_final_message": True} if continue_final else {}
    try:
        # tokenize=True is the default, named so the checker knows ids (not text) come back.
        ids = tokenizer.apply_chat_template(
            messages,
            add_generation_prompt=add_generation_prompt,
            tokenize=True,
            **extra,
            **template_kwargs,
        )
    except Exception as error:  # Jinja and transformers raise many kinds; all mean the same here.
        raise _unrenderable(error) from error
    return [int(i) for i in ids]


@dataclass(frozen=True)
class RenderedPrompt:
    """A prompt's token ids with, where the tokenizer can tell, its text and each token's
    character span in it (used to find message boundaries without tokenizing again)."""

    ids: list[int]
    text: str | None = None
    offsets: tuple[tuple[int, int], ...] | None = None


def render_prompt(
    tokenizer: TokenizerWrapper,
    messages: list[dict[str, Any]],
    template_kwargs: Mapping[str, Any] | None = None,
    continue_final: bool = False,
) -> RenderedPrompt:
    """`messages` rendered with the generation prompt (or, with `continue_final`, the last message
    left open): the same ids as `render_ids` (the template renders text, which is tokenized
    without adding special tokens, as transformers does), plus the text and the token spans when
    the tokenizer is a fast one."""
    switches = dict(template_kwargs or {})
    extra = {"continue_final_message": True} if continue_final else {}
    try:
        text = tokenizer.apply_chat_template(
            messages, add_generation_prompt=not continue_final, tokenize=False, **extra, **switches
        )
    except Exception as error:  # Jinja and transformers raise many kinds; all mean the same here.
        raise _unrenderable(error) from error
    try:
        encoded = tokenizer._tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids = [int(i) for i in encoded["input_ids"]]
        offsets = tuple((int(a), int(b)) for a, b in encoded["offset_mapping"])
    except (AttributeError, KeyError, NotImplementedError, TypeError, ValueError):
        return RenderedPrompt(
            render_ids(tokenizer, messages, not continue_final, continue_final, **switches)
        )
    return RenderedPrompt(ids, text, offsets)


def _unrenderable(error: Exception) -> PromptError:
    return PromptError(f"The model's chat template cannot render this conversation: {error}")


# Checkpoints go at the ends of the latest few messages (and of the system prompt): the places a
# regenerate, an edit of the last message or a follow-up branches from. Older turns got theirs
# when they were the latest, so a bounded number of renders per request keeps its cost linear in
# the conversation's length rather than quadratic. Any position is a correct checkpoint (it is
# keyed by the token prefix it holds); these are the useful ones.
RECENT_BOUNDARIES = 3


def message_boundaries(
    tokenizer: TokenizerWrapper,
    messages: list[dict[str, Any]],
    prompt: RenderedPrompt,
    after: int,
    suffix: str | None = None,
    template_kwargs: Mapping[str, Any] | None = None,
) -> list[int]:
    """Token offsets in `prompt`, beyond `after`, where a message ends (before any generation
    prompt): the end of the system prompt and of the latest few messages.

    Newest first, stopping at the first that ends at or before `after` (the part already
    cached). With token spans, each end is found by rendering the messages up to it as text
    (no tokenizing) and mapping its length onto the spans; the last user turn's end needs no
    render at all (the prompt less the template's generation prompt). A message end that is not
    also a token end of the prompt (a template that renders earlier turns differently, a token
    merged across it) is left out, never guessed. `suffix` is `generation_suffix(tokenizer)`,
    and `template_kwargs` must be those the prompt was rendered with (an effort level, say, may
    change the system header).
    """
    switches = dict(template_kwargs or {})
    ends = [len(messages) - k for k in range(RECENT_BOUNDARIES) if len(messages) - k > 0]
    if messages[0]["role"] == "system" and 1 not in ends:
        ends.append(1)
    locate = _span_locator(tokenizer, prompt, suffix, switches) or _token_locator(
        tokenizer, prompt, switches
    )
    found: list[int] = []
    for end in ends:
        boundary = locate(messages, end)
        if boundary is None:
            continue
        if boundary <= after:
            break
        if boundary < len(prompt.ids):
            found.append(boundary)
    return sorted(found)


def _token_locator(
    tokenizer: TokenizerWrapper, prompt: RenderedPrompt, switches: dict[str, Any]
) -> Callable[[list[dict[str, Any]], int], int | None]:
    """Boundaries by tokenizing each prefix: for tokenizers without character spans."""

    def locate(messages: list[dict[str, Any]], end: int) -> int | None:
        try:
            prefix = render_ids(tokenizer, messages[:end], False, False, **switches)
        except PromptError:
            return None
        return len(prefix) if prompt.ids[: len(prefix)] == prefix else None

    return locate


def _span_locator(
    tokenizer: TokenizerWrapper,
    prompt: RenderedPrompt,
    suffix: str | None,
    switches: dict[str, Any],
) -> Callable[[list[dict[str, Any]], int], int | None] | None:
    text, offsets = prompt.text, prompt.offsets
    if text is None or offsets is None:
        return None
    token_ends = {stop: index + 1 for index, (_, stop) in enumerate(offsets)}

    def locate(messages: list[dict[str, Any]], end: int) -> int | None:
        if end == len(messages) and suffix is not None and text.endswith(suffix):
            chars = len(text) - len(suffix)
        else:
            try:
                head = tokenizer.apply_chat_template(
                    messages[:end], add_generation_prompt=False, tokenize=False, **switches
                )
            except Exception:  # a template that cannot render a prefix: no boundary there
                return None
            if not text.startswith(head):
                return None
            chars = len(head)
        return token_ends.get(chars)

    return locate


def generation_suffix(
    tokenizer: TokenizerWrapper, template_kwargs: Mapping[str, Any] | None = None
) -> str | None:
    """The text the template appends for the generation prompt (e.g. "<|im_start|>assistant\\n"),
    from a one-message sample, with the given switches; None when the template does not simply
    append one."""
    sample = [{"role": "user", "content": "Hello"}]
    switches = dict(template_kwargs or {})
    try:
        bare = tokenizer.apply_chat_template(
            sample, add_generation_prompt=False, tokenize=False, **switches
        )
        full = tokenizer.apply_chat_template(
            sample, add_generation_prompt=True, tokenize=False, **switches
        )
    except Exception:  # a template that cannot render the sample: find every end by rendering
        return None
    return full[len(bare) :] if full.startswith(bare) and len(full) > len(bare) else None
