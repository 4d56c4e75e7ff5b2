"""Untrusted model Markdown to the HTML subset that QTextDocument understands.

Safety is decided here, not by the viewer: raw HTML is escaped (`html=False`), only http and https
links become anchors, and images become text, so nothing a model writes can make Qt load a file
or a remote resource. Code blocks are highlighted with Pygments (inline colours, which
QTextDocument supports) and carry a `copy:N` anchor that `SafeBrowser` handles. In a reply that
used knowledge, a citation `[N]` of one of its `citations` sources (in text, not in code) becomes
a `source:N` anchor, which `SafeBrowser` reports; it never names a file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache, lru_cache
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from ui.widgets.theme import ThemeColors, colors_for

COPY_SCHEME = "copy"
SOURCE_SCHEME = "source"
_CITATION = re.compile(r"\[(\d{1,3})\]")
SAFE_LINK_SCHEMES = ("http", "https")
_CODE_TOKENS = ("fence", "code_block")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"([-+*]|\d{1,9}[.)])(\s|$)")
_MONO = "'SF Mono', Menlo, Consolas, 'DejaVu Sans Mono', monospace"


def render(text: str, dark: bool, streaming: bool = False, citations: int = 0) -> str:
    """HTML for `text`. Completed messages are cached; a streaming one changes on every call.
    `citations`: how many sources the reply has, whose `[N]` become anchors.

    An unclosed ``` fence runs to the end of the text (CommonMark), so a code block that is still
    streaming already shows as code.
    """
    if streaming:
        return _render(text, dark, citations)
    return _render_cached(text, dark, citations)


def code_blocks(text: str) -> list[str]:
    """The source of each code block, in the order of the `copy:N` anchors that `render` emits."""
    return [token.content for token in _parser().parse(text) if token.type in _CODE_TOKENS]


def stable_prefix_end(text: str, start: int = 0, min_chars: int = 0) -> int:
    """Where `text` can be cut, at or after `start + min_chars`, so that the part before the
    cut renders the same however the text goes on: the last blank line outside a code fence
    that a new, unindented, non-list block follows. Returns `start` if there is no such place.

    A streaming reply renders that part once and re-renders only the rest, so each update
    costs the same however long the reply has grown. `start` must itself be such a cut.
    """
    best = start
    fence = ""
    position = start
    previous_blank = False
    for line in text[start:].splitlines(keepends=True):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            previous_blank = False
        else:
            starts_block = stripped and not line[0].isspace() and not _LIST_ITEM.match(line)
            if previous_blank and starts_block and position - start >= min_chars:
                best = position
            if opening := _FENCE_OPEN.match(line):
                fence = opening.group(1)
            previous_blank = not stripped
        position += len(line)
    return best


def warm_up() -> None:
    """Pay the one-off costs (Pygments' lexer table, the Python lexer's patterns: about
    0.1 s) now, e.g. while the model loads, rather than when the first code block arrives."""
    render("```python\nimport os\n```", dark=False)


def is_safe_link(url: str) -> bool:
    scheme, sep, _ = url.partition(":")
    return bool(sep) and scheme.lower() in SAFE_LINK_SCHEMES


@lru_cache(maxsize=1024)
def _render_cached(text: str, dark: bool, citations: int) -> str:
    return _render(text, dark, citations)


def _render(text: str, dark: bool, citations: int = 0) -> str:
    colors = colors_for(dark)
    env: dict[str, Any] = {
        "colors": colors,
        "code_index": 0,
        "open_links": [],
        "citations": citations,
    }
    # A trailing newline would show as a trailing space in the document.
    return _document_style(colors) + _parser().render(text, env).rstrip()


@cache
def _document_style(colors: ThemeColors) -> str:
    # QTextDocument honours a <style> element with type and class selectors; margins in px
    # follow the logical pixel, so they scale with the display.
    return (
        "<style>"
        "p { margin-top: 0px; margin-bottom: 8px; }"
        "h1, h2, h3, h4, h5, h6 { margin-top: 10px; margin-bottom: 6px; }"
        "h1 { font-size: x-large; } h2 { font-size: large; } h3 { font-size: medium; }"
        "ul, ol { margin-top: 0px; margin-bottom: 8px; }"
        "li { margin-bottom: 2px; }"
        f"a {{ color: {colors.link}; }}"
        f"code {{ font-family: {_MONO}; background-color: {colors.inline_code_bg}; }}"
        f"pre {{ font-family: {_MONO}; white-space: pre-wrap; margin: 0px; color: {colors.text}; }}"
        f"table.md {{ border-collapse: collapse; border-color: {colors.border};"
        " border-style: solid; margin-bottom: 8px; }"
        f"th {{ background-color: {colors.code_header}; text-align: left; }}"
        f"table.code {{ background-color: {colors.code_bg}; margin-top: 4px;"
        " margin-bottom: 10px; }"
        "td.codehead { padding-top: 4px; padding-bottom: 4px; }"
        f"td.codehead {{ background-color: {colors.code_header}; color: {colors.muted}; }}"
        f"td.codehead a {{ color: {colors.muted}; text-decoration: none; }}"
        f"blockquote {{ color: {colors.muted}; margin-left: 12px; }}"
        f"span.placeholder {{ color: {colors.muted}; }}"
        "</style>"
    )


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    # markdown-it would leave a javascript:/file: link as literal "[text](url)" source; accept
    # every URL at parse time and let _link_open decide, so such a link shows as its plain text.
    md.validateLink = lambda url: True
    for name, rule in (
        ("fence", _code_block),
        ("code_block", _code_block),
        ("link_open", _link_open),
        ("link_close", _link_close),
        ("image", _image),
        ("table_open", _table_open),
        ("text", _text),
    ):
        md.add_render_rule(name, rule)
    return md


def _code_block(
    renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    token = tokens[idx]
    colors: ThemeColors = env["colors"]
    number = env["code_index"]
    env["code_index"] = number + 1
    language = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    label = escape(language) if language else "code"
    return (
        '<table class="code" width="100%" border="0" cellspacing="0" cellpadding="8">'
        f'<tr><td class="codehead">{label}</td>'
        f'<td class="codehead" align="right"><a href="{COPY_SCHEME}:{number}">Copy</a></td></tr>'
        f'<tr><td colspan="2"><pre>{_highlight(token.content, language, colors)}</pre></td></tr>'
        "</table>\n"
    )


def _highlight(code: str, language: str, colors: ThemeColors) -> str:
    code = code.rstrip("\n")
    lexer = _lexer(language.lower()) if language else None
    if lexer is None:
        return escape(code)
    return highlight(code, lexer, _formatter(colors.pygments_style)).rstrip("\n")


@lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer | None:
    # Looking a lexer up scans Pygments' whole table; a lexer object can be reused.
    try:
        return get_lexer_by_name(language)
    except ClassNotFound:
        return None


@cache
def _formatter(style: str) -> HtmlFormatter:
    return HtmlFormatter(noclasses=True, nowrap=True, style=style)


def _link_open(
    renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    href = str(tokens[idx].attrGet("href") or "")
    safe = is_safe_link(href)
    env["open_links"].append(safe)
    return f'<a href="{escape(href)}">' if safe else ""


def _link_close(
    renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    return "</a>" if env["open_links"].pop() else ""


def _image(
    renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    alt = renderer.renderInlineAsText(tokens[idx].children or [], options, env)
    return f'<span class="placeholder">[image: {escape(alt)}]</span>'


def _text(
    renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    shown = escape(tokens[idx].content)
    count = env["citations"]
    if not count or any(env["open_links"]):
        return shown  # no sources, or inside a link already (an anchor cannot nest)

    def cite(match: re.Match[str]) -> str:
        number = int(match.group(1))
        if not 1 <= number <= count:
            return match.group(0)
        return f'<a href="{SOURCE_SCHEME}:{number}">[{number}]</a>'

    return _CITATION.sub(cite, shown)


def _table_open(
    renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    return '<table class="md" border="1" cellspacing="0" cellpadding="6">\n'
