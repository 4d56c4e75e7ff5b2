"""Small export files written by hand after the real formats (see
shared/notes/history-import.md), shared by the importer tests."""

from __future__ import annotations

from typing import Any


def gpt_node(node_id: str, parent: str | None, children: list[str],
             message: dict[str, Any] | None) -> dict[str, Any]:
    return {"id": node_id, "parent": parent, "children": children, "message": message}


def gpt_message(node_id: str, role: str, ctype: str = "text", *, parts: list[Any] | None = None,
                t: float | None = None, recipient: str = "all", status: str =
                "finished_successfully", meta: dict[str, Any] | None = None,
                author_name: str | None = None, **content: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"content_type": ctype, **content}
    if parts is not None:
        body["parts"] = parts
    return {"id": node_id, "author": {"role": role, "name": author_name, "metadata": {}},
            "create_time": t, "update_time": None, "content": body, "status": status,
            "end_turn": True, "weight": 1.0, "metadata": meta or {}, "recipient": recipient,
            "channel": None}


def chatgpt_conversation() -> dict[str, Any]:
    """root (hidden) -> instructions (context) -> u1 -> [sys hidden -> th1 -> code -> out ->
    a1 (answer with reasoning + trace)], [a1b regenerate]; a1 -> u2 -> a2 ; u1 edited: u1b ->
    a3 (leaf). The `children` list of the root misses the context node (2026 exports do)."""
    m = gpt_message
    mapping = {
        "root": gpt_node("root", None, [], None),
        "ctx": gpt_node("ctx", "root", ["u1", "u1b"], m(
            "ctx", "user", "user_editable_context", user_profile="I am a cat.",
            user_instructions="Answer briefly.",
            meta={"is_visually_hidden_from_conversation": True})),
        "u1": gpt_node("u1", "ctx", ["sys1", "a1b"], m("u1", "user", parts=["Hello?"], t=100.0)),
        "sys1": gpt_node("sys1", "u1", ["th1"], m("sys1", "system", parts=[""],
                                                  meta={"is_visually_hidden_from_conversation": True})),
        "th1": gpt_node("th1", "sys1", ["code1"], m(
            "th1", "assistant", "thoughts", t=104.0,
            thoughts=[{"summary": "Greeting", "content": "They said hello.", "chunks": [],
                       "finished": True}])),
        "code1": gpt_node("code1", "th1", ["out1"], m(
            "code1", "assistant", "code", recipient="python", language="python", text="1+1",
            t=105.0)),
        "out1": gpt_node("out1", "code1", ["a1"], m(
            "out1", "tool", "execution_output", author_name="python", text="2", t=106.0)),
        "a1": gpt_node("a1", "out1", ["u2"], m(
            "a1", "assistant", parts=["Hi \ue200cite\ue202turn0search0\ue201there."], t=103.0,
            meta={"model_slug": "gpt-5-thinking"})),
        "a1b": gpt_node("a1b", "u1", [], m("a1b", "assistant", parts=["Hello again."], t=110.0)),
        "u2": gpt_node("u2", "a1", ["a2"], m("u2", "user", parts=["Thanks"], t=120.0)),
        "a2": gpt_node("a2", "u2", [], m("a2", "assistant", parts=["Welcome."], t=121.0)),
        "u1b": gpt_node("u1b", "ctx", ["a3"], m("u1b", "user", parts=["Hello!"], t=130.0)),
        "a3": gpt_node("a3", "u1b", [], m("a3", "assistant", parts=["Hey."], t=131.0)),
    }
    mapping["root"]["children"] = []  # the missing child link
    return {"title": "Greetings", "create_time": 100.0, "update_time": 131.0,
            "mapping": mapping, "current_node": "a2", "conversation_id": "conv-1",
            "id": "conv-1", "default_model_slug": "gpt-4o"}
