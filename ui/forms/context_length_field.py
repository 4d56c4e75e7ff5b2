"""A chat's context length: how many tokens of the conversation the model reads at most, prompt
and reply together. Empty ("model's maximum") leaves it to the model; a smaller limit keeps
replies faster and memory lower, and the chat's overflow policy acts there."""

from __future__ import annotations

from PySide6.QtWidgets import QSpinBox, QWidget

from app.settings import MIN_CONTEXT_LENGTH

MODELS_MAXIMUM = "model's maximum"
_LARGEST = 10_000_000
_TIP = (
    "The most tokens the model reads, prompt and reply together; less is faster and takes "
    "less memory"
)


class ContextLengthField(QSpinBox):
    def __init__(self, limit: object, parent: QWidget | None = None) -> None:
        """`limit` is the chat's "context_length" param (None: the model's maximum)."""
        super().__init__(parent)
        self.setRange(0, _LARGEST)
        self.setSpecialValueText(MODELS_MAXIMUM)
        self.setSingleStep(1024)
        self.setGroupSeparatorShown(True)
        self.setSuffix(" tokens")
        self.setToolTip(_TIP)
        self.set_limit(limit)

    def set_limit(self, limit: object) -> None:
        """Show a chat's limit; one that is not a whole number of tokens shows as the model's
        maximum (which is what the engine would refuse it for)."""
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            self.setValue(min(limit, _LARGEST))
        else:
            self.setValue(0)

    def limit(self) -> int | None:
        return self.value() or None

    def problem(self) -> str | None:
        """Why the limit shown cannot be used, or None."""
        value = self.value()
        if 0 < value < MIN_CONTEXT_LENGTH:
            return (
                f"A chat's context length must be at least {MIN_CONTEXT_LENGTH} tokens, or "
                f"“{MODELS_MAXIMUM}” (0)."
            )
        return None

    @staticmethod
    def hint(model_name: str | None, model_context: int | None) -> str:
        """The row's explanation, with the chosen model's own maximum when it is known."""
        if model_context and model_name:
            return f"{_TIP}. {model_name} reads up to {model_context:,} tokens."
        return f"{_TIP}."
