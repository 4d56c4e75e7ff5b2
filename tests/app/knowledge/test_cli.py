"""`branchwise knowledge` from end to end, through the `branchwise` command's own dispatch: add
(progress on stderr), status, list and search as JSON, sync, remove (the files stay), and one
line with a non-zero exit on a refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.knowledge.builtin_embedder import load_builtin_embedder
from tests.app.knowledge.documents import pdf_bytes, write
from ui.entry import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["knowledge", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_add_status_search_list_sync_remove(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "Field notes"
    write(folder / "birds.md", "# Birds\n\nThe heron waits at the river bank.\n")
    write(folder / "trip.pdf", pdf_bytes(["Day one: rain.", "Day two: a kingfisher."]))
    write(folder / "scan.pdf", pdf_bytes([""]))
    data = ["--data-dir", str(tmp_path / "data")]

    code, out, err = _run(capsys, "add", str(folder), *data)
    assert code == 0 and "Field notes: ready; 3 added" in out
    assert "Reading" in err or "Done" in err, "progress on stderr"

    code, out, _ = _run(capsys, "status", "Field notes", "--json", *data)
    status = json.loads(out)
    assert status == {
        "files": 2,
        "chunks": 3,
        "failed": [{"path": str(folder / "scan.pdf"), "reason": status["failed"][0]["reason"]}],
        # The built-in embedding model is the default (app.knowledge.embedder.DEFAULT_EMBEDDER).
        "embedding_model": load_builtin_embedder().model_id,
    }
    assert "no text layer" in status["failed"][0]["reason"]

    code, out, _ = _run(capsys, "search", "Field notes", "kingfisher", "-k", "5", "--json", *data)
    # Best first; the vectors (fused with BM25 by default) rank the other chunks below it.
    hit, *others = hits = json.loads(out)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert all("kingfisher" not in h["text"] for h in others)
    assert hit["path"] == str(folder / "trip.pdf") and hit["page"] == 2
    assert hit["text"].strip() == "Day two: a kingfisher." and hit["end"] > hit["start"] >= 0
    assert set(hit) == {"path", "page", "start", "end", "text", "score"}

    write(folder / "more.txt", "An otter at dawn.")
    code, out, _ = _run(capsys, "sync", "Field notes", *data)
    assert code == 0 and "1 added" in out and "3 unchanged" in out

    code, out, _ = _run(capsys, "list", "--json", *data)
    [listed] = json.loads(out)
    assert listed["name"] == "Field notes" and listed["files"] == 3 and listed["state"] == "ready"

    code, out, _ = _run(capsys, "remove", "Field notes", *data)
    assert code == 0 and (folder / "birds.md").exists() and (folder / "more.txt").exists()
    assert json.loads(_run(capsys, "list", "--json", *data)[1]) == []


def test_refusals_are_one_line_and_a_failing_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    code, out, err = _run(capsys, "status", "Nowhere", *data)
    assert (code, out) == (1, "")
    assert err == "branchwise knowledge status: There is no knowledge folder named 'Nowhere'.\n"
    code, _, err = _run(capsys, "add", str(tmp_path / "missing"), *data)
    assert code == 1 and err.count("\n") == 1 and "does not exist" in err
    write(tmp_path / "a" / "x.txt", "x")
    assert _run(capsys, "add", str(tmp_path / "a"), "--name", "A", *data)[0] == 0
    code, _, err = _run(capsys, "add", str(tmp_path / "a"), "--name", "A", *data)
    assert code == 1 and "already a knowledge folder named 'A'" in err
    code, _, err = _run(capsys, "search", "A", "x", "-k", "0", *data)
    assert code == 1 and "at least 1" in err
    with pytest.raises(SystemExit) as usage:
        main(["knowledge", "frobnicate"])
    assert usage.value.code == 2
