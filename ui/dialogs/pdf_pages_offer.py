"""The offer made when a scanned PDF (no text layer) is attached: its pages as images, from a
first to a last page, with what a page costs the loaded model and what the range costs in all,
so a person sees the price before fifty pictures land in the draft."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.chat.image_attach import ScannedPdf
from app.images.pdf_pages import MAX_PAGES
from ui.text.plain_text import plain_label
from ui.widgets.theme import em

ATTACH_TEXT = "Attach Pages as Images"


def _pages(count: int) -> str:
    return f"{count:,} page{'s' if count != 1 else ''}"


class PdfPagesOffer(QDialog):
    """Accepted: attach pages `first()` to `last()` of `offer` as image chips."""

    def __init__(self, offer: ScannedPdf, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.offer = offer
        self.setObjectName("PdfPagesOffer")
        self.setWindowTitle(ATTACH_TEXT)
        self.setAccessibleName(ATTACH_TEXT)
        intro = plain_label(
            f"{offer.name} has no text layer: it is a scanned document, so there is no text "
            "to read. Its pages can be attached as images instead, which the model reads as it "
            "reads any picture."
        )
        intro.setWordWrap(True)
        facts = plain_label(f"{_pages(offer.pages)} · ≈ {offer.page_tokens:,} tokens a page")
        facts.setObjectName("PreferencesHint")
        self.first_page = QSpinBox()
        self.first_page.setAccessibleName("First page")
        self.last_page = QSpinBox()
        self.last_page.setAccessibleName("Last page")
        for box in (self.first_page, self.last_page):
            box.setRange(1, offer.pages)
            box.setSuffix(f" of {offer.pages:,}")
        self.last_page.setValue(offer.most)
        self.total = QLabel()
        self.total.setObjectName("PreferencesHint")
        self.total.setWordWrap(True)
        form = QFormLayout()
        # A page number needs a few digits, not the dialog's width.
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("First page", self.first_page)
        form.addRow("Last page", self.last_page)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.attach_button = self.buttons.addButton(
            ATTACH_TEXT, QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.attach_button.setAccessibleName("Attach pages as images")
        self.attach_button.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setSpacing(em(self, 0.6))
        layout.addWidget(intro)
        layout.addWidget(facts)
        layout.addLayout(form)
        layout.addWidget(self.total)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(em(self, 28))
        self.first_page.valueChanged.connect(self._show_total)
        self.last_page.valueChanged.connect(self._show_total)
        self._show_total()

    def first(self) -> int:
        return self.first_page.value()

    def last(self) -> int:
        return self.last_page.value()

    @Slot()
    def _show_total(self) -> None:
        """What the range costs, or why it cannot be attached (the button then waits)."""
        count = self.last() - self.first() + 1
        if count < 1:
            problem = "The last page comes before the first."
        elif count > MAX_PAGES:
            problem = f"At most {MAX_PAGES} pages can be attached at once; this is {count:,}."
        else:
            problem = ""
        self.attach_button.setEnabled(not problem)
        self.total.setText(
            problem
            or (
                f"{_pages(count)} as {count:,} image{'s' if count != 1 else ''}, "
                f"≈ {count * self.offer.page_tokens:,} tokens in all"
            )
        )
