"""A reply read aloud: its Markdown as prose, code announced rather than spelt, reasoning and
tool-call markup skipped, and a streaming reply's sentences handed out once each, as soon as
they are complete."""

from __future__ import annotations

from app.voice.spoken_text import SentenceFeed, spoken_sentences

REPLY = """## The plan

Here is **the** plan for Dr. Smith, e.g. for Monday. It has [two steps](https://example.com).

```python
print("never read")
```

- First, run `make test`.
- Then read the [report](https://example.com/report).

| name | size |
|------|------|
| a    | 1    |
| b    | 2    |

<think>The person wants me to hide this.</think>
<tool_call>{"name": "search"}</tool_call>
That is all for today. Goodbye for now!"""


def test_markdown_is_read_as_prose() -> None:
    assert spoken_sentences(REPLY) == [
        "The plan.",
        "Here is the plan for Dr. Smith, e.g. for Monday.",
        "It has two steps.",
        "A code block in Python.",
        "First, run make test.",
        "Then read the report.",
        "A table with 2 rows.",
        "That is all for today.",
        "Goodbye for now!",
    ]


def test_short_sentences_join_the_next_and_code_without_a_language_is_announced() -> None:
    assert spoken_sentences("Yes. I can do that for you.\n\n```\nx = 1\n```") == [
        "Yes. I can do that for you.",
        "A code block.",
    ]


def test_a_streaming_reply_is_read_sentence_by_sentence_each_once() -> None:
    feed = SentenceFeed()
    heard: list[str] = []
    for end in range(1, len(REPLY) + 1, 7):  # text arrives a few characters at a time
        heard += feed.update(REPLY[:end])
    first_at = next(end for end in range(1, len(REPLY)) if SentenceFeed().update(REPLY[:end]))
    heard += feed.finish(REPLY)
    assert heard == spoken_sentences(REPLY)
    # The first sentence is handed out as soon as the next one begins, long before the end.
    assert first_at < len(REPLY) // 4
    assert feed.finish(REPLY) == []
