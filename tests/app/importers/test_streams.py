"""The guarded JSON stream: text repaired (surrogates, bad bytes), nesting limited, and the
same result however the file is cut into chunks."""

from __future__ import annotations

import io
import json
import random

import pytest

from app.importers import streams
from app.importers.errors import ImportRefusedError


def test_lone_surrogates_and_bad_bytes_are_repaired() -> None:
    assert streams.loads(rb'{"a": "x\ud83d y \ud83d\ude00 \\ud83d z\ude00"}', "f") == {
        "a": "x\ufffd y \U0001f600 \\ud83d z\ufffd"
    }
    # UTF-8-encoded surrogate pairs (CESU-8) become the real character; other bad bytes U+FFFD.
    assert streams.loads(b'{"a": "\xed\xa0\xbd\xed\xb8\x80 \xff ok"}', "f") == {
        "a": "\U0001f600 \ufffd ok"
    }


@pytest.mark.parametrize(
    "bad, reason",
    [
        (b"[" * 65 + b"]" * 65, "nests deeper than 64"),
        (b"[1, 2", "not valid JSON"),
        (b"", "not valid JSON"),
    ],
)
def test_bad_documents_are_refused(bad: bytes, reason: str) -> None:
    with pytest.raises(ImportRefusedError, match=reason):
        streams.loads(bad, "f")


def test_brackets_inside_text_do_not_count_as_nesting() -> None:
    text = "[" * 500 + '\\"' + "{" * 500
    assert streams.loads(json.dumps([text, {"k": text}]).encode(), "f") == [text, {"k": text}]


def test_the_size_limit_is_enforced_while_reading() -> None:
    with pytest.raises(ImportRefusedError, match="larger than the import limit"):
        list(streams.items(io.BytesIO(b"[" + b"1," * 1000 + b"1]"), 100, "f"))


def test_any_chunking_gives_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    pieces = [
        r"\ud83d\ude00",
        r"\ud83d",
        "\\\\",
        r"\"",
        "x",
        "[",
        "]",
        "{",
        r"\ude00",
        "é😀",
        r"\u0041",
        r"\n",
    ]
    rng = random.Random(7)
    for _ in range(150):
        text = "".join(rng.choice(pieces) for _ in range(200))
        document = f'[["{text}"], {{"k": ["{text}"]}}]'.encode()
        monkeypatch.setattr(streams, "CHUNK", rng.randint(1, 40))
        got = list(streams.items(io.BytesIO(document), 10**9, "f"))
        expected = (
            json.loads(document)[0][0].encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        )
        assert got[0] == [expected] and got[1] == {"k": [expected]}
