"""``faithprobe data list`` (where each data set is found, or the shipped sample, or not
present) and the ``data fetch`` inputs refused before any download."""

from __future__ import annotations

from cli_corpus import refused, runner
from faithprobe.catalog import entries, locate
from faithprobe.catalog.entries import CATALOGUE, DataSet, Remote
from faithprobe.cli import app


def _entry(name: str, path: str, *files: str) -> DataSet:
    remotes = tuple(Remote(f, f"https://example.org/{f}") for f in files or (path,))
    return DataSet(name, name, f"what {name} is", f"license of {name}", "x", path, remotes, "1 KB")


def test_list_says_where_each_data_set_is(tmp_path, monkeypatch):
    data = tmp_path / "data"
    for relative in ("whole/a.jsonl", "partial/x.tsv"):
        (data / relative).parent.mkdir(parents=True, exist_ok=True)
        (data / relative).write_text("{}\n")
    monkeypatch.setattr(locate, "sample", lambda relative: relative == "sampled/s.json" or None)
    monkeypatch.setattr(
        entries,
        "CATALOGUE",
        (
            _entry("whole", "whole/a.jsonl"),
            _entry("partial", "partial", "partial/x.tsv", "partial/y.tsv"),
            _entry("sampled", "sampled/s.json"),
            _entry("absent", "absent/z.json"),
        ),
    )
    res = runner.invoke(app, ["data", "list"], env={"FAITHPROBE_DATA": str(data)})
    assert res.exit_code == 0, res.stderr
    rows = {line.split("│")[1].strip(): line for line in res.stdout.splitlines() if "│" in line}
    assert str(data / "whole" / "a.jsonl") in rows["whole"]
    assert f"{data / 'partial'} (1 of 2 files)" in rows["partial"]
    assert "sample shipped (small budget)" in rows["sampled"]
    assert "not present" in rows["absent"]
    assert "what whole is" in rows["whole"] and "license of whole" in rows["whole"]
    assert f"data folders searched: {data}" in res.stderr
    assert f"`faithprobe data fetch` writes to {data}" in res.stderr


def test_list_names_every_data_set_of_the_catalogue(tmp_path):
    res = runner.invoke(app, ["data", "list"], env={"FAITHPROBE_DATA": str(tmp_path)})
    assert res.exit_code == 0, res.stderr
    names = [line.split("│")[1].strip() for line in res.stdout.splitlines() if "│" in line]
    assert [n for n in names if n] == [e.name for e in CATALOGUE]
    assert list(tmp_path.iterdir()) == []  # listing writes nothing


def test_an_unknown_name_is_refused_before_anything_is_fetched(tmp_path):
    known = ", ".join(e.name for e in CATALOGUE)
    refused(
        ["data", "fetch", "squad", "sqaud", "--to", tmp_path],
        watch=[tmp_path],
        expect=[f"no data set called 'sqaud': choose from {known}"],
    )


def test_fetch_inputs_refused_in_one_line(tmp_path):
    refused(["data", "fetch"], watch=[tmp_path], expect=["Missing argument 'NAME'"])
    refused(["data", "fetch", "squad", "--timeout", "0"], watch=[tmp_path], expect=["--timeout"])
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    refused(
        ["data", "fetch", "squad", "--to", not_a_folder],
        watch=[tmp_path],
        expect=["--to", str(not_a_folder), "is a file, not a folder"],
    )
