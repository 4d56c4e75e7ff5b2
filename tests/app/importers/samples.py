"""Small export files written by hand after the real formats (see
shared/notes/history-import.md), shared by the importer tests."""

from __future__ import annotations

from typing import Any


def gpt_node(
    node_id: str, parent: str | None, children: list[str], message: dict[str, Any] | None
) -> dict[str, Any]:
    return {"id": node_id, "parent": parent, "children": children, "message": message}


def gpt_message(
    node_id: str,
    role: str,
    ctype: str = "text",
    *,
    parts: list[Any] | None = None,
    t: float | None = None,
    recipient: str = "all",
    status: str = "finished_successfully",
    meta: dict[str, Any] | None = None,
    author_name: str | None = None,
    **content: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {"content_type": ctype, **content}
    if parts is not None:
        body["parts"] = parts
    return {
        "id": node_id,
        "author": {"role": role, "name": author_name, "metadata": {}},
        "create_time": t,
        "update_time": None,
        "content": body,
        "status": status,
        "end_turn": True,
        "weight": 1.0,
        "metadata": meta or {},
        "recipient": recipient,
        "channel": None,
    }


def chatgpt_conversation() -> dict[str, Any]:
    """root (hidden) -> instructions (context) -> u1 -> [sys hidden -> th1 -> code -> out ->
    a1 (answer with reasoning + trace)], [a1b regenerate]; a1 -> u2 -> a2 ; u1 edited: u1b ->
    a3 (leaf). The `children` list of the root misses the context node (2026 exports do)."""
    m = gpt_message
    mapping = {
        "root": gpt_node("root", None, [], None),
        "ctx": gpt_node(
            "ctx",
            "root",
            ["u1", "u1b"],
            m(
                "ctx",
                "user",
                "user_editable_context",
                user_profile="I am a cat.",
                user_instructions="Answer briefly.",
                meta={"is_visually_hidden_from_conversation": True},
            ),
        ),
        "u1": gpt_node("u1", "ctx", ["sys1", "a1b"], m("u1", "user", parts=["Hello?"], t=100.0)),
        "sys1": gpt_node(
            "sys1",
            "u1",
            ["th1"],
            m("sys1", "system", parts=[""], meta={"is_visually_hidden_from_conversation": True}),
        ),
        "th1": gpt_node(
            "th1",
            "sys1",
            ["code1"],
            m(
                "th1",
                "assistant",
                "thoughts",
                t=104.0,
                thoughts=[
                    {
                        "summary": "Greeting",
                        "content": "They said hello.",
                        "chunks": [],
                        "finished": True,
                    }
                ],
            ),
        ),
        "code1": gpt_node(
            "code1",
            "th1",
            ["out1"],
            m(
                "code1",
                "assistant",
                "code",
                recipient="python",
                language="python",
                text="1+1",
                t=105.0,
            ),
        ),
        "out1": gpt_node(
            "out1",
            "code1",
            ["a1"],
            m("out1", "tool", "execution_output", author_name="python", text="2", t=106.0),
        ),
        "a1": gpt_node(
            "a1",
            "out1",
            ["u2"],
            m(
                "a1",
                "assistant",
                parts=["Hi \ue200cite\ue202turn0search0\ue201there."],
                t=103.0,
                meta={"model_slug": "gpt-5-thinking"},
            ),
        ),
        "a1b": gpt_node("a1b", "u1", [], m("a1b", "assistant", parts=["Hello again."], t=110.0)),
        "u2": gpt_node("u2", "a1", ["a2"], m("u2", "user", parts=["Thanks"], t=120.0)),
        "a2": gpt_node("a2", "u2", [], m("a2", "assistant", parts=["Welcome."], t=121.0)),
        "u1b": gpt_node("u1b", "ctx", ["a3"], m("u1b", "user", parts=["Hello!"], t=130.0)),
        "a3": gpt_node("a3", "u1b", [], m("a3", "assistant", parts=["Hey."], t=131.0)),
    }
    mapping["root"]["children"] = []  # the missing child link
    return {
        "title": "Greetings",
        "create_time": 100.0,
        "update_time": 131.0,
        "mapping": mapping,
        "current_node": "a2",
        "conversation_id": "conv-1",
        "id": "conv-1",
        "default_model_slug": "gpt-4o",
    }


def claude_conversation() -> dict[str, Any]:
    """u1 -> a1 (thinking + tool use) -> u2 -> a2; u1 -> a1b (retry, newest leaf); a broken
    link (parent not in the export) and an attachment with extracted text."""
    root = "00000000-0000-4000-8000-000000000000"

    def msg(
        uuid: str, parent: str, sender: str, created: str, text: str, **more: Any
    ) -> dict[str, Any]:
        return {
            "uuid": uuid,
            "text": text,
            "sender": sender,
            "created_at": created,
            "updated_at": created,
            "parent_message_uuid": parent,
            "content": more.pop("content", [{"type": "text", "text": text}]),
            "attachments": more.pop("attachments", []),
            "files": more.pop("files", []),
        }

    return {
        "uuid": "claude-1",
        "name": "",
        "created_at": "2026-03-01T10:00:00.000000Z",
        "updated_at": "2026-03-01T10:05:00.000000Z",
        "account": {"uuid": "acc"},
        "chat_messages": [
            msg(
                "u1",
                root,
                "human",
                "2026-03-01T10:00:00.000000Z",
                "Read this\nplease",
                attachments=[
                    {
                        "file_name": "notes.txt",
                        "file_size": 5,
                        "file_type": "txt",
                        "extracted_content": "hello",
                    }
                ],
                files=[{"file_uuid": "f1", "file_name": "photo.png"}],
            ),
            msg(
                "a1",
                "u1",
                "assistant",
                "2026-03-01T10:00:05.000000Z",
                "",
                content=[
                    {"type": "thinking", "thinking": "Let me look.", "summaries": []},
                    {"type": "tool_use", "name": "web_search", "input": {"query": "notes"}},
                    {
                        "type": "tool_result",
                        "name": "web_search",
                        "content": [{"type": "text", "text": "found"}],
                    },
                    {"type": "text", "text": "It says hello."},
                ],
            ),
            msg("u2", "a1", "human", "2026-03-01T10:01:00.000000Z", "Thanks"),
            msg("a2", "u2", "assistant", "2026-03-01T10:01:05.000000Z", "Any time."),
            msg("a1b", "u1", "assistant", "2026-03-01T10:04:00.000000Z", "Hello, it says."),
            msg("orphan", "gone", "human", "2026-03-01T10:02:00.000000Z", "Lost parent"),
        ],
    }


def openwebui_export() -> list[dict[str, Any]]:
    """One chat: u1 -> [a1 (reasoning details), a1b (second model)]; a1 -> u2 -> a2;
    currentId points at a1b; a system message is hidden; an inline image and a URL file."""

    def m(
        mid: str,
        parent: str | None,
        children: list[str],
        role: str,
        content: str,
        ts: int,
        **more: Any,
    ) -> dict[str, Any]:
        return {
            "id": mid,
            "parentId": parent,
            "childrenIds": children,
            "role": role,
            "content": content,
            "timestamp": ts,
            **more,
        }

    reasoning = (
        '<details type="reasoning" done="true" duration="2">\n<summary>Thought for 2 '
        "seconds</summary>\n&gt; Think &amp; answer.\n</details>\nThe answer."
    )
    messages = {
        "a2": m("a2", "u2", [], "assistant", "Bye.", 1700000040, model="llama3.1:8b"),
        "u1": m(
            "u1",
            None,
            ["a1", "a1b"],
            "user",
            "Question?",
            1700000000,
            files=[
                {"type": "image", "url": "data:image/png;base64,iVBORw0KGgo="},
                {"type": "file", "name": "doc.pdf", "url": "/api/v1/files/abc/content"},
            ],
        ),
        "a1": m("a1", "u1", ["u2"], "assistant", reasoning, 1700000010, model="qwen3:14b"),
        "a1b": m("a1b", "u1", [], "assistant", "Other answer.", 1700000011, model="llama3.1:8b"),
        "u2": m("u2", "a1", ["a2"], "user", "Ok", 1700000030),
    }
    chat = {
        "id": "",
        "title": "Web chat",
        "models": ["qwen3:14b"],
        "params": {"system": "Be kind."},
        "history": {"messages": messages, "currentId": "a1b"},
        "messages": [],
        "timestamp": 1700000000000,
    }
    return [
        {"id": "folder-1", "name": "Folder"},  # not a chat: refused on its own
        {
            "id": "owui-1",
            "user_id": "u",
            "title": "Web chat",
            "chat": chat,
            "created_at": 1700000000,
            "updated_at": 1700000040,
            "archived": False,
        },
    ]


def librechat_export(recursive: bool) -> dict[str, Any]:
    """u1 -> [a1 (agent content with think), a1b]; a1 -> u2 (unfinished reply a2)."""
    zero = "00000000-0000-0000-0000-000000000000"

    def m(
        mid: str, parent: str, user: bool, text: str, created: str, **more: Any
    ) -> dict[str, Any]:
        return {
            "messageId": mid,
            "parentMessageId": parent,
            "conversationId": "lc-1",
            "sender": "User" if user else "GPT",
            "text": text,
            "isCreatedByUser": user,
            "model": None if user else "gpt-4o",
            "createdAt": created,
            **more,
        }

    a1 = m(
        "a1",
        "u1",
        False,
        "",
        "2025-01-01T00:00:02Z",
        content=[{"type": "think", "think": "Hmm."}, {"type": "text", "text": "Answer one."}],
    )
    a1b = m("a1b", "u1", False, "Answer two.", "2025-01-01T00:00:03Z")
    u2 = m("u2", "a1", True, "More", "2025-01-01T00:00:04Z")
    a2 = m("a2", "u2", False, "Partial", "2025-01-01T00:00:05Z", unfinished=True)
    u1 = m("u1", zero, True, "Start", "2025-01-01T00:00:01Z")
    if recursive:
        u2["children"] = [a2]
        a1["children"] = [u2]
        u1["children"] = [a1, a1b]
        messages = [u1]
    else:
        messages = [a2, u1, a1, a1b, u2]
    return {
        "conversationId": "lc-1",
        "endpoint": "openAI",
        "title": "Libre",
        "exportAt": "13:18:04 GMT-0400",
        "branches": True,
        "recursive": recursive,
        "options": {"model": "gpt-4o", "promptPrefix": "System here."},
        "messages": messages,
    }


def lmstudio_conversation() -> dict[str, Any]:
    """Turn 0: user; turn 1: two assistant versions (second selected, with thinking);
    turn 2: two user versions (first selected); turn 3: one assistant reply."""

    def user(text: str) -> dict[str, Any]:
        return {"type": "singleStep", "role": "user", "content": [{"type": "text", "text": text}]}

    def bot(text: str, thinking: str = "") -> dict[str, Any]:
        steps = []
        if thinking:
            steps.append(
                {
                    "type": "contentBlock",
                    "stepIdentifier": "1-a",
                    "style": {"type": "thinking"},
                    "content": [{"type": "text", "text": thinking}],
                }
            )
        steps.append(
            {
                "type": "contentBlock",
                "stepIdentifier": "2-b",
                "content": [{"type": "text", "text": text}],
                "genInfo": {"indexedModelIdentifier": "qwen/qwen3-8b"},
            }
        )
        return {
            "type": "multiStep",
            "role": "assistant",
            "steps": steps,
            "senderInfo": {"senderName": "qwen"},
        }

    return {
        "name": "Untitled",
        "createdAt": 1754557798069,
        "systemPrompt": "old",
        "perChatPredictionConfig": {
            "fields": [{"key": "llm.prediction.systemPrompt", "value": "Be terse."}]
        },
        "messages": [
            {"versions": [user("Hi there")], "currentlySelected": 0},
            {"versions": [bot("First"), bot("Second", "pondering")], "currentlySelected": 1},
            {"versions": [user("Go on"), user("Stop")], "currentlySelected": 0},
            {"versions": [bot("Going")], "currentlySelected": 0},
        ],
    }


def sillytavern_lines() -> list[dict[str, Any]]:
    """Header, a greeting with two swipes (the second selected), a user message, a reply with
    reasoning."""
    return [
        {
            "user_name": "You",
            "character_name": "Seraphina",
            "create_date": "2025-05-11@19h32m07s",
            "chat_metadata": {"integrity": "x"},
        },
        {
            "name": "Seraphina",
            "is_user": False,
            "send_date": "May 11, 2025 7:32pm",
            "mes": "Welcome back.",
            "swipe_id": 1,
            "swipes": ["Hello, traveler.", "Welcome back."],
            "swipe_info": [
                {"send_date": "May 11, 2025 7:32pm", "extra": {}},
                {"send_date": "May 11, 2025 7:33pm", "extra": {"model": "claude"}},
            ],
            "extra": {},
        },
        {
            "name": "You",
            "is_user": True,
            "send_date": "May 11, 2025 7:34pm",
            "mes": "Hi!",
            "extra": {},
        },
        {
            "name": "Seraphina",
            "is_user": False,
            "send_date": "2025-05-11T19:35:00.000Z",
            "mes": "How are you?",
            "extra": {"model": "gpt-4o", "reasoning": "Be warm."},
        },
    ]


def textgen_history() -> dict[str, Any]:
    """A character chat: greeting row, then a turn whose reply has two versions (the first
    selected)."""
    return {
        "internal": [["<|BEGIN-VISIBLE-CHAT|>", "Greetings!"], ["What's up?", "Not much."]],
        "visible": [["", "Greetings!"], ["What&#x27;s up?", "Not much."]],
        "metadata": {
            "assistant_0": {"timestamp": "May 03, 2026 10:00"},
            "user_1": {"timestamp": "May 03, 2026 10:01"},
            "assistant_1": {
                "timestamp": "May 03, 2026 10:01",
                "current_version_index": 0,
                "versions": [
                    {"content": "Not much.", "timestamp": "May 03, 2026 10:01"},
                    {"content": "Plenty!", "timestamp": "May 03, 2026 10:02"},
                ],
            },
        },
    }


def jan_thread() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """u1 -> [a1, a1b]; u1's activeChildId picks a1 (older); a1 -> u2."""

    def m(
        mid: str, parent: str | None, role: str, text: str, created: int, **meta: Any
    ) -> dict[str, Any]:
        return {
            "id": mid,
            "object": "thread.message",
            "thread_id": "jan-1",
            "role": role,
            "content": [{"type": "text", "text": {"value": text, "annotations": []}}],
            "status": "ready",
            "created_at": created,
            "metadata": {"parentId": parent, **meta},
        }

    thread = {
        "id": "jan-1",
        "object": "thread",
        "title": "Jan chat",
        "assistants": [{"id": "jan", "name": "Jan", "instructions": "You are Jan."}],
        "created": 1750000000000,
        "updated": 1750000100000,
    }
    messages = [
        m("u1", None, "user", "Hello Jan", 1750000000000, activeChildId="a1"),
        m("a1", "u1", "assistant", "Hi.", 1750000001000),
        m("a1b", "u1", "assistant", "Hey!", 1750000002000),
        m("u2", "a1", "user", "Bye", 1750000003000),
    ]
    return thread, messages


def chatbox_export() -> dict[str, Any]:
    """A session with a system prompt and the path u1 -> a1 -> u2 -> a2; a fork at u1 keeps an
    older reply a1x (list 0) while the shown continuation is list 1."""

    def m(mid: str, role: str, text: str, ts: int, **more: Any) -> dict[str, Any]:
        return {
            "id": mid,
            "role": role,
            "contentParts": [{"type": "text", "text": text}],
            "timestamp": ts,
            **more,
        }

    session = {
        "id": "cb-1",
        "name": "Box chat",
        "type": "chat",
        "messages": [
            m("sys", "system", "You are helpful.", 1),
            m("u1", "user", "Hi", 1700000000000),
            m(
                "a1",
                "assistant",
                "Hello",
                1700000001000,
                model="gpt-4o-mini",
                contentParts=[
                    {"type": "reasoning", "text": "greet"},
                    {"type": "text", "text": "Hello"},
                ],
            ),
            m("u2", "user", "Bye", 1700000002000),
            m("a2", "assistant", "Bye!", 1700000003000),
        ],
        "messageForksHash": {
            "u1": {
                "position": 1,
                "createdAt": 1,
                "lists": [
                    {"id": "l0", "messages": [m("a1x", "assistant", "Old hello", 1700000000500)]},
                    {"id": "l1", "messages": []},
                ],
            }
        },
    }
    return {
        "settings": {},
        "chat-sessions-list": [{"id": "cb-1"}],
        "session:cb-1": session,
        "configVersion": 7,
        "__exported_at": "2026-01-01",
    }


def branchwise_export() -> dict[str, Any]:
    """Branchwise's own per-chat export: a root, two replies (the second active, stopped)."""

    def m(mid: int, parent: int | None, role: str, content: str, **more: Any) -> dict[str, Any]:
        return {
            "id": mid,
            "parent_id": parent,
            "role": role,
            "content": content,
            "created_at": 1700000000.0 + mid,
            "status": "complete",
            "model_id": None,
            "params": {},
            "stats": {},
            "error": None,
            "visit": 0,
            "reasoning": "",
            "attachments": [],
            **more,
        }

    return {
        "format": "branchwise-conversation",
        "version": 2,
        "exported_at": 1700000100.0,
        "conversation": {
            "title": "Local",
            "created_at": 1700000000.0,
            "updated_at": 1700000010.0,
            "system_prompt": "Be brief.",
            "model_id": "mlx-community/Qwen3-0.6B-4bit",
            "params": {},
            "pinned": False,
            "archived": False,
            "active_leaf_id": 3,
        },
        "messages": [
            m(1, None, "user", "Hi"),
            m(2, 1, "assistant", "Hello", model_id="qwen", visit=1),
            m(3, 1, "assistant", "Hey", status="stopped", reasoning="hm", visit=2),
        ],
    }
