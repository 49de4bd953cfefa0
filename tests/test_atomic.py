"""faithprobe.atomic: a file is written whole or not at all, in one JSON format."""

from __future__ import annotations

import pytest

from faithprobe import atomic


def test_json_is_indented_keeps_non_ascii_and_writes_nan_as_null(tmp_path):
    path = tmp_path / "m.json"
    atomic.write_json(path, {"b": float("nan"), "a": ("é", 1.5)})
    assert path.read_bytes() == '{\n  "b": null,\n  "a": [\n    "é",\n    1.5\n  ]\n}\n'.encode()
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]


def test_an_error_while_writing_leaves_the_old_file_and_no_temporary_one(tmp_path):
    path = tmp_path / "items.jsonl"
    atomic.write_text(path, "old\n")
    with pytest.raises(RuntimeError), atomic.open_text(path) as f:
        f.write("half of the new\n")
        raise RuntimeError("killed")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["items.jsonl"]
