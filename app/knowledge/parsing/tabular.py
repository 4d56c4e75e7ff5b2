"""CSV and JSON as text a search can find.

A CSV file keeps its own text (rows as they are written), in blocks of whole lines, each block
headed by the file's first line, the column names: a chunk of rows out of the middle of a table
still says what its columns are. A JSON file small enough to parse is indented one value per
line, so chunks cut between values; a larger one (over 512 kB), or one that is not valid
JSON, is read as plain text (JSON Lines is plain text already: one record a line).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from app.knowledge.parsing.blocks import Block, heading_text
from app.knowledge.parsing.text_files import plain_blocks, read_text

# About a chunk's worth of rows per block: cuts fall between rows.
ROWS_BLOCK_CHARS = 1200
# Parsed as a whole: the parse holds the values in memory, and the interpreter (C code that
# keeps the GIL, so the window waits) for about 15 ms a megabyte. Larger files stream as text.
MAX_PARSED_JSON_BYTES = 512 * 1024


def csv_blocks(pieces: Iterable[str]) -> Iterator[Block]:
    header = ""
    rows: list[str] = []
    size = 0
    tail = ""
    for piece in pieces:
        lines = (tail + piece).splitlines(keepends=True)
        tail = lines.pop() if lines and not lines[-1].endswith("\n") else ""
        for line in lines:
            if not header and line.strip():
                header = heading_text(line)
                yield Block(line, heading=header, section=True)
                continue
            rows.append(line)
            size += len(line)
            if size >= ROWS_BLOCK_CHARS:
                yield Block("".join(rows), heading=header)
                rows, size = [], 0
    rows.append(tail)
    if "".join(rows):
        yield Block("".join(rows), heading=header)


def json_blocks(raw: BinaryIO, size: int) -> Iterator[Block]:
    if size <= MAX_PARSED_JSON_BYTES:
        text = "".join(read_text(raw))  # bounded by the size check; refuses binary content
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            yield from plain_blocks([text])
            return
        yield from plain_blocks([json.dumps(value, indent=1, ensure_ascii=False) + "\n"])
        return
    yield from plain_blocks(read_text(raw))
