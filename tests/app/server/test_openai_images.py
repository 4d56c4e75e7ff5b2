"""Images through the local server on a tiny vision model: OpenAI's `image_url` parts with data
URLs reach the engine as images (the reply equals the engine's own for the same messages), and
a remote URL, a malformed data URL or bytes that are no image get a 400 saying why."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from app.generation.worker_engine import default_engine_factory
from app.generation.worker_generation import sampling_params
from tests.server_harness import Served, serving, start_worker
from tests.tiny_models import NO_EOS
from tests.tiny_vision import png_bytes

SCENARIO_S = 60
MAX_TOKENS = 8
PICTURE = png_bytes(40, 30, 1)


@pytest.fixture(scope="module")
def vision_path(tiny_vision_dir: Path) -> Path:
    return tiny_vision_dir / "smolvlm"


@pytest.fixture(scope="module")
def served(vision_path: Path) -> Iterator[Served]:
    served = start_worker(vision_path)
    yield served
    served.worker.shutdown()


def run(coro: object) -> object:
    return asyncio.run(asyncio.wait_for(coro, SCENARIO_S))  # type: ignore[arg-type]


def _url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def _ask(url: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        }
    ]


async def _reply(served: Served, messages: list[dict[str, Any]]) -> Any:
    async with serving(served) as (_server, client):
        return await client.chat.completions.create(
            model=served.model_info.model_id,
            messages=messages,  # type: ignore[arg-type]
            max_tokens=MAX_TOKENS,
            temperature=0,
            extra_body={"logit_bias": NO_EOS},
        )


def test_a_data_url_image_gets_the_engines_own_reply(served: Served, vision_path: Path) -> None:
    answer: Any = run(_reply(served, _ask(_url(PICTURE))))
    engine, _ = default_engine_factory(vision_path, lambda *_: None)
    params = sampling_params(
        {"temperature": 0, "top_p": 1.0, "max_tokens": MAX_TOKENS, "logit_bias": NO_EOS}
    )
    text = {"type": "text", "text": "What is this?"}
    asked = [{"role": "user", "content": [text, {"type": "image", "image": PICTURE}]}]
    own = engine.generate(asked, params)
    assert answer.choices[0].message.content == own.text != ""
    # The image's own tokens were in the prompt: it reached the model as an image.
    assert answer.usage.prompt_tokens == engine.count_prompt_tokens(asked)
    assert (
        answer.usage.prompt_tokens
        > engine.count_prompt_tokens([{"role": "user", "content": [text]}]) + 4
    )


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("https://example.com/cat.png", "remote images are not fetched"),
        ("http://example.com/cat.png", "remote images are not fetched"),
        ("data:image/png;base64,%%%not-base64%%%", "invalid base64"),
        ("data:image/png,rawbytes", "not a base64 data URL"),
        (_url(b"just some text"), "is not an image this app can read"),
        ("file:///etc/passwd", "must be a data: URL"),
    ],
)
def test_what_cannot_be_an_image_is_a_400_saying_why(served: Served, url: str, said: str) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        run(_reply(served, _ask(url)))
    assert refused.value.status_code == 400
    assert said in str(refused.value) and "messages[0].content[1]" in str(refused.value)


def test_a_photo_sized_body_reaches_the_checks(served: Served) -> None:
    """Several MiB get through to the image checks (aiohttp alone takes 1 MiB)."""
    with pytest.raises(openai.BadRequestError, match="is not an image this app can read"):
        run(_reply(served, _ask(_url(bytes(range(256)) * 12_000))))


def test_an_image_part_without_a_url_is_a_400(served: Served) -> None:
    messages = [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]
    with pytest.raises(openai.BadRequestError, match="must hold a 'url'"):
        run(_reply(served, messages))
