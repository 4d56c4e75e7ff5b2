"""Tool results as the model sees them: plain text from every kind of content block, and a cap
that keeps the head and tail and says how much was cut; and the tail of a server's stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from app.mcp.results import (
    MAX_RESULT_CHARS,
    ToolResult,
    cap_text,
    capped_result,
    content_text,
    result_cap,
)
from app.mcp.stderr_log import TAIL_LINES, open_log, tail


def test_the_cap_is_the_smaller_of_16k_characters_and_a_quarter_of_the_context() -> None:
    assert result_cap(128_000) == MAX_RESULT_CHARS
    assert result_cap(8_192) == 8_192  # a quarter of 8,192 tokens, ~4 characters each
    assert result_cap(None) == MAX_RESULT_CHARS


@pytest.mark.parametrize("limit", [200, 1_000, 16_000])
def test_a_long_result_keeps_head_and_tail_and_says_how_much_was_cut(limit: int) -> None:
    text = "HEAD" + "".join(f"{i:06d}" for i in range(20_000)) + "TAIL"
    capped = cap_text(text, limit)
    assert len(capped) <= limit and capped.startswith("HEAD") and capped.endswith("TAIL")
    head, marker, tail = capped.split("\n")
    cut = int(marker.split()[1].replace(",", ""))
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + cut + len(tail) == len(text)
    assert marker == f"[… {cut:,} characters cut …]"
    assert len(head) > len(tail)


def test_a_result_that_fits_is_untouched() -> None:
    result = ToolResult("short")
    assert cap_text("x" * 100, 100) == "x" * 100
    assert capped_result(result, 4_096) is result
    assert len(capped_result(ToolResult("y" * 50_000), 4_096).text) <= 4_096


def test_content_blocks_become_plain_text_and_nothing_is_fetched() -> None:
    blocks = [
        TextContent(type="text", text="line one\r\nline two\x00\x1b[31m"),
        ImageContent(type="image", data="A" * 4_096, mime_type="image/png"),
        AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
        ResourceLink(
            type="resource_link",
            name="report",
            uri="https://example.com/r.pdf",
            mime_type="application/pdf",
        ),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(uri="file:///notes.txt", text="the notes"),
        ),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///x.bin", blob="AAAA", mime_type="application/octet-stream"
            ),
        ),
    ]
    text = content_text(blocks)
    assert "line one\nline two[31m" in text  # control characters removed
    assert "[image: image/png, 3.0 KB; not shown to the model]" in text
    assert "[audio: audio/wav, 3 B; not shown to the model]" in text
    assert "[link to report: https://example.com/r.pdf (application/pdf)]" in text
    assert "[resource file:///notes.txt]\nthe notes" in text
    assert "[resource file:///x.bin: application/octet-stream, 3 B" in text


def test_structured_content_stands_in_for_missing_blocks() -> None:
    assert content_text([], {"temperature": 21}) == '{\n "temperature": 21\n}'
    assert content_text([TextContent(type="text", text="21")], {"t": 21}) == "21"


def test_the_stderr_tail_is_the_last_lines_of_a_long_log(tmp_path: Path) -> None:
    log = open_log(tmp_path / "logs" / "server.log")
    log.write("".join(f"line {i} " + "x" * 100 + "\n" for i in range(1_000)) + "\n  \n")
    lines = tail(log)
    assert len(lines) == TAIL_LINES and lines[-1].startswith("line 999 ")
    assert lines[0].startswith(f"line {1_000 - TAIL_LINES} ")
    log.close()
    assert tail(log) == ()
    with open_log(None) as temporary:
        temporary.write("kept nowhere\n")
        assert tail(temporary) == ("kept nowhere",)
