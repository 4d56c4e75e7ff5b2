"""How a compare uses memory: whether its local models fit together, in what order the worker
runs them, and the sentence that says so.

Sizes are what each model's weights take once loaded (the library's size on disk, as float32
where the CPU preference will run them so: `app.library.cpu_weights`), measured against the
worker's room for model weights (the memory available now plus what the held models take:
`InferenceWorker.model_room`). A remote model takes no local memory. A chat's loaded model that
is not compared stays loaded beside the others, so it counts too.

Models that fit together are held at once and stay loaded afterwards, so each branch continues
from its own caches in memory and switching between them is instant. Models that do not are
loaded one at a time, each in place of the last (whose caches are saved to disk first, so its
branch still continues from them); the model of the branch shown then runs last, so it is the
one loaded when the compare ends. Either way one worker thread computes one token at a
time, so local answers are written one after another while remote ones stream meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.generation.worker_models import HeldModel, same_folder
from app.sizes import format_bytes

MIN_MODELS, MAX_MODELS = 2, 4


@dataclass(frozen=True)
class CompareModel:
    """A model a compare asks: its id as a chat names it (a library model's folder name, or
    `remote:<connection>/<model>`), the name a person reads, its folder (None for a remote
    model) and the memory its weights take once loaded (0 for a remote model)."""

    model_id: str
    name: str
    path: Path | None = None
    weights_bytes: int = 0

    @property
    def local(self) -> bool:
        return self.path is not None


@dataclass(frozen=True)
class ComparePlan:
    """`models` in column order; `order` the local columns in the order the worker runs them;
    `together` whether the local models are held at once; `notice` says how and why; `active`
    the column whose branch is shown while they run (the chat's own model's, else the first);
    `blind_notice` says the same without naming or sizing any model (a blind compare)."""

    models: tuple[CompareModel, ...]
    order: tuple[int, ...]
    together: bool
    notice: str
    active: int = 0
    blind_notice: str = ""

    @property
    def together_paths(self) -> tuple[Path, ...]:
        """The folders that may stay loaded beside each other (none when they run in turn)."""
        if not self.together:
            return ()
        return tuple(m.path for m in self.models if m.path is not None)


class CompareRefused(ValueError):
    """The compare cannot run as asked; the message says why."""


def plan_compare(
    models: Sequence[CompareModel],
    room_bytes: int,
    held: Sequence[HeldModel] = (),
    chat_model: str | None = None,
) -> ComparePlan:
    """The plan for asking `models` (2 to 4, none twice), with `room_bytes` for model weights in
    all, `held` the models loaded now and `chat_model` the chat's own model. Raises
    CompareRefused for a wrong count, a model asked twice, or a local model that would not fit
    even alone."""
    models = tuple(models)
    if not MIN_MODELS <= len(models) <= MAX_MODELS:
        raise CompareRefused(f"Compare asks {MIN_MODELS} to {MAX_MODELS} models at once.")
    if len({m.model_id for m in models}) < len(models):
        raise CompareRefused("Each model can answer once in a compare.")
    room = format_bytes(room_bytes)
    for model in models:
        if model.local and model.weights_bytes > room_bytes:
            raise CompareRefused(
                f"{model.name} needs {format_bytes(model.weights_bytes)} of memory for its "
                f"weights, but only {room} is free. Choose a smaller model."
            )
    local = [i for i, m in enumerate(models) if m.local]
    main = next((h for h in held if h.main), None)
    main_index = next(
        (
            i
            for i, m in enumerate(models)
            if m.path is not None and main is not None and same_folder(m.path, main.path)
        ),
        None,
    )
    # The chat's loaded model stays loaded beside the others when it is not compared.
    extra = [] if main is None or main_index is not None else [main]
    needed = sum(models[i].weights_bytes for i in local) + sum(h.weights_bytes for h in extra)
    together = needed <= room_bytes
    sizes = " + ".join(
        [f"{models[i].name} {format_bytes(models[i].weights_bytes)}" for i in local]
        + [f"{h.model_id} {format_bytes(h.weights_bytes)} (loaded)" for h in extra]
    )
    turns = (
        "Each model is loaded in turn; its caches are saved first, so its branch "
        "continues from them."
    )
    if len(local) < 2 and not extra:
        notice = blind = ""  # one local model at most: nothing runs beside anything
    elif together:
        notice = f"Running side by side: {sizes} fit in {room} free."
        blind = f"Running side by side: the models fit in {room} free."
    else:
        notice = f"Running one after another: {sizes} > {room} free. {turns}"
        blind = f"Running one after another: the models need more than {room} free. {turns}"
    active = next((i for i, m in enumerate(models) if m.model_id == chat_model), 0)
    if together:
        # What is loaded already answers first; the rest load beside it.
        order = sorted(local, key=lambda i: i != main_index)
    else:
        # The shown branch's model runs last, so it is the one loaded when the compare ends
        # (a follow-up needs no load); before it, what is loaded already goes first.
        order = sorted(local, key=lambda i: (i == active, i != main_index))
    return ComparePlan(models, tuple(order), together, notice, active, blind)
