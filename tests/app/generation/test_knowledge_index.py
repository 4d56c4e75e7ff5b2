"""The app's knowledge index as chats and the server read it (`IndexKnowledge`): nothing opened
while there is no index file; one connection per thread; the same question gives the same
excerpts on any thread (so a served request repeated renders the same prompt and is cached);
a removed folder named by a chat is skipped; a file changed or deleted since shows in the
digests a turn's sources are compared with; the documents listed and read whole for the tools."""

from __future__ import annotations

import threading
from pathlib import Path

from app.generation.knowledge_index import IndexKnowledge
from app.knowledge.index import KnowledgeIndex
from tests.app.knowledge.documents import write


def _words(text: str) -> int:
    return len(text.split())


def test_the_index_as_the_chat_reads_it(tmp_path: Path) -> None:
    database = tmp_path / "data" / "knowledge.db"
    base = IndexKnowledge(database)
    assert base.collection_names() == [] and not database.exists()  # nothing made, nothing read
    folder = tmp_path / "kb"
    write(folder / "seine.md", "# Rivers\n\nThe Seine runs through Paris.\n\nIt is 777 km long.")
    write(folder / "tiber.md", "The Tiber runs through Rome, the capital of Italy.")
    with KnowledgeIndex.open(database) as index:
        index.add("Rivers", folder)
        index.sync("Rivers")
    assert base.collection_names() == ["Rivers"]

    def ask() -> tuple:
        found = base.retrieve(
            ["Gone", "Rivers"], "Which river runs through Paris?", "", 200, _words
        )
        return found.collections, found.excerpts

    here = ask()
    there: list[tuple] = []
    thread = threading.Thread(target=lambda: there.append(ask()))  # as the worker asks
    thread.start()
    thread.join()
    assert there == [here] and here == ask()  # the same index, the same excerpts, anywhere
    collections, excerpts = here
    assert collections == ("Rivers",)  # a folder removed since is skipped, not an error
    assert Path(excerpts[0].path).name == "seine.md"
    seine, tiber = str(folder / "seine.md"), str(folder / "tiber.md")
    before = base.current_digests([seine, tiber, "/elsewhere.md"])
    assert before == {seine: excerpts[0].document_sha256, tiber: before[tiber]}

    listed = base.documents(["Rivers"])
    assert [(d.collection, Path(d.path).name) for d in listed] == [
        ("Rivers", "seine.md"),
        ("Rivers", "tiber.md"),
    ]
    (whole,) = base.document_excerpts(["Rivers"], tiber)
    assert whole.text == "The Tiber runs through Rome, the capital of Italy."

    write(folder / "seine.md", "The Seine is long.")
    (folder / "tiber.md").unlink()
    with KnowledgeIndex.open(database) as index:
        index.sync("Rivers")
    after = base.current_digests([seine, tiber])
    assert set(after) == {seine} and after[seine] != before[seine]  # changed since; gone
