"""What a reply sounds like read aloud: its Markdown read as prose, in sentences.

Headings, paragraphs, list items and quotes are read as their words (emphasis, links and inline
code as their text); a code block is announced ("A code block in Python.") rather than spelt out
symbol by symbol; a table is announced by its size; raw HTML and images' addresses are left out.
Reasoning is never in a reply's text (the store keeps it apart), and neither are tool calls; any
tag pair a model wrote for them that reached the text anyway (`<think>`, `<tool_call>`...) is
skipped too.

`SentenceFeed` follows a reply as it streams: each call with the whole text so far hands back the
sentences that are complete now (a sentence is complete once more text follows it), so reading
starts with the first sentence, before the reply ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

_HIDDEN_BLOCKS = re.compile(
    r"<(think|thinking|reasoning|tool_call|function_call|tool_use)\b[^>]*>.*?(?:</\1>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9À-ÖØ-Þ])")
# Words after which a full stop ends no sentence.
_ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "etc",
        "vs",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "no",
        "fig",
        "approx",
        "cf",
        "al",
        "inc",
        "ltd",
        "jr",
        "sr",
    ]
)
_SPACES = re.compile(r"\s+")
_MIN_WORDS = 3  # a shorter sentence is read with the next one ("Yes." "Sure!")

_PARSER = MarkdownIt("commonmark").enable("table")


def spoken_blocks(markdown: str) -> list[str]:
    """The reply as blocks of prose, in order: one string per paragraph, heading, list item,
    quote line or announcement."""
    tokens = _PARSER.parse(_HIDDEN_BLOCKS.sub(" ", markdown))
    blocks: list[str] = []
    table_rows = 0
    in_table = False
    for token in tokens:
        if token.type == "inline" and not in_table:
            text = _inline_text(token.children or [])
            if text:
                blocks.append(_heading_end(text) if _in_heading(tokens, token) else text)
        elif token.type in ("fence", "code_block"):
            blocks.append(_code_announcement(token.info))
        elif token.type == "table_open":
            in_table, table_rows = True, 0
        elif token.type == "tr_open":
            table_rows += 1
        elif token.type == "table_close":
            in_table = False
            rows = max(0, table_rows - 1)  # less the header row
            blocks.append(f"A table with {rows} row{'s' if rows != 1 else ''}.")
    return blocks


def spoken_sentences(markdown: str) -> list[str]:
    """The reply as the sentences a voice reads, a very short one joined to the next of its
    block (a heading stays apart: the voice pauses after it)."""
    sentences: list[str] = []
    for block in spoken_blocks(markdown):
        sentences.extend(_merged(_split(block)))
    return sentences


def _in_heading(tokens: list[Token], inline: Token) -> bool:
    index = tokens.index(inline)
    return index > 0 and tokens[index - 1].type == "heading_open"


def _heading_end(text: str) -> str:
    return text if text[-1] in ".!?:" else f"{text}."


def _inline_text(children: list[Token]) -> str:
    parts: list[str] = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            alt = _inline_text(child.children or [])
            parts.append(f"Image: {alt}." if alt else "An image.")
        # Emphasis and link markers carry no words; their text arrives as "text" children.
    return _SPACES.sub(" ", "".join(parts)).strip()


def _code_announcement(info: str) -> str:
    language = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    if not language:
        return "A code block."
    return f"A code block in {_LANGUAGE_NAMES.get(language.lower(), language)}."


_LANGUAGE_NAMES = {
    "py": "Python",
    "python": "Python",
    "js": "JavaScript",
    "javascript": "JavaScript",
    "ts": "TypeScript",
    "typescript": "TypeScript",
    "sh": "shell",
    "bash": "shell",
    "zsh": "shell",
    "console": "shell",
    "cpp": "C++",
    "c++": "C++",
    "cs": "C#",
    "csharp": "C#",
    "rs": "Rust",
    "rust": "Rust",
    "go": "Go",
    "json": "JSON",
    "yaml": "YAML",
    "yml": "YAML",
    "html": "HTML",
    "css": "CSS",
    "sql": "SQL",
    "swift": "Swift",
    "java": "Java",
    "kotlin": "Kotlin",
    "ruby": "Ruby",
    "rb": "Ruby",
    "md": "Markdown",
    "markdown": "Markdown",
}


def _split(block: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(block):
        head = block[start : match.start()]
        last_word = head.rsplit(maxsplit=1)[-1].rstrip(".").lower() if head.strip() else ""
        if last_word in _ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha()):
            continue  # "e.g. This", "J. Smith"
        sentences.append(block[start : match.start()].strip())
        start = match.end()
    sentences.append(block[start:].strip())
    return [s for s in sentences if any(c.isalnum() for c in s)]  # "---", "!!!" say nothing


def _merged(sentences: list[str]) -> list[str]:
    merged: list[str] = []
    for sentence in sentences:
        if merged and len(merged[-1].split()) < _MIN_WORDS:
            merged[-1] = f"{merged[-1]} {sentence}"
        else:
            merged.append(sentence)
    return merged


@dataclass
class SentenceFeed:
    """The sentences of a streaming reply, each handed out once, as soon as it is complete."""

    _given: int = 0
    _sentences: list[str] = field(default_factory=list[str])

    def update(self, text_so_far: str) -> list[str]:
        """The sentences completed since the last call (all but the last one seen, which more
        text may still extend)."""
        self._sentences = spoken_sentences(text_so_far)
        return self._take(len(self._sentences) - 1)

    def finish(self, text: str) -> list[str]:
        """The reply ended with `text`: every sentence not handed out yet."""
        self._sentences = spoken_sentences(text)
        return self._take(len(self._sentences))

    def _take(self, upto: int) -> list[str]:
        new = self._sentences[self._given : upto] if upto > self._given else []
        self._given = max(self._given, upto)
        return new
