"""A large ChatGPT export written quickly for the streaming tests: one conversation's JSON is
built once and written again and again with new ids, so hundreds of megabytes take seconds.

Each turn is shaped like a 2025 export: the user's question, a hidden system node, a `thoughts`
node, the answer with search metadata (real exports carry more metadata than text), and a
regenerated answer beside it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.importers.samples import gpt_message, gpt_node

TURNS = 12
TEXT = "Streaming keeps one conversation in memory at a time, whatever the size of the file. "
SEARCH = [
    {
        "type": "search_result_group",
        "domain": f"example{i}.org",
        "entries": [
            {
                "type": "search_result",
                "url": f"https://example{i}.org/page/{j}",
                "title": f"Page {j}",
                "snippet": "A snippet of the page as the search tool saw it. " * 3,
                "attribution": "ex",
            }
            for j in range(4)
        ],
    }
    for i in range(4)
]


def _template() -> str:
    mapping = {"root": gpt_node("root", None, ["u0"], None)}
    parent = "root"
    for turn in range(TURNS):
        user, hidden, thought, reply, retry = (f"{k}{turn}" for k in "uhtar")
        mapping[parent]["children"] = [user]
        mapping[user] = gpt_node(
            user,
            parent,
            [hidden, retry],
            gpt_message(
                user, "user", parts=[f"Question {turn}. {TEXT * 3}"], t=1700000000.0 + turn
            ),
        )
        mapping[hidden] = gpt_node(
            hidden,
            user,
            [thought],
            gpt_message(
                hidden, "system", parts=[""], meta={"is_visually_hidden_from_conversation": True}
            ),
        )
        mapping[thought] = gpt_node(
            thought,
            hidden,
            [reply],
            gpt_message(
                thought,
                "assistant",
                "thoughts",
                t=1700000000.2 + turn,
                thoughts=[
                    {"summary": "Thinking", "content": TEXT * 2, "chunks": [], "finished": True}
                ],
            ),
        )
        mapping[reply] = gpt_node(
            reply,
            thought,
            [],
            gpt_message(
                reply,
                "assistant",
                parts=[f"Answer {turn}. {TEXT * 6}"],
                t=1700000000.5 + turn,
                meta={"search_result_groups": SEARCH, "model_slug": "gpt-5-thinking"},
            ),
        )
        mapping[retry] = gpt_node(
            retry,
            user,
            [],
            gpt_message(retry, "assistant", parts=[f"Retry {turn}. {TEXT}"], t=1700000000.7 + turn),
        )
        parent = reply
    conversation = {
        "id": "@ID@",
        "conversation_id": "@ID@",
        "title": "Big @ID@",
        "create_time": 1700000000.0,
        "update_time": 1700000100.0,
        "mapping": mapping,
        "current_node": parent,
        "default_model_slug": "gpt-4o",
    }
    return json.dumps(conversation, separators=(",", ":"))


MESSAGES_PER_CONVERSATION = TURNS * 3  # question, answer (with its thoughts), regeneration


def write_big_export(path: Path, target_bytes: int) -> int:
    """Write a conversations.json of about `target_bytes`; returns how many conversations."""
    template = _template()
    count = max(1, target_bytes // len(template))
    with path.open("w", encoding="utf-8") as stream:
        stream.write("[")
        for index in range(count):
            stream.write(("," if index else "") + template.replace("@ID@", f"big-{index:06d}"))
        stream.write("]")
    return count
