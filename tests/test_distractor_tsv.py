"""The distractors method's released item files (``--data FOLDER``): read from folders
written in that format (:mod:`released_tsv`), each condition mapped to the suite's design,
variants linked to the base item of their background/target pair, and bad files refused in
one line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from cli_corpus import refused
from faithprobe.datasets.distractor_tsv import LINKED_BY, is_released_layout, read_released
from faithprobe.errors import DataError
from faithprobe.generators.distractors import DistractorConfig, generate
from released_tsv import FILE, run_reader, write_released


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    return write_released(tmp_path_factory.mktemp("released"))


def _truth() -> dict[str, dict]:
    """Each generated text's features (what the released rows leave out)."""
    items = generate(DistractorConfig(names_per_pair=2, item_sets=("capitals",)), 0)
    return {i.context: i.features for i in items}


def test_conditions_types_and_links(released):
    assert is_released_layout(released) and not is_released_layout(released.parent)
    items = read_released(released)
    truth = _truth()
    bases = {i.id: i for i in items if i.features["base_id"] is None}
    variants = [i for i in items if i.features["base_id"] is not None]
    assert len(bases) == 6  # the base rows of every folder are one item each
    cells = Counter((v.features["setting"], v.features["attractor_type"],
                     v.features["position"]) for v in variants)  # fmt: skip
    # the _profession/_object rows repeated in _distractor are read once
    assert set(cells.values()) == {6} and len(cells) == 10
    assert ("single", "unrelated", "between") not in cells  # Swapped: related only
    for v in variants:
        f, real = v.features, truth[v.context]
        assert (f["setting"], f["attractor_type"], f["position"], f["n_attractors"]) == (
            real["setting"], real["attractor_type"], real["position"], real["n_attractors"]
        )  # fmt: skip
        base = truth[bases[f["base_id"]].context]
        assert (base["background"], base["target"]) == (real["background"], real["target"])
        assert base["entity"] != real["entity"]  # linked across entity names
        assert f["linked_by"] == LINKED_BY


def test_masked_sentences_split_at_the_blank(tmp_path):
    items = read_released(write_released(tmp_path / "m", masked=True))
    assert all(i.suffix == "." and not i.context.endswith("]") for i in items)
    assert {i.context for i in items} == {i.context for i in read_released(
        write_released(tmp_path / "u"))}  # fmt: skip


def test_the_suite_runs_the_folder_and_says_how_items_were_linked(released, tmp_path):
    out = tmp_path / "run"
    metrics = run_reader(released, out)
    assert metrics["dataset"]["linked_by"] == [{"rule": LINKED_BY, "count": 60}]
    assert "60 variants were linked to their base item by rule" in (out / "report.html").read_text()
    names = {t["name"] for t in metrics["tests"]}
    assert "unrelated vs related (multi; after)" in names  # no related-only position


def _one_file(root: Path, header: str, row: str, folder: str = "single_entity_distractor") -> Path:
    path = root / folder / "GPT2Small" / FILE
    path.parent.mkdir(parents=True)
    path.write_text(header + "\n" + row + "\n")
    return root


HEADER = "sentence\tordered_items\ttarget_occupation\tcount_attractors"


@pytest.mark.parametrize(
    ("row", "folder", "words"),
    [
        ("Ann lives in Chile. The capital of Ann's country is\t['Santiago', \t"
         "Santiago\t0", "single_entity_distractor", ["line 2", "ordered_items", "Python list"]),
        ("Ann lives in Chile. The capital of Ann's country is\t['Paris']\tSantiago\t0",
         "single_entity_distractor", ["line 2", "target_occupation", "Santiago"]),
        ("Ann lives in Chile. The capital of Ann's country is\t['Santiago']\tSantiago\ttwo",
         "single_entity_distractor", ["line 2", "count_attractors", "two"]),
        ("Ann lives in Chile. The capital of Ann's country is\t['Santiago']\tSantiago\t0",
         "single_entity_related", ["single_entity_related", "*_profession"]),
        ("Ann lives in Chile and has visited Peru. The capital of Ann's country is\t"
         "['Santiago']\tSantiago\t1", "single_entity_distractor", ["no base item", "line 2"]),
    ],
)  # fmt: skip
def test_bad_rows_are_one_line(tmp_path, row, folder, words):
    data = _one_file(tmp_path / "data", HEADER, row, folder)
    args = ["run", "distractors", "--data", data, "--model", "ref:reader",
            "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache"]  # fmt: skip
    refused(args, watch=[tmp_path], expect=words)


