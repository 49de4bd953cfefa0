"""The distractors method's released folders (``--data FOLDER`` or ``FILE``), read from
folders written in the release's layout with its quirks (:mod:`released_tsv`): every text
once however many model files and folders hold it, each row's filler, attractors and
position read from its text and checked against what was written, the per-condition counts,
and bad folders and files refused in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_corpus import refused, runner
from faithprobe.cli import app
from faithprobe.datasets.distractor_tsv import LINKED_BY, read_released
from faithprobe.suite_protocol import get_suite
from released_tsv import FOLDERS, write_key_entity_without_candidates, write_released

# condition -> (rows, texts, base items, filler rows, variants, filler levels of the
# variants, positions as read, texts whose folder's position the text contradicts): what
# reading the test folders must count (docs/suites/distractors.md shows this table)
COUNTS = {
    "single_entity_profession": (432, 144, 9, 27, 108, [27] * 4, {"after": 108}, 0),
    "multiple_entity_profession": (432, 144, 9, 27, 108, [27] * 4, {"after": 108}, 0),
    "single_entity_object": (432, 144, 9, 27, 108, [27] * 4, {"after": 108}, 0),
    "multiple_entity_object": (432, 144, 9, 27, 108, [27] * 4, {"after": 108}, 0),
    "single_entity_with_neutral_distractor": (756, 252, 9, 27, 216, [54] * 4, {"after": 216}, 0),
    "multiple_entity_with_neutral_distractor": (756, 252, 9, 27, 216, [54] * 4,
                                                {"after": 216}, 0),
    "single_entity_distractor": (756, 252, 9, 27, 216, [54] * 4, {"after": 216}, 0),
    "single_entity_distractorSwapped": (756, 252, 9, 27, 216, [54] * 4,
                                        {"after": 12, "between": 204}, 12),
    "multiple_entity_distractor": (756, 252, 9, 27, 216, [54] * 4, {"after": 216}, 0),
    "multiple_entity_distractorSwapped": (756, 252, 9, 27, 216, [54] * 4, {"between": 216}, 0),
    "VaryingKeyEntity": (108, 36, 9, 18, 9, [9], {"later": 9}, 0),
}  # fmt: skip


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("release") / "combined_data"
    return root, write_released(root)


@pytest.fixture(scope="module")
def read(written):
    return read_released(written[0])


def test_every_text_is_one_item_read_as_written(written, read):
    _, truth = written
    items = {i.context: i for i in read.items}
    assert len(items) == len(read.items) == len(truth)  # one item per text: 6,372 rows read
    assert read.record["totals"] == {"files": 33, "rows": 6372, "items": 1404, "base_items": 27}
    by_id = {i.id: i for i in read.items}
    for context, item in items.items():
        f, told = item.features, truth[context]
        assert f["condition"] in {t.condition for t in told}
        t = told[0]
        if f["base_id"] is None:
            assert (t.n, t.filler, t.base) == (0, 0, context)
            continue
        assert by_id[f["base_id"]].context == t.base  # linked across entity names
        assert f["linked_by"] == LINKED_BY
        assert len(f.get("filler", [])) == t.filler, context
        if t.n:
            assert (f["n_attractors"], f["attractor_type"], f["position"]) == (
                t.n, t.attractor_type, t.position), context  # fmt: skip
            assert tuple(f.get("attractors", ())) == t.attractors, context
        else:
            assert f["attractor_type"] == "none" and f["n_attractors"] == 0


def test_each_model_kind_gets_its_own_form(written, read):
    """The masked files' sentence and the causal LM's prefix are one item: the context is
    the prefix, the suffix what follows the blank; a causal LM's file alone has none."""
    assert {i.suffix for i in read.items} == {"."}
    assert not any("[MASK]" in i.context or "<mask>" in i.context for i in read.items)
    prefix_only = read_released(written[0] / "single_entity_object" / "GPT2Small"
                                / "complete_data_For_GPT2Small.csv")  # fmt: skip
    assert {i.suffix for i in prefix_only.items} == {""}
    assert prefix_only.record["files"] == [{"condition": "single_entity_object", "rows": 144,
                                            "form": "prefix",
                                            "file": "complete_data_For_GPT2Small.csv"}]  # fmt: skip


def test_one_folder_model_or_file_reads_as_the_whole(written, read):
    root = written[0]
    whole = {i.context: i.features for i in read.items}
    folder = root / "single_entity_distractorSwapped"
    model = folder / "BertBase"
    for data in (folder, model, model / "complete_data_For_BertBase.csv"):
        part = read_released(data)
        assert len(part.items) == 252
        for item in part.items:
            f, g = item.features, whole[item.context]
            keys = ("n_attractors", "attractor_type", "position", "filler", "attractors")
            assert {k: f.get(k) for k in keys} == {k: g.get(k) for k in keys}


