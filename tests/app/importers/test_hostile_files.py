"""Hostile inputs get a clear refusal and nothing else: zip entries that climb out or are
links, zip bombs, deep nesting, wrong types in a conversation's tree, files that are not
exports. A wrong type in a field the tree does not need is left out with a warning instead."""

from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path

import pytest

from app.importers import run, sources
from app.importers.errors import ImportRefusedError
from app.importers.sources import open_source
from tests.app.importers.helpers import conversations, refusals, write_json
from tests.app.importers.samples import chatgpt_conversation


def _zip(path: Path, entries: dict[str, bytes], link: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        if link is not None:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return path


GOOD = json.dumps([chatgpt_conversation()]).encode()


@pytest.mark.parametrize(
    "name", ["../evil.json", "/abs/evil.json", "a/../../evil.json", "C:/evil.json", "..\\evil.json"]
)
def test_entries_pointing_outside_the_archive_are_refused(tmp_path: Path, name: str) -> None:
    path = _zip(tmp_path / "x.zip", {"conversations.json": GOOD, name: b"{}"})
    with pytest.raises(ImportRefusedError, match="points outside the archive"):
        open_source(path)


def test_a_link_entry_is_refused(tmp_path: Path) -> None:
    path = _zip(tmp_path / "x.zip", {"conversations.json": GOOD}, link="file-abc-link.png")
    with pytest.raises(ImportRefusedError, match="is a link"):
        open_source(path)


def test_a_zip_bomb_is_refused_by_its_ratio(tmp_path: Path) -> None:
    path = _zip(tmp_path / "x.zip", {"conversations.json": b"[" + b" " * 20_000_000 + b"]"})
    with pytest.raises(ImportRefusedError, match="zip bomb"):
        open_source(path)


def test_a_zip_bomb_is_refused_by_its_total_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sources, "MAX_TOTAL_BYTES", 1000)
    path = _zip(tmp_path / "x.zip", {"a.json": b"1" * 600, "b.json": b"2" * 600})
    with pytest.raises(ImportRefusedError, match="unpacks to more than"):
        open_source(path)


def test_a_link_in_a_folder_is_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    write_json(folder / "conversations.json", [chatgpt_conversation()])
    secret = write_json(tmp_path / "outside.json", [chatgpt_conversation()])
    (folder / "file-AbC123-cat.png").symlink_to(secret)
    with open_source(folder) as source:
        assert [m.name for m in source.members] == ["conversations.json"]


def test_deep_nesting_is_refused_without_exhausting_memory(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(b'[{"mapping": ' + b"[" * 200_000 + b"]" * 200_000 + b"}]")
    report = run.import_paths([path], None, dry_run=True)
    (item,) = report.inputs
    assert item.failed
    assert "nests deeper than" in (item.error or "")


@pytest.mark.parametrize(
    "where, value",
    [
        (("mapping", "u1", "message", "author", "role"), {"x": 1}),
        (("mapping", "u1", "message", "content", "parts"), "not a list"),
        (("mapping", "u1", "parent"), ["a"]),
        (("mapping", "th1", "message", "content", "thoughts"), [7]),
    ],
)
def test_a_wrong_type_in_the_tree_refuses_that_conversation_only(
    tmp_path: Path, where: tuple[str, ...], value: object
) -> None:
    path = _with_one_damaged(tmp_path, where, value)
    assert [c.source_id for c in conversations(path)] == ["ok"]
    (refused,) = refusals(path)
    assert refused.where == "c.json, entry 1" and "must be" in refused.reason


@pytest.mark.parametrize(
    "where, value, said",
    [
        (("mapping", "a1", "message", "create_time"), [1], "node a1.create_time is not a time"),
        (("title",), 5, "title must be text, not a int"),
    ],
)
def test_a_wrong_type_in_a_field_the_tree_does_not_need_is_left_out_with_a_warning(
    tmp_path: Path, where: tuple[str, ...], value: object, said: str
) -> None:
    path = _with_one_damaged(tmp_path, where, value)
    damaged, ok = conversations(path)
    assert [m.content for m in damaged.messages] == [m.content for m in ok.messages]
    assert any(said in w and w.endswith("it was left out.") for w in damaged.warnings)
    assert not refusals(path)


def _with_one_damaged(tmp_path: Path, where: tuple[str, ...], value: object) -> Path:
    """An export of two ChatGPT conversations, the first with `value` at `where`."""
    bad = chatgpt_conversation()
    target = bad
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    return write_json(
        tmp_path / "c.json", [bad, {**chatgpt_conversation(), "id": "ok", "conversation_id": "ok"}]
    )


@pytest.mark.parametrize("content", [b"", b"\x00\x01binary", b"{}", b"[1, 2, 3]", b"not json"])
def test_files_that_are_not_exports_are_refused_clearly(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "thing.json"
    path.write_bytes(content)
    report = run.import_paths([path], None, dry_run=True)
    (item,) = report.inputs
    assert item.failed and "no conversations of a known app" in (item.error or "")


def test_a_missing_path_is_an_unreadable_input(tmp_path: Path) -> None:
    report = run.import_paths([tmp_path / "nope.zip"], None, dry_run=True)
    assert report.inputs[0].failed and "does not exist" in (report.inputs[0].error or "")


def test_a_damaged_zip_is_refused(tmp_path: Path) -> None:
    path = _zip(tmp_path / "x.zip", {"conversations.json": GOOD * 20})
    data = bytearray(path.read_bytes())
    data[60:400] = b"\x00" * 340  # inside the compressed member
    path.write_bytes(bytes(data))
    report = run.import_paths([path], None, dry_run=True)
    (item,) = report.inputs
    assert item.failed or any(o.status == "refused" for o in item.outcomes)
