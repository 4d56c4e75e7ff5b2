"""The conversations the engine and server benchmarks send: a system prompt, a story request,
and history turns to grow a chat to a given length."""

from __future__ import annotations

from inference import LoadedModel

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
STORY = {"role": "user", "content": "Write a long story about a lighthouse keeper and a storm."}
# History turns, repeated in order until the rendered history reaches its target length, so a
# shorter history is always a message prefix of a longer one.
TURNS = [
    ("What is the capital of France?", "The capital of France is Paris, on the river Seine."),
    ("How do I sort a list in Python?", "Use sorted(items) for a new list or items.sort()."),
    ("Explain recursion to a child.", "It is a function that solves a smaller copy of itself."),
    ("Tell me about the sea.", "The sea covers most of the Earth and holds most of its water."),
    ("Why is the sky blue?", "Air scatters blue sunlight more than red, so the sky looks blue."),
]


def ask(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def history(loaded: LoadedModel, target: int) -> list[dict[str, str]]:
    """The system prompt and TURNS, repeated until the rendered chat has `target` tokens."""
    messages = [SYSTEM]
    turn = 0
    while len(loaded.tokenizer.apply_chat_template(messages)) < target:
        question, answer = TURNS[turn % len(TURNS)]
        messages += [ask(question), {"role": "assistant", "content": answer}]
        turn += 1
    return messages