def test_candidates_are_scored_as_the_sentences_write_them(read):
    capitals = [i for i in read.items if i.features["item_set"] == "The capital of …'s country is"]
    assert {i.candidates for i in capitals} == {("Paris", "Santiago", "Warsaw")}
    assert {i.target for i in capitals} == {"Paris", "Santiago", "Warsaw"}
    recased = {(r["written"], r["scored"]) for r in read.record["recased"]}
    assert recased == {("paris", "Paris"), ("santiago", "Santiago"), ("warsaw", "Warsaw")}
    # ordered_items is a model's ranking: the items' candidates are in one order
    assert {i.candidates for i in read.items if "job" in i.context} == {
        ("bread", "flowers", "meat")}  # fmt: skip


def test_per_condition_counts(read):
    got = {}
    for c in read.record["conditions"]:
        levels = [c["filler_levels"][k] for k in sorted(c["filler_levels"])]
        got[c["condition"]] = (c["rows"], c["items"], c["base_items"], c["filler_rows"],
                               c["variants_linked"], levels, c["positions"],
                               c["differs"].get("position", {}).get("items", 0))  # fmt: skip
    assert got == COUNTS
    swapped = next(c for c in read.record["conditions"]
                   if c["condition"] == "single_entity_distractorSwapped")  # fmt: skip
    # the rows the folder calls "between" and the text tells after the fact, in 3 files each
    assert swapped["differs"] == {"position": {"items": 12, "rows": 36}}
    assert set(FOLDERS) == set(COUNTS)


# -- the suite on the release --------------------------------------------------------------


def test_the_suite_reports_the_release_at_filler_zero(tmp_path):
    """-o fillers=0, --limit 60: the printed pairs are the limit, every cell says its n, an
    item set per domain, and the Dataset section says what was read."""
    data = tmp_path / "combined_data"
    write_released(data, ("single_entity_distractor", "single_entity_with_neutral_distractor"))
    out = tmp_path / "run"
    args = ["run", "distractors", "--data", data, "--model", "ref:reader", "--out", out,
            "--cache-dir", tmp_path / "cache", "-o", "fillers=0", "--limit", "60"]  # fmt: skip
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    assert "60 pairs, with " in res.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["dataset"]["n_pairs"] == 60
    assert {r["n_filler"] for r in metrics["dataset"]["by_condition"]} == {0}
    accuracy = [e for e in metrics["estimates"] if e["metric"] == "accuracy"]
    assert {e["value"] for e in accuracy} == {1.0}  # the faithful reader, in every cell
    sets = {e["item_set"] for e in accuracy if e["view"] == "by_item_set"}
    assert sets == {"For his job , … sells", "The capital of …'s country is",
                    "The goods … sold were"}  # fmt: skip
    assert "unrelated vs related (single; after)" in {t["name"] for t in metrics["tests"]}
    assert metrics["release"]["totals"]["rows"] == 1512
    table = (out / "tables" / "accuracy_main.md").read_text()
    cells = [c for line in table.splitlines() if line.startswith("| ref:reader")
             for c in line.split("|")[4:-1]]  # fmt: skip
    assert cells and all(re.fullmatch(r" 1\.00 \[\d\.\d\d, 1\.00\] n=\d+ +", c) for c in cells)
    page = (out / "report.html").read_text()
    assert "Released files read, per condition folder" in page
    assert "released files: 1,512 rows in 6 files, 468 items after each text" in page


def test_fillers_names_levels_the_data_has(written, tmp_path):
    data = written[0] / "single_entity_object"
    args = ["run", "distractors", "--data", data, "--model", "ref:reader",
            "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache", "-o", "fillers=0,5"]  # fmt: skip
    refused(args, watch=[tmp_path], expect=["filler level 5", "its levels: 0, 1, 2, 3"])
    assert get_suite("distractors", {"fillers": "0,1"}).config.fillers == (0, 1)  # generated
    assert get_suite("distractors").config.fillers == (0,)
    generated = ["run", "distractors", "--model", "ref:reader", "-o", "fillers=4",
                 "--out", tmp_path / "gen", "--cache-dir", tmp_path / "cache"]  # fmt: skip
    refused(generated, watch=[tmp_path], expect=["fillers=4", "0, 1, 2, 3"])


# -- bad folders and files: one line, exit 2 ----------------------------------------------

HEADER = "sentence\tordered_items\ttarget_occupation\tcount_attractors"
BASE = "Ann lives in Chile . The capital of Ann's country is"


def _file(root: Path, *rows: str, folder: str = "single_entity_distractor",
          header: str = HEADER, prefix: bytes = b"") -> Path:  # fmt: skip
    path = root / folder / "GPT2Small" / "complete_data_For_GPT2Small.csv"
    path.parent.mkdir(parents=True)
    path.write_bytes(prefix + "\n".join([header, *rows, ""]).encode("utf-8"))
    return path


