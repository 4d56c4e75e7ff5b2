"""A base model imported from a GGUF without a chat template (issue 45, item 2): the local
server's plain completions answer as llama.cpp answers on the same file; a chat request is
refused with the reason."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import openai
import pytest

from inference import import_gguf
from tests.server_harness import Served, serving, start_worker
from tests.tiny_gguf_families import DATA, REFERENCE

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = import_gguf(DATA / "tiny-mistral.gguf", tmp_path_factory.mktemp("models"))
    served = start_worker(folder)
    yield served
    served.worker.shutdown()


def test_a_base_model_serves_llama_cpps_completion_and_refuses_chat(served: Served) -> None:
    expected = json.loads(REFERENCE.read_text())["files"]["tiny-mistral.gguf"][PROMPT]

    async def scenario() -> None:
        async with serving(served) as (_server, client):
            reply = await client.completions.create(
                model=served.model_info.model_id,
                prompt=PROMPT,
                max_tokens=len(expected["greedy"]),
                temperature=0,
            )
            assert reply.usage is not None
            assert reply.usage.prompt_tokens == len(expected["prompt_ids"])  # with llama.cpp's BOS
            assert reply.usage.completion_tokens == len(expected["greedy"])
            assert served.engine.log[-1].token_ids == tuple(expected["greedy"])
            with pytest.raises(openai.BadRequestError) as refused:
                await client.chat.completions.create(
                    model=served.model_info.model_id,
                    messages=[{"role": "user", "content": "hi"}],
                    max_tokens=2,
                )
            assert "template" in str(refused.value)

    asyncio.run(asyncio.wait_for(scenario(), 60))
