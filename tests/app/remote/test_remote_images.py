"""Images on a remote model: a chat's image parts (its kept files) go to the server as OpenAI
`image_url` parts with data URLs, and the reply is the one the server gives for those images.
The server is Branchwise's own on a tiny vision model, behind a proxy that records what was
sent."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.images.store import ImageStore
from app.remote.client import stream_chat
from app.remote.errors import RemoteError
from tests.remote_servers import RecordingProxy
from tests.server_harness import Served, serving, start_worker
from tests.tiny_models import NO_EOS
from tests.tiny_vision import png_bytes

PARAMS = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 8, "logit_bias": NO_EOS}


@pytest.fixture(scope="module")
def served(tiny_vision_dir: Path) -> Iterator[Served]:
    served = start_worker(tiny_vision_dir / "smolvlm")
    yield served
    served.worker.shutdown()


def _asked(image: str | bytes) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "image", "image": image},
                {"type": "text", "text": "What is this?"},
            ],
        }
    ]


def test_a_chats_images_travel_as_data_urls(served: Served, tmp_path: Path) -> None:
    picture = png_bytes(40, 30, 4)
    kept = ImageStore(tmp_path).add_bytes(picture, "cat.png")
    path = str(ImageStore(tmp_path).path(kept.sha256))
    model = served.model_info.model_id

    async def scenario() -> tuple[str, str, list[dict]]:
        async with serving(served) as (server, client):
            proxy = RecordingProxy(server.url)
            url = await proxy.start()
            try:
                sent = await stream_chat(url, None, model, _asked(path), PARAMS, lambda _t: None)
            finally:
                await proxy.stop()
            direct = await client.chat.completions.create(
                model=model,
                max_tokens=8,
                temperature=0,
                extra_body={"logit_bias": NO_EOS},
                messages=[
                    {
                        "role": "user",
                        "content": [  # type: ignore[list-item]
                            {
                                "type": "image_url",
                                "image_url": {
                                    "url": "data:image/png;base64,"
                                    + base64.b64encode(picture).decode()
                                },
                            },
                            {"type": "text", "text": "What is this?"},
                        ],
                    }
                ],
            )
        return sent.text, direct.choices[0].message.content or "", proxy.requests

    text, direct, requests = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert text == direct != ""
    (part, words) = requests[0]["messages"][0]["content"]
    assert words == {"type": "text", "text": "What is this?"}
    assert part["type"] == "image_url"
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    assert base64.b64decode(part["image_url"]["url"].split(",", 1)[1]) == picture


def test_an_image_file_gone_is_said_before_anything_is_sent(tmp_path: Path) -> None:
    async def scenario() -> None:
        await stream_chat(
            "http://127.0.0.1:9/v1",
            None,
            "m",
            _asked(str(tmp_path / "gone")),
            PARAMS,
            lambda _t: None,
        )

    with pytest.raises(RemoteError, match="could not be read"):
        asyncio.run(scenario())
