"""Path arguments checked in one place (:mod:`faithprobe.paths`): a name or path too long,
``~user`` unknown, a folder where a file goes, a file (or FIFO) where a folder goes,
unreadable or unwritable; each refused in one line naming the option, nothing written.
Every output file follows ``--out``'s ownership rule, ``--markdown`` included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_corpus import refused
from faithprobe import paths
from faithprobe.cli import app
from faithprobe.errors import UsageError
from faithprobe.paths import NAME_MAX, PATH_MAX, Kind, PathProblem, checked, usable
from test_audit import _effect, _hand_made

runner = CliRunner()
LONG_NAME = "n" * (NAME_MAX + 1)
LONG_PATH = "/".join(["d" * 200] * (PATH_MAX // 200 + 1))
ROOT = os.geteuid() == 0
SQUAD = Path(paths.__file__).parent / "catalog" / "samples" / "squad" / "dev-v1.1.json"
FAITHFULNESS = [
    "run",
    "faithfulness",
    "--model",
    "ref:reader",
    "--data",
    str(SQUAD),
    "--limit",
    "2",
]  # root reads and writes through permissions


@pytest.mark.parametrize("kind", list(Kind))
@pytest.mark.parametrize(
    ("text", "words"),
    [
        (LONG_NAME, f"a name of {NAME_MAX + 1} bytes"),
        (LONG_PATH, "the file system takes"),
        ("~nosuchuser46/m", "cannot expand ~nosuchuser46"),
        ("a\0b", "NUL"),
    ],
)
def test_no_file_could_be_there(kind, text, words):
    with pytest.raises(PathProblem, match=words):
        usable(text, kind)


def test_each_kind_refuses_the_wrong_thing(tmp_path):
    file, folder, fifo = tmp_path / "f.txt", tmp_path / "d", tmp_path / "pipe"
    file.write_text("x")
    folder.mkdir()
    os.mkfifo(fifo)
    wrong = [
        (file, Kind.READ_FOLDER, "is a file, not a folder"),
        (file, Kind.WRITE_FOLDER, "is a file, not a folder"),
        (folder, Kind.READ_FILE, "is a folder, not a file"),
        (folder, Kind.WRITE_FILE, "is a folder, not a file"),
        (file / "below", Kind.WRITE_FILE, "is a file, not a folder"),
        (file / "below", Kind.WRITE_FOLDER, "is a file, not a folder"),
        *((fifo, kind, "not") for kind in Kind),  # a FIFO would hang a reader
    ]
    for path, kind, words in wrong:
        with pytest.raises(UsageError, match=f"^--x .*: .*{words}"):
            checked(path, "--x", kind)
    for path, kinds in [
        (file, (Kind.READ_FILE, Kind.READ_ANY, Kind.WRITE_FILE)),
        (folder, (Kind.READ_FOLDER, Kind.READ_ANY, Kind.WRITE_FOLDER)),
        (tmp_path / "new" / "deeper", tuple(Kind)),  # absent: made, or said by the command
    ]:
        for kind in kinds:
            assert checked(path, "--x", kind) == path
    assert checked("~/x", "--x", Kind.READ_ANY) == (type(file)(os.path.expanduser("~")) / "x")


def test_unreadable_and_unwritable_are_refused(tmp_path, monkeypatch):
    if ROOT:  # root reads and writes through permissions: the system says no as it would
        monkeypatch.setattr(
            paths.os, "access", lambda p, mode: "locked" not in str(p) and "secret" not in str(p)
        )
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    (tmp_path / "secret").write_text("x")
    os.chmod(tmp_path / "secret", 0)
    os.chmod(locked, 0o500)
    try:
        for path, kind, words in [
            (tmp_path / "secret", Kind.READ_FILE, "cannot be read"),
            (locked, Kind.WRITE_FOLDER, "cannot write in"),
            (locked / "new", Kind.WRITE_FOLDER, "cannot write in"),
            (locked / "f", Kind.WRITE_FILE, "cannot write in"),
        ]:
            with pytest.raises(UsageError, match=words):
                checked(path, "--x", kind)
    finally:
        os.chmod(locked, 0o700)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["run", "distractors", "--model", "ref:reader", "--data", LONG_NAME], "--data"),
        (["run", "distractors", "--model", "ref:reader", "--out", LONG_NAME], "--out"),
        (["run", "distractors", "--model", "ref:reader", "--cache-dir", LONG_PATH], "--cache-dir"),
        (["run", "distractors", "--model", LONG_NAME], "--model"),
        (["run", "distractors", "--model", "~nosuchuser46/m"], "--model"),
        (["run", "distractors", "--model", f"gguf:{LONG_NAME}.gguf"], "--model"),
        (["audit", "--model", "ref:reader", "--data-dir", LONG_NAME], "--data-dir"),
        (["audit", "--compare", "a", "b", "--markdown", LONG_NAME], "--markdown"),
        (["data", "fetch", "squad", "--to", LONG_NAME], "--to"),
        (["generate", "distractors", "--out", "~nosuchuser46/x.jsonl"], "--out"),
        (["report", LONG_NAME], "run_dirs"),
        ([*FAITHFULNESS, "-o", "heldout_of=~nosuchuser46/m"], "heldout_of"),
        ([*FAITHFULNESS, "-o", f"heldout_of={LONG_NAME}"], "heldout_of"),
    ],
)
def test_every_path_option_refuses_a_path_no_file_could_have(tmp_path, monkeypatch, args, option):
    monkeypatch.chdir(tmp_path)
    refused(args, watch=[tmp_path], expect=[option])


@pytest.mark.parametrize("variable", ["FAITHPROBE_DATA", "FAITHPROBE_CACHE_DIR"])
def test_an_environment_folder_that_is_a_file_or_too_long_is_refused(tmp_path, variable):
    (tmp_path / "afile").write_text("x")
    args = ["data", "list"] if variable == "FAITHPROBE_DATA" else ["generate", "distractors"]
    if variable == "FAITHPROBE_CACHE_DIR":  # read when a run opens its answer cache
        args = ["run", "distractors", "--model", "ref:reader", "--limit", "2",
                "--out", str(tmp_path / "run")]  # fmt: skip
    for value, words in [(str(tmp_path / "afile"), "is a file, not a folder"), (LONG_NAME, "")]:
        refused(args, watch=[tmp_path], expect=[f"${variable}", words], env={variable: value})


def test_markdown_replaces_only_a_comparison_faithprobe_wrote(tmp_path):
    old = _hand_made(tmp_path / "old", "m-v1", [_effect("m-v1", "e", 0.05, 0.0, 0.08)])
    new = _hand_made(tmp_path / "new", "m-v2", [_effect("m-v2", "e", 0.3, 0.2, 0.4)])
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    compare = ["audit", "--compare", str(old), str(new), "--markdown"]
    line = refused([*compare, str(notes)], watch=[tmp_path], expect=["--markdown", "--force"])
    assert "not a file faithprobe wrote" in line
    assert notes.read_text() == "my notes\n"
    refused([*compare, str(tmp_path)], watch=[tmp_path], expect=["is a folder, not a file"])
    ours = tmp_path / "pr.md"
    for _ in range(2):  # written, then replaced: it is ours
        assert runner.invoke(app, [*compare, str(ours)]).exit_code == 0
        assert ours.read_text().startswith("### faithprobe: ")
    assert runner.invoke(app, [*compare, str(notes), "--force"]).exit_code == 0
    assert notes.read_text().startswith("### faithprobe: ")


def test_markdown_into_a_folder_not_made_yet_is_written_and_one_not_writable_refused_first(
    tmp_path, monkeypatch
):
    """As generate --out, the folders on the way are made (the comparison used to be
    printed, then the write failed); a folder this process may not write in is refused
    before the audits are read."""
    old = _hand_made(tmp_path / "old", "m-v1", [_effect("m-v1", "e", 0.05, 0.0, 0.08)])
    new = _hand_made(tmp_path / "new", "m-v2", [_effect("m-v2", "e", 0.3, 0.2, 0.4)])
    target = tmp_path / "nofolder" / "deeper" / "c.md"
    res = runner.invoke(app, ["audit", "--compare", str(old), str(new), "--markdown", str(target)])
    assert res.exit_code == 0, res.output
    assert target.read_text().startswith("### faithprobe: ")
    monkeypatch.setattr("os.access", lambda path, mode: Path(path) != tmp_path)
    args = ["audit", "--compare", str(old), str(new), "--markdown", str(tmp_path / "no" / "c.md")]
    refused(args, watch=[tmp_path], expect=["--markdown", "permission denied"])
    assert runner.invoke(app, args).stdout == ""  # refused before the comparison is shown


def test_report_refuses_a_card_whose_page_is_a_folder(tmp_path):
    folder = _hand_made(tmp_path / "audit", "m", [_effect("m", "e", 0.05, 0.0, 0.08)])
    (folder / "index.html").unlink()
    (folder / "index.html").mkdir()
    # the page's path is cut to its first 80 characters in the message, and pytest's
    # folders grow with each session, so only the reason is sure to be on the line
    refused(["report", str(folder)], watch=[tmp_path], expect=["the card", "is a folder"])


@pytest.mark.parametrize(
    "command",
    [
        ["baseline", "heuristics", "--data", "data.json"],
        ["analyze", "representations", "--model", "A=a", "--model", "B=b", "--data", "data.json"],
    ],
)
def test_an_out_folder_of_the_user_is_refused_before_any_work(tmp_path, monkeypatch, command):
    """baseline and analyze follow --out's rule: a folder faithprobe did not write (no
    run.json of ours) is refused unless --force, before any data is read or model loaded."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.json").write_text("{")  # never read
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "scores.md").write_text("my scores\n")
    refused([*command, "--out", str(mine)], watch=[tmp_path], expect=["--out", "--force"])


def test_a_fifo_given_as_a_file_to_read_is_refused_not_read(tmp_path, monkeypatch):
    """A FIFO never ends: reading it would hang the command (a suite option's file, or a
    data file reached by a reader)."""
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    refused([*FAITHFULNESS, "-o", f"edits={tmp_path / 'fifo'}"], watch=[tmp_path],
            expect=["edits", "not a regular file"])  # fmt: skip
    from faithprobe.datasets.jsonl import read_text
    from faithprobe.errors import DataError

    with pytest.raises(DataError, match="not a regular file"):
        read_text(tmp_path / "fifo")
