"""Indexing a folder: every format and every bad input in one folder (the bad ones listed with
their reasons, the rest searchable, nothing modified), then incremental runs that read only what
changed (a rename moves a document, unchanged chunks keep their vectors), a run that resumes
after a kill, a cancel, files that change or vanish while read, and a folder that goes away."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from app.knowledge import document_writer, scanning, sync
from app.knowledge.index import KnowledgeIndex
from app.knowledge.parsing import formats
from app.knowledge.parsing.blocks import Block
from app.knowledge.records import CollectionState, DocumentState, IndexPhase, SyncCancelled
from tests.app.knowledge.documents import (
    HashEmbedder,
    docx_bytes,
    encrypted_pdf_bytes,
    epub_bytes,
    pdf_bytes,
    write,
    zip_bomb_bytes,
)


def _tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` by path, with the digest of its bytes and its mtime."""
    return {
        str(path): f"{hashlib.sha256(path.read_bytes()).hexdigest()} {path.stat().st_mtime_ns}"
        for path in folder.rglob("*")
        if path.is_file() and not path.is_symlink()
    }


def test_a_folder_of_every_format_and_every_bad_input(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    folder = tmp_path / "docs"
    good = {
        "notes.md": "# Orchard\n\nThe quince tree flowers in May.\n",
        "plain.txt": "Sourdough wants a warm kitchen.\n",
        "code/tool.py": "def lighthouse():\n    return 'beacon'\n",
        "sheet.csv": "planet,moons\nJupiter,95\n",
        "data.json": '{"instrument": "theremin"}',
        "page.html": "<h1>Kites</h1><p>Kites need steady wind.</p><script>x()</script>",
        "paper.pdf": pdf_bytes(["Glaciers retreat", "Fjords remain"]),
        "report.docx": docx_bytes([("Berschrift1", "Saffron"), (None, "Crocus stigmas.")]),
        "book.epub": epub_bytes([("c.xhtml", "<p>The lamplighter walks at dusk.</p>")]),
    }
    bad = {
        "locked.pdf": (encrypted_pdf_bytes(["secret"], "pw"), "password-protected"),
        "cut.pdf": (pdf_bytes(["x" * 200])[:150], "cut short"),
        "scan.pdf": (pdf_bytes(["", ""]), "no text layer"),
        "corrupt.pdf": (b"%PDF-1.4\n" + os.urandom(300) + b"\n%%EOF", "readable PDF"),
        "bomb.docx": (zip_bomb_bytes("word/document.xml", 8 << 20), "zip bomb"),
        "fake.epub": (b"PK\x03\x04 not really a zip", "not a readable EPUB"),
        "image.txt": (b"\x89PNG\r\n\x1a\n\x00\x00IHDR" * 10, "binary"),
        "empty.md": (b"", "empty"),
    }
    for name, data in good.items():
        write(folder / name, data)
    for name, (data, _) in bad.items():
        write(folder / name, data)
    write(tmp_path / "outside" / "private.txt", "outside the folder")
    (folder / "out").symlink_to(tmp_path / "outside")
    (folder / "code" / "loop").symlink_to(folder)
    (folder / ".git").mkdir()
    write(folder / ".git" / "config.txt", "hidden")
    before = _tree(folder) | _tree(tmp_path / "outside")

    index.add("docs", folder)
    report = index.sync("docs")

    assert report.state is CollectionState.READY
    assert report.added == len(good) + len(bad)
    reasons = {Path(path).name: reason for path, reason in index.status("docs").failed}
    assert set(reasons) == set(bad)
    for name, (_, reason) in bad.items():
        assert reason in reasons[name], (name, reasons[name])
    assert {Path(p).name for p, _ in report.skipped} == {"out", "loop"}
    status = index.status("docs")
    assert status.files == len(good) and status.collection.embedding_model is None
    for query, name in [
        ("quince", "notes.md"), ("sourdough", "plain.txt"), ("lighthouse", "tool.py"),
        ("jupiter", "sheet.csv"), ("theremin", "data.json"), ("kites wind", "page.html"),
        ("fjords", "paper.pdf"), ("crocus", "report.docx"), ("lamplighter", "book.epub"),
    ]:  # fmt: skip
        hits = index.search(["docs"], query, k=1)
        assert hits and Path(hits[0].path).name == name, query
    assert index.search(["docs"], "outside") == [] and index.search(["docs"], "hidden") == []
    assert index.search(["docs"], "x()") == [], "scripts are not text"
    pdf_hit = index.search(["docs"], "fjords")[0]
    assert pdf_hit.page == 2 and pdf_hit.path == str(folder / "paper.pdf")
    assert _tree(folder) | _tree(tmp_path / "outside") == before, "files are only read"


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    original = formats.document_blocks

    def counting(path: Path, kind: formats.Format) -> Iterator[Block]:
        read.append(path.name)
        return original(path, kind)

    monkeypatch.setattr(document_writer, "document_blocks", counting)
    return read


def _vectors(index: KnowledgeIndex) -> dict[str, bytes]:
    with closing(sqlite3.connect(index.path)) as conn:
        return dict(
            conn.execute(
                "SELECT c.text, v.vector FROM chunks AS c JOIN vectors AS v ON v.chunk = c.id"
            ).fetchall()
        )


def test_only_what_changed_is_read_and_unchanged_chunks_keep_their_vectors(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "notes"
    long_note = "".join(f"Paragraph {n} about comets and their tails.\n\n" * 8 for n in range(20))
    write(folder / "long.md", long_note)
    write(folder / "keep.txt", "Stays the same.")
    write(folder / "move.txt", "Will be renamed: nebula.")
    write(folder / "gone.txt", "Will be deleted: quasar.")
    embedder = HashEmbedder()
    index.add("notes", folder)
    index.sync("notes", embedder=embedder)
    first = set(embedder.embedded)
    vectors_before = dict(
        index._db()
        .execute("SELECT c.text, v.vector FROM chunks AS c JOIN vectors AS v ON v.chunk = c.id")
        .fetchall()
    )
    read = _count_reads(monkeypatch)
    embedder.embedded.clear()

    write(folder / "long.md", long_note + "A new closing paragraph about meteors.\n")
    (folder / "move.txt").rename(folder / "moved.txt")
    (folder / "gone.txt").unlink()
    os.utime(folder / "keep.txt", ns=(1, 1))  # touched: same bytes, new time
    write(folder / "new.txt", "A new file: pulsar.")
    report = index.sync("notes", embedder=embedder)

    assert (report.added, report.changed, report.renamed, report.removed) == (1, 1, 1, 1)
    assert report.unchanged == 1
    assert sorted(read) == ["long.md", "new.txt"], "only new and changed files are read"
    assert embedder.embedded and not set(embedder.embedded) & first, "unchanged chunks kept"
    vectors_after = dict(
        index._db()
        .execute("SELECT c.text, v.vector FROM chunks AS c JOIN vectors AS v ON v.chunk = c.id")
        .fetchall()
    )
    kept = set(vectors_before) & set(vectors_after)
    assert len(kept) >= 3 and all(vectors_before[t] == vectors_after[t] for t in kept)
    assert index.status("notes").embedded_chunks == index.status("notes").chunks
    paths = {Path(d.path).name for d in index.documents("notes")}
    assert paths == {"long.md", "keep.txt", "moved.txt", "new.txt"}
    assert Path(index.search(["notes"], "nebula")[0].path).name == "moved.txt"
    assert index.search(["notes"], "quasar") == []
    read.clear()
    assert index.sync("notes", embedder=embedder).unchanged == 4 and read == []


def test_a_killed_run_resumes_after_the_last_finished_file(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "many"
    for n in range(6):
        write(folder / f"f{n}.txt", f"File number {n} mentions aardvark{n}.")
    index.add("many", folder)
    read = _count_reads(monkeypatch)
    original = sync.write_document

    def killed_at_the_fourth(*args: Any) -> document_writer.Written:
        if len(read) == 3:
            raise KeyboardInterrupt  # as a kill mid-file: its transaction never commits
        return original(*args)

    monkeypatch.setattr(sync, "write_document", killed_at_the_fourth)
    with pytest.raises(KeyboardInterrupt):
        index.sync("many")
    assert index.collection("many").state is CollectionState.INDEXING
    assert len(index.documents("many")) == 3
    monkeypatch.setattr(sync, "write_document", original)
    read.clear()
    report = index.sync("many")
    assert read == ["f3.txt", "f4.txt", "f5.txt"] and report.unchanged == 3
    assert index.status("many").files == 6
    assert index.collection("many").state is CollectionState.READY


def test_a_cancel_stops_between_files_and_keeps_what_was_read(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "many"
    for n in range(5):
        write(folder / f"f{n}.txt", f"Text {n}.")
    index.add("many", folder)
    cancel = threading.Event()
    read = _count_reads(monkeypatch)
    original = sync.write_document

    def cancelled_after_the_second(*args: Any) -> document_writer.Written:
        if len(read) == 1:
            cancel.set()  # asked while the second file is read: it is finished first
        return original(*args)

    monkeypatch.setattr(sync, "write_document", cancelled_after_the_second)
    with pytest.raises(SyncCancelled):
        index.sync("many", cancel=cancel)
    assert [Path(d.path).name for d in index.documents("many")] == ["f0.txt", "f1.txt"]
    assert index.sync("many").added == 3


def test_files_that_change_or_vanish_while_read(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "live"
    write(folder / "changing.txt", "First version.\n\nSecond paragraph.")
    write(folder / "vanishing.txt", "Here for a moment.")
    index.add("live", folder)
    original = formats.document_blocks

    def meddling(path: Path, kind: formats.Format) -> Iterator[Block]:
        for number, block in enumerate(original(path, kind)):
            if number == 0 and path.name == "changing.txt":
                write(path, "A longer second version, written while it was read.")
            yield block

    def vanishing(path: str, cancel: threading.Event) -> str:
        if path.endswith("vanishing.txt"):
            os.unlink(path)
        return original_hash(path, cancel)

    original_hash = document_writer.file_sha256
    monkeypatch.setattr(document_writer, "document_blocks", meddling)
    monkeypatch.setattr(sync, "file_sha256", vanishing)
    report = index.sync("live")
    assert report.failed == ((str(folder / "changing.txt"), document_writer.CHANGED_WHILE_READ),)
    [changing] = index.documents("live")
    assert changing.state is DocumentState.FAILED
    monkeypatch.undo()
    report = index.sync("live")
    assert report.changed == 1 and index.search(["live"], "longer version")


def test_a_folder_that_goes_away_keeps_its_index_and_comes_back(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    folder = tmp_path / "disk" / "papers"
    write(folder / "a.txt", "Albatross flight.")
    index.add("papers", folder)
    index.sync("papers")
    (tmp_path / "disk").rename(tmp_path / "unplugged")
    report = index.sync("papers")
    assert report.state is CollectionState.OFFLINE and report.removed == 0
    assert index.collection("papers").state is CollectionState.OFFLINE
    assert index.search(["papers"], "albatross"), "an offline folder is still searched"
    (tmp_path / "unplugged").rename(tmp_path / "disk")
    report = index.sync("papers")
    assert report.state is CollectionState.READY and report.unchanged == 1


def test_progress_counts_files_and_chunks_and_ends_done(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    folder = tmp_path / "p"
    for n in range(3):
        write(folder / f"{n}.md", f"# Part {n}\n\nBody {n}.\n")
    index.add("p", folder)
    seen = []
    index.sync("p", embedder=HashEmbedder(), progress=seen.append)
    phases = [update.phase for update in seen]
    assert phases[0] is IndexPhase.SCANNING and phases[-1] is IndexPhase.DONE
    assert IndexPhase.READING in phases and IndexPhase.EMBEDDING in phases
    last = seen[-1]
    assert (last.files_done, last.files_total, last.chunks, last.failures) == (3, 3, 3, 0)
    assert (last.embedded, last.to_embed, last.seconds_left) == (3, 3, 0.0)


def test_what_a_folder_that_cannot_be_listed_held_is_kept(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    write(folder / "open" / "a.txt", "Anemones.")
    write(folder / "locked" / "b.txt", "Barnacles.")
    index.add("docs", folder)
    index.sync("docs")
    listing = os.scandir

    def refused(path: str) -> Any:
        if path.endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return listing(path)

    monkeypatch.setattr(scanning.os, "scandir", refused)
    report = index.sync("docs")
    assert report.removed == 0 and report.skipped == (
        (str(folder / "locked"), "Could not be listed: Permission denied."),
    )
    assert index.search(["docs"], "barnacles"), "kept while its folder cannot be listed"
