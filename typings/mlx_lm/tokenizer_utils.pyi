from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

class StreamingDetokenizer:
    text: str
    tokens: list[int]
    def reset(self) -> None: ...
    def add_token(self, token: int) -> None: ...
    def finalize(self) -> None: ...
    # The text since the last read (reading it moves the mark).
    @property
    def last_segment(self) -> str: ...

class _HFTokenizer:
    """The part of the wrapped transformers tokenizer (PreTrainedTokenizerFast) used here."""

    chat_template: str | dict[str, str] | None
    # A BatchEncoding: "input_ids" (ints) and, when asked for, "offset_mapping" (int pairs).
    def __call__(
        self,
        text: str,
        *,
        add_special_tokens: bool = True,
        return_offsets_mapping: bool = False,
        truncation: bool = False,
        max_length: int | None = None,
    ) -> Mapping[str, Any]: ...

class TokenizerWrapper:
    """mlx-lm's wrapper: its own members, and the transformers tokenizer's (`_tokenizer`),
    which it forwards by name; the forwarded ones used are declared here."""

    # Private to mlx-lm, and read by Branchwise all the same: the fast tokenizer's character
    # offsets have no public way through the wrapper (pyright does not flag a stub's private
    # names, so this comment is the flag).
    _tokenizer: _HFTokenizer
    has_chat_template: bool
    @property
    def detokenizer(self) -> StreamingDetokenizer: ...
    @property
    def eos_token_ids(self) -> set[int]: ...
    @property
    def has_thinking(self) -> bool: ...
    @property
    def think_start(self) -> str | None: ...
    @property
    def think_end(self) -> str | None: ...
    @property
    def response_transitions(self) -> dict[str, list[tuple[str, str]]]: ...
    @property
    def response_initial_state(self) -> str | None: ...
    # tokenize=False renders text; otherwise the text's token ids (no special tokens added).
    @overload
    def apply_chat_template(
        self, conversation: Sequence[Mapping[str, Any]], *, tokenize: Literal[False], **kwargs: Any
    ) -> str: ...
    @overload
    def apply_chat_template(
        self,
        conversation: Sequence[Mapping[str, Any]],
        *,
        tokenize: Literal[True] = True,
        **kwargs: Any,
    ) -> list[int]: ...
    # Forwarded to the transformers tokenizer.
    chat_template: str | dict[str, str] | None
    all_special_tokens: list[str]
    eos_token_id: int | None  # None: its tokenizer names no end-of-sequence token
    def get_vocab(self) -> dict[str, int]: ...
    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]: ...
    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = False) -> str: ...