def _refused(tmp_path: Path, data: Path, words: list[str]) -> None:
    args = ["run", "distractors", "--data", data, "--model", "ref:reader",
            "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache"]  # fmt: skip
    refused(args, watch=[tmp_path], expect=words)


@pytest.mark.parametrize(
    ("rows", "folder", "words"),
    [
        ([f"{BASE}\t['Santiago', \tSantiago\t0"], "single_entity_distractor",
         ["line 2", "ordered_items", "Python list"]),
        ([f"{BASE}\t['Paris']\tSantiago\t0"], "single_entity_distractor",
         ["line 2", "target_occupation", "Santiago"]),
        ([f"{BASE}\t['Santiago']\tSantiago\ttwo"], "single_entity_distractor",
         ["line 2", "count_attractors", "two"]),
        ([f"{BASE}\t['Santiago']\tSantiago\t0"], "single_entity_related",
         ["single_entity_related", "*_profession"]),
        ([f"{BASE}\t['Santiago', 'Paris']\tSantiago\t0",
          "Ann lives in Chile and has visited Peru . The capital of Ann's country is\t"
          "['Paris']\tParis\t1"], "single_entity_distractor", ["no base item", "line 3"]),
        ([f"{BASE}\t{[f'w{i}' for i in range(100_000)]!r}\tSantiago\t0"],
         "single_entity_distractor", ["line 2", "field larger than field limit"]),
        ([f"{BASE}\t['Santiago', '\\ud800']\tSantiago\t0"], "single_entity_distractor",
         ["line 2", "ordered_items", "lone surrogate"]),
    ],
)  # fmt: skip
def test_bad_rows_are_one_line(tmp_path, rows, folder, words):
    _file(tmp_path / "data", *rows, folder=folder)
    _refused(tmp_path, tmp_path / "data", words)


def test_bytes_that_are_not_text_are_one_line_naming_line_and_column(tmp_path):
    path = _file(tmp_path / "data", f"{BASE}\t['Santiago']\tSantiago\t0")
    path.write_bytes(path.read_bytes() + b"Ann \xed\xa0\x80 . The capital of\t['Santiago']\t"
                     b"Santiago\t0\n")  # fmt: skip
    _refused(tmp_path, tmp_path / "data", ["line 3", "field 'sentence'", "not UTF-8"])


def test_a_byte_order_mark_is_refused_like_every_text_format(tmp_path):
    _file(tmp_path / "data", f"{BASE}\t['santiago', 'paris']\tSantiago\t0", prefix=b"\xef\xbb\xbf")
    _refused(tmp_path, tmp_path / "data", ["line 1", "byte-order mark"])


def test_a_folder_without_candidate_columns_says_what_it_lacks(tmp_path):
    folder = write_key_entity_without_candidates(tmp_path / "data")
    for data in (folder, folder.parent):
        _refused(tmp_path, data, ["Varying_key_entity", "no column ordered_items or candidates",
                                  "count_attractors"])  # fmt: skip


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda root: (root / "plots" / "x.csv").mkdir(parents=True),
         ["holds no condition folder", "its sub-folders: plots"]),
        (lambda root: (root / "single_entity_object" / "GPT2Small" / "x.csv").mkdir(parents=True),
         ["x.csv", "a folder where the release has a data file"]),
        (lambda root: root.mkdir() or (root / "single_entity_object").write_text("x"),
         ["single_entity_object", "a file where the release has a condition folder"]),
    ],
)  # fmt: skip
def test_a_folder_or_file_out_of_place_is_one_line(tmp_path, make, words):
    make(tmp_path / "data")
    _refused(tmp_path, tmp_path / "data", words)


def test_a_file_outside_a_condition_folder_is_one_line(tmp_path):
    path = tmp_path / "items.csv"
    path.write_text(f"{HEADER}\n{BASE}\t['Santiago']\tSantiago\t0\n")
    _refused(tmp_path, path, ["items.csv", "none of the folders it lies in is named"])


def test_a_domain_written_in_lower_case_keeps_the_target_columns_case(tmp_path):
    """The release's monuments are lower-cased throughout, names included: the sentences
    tell no word's case, so "india" in a sentence does not make the candidate lower-case."""
    rows = [
        f"{e} visited the {m} . the country {e} traveled to was\t['India', 'Peru']\t{t}\t0"
        for e, m, t in (("jack", "taj mahal", "India"), ("joe", "machu picchu", "Peru"))
    ]
    rows.append("john visited the taj mahal and has friends in peru . the country john traveled "
                "to was\t['Peru', 'India']\tIndia\t1")  # fmt: skip
    _file(tmp_path / "data", *rows, folder="single_entity_object")
    read = read_released(tmp_path / "data")
    assert {i.candidates for i in read.items} == {("India", "Peru")}
    variant = next(i for i in read.items if i.features["base_id"] is not None)
    assert (variant.target, variant.features["attractors"]) == ("India", ["peru"])
    assert read.record["recased"] == []
