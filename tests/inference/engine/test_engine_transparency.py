"""Transparency: whatever the user does, the engine's tokens equal a from-scratch mlx-lm run.

Hypothesis draws sequences of user actions (send, regenerate, edit an earlier message, go back
to an earlier branch and continue it, cancel mid-prefill or mid-decode and continue, alternate
between two conversations, shrink the cache budget, restart — a new engine on the same cache
folder, finding the saved caches there —, overflow the context under each policy, and a tool
turn: the reply calls one or two tools and the conversation continues after their results) and
runs them through one engine per cache kind, which keeps its stored caches from one sequence to
the next. The models wear Qwen2.5's tools-capable template; conversation "a" offers a tool on
every turn, "b" none. Every reply is compared, token
for token, with `mlx_lm.stream_generate` on the same rendered prompt from an empty cache, greedy
or at temperature 0.8 with a seed (with or without a logit bias banning end-of-sequence), with
speculative decoding (prompt lookup) or without.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inference import (
    Engine,
    GenerationResult,
    LoadedModel,
    PromptError,
    SamplingParams,
    load_model,
)
from inference.prompt.context_fit import OVERFLOW_POLICIES
from tests.engine_reference import (
    Comparison,
    Reference,
    check_tokens,
    reference,
    template_messages,
)
from tests.tiny_models import (
    CHATML_TEMPLATE,
    KINDS,
    NO_EOS,
    QWEN_TOOLS_TEMPLATE,
    WEATHER_TOOL,
    with_template,
)

pytestmark = pytest.mark.usefixtures("free_drafts")

MAX_TOKENS = 4
CHUNK = 16  # small, so prompts span several chunks and checkpoints land inside them
BUDGET = 1_000_000  # a handful of tiny stacks, so eviction happens along the way
DISK_BUDGET = 3_000_000  # saved caches are evicted along the way too
# Small, so an "overflow" action needs no huge prompt, yet room for the tool definitions
# (Qwen's tool instructions take about 500 tokens of this tiny vocabulary).
CONTEXT = 1024
CITIES = ["Paris", "Rome", "Oslo"]
WORDS = ["the", "cat", "sat", "on", "a", "mat", "told", "me", "story", "about", "Paris", "code"]

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
conversation = st.sampled_from(["a", "b"])
plain_sampling = st.one_of(
    st.just(SamplingParams(max_tokens=MAX_TOKENS)),
    st.integers(0, 2**16).map(
        lambda seed: SamplingParams(max_tokens=MAX_TOKENS, temperature=0.8, seed=seed)
    ),
    # A logit bias is a logits processor that must see the same logits with or without a cache.
    st.integers(0, 2**16).map(
        lambda seed: SamplingParams(
            max_tokens=MAX_TOKENS, temperature=0.8, seed=seed, logit_bias=NO_EOS
        )
    ),
)
# Speculation (the default, prompt lookup) and plain decoding share the same stored caches, so
# a sequence mixes them; both must match the same from-scratch reference.
sampling = st.builds(
    lambda params, speculation: dataclasses.replace(params, speculation=speculation),
    plain_sampling,
    st.sampled_from(["prompt_lookup", "off"]),
)
actions = st.lists(
    st.one_of(
        st.tuples(st.just("send"), conversation, text, sampling),
        st.tuples(st.just("regenerate"), conversation, sampling),
        st.tuples(st.just("edit"), conversation, st.integers(0, 9), text, sampling),
        st.tuples(st.just("switch"), conversation, st.integers(0, 9), text, sampling),
        st.tuples(st.just("cancel_prefill"), conversation, text, sampling),
        st.tuples(st.just("cancel_decode"), conversation, text, sampling),
        st.tuples(st.just("budget"), st.sampled_from([0, 30_000, 200_000])),
        st.tuples(st.just("restart")),
        st.tuples(st.just("overflow"), conversation, st.sampled_from(OVERFLOW_POLICIES), sampling),
        st.tuples(st.just("tool_turn"), conversation, text, st.integers(1, 2), sampling),
    ),
    min_size=2,
    max_size=6,
)


@dataclass
class Chat:
    path: list[dict]
    branches: list[list[dict]] = field(default_factory=list)
    tools: list[dict] | None = None


def tool_turn(question: str, calls: int) -> list[dict]:
    """A question, the reply that calls `calls` tools (as the app stores it: OpenAI's shape,
    arguments as JSON text) and one result per call."""
    made = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": CITIES[i]})},
        }
        for i in range(calls)
    ]
    results = [
        {
            "role": "tool",
            "tool_call_id": f"call_{i}",
            "name": "get_weather",
            "content": f"{CITIES[i]}: sunny, {20 + i} C",
        }
        for i in range(calls)
    ]
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": None, "tool_calls": made},
        *results,
    ]


def filler(turns: int) -> list[dict[str, str]]:
    """Earlier turns long enough to push a conversation past CONTEXT."""
    messages = []
    for i in range(turns):
        messages += [
            {"role": "user", "content": f"Tell me a story about Paris, part {i}."},
            {"role": "assistant", "content": f"The cat sat on the mat and told me a story {i}."},
        ]
    return messages


@dataclass
class Harness:
    loaded: LoadedModel
    cache_dir: Path
    engine: Engine = field(init=False)
    comparison: Comparison = field(default_factory=Comparison)
    references: dict[tuple, Reference] = field(default_factory=dict)
    generations: int = 0
    sequences: int = 0
    restarts: int = 0
    overflows: int = 0
    tool_turns: int = 0

    def __post_init__(self) -> None:
        self.engine = self.new_engine()

    def new_engine(self) -> Engine:
        return Engine(
            self.loaded,
            BUDGET,
            cache_dir=self.cache_dir,
            disk_budget_bytes=DISK_BUDGET,
            prefill_chunk_tokens=CHUNK,
        )

    def restart(self) -> None:
        """What a quit and a relaunch do to the engine: save, then start again from disk."""
        self.engine.close()
        self.engine = self.new_engine()
        self.restarts += 1

    def reference(self, ids: list[int], params: SamplingParams) -> Reference:
        key = (tuple(ids), params.temperature, params.seed, tuple(params.logit_bias.items()))
        if key not in self.references:
            self.references[key] = reference(self.loaded, ids, params, MAX_TOKENS)
        return self.references[key]

    def run(
        self,
        chat: Chat,
        messages: list[dict[str, str]],
        params: SamplingParams,
        cid: str,
        cancel_at: str | None = None,
        overflow: str = "truncate_middle",
    ) -> GenerationResult:
        """Generate, check the reply against the reference, and make it the chat's new path."""
        cancel = threading.Event()

        def on_progress(done: int, total: int) -> None:
            if (cancel_at == "prefill" and 0 < done < total) or (
                cancel_at == "decode" and done == total
            ):
                cancel.set()

        result = self.engine.generate(
            messages,
            params,
            cid,
            on_progress=on_progress,
            cancel=cancel,
            overflow=overflow,
            tools=chat.tools,
        )
        self.generations += 1
        self.engine.save_pending(0.05)  # what the worker does while it waits for the next turn
        stats = result.stats
        assert stats.cached_tokens + stats.prefill_tokens == stats.prompt_tokens
        assert 0 <= stats.disk_tokens <= stats.cached_tokens
        assert self.engine.cache_bytes() <= self.engine.cache_budget_bytes
        # The reference is mlx-lm on the prompt the engine really sent: the kept messages.
        kept = [m for i, m in enumerate(messages) if i not in result.dropped_messages]
        ids = self.loaded.tokenizer.apply_chat_template(
            template_messages(kept), tools=chat.tools, add_generation_prompt=True
        )
        assert stats.prompt_tokens == len(ids)
        label = f"{self.loaded.model_type} {cid} {cancel_at or ''}"
        complete = result.finish_reason != "cancelled"
        expected = self.reference(ids, params)
        check_tokens(result.token_ids, expected, self.comparison, label, complete)
        if cancel_at == "decode":
            # Cancel lands within one token (unless the model ended the reply right there).
            assert len(result.token_ids) == 1 and result.finish_reason in ("cancelled", "stop")
        chat.path = [*messages, {"role": "assistant", "content": result.text}]
        chat.branches.append(chat.path)
        return result


