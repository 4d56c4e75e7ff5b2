"""Which reasoning switches a chat template reads, found in its Jinja source.

Templates of reasoning models take keyword arguments: Qwen3 reads `enable_thinking`, DeepSeek
V3.1 `thinking`, gpt-oss `reasoning_effort` ("low", "medium", "high"). A switch is offered to the
person only when the template really reads it, so the variables the template uses without
defining them are collected from its parsed source (jinja2's `meta.find_undeclared_variables`),
never guessed from the model's name. Needs no MLX.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from jinja2 import TemplateSyntaxError, meta
from jinja2.sandbox import ImmutableSandboxedEnvironment

# In order of preference when a template reads more than one.
THINK_SWITCHES = ("enable_thinking", "thinking")
EFFORT_VARIABLE = "reasoning_effort"
EFFORT_LEVELS = ("low", "medium", "high")


@dataclass(frozen=True)
class TemplateSwitches:
    """`think`: the variable turning reasoning on or off; `effort`: the one setting its effort
    level; None where the template reads no such variable."""

    think: str | None = None
    effort: str | None = None

    @property
    def effort_levels(self) -> tuple[str, ...]:
        """The effort levels the person may choose from (none without an effort switch)."""
        return EFFORT_LEVELS if self.effort else ()


def template_variables(source: str) -> frozenset[str]:
    """The variables `source` reads without defining them; empty for a template that does not
    parse (rendering would then fail anyway, with its own message)."""
    try:
        parsed = ImmutableSandboxedEnvironment().parse(source)
    except TemplateSyntaxError:
        return frozenset()
    return frozenset(meta.find_undeclared_variables(parsed))


def template_sources(chat_template: object) -> list[str]:
    """The Jinja source of each of a tokenizer's templates: its one template, each of a named
    set (a mapping), or none. Entries that are not text (tokenizer_config.json may hold
    anything) are left out."""
    if isinstance(chat_template, str):
        return [chat_template]
    if isinstance(chat_template, Mapping):
        named = cast("Mapping[object, object]", chat_template)
        return [source for source in named.values() if isinstance(source, str)]
    return []


def template_switches(chat_template: str | Mapping[str, str] | None) -> TemplateSwitches:
    """The switches a tokenizer's `chat_template` reads (a named set of templates counts all)."""
    sources = template_sources(chat_template)
    names = frozenset[str]().union(*(template_variables(s) for s in sources))
    think = next((name for name in THINK_SWITCHES if name in names), None)
    return TemplateSwitches(think, EFFORT_VARIABLE if EFFORT_VARIABLE in names else None)
