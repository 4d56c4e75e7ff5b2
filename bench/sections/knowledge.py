"""Knowledge figures (issue 43 item 10): a follow-up's time to first token in a chat that reads
knowledge, over mlx-lm's own generation from scratch on the same rendered prompt (goal <= 0.1x),
first tokens identical.

The knowledge is CPython's language reference topics (`pydoc_data.topics`, on every machine with
Python), one Markdown file per topic, indexed once under the bench folder by the app's own index
(`app.knowledge`: BM25, fused with the default embedder where the app has one). Every user turn
retrieves as the window does (`IndexKnowledge` through `retrieve_turn`: the new message with the
one before it, counted in the model's tokens, within `--knowledge-budget`) and is rendered from
the excerpt records by the app's wrapper, so each turn carries a block of excerpts. The turns
are answered first (`--knowledge-turns`, each with a few words of reply; the engine caches them
as the window's chat does); then the follow-up, with its own retrieval, is timed on the engine
and from an empty cache with mlx-lm. The follow-up must read its own new excerpts whatever the
cache holds, so its share of the prompt bounds the ratio from below: a long chat (many turns
that read knowledge) is where the cache pays, and what this measures. Rows:

* the follow-up's time to first token, the engine's over mlx-lm's from scratch;
* the same with the follow-up's retrieval (search and counting) added to the engine's side: what
  the person waits for after pressing Enter;
* the prompt's tokens, the knowledge excerpts among them, and what the engine computed.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from mlx_lm.generate import stream_generate

from app.generation.attachments import with_attachments
from app.generation.knowledge_block import knowledge_block, with_knowledge
from app.generation.knowledge_index import IndexKnowledge, default_embedder
from app.generation.knowledge_retrieval import TurnQuery, retrieve_turn, token_counter
from app.knowledge.index import KnowledgeIndex
from bench.conversation import SYSTEM
from bench.default_model import WORKDIR
from inference import Engine, LoadedModel, SamplingParams

HEADER = ("measure", "Branchwise", "mlx-lm from scratch", "ratio", "goal")
COLLECTION = "Python reference"
QUESTIONS = [
    "How does a for loop work in Python?",
    "And what does the else clause on a loop do?",
    "How are exceptions raised and caught?",
    "What does the with statement do with a context manager?",
    "How do I define a class with methods?",
    "What are decorators on a function definition?",
    "How does import find a module?",
    "What is a lambda expression?",
    "How do comparisons chain?",
    "What does yield do in a function?",
    "How are f-strings formatted?",
    "What is the difference between a list and a tuple?",
    "How does the global statement work?",
]
# The topics indexed (None: all 79); a test takes a few, for speed.
TOPIC_LIMIT: int | None = None
ONE = SamplingParams(max_tokens=1)
REPLY = SamplingParams(max_tokens=8)


def knowledge_base(workdir: Path) -> IndexKnowledge:
    """The reference topics as a knowledge folder, indexed once (kept between runs)."""
    from pydoc_data.topics import topics

    folder = workdir / "python-reference"
    database = workdir / "knowledge-bench" / "knowledge.db"
    if not database.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in sorted(topics.items())[:TOPIC_LIMIT]:
            (folder / f"{name}.md").write_text(f"# {name}\n\n{text}", encoding="utf-8")
        embedder = default_embedder()()
        with KnowledgeIndex.open(database) as index:
            index.add(COLLECTION, folder)
            index.sync(COLLECTION, embedder=embedder)
    return IndexKnowledge(database, default_embedder())


def user_turn(
    engine: Engine, base: IndexKnowledge, text: str, previous: str, budget: int
) -> tuple[dict[str, Any], int]:
    """A user turn as the window makes one (retrieved for, its excerpts kept, rendered), and
    the tokens its excerpts take."""
    ask = TurnQuery((COLLECTION,), text, previous, budget)
    records = [e.as_record() for e in retrieve_turn(engine, base, ask).excerpts]
    content = with_knowledge(with_attachments(text, records), records)
    return {"role": "user", "content": content}, token_counter(engine)(knowledge_block(records))


def scratch_ttft(loaded: LoadedModel, messages: list[dict[str, Any]]) -> tuple[float, int]:
    """mlx-lm from an empty cache: (time to first token, the token)."""
    ids = loaded.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    started = time.perf_counter()
    first = next(stream_generate(loaded.model, loaded.tokenizer, ids, max_tokens=1))
    return time.perf_counter() - started, first.token


def rows(loaded: LoadedModel, args: argparse.Namespace) -> list[tuple[str, ...]]:
    base = knowledge_base(WORKDIR)
    budget = args.knowledge_budget
    ours, retrievals, theirs, identical = [], [], [], True
    prompt = excerpts = computed = 0
    for run in range(args.runs):
        engine = Engine(loaded)
        chat: list[dict[str, Any]] = [SYSTEM]
        excerpts = 0
        questions = [QUESTIONS[i % len(QUESTIONS)] for i in range(args.knowledge_turns + 1)]
        for number, question in enumerate(questions[:-1]):
            previous = questions[number - 1] if number else ""
            turn, tokens = user_turn(engine, base, question, previous, budget)
            chat.append(turn)
            excerpts += tokens
            reply = engine.generate(chat, REPLY, f"knowledge-{run}").text
            chat.append({"role": "assistant", "content": reply})
        started = time.perf_counter()
        turn, tokens = user_turn(engine, base, questions[-1], questions[-2], budget)
        retrievals.append(time.perf_counter() - started)
        follow, excerpts = [*chat, turn], excerpts + tokens
        result = engine.generate(follow, ONE, f"knowledge-{run}")
        seconds, token = scratch_ttft(loaded, follow)
        ours.append(result.stats.ttft_s)
        theirs.append(seconds)
        identical = identical and list(result.token_ids) == [token]
        prompt, computed = result.stats.prompt_tokens, result.stats.prefill_tokens
        print(
            f"knowledge run {run + 1}: follow-up {ours[-1] * 1e3:.0f} ms (+ retrieval "
            f"{retrievals[-1] * 1e3:.0f} ms), from scratch {seconds * 1e3:.0f} ms",
            flush=True,
        )
    ratio = statistics.median(o / t for o, t in zip(ours, theirs, strict=True))
    waited = statistics.median(
        (o + r) / t for o, r, t in zip(ours, retrievals, theirs, strict=True)
    )
    same = "" if identical else " (TOKENS DIFFER)"
    waiting = statistics.median([o + r for o, r in zip(ours, retrievals, strict=True)])
    return [
        HEADER,
        (
            f"follow-up time to first token ({args.knowledge_turns} turns read knowledge before)",
            f"{statistics.median(ours) * 1000:.0f} ms",
            f"{statistics.median(theirs) * 1000:.0f} ms",
            f"{ratio:.3f}x{same}",
            "<= 0.1x",
        ),
        (
            "the same, with the follow-up's own retrieval",
            f"{waiting * 1000:.0f} ms",
            f"{statistics.median(theirs) * 1000:.0f} ms",
            f"{waited:.3f}x",
            "-",
        ),
        (
            f"prompt tokens (knowledge excerpts; budget {budget} a turn)",
            f"{computed} computed of {prompt}",
            f"{prompt} ({excerpts} of excerpts)",
            f"{computed / max(1, prompt):.3f}x",
            "-",
        ),
    ]