def tools_harness(source: Path, work: Path, caches: Path, cpu_float32: str = "auto") -> Harness:
    """A harness on a copy of the model at `source` wearing a tools-capable template (the
    harness offers a tool in one chat), its context capped at CONTEXT."""
    folder = with_template(source, work, QWEN_TOOLS_TEMPLATE)
    loaded = load_model(folder, cpu_float32=cpu_float32)
    return Harness(dataclasses.replace(loaded, context_length=CONTEXT), caches)


@pytest.fixture(scope="module")
def harnesses(
    tiny_models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Harness]]:
    made = {}
    root = tmp_path_factory.mktemp("transparency")
    for kind in KINDS:
        made[kind] = tools_harness(tiny_models_dir / kind, root / kind, root / f"caches-{kind}")
    yield made
    lines = [
        f"{kind}: {h.sequences} sequences, {h.generations} generations "
        f"({h.restarts} restarts, {h.overflows} overflows, {h.tool_turns} tool turns), "
        f"{h.comparison.exact} exact, {len(h.comparison.near_ties)} near-tie divergences "
        f"{h.comparison.near_ties}"
        for kind, h in made.items()
    ]
    print("\ntransparency:\n" + "\n".join(lines))


def play(harness: Harness, steps: list[tuple]) -> None:
    harness.sequences += 1
    harness.engine.cache_budget_bytes = BUDGET
    chats = {
        "a": Chat(
            [{"role": "system", "content": "You are a helpful assistant."}], tools=[WEATHER_TOOL]
        ),
        "b": Chat([]),
    }
    for step in steps:
        kind = step[0]
        if kind == "budget":
            harness.engine.cache_budget_bytes = step[1]
            assert harness.engine.cache_bytes() <= step[1]
            continue
        if kind == "restart":
            harness.restart()
            continue
        chat, cid = chats[step[1]], step[1]
        params = step[-1]
        if kind == "send":
            harness.run(chat, [*chat.path, {"role": "user", "content": step[2]}], params, cid)
        elif kind == "regenerate":
            if chat.path and chat.path[-1]["role"] == "assistant":
                harness.run(chat, chat.path[:-1], params, cid)
        elif kind == "edit":
            users = [i for i, m in enumerate(chat.path) if m["role"] == "user"]
            if users:
                at = users[step[2] % len(users)]
                edited = [*chat.path[:at], {"role": "user", "content": step[3]}]
                harness.run(chat, edited, params, cid)
        elif kind == "overflow":
            policy = step[2]
            messages = [*chat.path, *filler(24), {"role": "user", "content": "How does it end?"}]
            assert harness.engine.count_prompt_tokens(messages, tools=chat.tools) > CONTEXT
            harness.overflows += 1
            if policy == "stop":
                with pytest.raises(PromptError, match="too many for this model's context"):
                    harness.engine.generate(messages, params, cid, overflow=policy)
            else:
                result = harness.run(chat, messages, params, cid, overflow=policy)
                assert result.dropped_messages
        elif kind == "tool_turn":
            harness.tool_turns += 1
            harness.run(chat, [*chat.path, *tool_turn(step[2], step[3])], params, cid)
        elif kind == "switch":
            if chat.branches:
                chat.path = chat.branches[step[2] % len(chat.branches)]
            harness.run(chat, [*chat.path, {"role": "user", "content": step[3]}], params, cid)
        else:  # cancel mid-prefill or mid-decode, then continue the conversation
            messages = [*chat.path, {"role": "user", "content": step[2]}]
            where = "prefill" if kind == "cancel_prefill" else "decode"
            harness.run(chat, messages, params, cid, cancel_at=where)
            if where == "prefill":
                harness.run(chat, messages, params, cid)
            else:
                follow = [*chat.path, {"role": "user", "content": "go on"}]
                harness.run(chat, follow, params, cid)


