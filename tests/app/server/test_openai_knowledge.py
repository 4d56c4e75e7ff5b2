"""`"knowledge"` in a served chat completion, through the official `openai` client
(`extra_body`): the server retrieves for the last user message (with the one before it), puts
the excerpts ahead of its text as the window does, and answers with `"sources"` beside
`choices` (in a streamed answer, in its first chunk); the same request twice renders the same
prompt, so the second is served from the cache, and says so in `cached_tokens`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from tests.knowledge_fakes import FakeKnowledge
from tests.server_harness import Served, serving, start_worker

MODEL = "llama"
NOTES = {"/docs/guide.md": "The Seine runs through Paris.\n\nParis is in France."}
ASK = [
    {"role": "user", "content": "Tell me about France."},
    {"role": "assistant", "content": "It is a country."},
    {"role": "user", "content": "Which river runs through its capital?"},
]


@pytest.fixture(scope="module")
def served(llama_path: Path) -> Iterator[Served]:
    served = start_worker(llama_path)
    yield served
    served.worker.shutdown()


def test_a_request_naming_knowledge_gets_its_sources_and_the_cache(served: Served) -> None:
    knowledge = FakeKnowledge({"Notes": NOTES})

    async def scenario() -> tuple:
        async with serving(served, knowledge=knowledge) as (_server, client):
            ask = client.chat.completions.create
            plain = await ask(model=MODEL, messages=ASK, max_tokens=3, temperature=0)
            extra = {"knowledge": ["Notes"]}
            first = await ask(
                model=MODEL, messages=ASK, max_tokens=3, temperature=0, extra_body=extra
            )
            again = await ask(
                model=MODEL, messages=ASK, max_tokens=3, temperature=0, extra_body=extra
            )
            stream = await ask(
                model=MODEL,
                messages=ASK,
                max_tokens=3,
                temperature=0,
                stream=True,
                extra_body=extra,
            )
            chunks = [chunk async for chunk in stream]
            return plain, first, again, chunks

    plain, first, again, chunks = asyncio.run(asyncio.wait_for(scenario(), 60))
    sources = first.model_extra["sources"]
    assert [(s["number"], s["path"], s["text"]) for s in sources] == [
        (1, "/docs/guide.md", "The Seine runs through Paris."),
        (2, "/docs/guide.md", "Paris is in France."),
    ]
    assert sources[0]["document_sha256"] and "kind" not in sources[0]
    # Retrieved for the last message with the one before it, within the model's quarter.
    assert knowledge.retrievals[0] == (
        ("Notes",),
        "Which river runs through its capital?",
        "Tell me about France.",
        4096 // 4,
    )
    assert first.usage.prompt_tokens > plain.usage.prompt_tokens  # the excerpts were read
    # The same request again: the same excerpts, the same prompt, all but one token cached.
    assert again.model_extra["sources"] == sources
    assert again.choices[0].message.content == first.choices[0].message.content
    assert again.usage.prompt_tokens_details.cached_tokens == again.usage.prompt_tokens - 1
    assert chunks[0].model_extra["sources"] == sources  # streamed: in the first chunk
    assert all("sources" not in (c.model_extra or {}) for c in chunks[1:])
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == first.choices[0].message.content


def test_knowledge_the_server_cannot_read_is_refused_by_name(served: Served) -> None:
    async def scenario() -> list[Exception]:
        errors: list[Exception] = []
        async with serving(served, knowledge=FakeKnowledge({"Notes": NOTES})) as (_s, client):
            for body in ({"knowledge": ["Papers"]}, {"knowledge": "Notes"}):
                try:
                    await client.chat.completions.create(
                        model=MODEL, messages=ASK, max_tokens=1, extra_body=body
                    )
                except openai.APIStatusError as exc:
                    errors.append(exc)
            try:
                await client.completions.create(
                    model=MODEL, prompt="Hi", max_tokens=1, extra_body={"knowledge": ["Notes"]}
                )
            except openai.APIStatusError as exc:
                errors.append(exc)
        async with serving(served) as (_server, client):
            try:
                await client.chat.completions.create(
                    model=MODEL, messages=ASK, max_tokens=1, extra_body={"knowledge": ["Notes"]}
                )
            except openai.APIStatusError as exc:
                errors.append(exc)
        return errors

    missing, malformed, completion, no_index = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert isinstance(missing, openai.NotFoundError)
    assert "'Papers'" in missing.message and "'Notes'" in missing.message
    assert isinstance(malformed, openai.BadRequestError) and "list of" in malformed.message
    assert isinstance(completion, openai.BadRequestError)
    assert "chat completions only" in completion.message
    assert isinstance(no_index, openai.BadRequestError) and "no knowledge" in no_index.message
