"""A large ChatGPT export written quickly for the streaming tests: one conversation's JSON is
built once and written again and again with new ids (each a tree with a regeneration), so
hundreds of megabytes take seconds."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.importers.samples import gpt_message, gpt_node

TURNS = 12
TEXT = ("Streaming keeps one conversation in memory at a time, whatever the size of the file. "
        * 24)


def _template() -> str:
    mapping = {"root": gpt_node("root", None, ["u0"], None)}
    parent = "root"
    for turn in range(TURNS):
        user, reply, retry = f"u{turn}", f"a{turn}", f"r{turn}"
        mapping[parent]["children"] = [user]
        mapping[user] = gpt_node(user, parent, [reply, retry],
                                 gpt_message(user, "user", parts=[f"Question {turn}. {TEXT}"],
                                             t=1700000000.0 + turn))
        mapping[reply] = gpt_node(reply, user, [], gpt_message(
            reply, "assistant", parts=[f"Answer {turn}. {TEXT}"], t=1700000000.5 + turn))
        mapping[retry] = gpt_node(retry, user, [], gpt_message(
            retry, "assistant", parts=[f"Retry {turn}. {TEXT}"], t=1700000000.7 + turn))
        parent = reply
    conversation = {"id": "@ID@", "conversation_id": "@ID@", "title": "Big @ID@",
                    "create_time": 1700000000.0, "update_time": 1700000100.0,
                    "mapping": mapping, "current_node": parent, "default_model_slug": "gpt-4o"}
    return json.dumps(conversation, separators=(",", ":"))


MESSAGES_PER_CONVERSATION = TURNS * 3


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
