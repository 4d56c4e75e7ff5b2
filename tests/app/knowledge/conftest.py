"""An index in a temporary folder, opened for the test's thread."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.index import KnowledgeIndex


@pytest.fixture
def index(tmp_path: Path) -> Iterator[KnowledgeIndex]:
    with KnowledgeIndex.open(tmp_path / "data" / "knowledge.db") as opened:
        yield opened