def play_drawn(harness: Harness, examples: int) -> None:
    """Play `examples` sequences of actions drawn by hypothesis (the same ones every run)."""

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(steps=actions)
    def check(steps: list[tuple]) -> None:
        play(harness, steps)

    check()


@pytest.mark.parametrize("kind", KINDS)
def test_every_action_sequence_matches_from_scratch_generation(
    harnesses: dict[str, Harness], kind: str
) -> None:
    harness = harnesses[kind]
    play_drawn(harness, 50)
    assert harness.sequences >= 50
    assert harness.restarts and harness.overflows and harness.tool_turns  # all were drawn
    # Near-ties must stay rare; each one is listed in the module's printed summary.
    assert len(harness.comparison.near_ties) <= harness.generations // 20


@pytest.mark.parametrize("kind", ["llama", "qwen3_5"])
def test_a_template_that_renders_earlier_turns_differently_stays_exact(
    tiny_models_dir: Path, tmp_path: Path, kind: str
) -> None:
    """Lookup is by token ids: when a template renders the history differently on the next
    turn (here a header counting the messages), reuse falls back to the true common prefix."""
    folder = Path(shutil.copytree(tiny_models_dir / kind, tmp_path / kind))
    config_file = folder / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["chat_template"] = "{{ messages | length }} messages\n" + CHATML_TEMPLATE
    config_file.write_text(json.dumps(config))
    loaded = load_model(folder)
    engine = Engine(loaded, 10**8, prefill_chunk_tokens=CHUNK)
    params = SamplingParams(max_tokens=MAX_TOKENS)
    first = [{"role": "user", "content": "Tell me a story about Paris."}]
    reply = engine.generate(first, params, "c")
    follow = [*first, {"role": "assistant", "content": reply.text}, first[0]]
    result = engine.generate(follow, params, "c")
    ids = loaded.tokenizer.apply_chat_template(follow, add_generation_prompt=True)
    expected = reference(loaded, ids, params, MAX_TOKENS)
    check_tokens(result.token_ids, expected, Comparison(), kind)
    # The header changed with the message count, so nothing before it could be reused.
    assert result.stats.cached_tokens == 0