def test_a_file_without_the_columns_names_them(tmp_path):
    data = _one_file(tmp_path, "sentence\tanswer", "a\tb")
    with pytest.raises(DataError, match="no column ordered_items or candidates"):
        read_released(data)


# rows written as the released files write them: each story told at filler levels 0-2 by
# the release's filler clauses, about its own entity; the Swapped folder's filler follows
# the critical fact
FILLER_ROWS = {
    "single_entity_distractor": [
        ("Maria works as a baker . For her job , Maria sells", 0),
        ("Maria has a sister and now works as a baker . For her job , Maria sells", 0),
        ("Maria has a sister , played basketball , and now works as a baker . For her job , "
         "Maria sells", 0),
        ("Lena works as a baker and likes to buy flowers . For her job , Lena sells", 1),
        ("Lena has a sister and now works as a baker and likes to buy flowers . For her job , "
         "Lena sells", 1),
        ("Lena has a sister , played basketball and now works as a baker and likes to buy "
         "flowers . For her job , Lena sells", 1),
        ("Ines works as a baker and knows a florist . For her job , Ines sells", 1),
    ],
    "multiple_entity_distractorSwapped": [
        ("Maria works as a baker . For her job , Maria sells", 0),
        ("Ann knows that Bob likes to buy fish and she herself works as a baker . For her job "
         ", Ann sells", 1),
        ("Ann knows that Bob likes to buy fish and she herself works as a baker , has a "
         "sister and played basketball . For her job , Ann sells", 1),
    ],
}  # fmt: skip


def _write_rows(root: Path) -> Path:
    for folder, rows in FILLER_ROWS.items():
        path = root / folder / "GPT2Small" / FILE
        path.parent.mkdir(parents=True)
        lines = [f"{HEADER}\tdistance_from_beginning"]
        lines += [f"{s}\t['bread', 'flowers', 'fish']\tbread\t{n}\t3" for s, n in rows]
        path.write_text("\n".join(lines) + "\n")
    return root


def test_filler_levels_are_read_from_the_release_clauses(tmp_path):
    items = {i.context: i for i in read_released(_write_rows(tmp_path / "data"))}
    rows = {s: n for rows in FILLER_ROWS.values() for s, n in rows}
    bases = [i for i in items.values() if i.features["base_id"] is None]
    assert [b.context for b in bases] == ["Maria works as a baker . For her job , Maria sells"]
    (base,) = bases
    cells = {
        (f["setting"], f["attractor_type"], f["position"], f["n_attractors"],
         len(f.get("filler", [])), f["condition"])
        for i in items.values() if (f := i.features)["base_id"] is not None
    }  # fmt: skip
    assert cells == {
        ("single", "none", "after", 0, 1, "single_entity_distractor"),
        ("single", "none", "after", 0, 2, "single_entity_distractor"),
        ("single", "T", "after", 1, 0, "single_entity_distractor"),
        ("single", "T", "after", 1, 1, "single_entity_distractor"),
        ("single", "T", "after", 1, 2, "single_entity_distractor"),
        ("single", "B", "after", 1, 0, "single_entity_distractor"),
        ("multi", "T", "between", 1, 0, "multiple_entity_distractorSwapped"),
        ("multi", "T", "between", 1, 2, "multiple_entity_distractorSwapped"),
    }
    assert all(i.features["base_id"] in (None, base.id) for i in items.values())
    swapped = items[next(s for s in rows if "herself" in s and "sister" in s)]
    assert swapped.features["filler"] == ["has a sister", "played basketball"]
    assert len(items) == sum(1 for _ in rows)  # the base row repeated in two folders: one


def test_the_suite_reports_the_release_filler_view(tmp_path):
    metrics = run_reader(_write_rows(tmp_path / "data"), tmp_path / "run")
    views = {v["view"]: v for v in metrics["views"]}
    # the filler view counts the attractor items with filler (levels 1 and 2, single)
    assert views["filler"]["n_items"] == 3
    assert views["main"]["n_items"] == 2  # after the fact, no filler: one T, one B
