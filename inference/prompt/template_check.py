"""Check a model's chat template by rendering a short conversation under a time limit.

A chat template is a Jinja program shipped with the model (tokenizer_config.json, a
chat_template.jinja file or a GGUF's `tokenizer.chat_template`), and the app runs it for every
reply. Jinja's sandbox stops it from reaching the system but not from looping: nested loops over
`range(100000)` run for hours, and the inference worker would hang with them. So before a model
joins the library its template renders a three-message conversation; one that raises, runs past
TEMPLATE_LIMIT_S or writes an absurd amount of text refuses the model, naming the template.

The limit is a trace function that checks the clock at every line the template (compiled to
Python by Jinja) runs, so it works on any thread; the import runs in a child process that the app
stops anyway if something native hangs (app/isolated.py).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from inference.errors import ModelLoadError

if TYPE_CHECKING:
    from mlx_lm.tokenizer_utils import TokenizerWrapper

TEMPLATE_LIMIT_S = 3.0
# A sample conversation renders to a few hundred characters; a million means a runaway loop.
MAX_RENDERED_CHARS = 1_000_000
SAMPLE_CONVERSATION = (
    {"role": "user", "content": "Hello! What can you do?"},
    {"role": "assistant", "content": "I can answer questions and help you write."},
    {"role": "user", "content": "Tell me a short fact about the sea."},
)
_TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")


class _OutOfTime(BaseException):
    """Raised inside the template: a BaseException, so Jinja's `except Exception` lets it by."""


def template_source(folder: Path) -> str:
    """Where the folder's chat template comes from, for messages (transformers' order)."""
    for name in _TEMPLATE_FILES:
        if (folder / name).is_file():
            return name
    return "tokenizer_config.json"


def check_folder_template(folder: Path, name: str | None = None, source: str | None = None) -> None:
    """Load the folder's tokenizer as the app will and check its chat template.

    Messages call the model `name` (default: the folder's) and the template's origin `source`
    (default: the folder's file that holds it)."""
    from mlx_lm.utils import load_tokenizer

    name = name or folder.name
    try:
        tokenizer = load_tokenizer(folder)
    except BaseException as error:  # tokenizers' Rust panics are BaseExceptions
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        raise ModelLoadError(
            f"The tokenizer of {name} cannot be loaded: {error or type(error).__name__}"
        ) from error
    source = source or template_source(folder)
    check_template(tokenizer, f"The chat template of {name} (in {source})")


def check_template(
    tokenizer: TokenizerWrapper, where: str, limit_s: float = TEMPLATE_LIMIT_S
) -> None:
    """Render SAMPLE_CONVERSATION with the tokenizer's template within `limit_s`.

    `where` begins the message ("The chat template of X (in tokenizer_config.json)"). A tokenizer
    without a template passes: there is nothing to run (chat then reports the missing template).
    """
    if not tokenizer.has_chat_template:
        return
    try:
        with _time_limit(limit_s):
            text = tokenizer.apply_chat_template(
                [dict(message) for message in SAMPLE_CONVERSATION],
                add_generation_prompt=True,
                tokenize=False,
            )
    except _OutOfTime:
        raise ModelLoadError(
            f"{where} did not finish rendering a three-message conversation within "
            f"{limit_s:g} seconds (it loops too long), so the model cannot be used."
        ) from None
    except Exception as error:  # Jinja and transformers raise many kinds; all mean the same here.
        raise ModelLoadError(
            f"{where} fails on a plain three-message conversation: {error}"
        ) from error
    # Text for certain: a Jinja render is text, and no Python from the folder ever runs.
    if len(text) > MAX_RENDERED_CHARS:
        raise ModelLoadError(
            f"{where} turns a three-message conversation into {len(text):,} characters; it is "
            "broken or hostile."
        )


@contextmanager
def _time_limit(seconds: float) -> Generator[None]:
    """Raise _OutOfTime in the code running on this thread once `seconds` have passed."""
    deadline = time.monotonic() + seconds

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise _OutOfTime
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        yield
    finally:
        sys.settrace(previous)
