"""BIG-Bench Hard as data (``faithprobe.datasets.bbh``): the full release in
``../shared/data/bbh`` and the sample shipped with faithprobe read into items with their
answer formats and the authors' prompts; bad files refused in one line; the catalogue's
``bbh`` entry checked against the copies at hand."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from faithprobe.catalog import locate
from faithprobe.catalog.entries import dataset
from faithprobe.catalog.fetch import sha256
from faithprobe.datasets.bbh import (
    answer_only_prompt,
    cot_prompt,
    options_of,
    read_bbh,
    read_prompt,
    task_names,
)
from faithprobe.errors import DataError, UsageError
from faithprobe.records import ANSWER_FORMATS, MULTIPLE_CHOICE

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
FULL = SHARED / "bbh"
SAMPLE = locate.SAMPLES / "bbh"
needs_shared = pytest.mark.skipif(not FULL.is_dir(), reason="../shared/data/bbh not present")

# the release's faulty items (docs/data.md): options split at commas, an input cut short
DEFECTS = {
    "bbh-movie_recommendation-163",
    "bbh-ruin_names-99",
    "bbh-ruin_names-144",
    "bbh-snarks-88",
}


@pytest.fixture(scope="module")
def full():
    return read_bbh(FULL)


@pytest.fixture(scope="module")
def sample():
    return read_bbh(SAMPLE)


def _well_formed(items):
    """Every item's format known, every multiple-choice target among its options, three
    exemplars per task; the items of a task grouped, ids unique."""
    assert len({i.id for i in items}) == len(items)
    for item in items:
        assert item.answer_format in ANSWER_FORMATS
        assert re.fullmatch(rf"bbh-{item.task}-{item.features['index']}", item.id)
        if item.answer_format == MULTIPLE_CHOICE:
            assert item.target in dict(item.options)
            assert [label for label, _ in item.options] == [
                f"({chr(65 + k)})" for k in range(len(item.options))
            ]
        else:
            assert item.options == ()
        assert len(item.exemplars) == 3
        assert all(e.question and e.reasoning and e.answer for e in item.exemplars)
        assert item.instruction


@needs_shared
def test_the_full_release(full):
    assert len(full) == 6511
    assert len({i.task for i in full}) == 27
    _well_formed(full)
    assert Counter(i.answer_format for i in full) == {
        MULTIPLE_CHOICE: 4071,
        "yes-no": 937,
        "free": 503,
        "number": 500,
        "true-false": 250,
        "valid-invalid": 250,
    }
    assert {i.id for i in full if "defect" in i.features} == DEFECTS
    by_task = {}
    for item in full:
        by_task.setdefault(item.task, Counter())[item.answer_format] += 1
    assert by_task["sports_understanding"] == {"yes-no": 250}  # lower-case yes/no
    assert by_task["formal_fallacies"] == {"valid-invalid": 250}
    assert by_task["word_sorting"] == {"free": 250}
    assert by_task["object_counting"] == {"number": 250}
    assert by_task["movie_recommendation"] == {MULTIPLE_CHOICE: 249, "free": 1}


@needs_shared
def test_the_exemplars_are_the_prompt_files(full):
    """Rendered back, a task's instruction and exemplars are its prompt file after the
    canary line, byte for byte, so the CoT prompt is the authors' own."""
    first = {}
    for item in full:
        first.setdefault(item.task, item)
    for task, item in first.items():
        text = (FULL / "cot-prompts" / f"{task}.txt").read_text(encoding="utf-8")
        body = text.split("\n-----\n", 1)[1]
        assert cot_prompt(item) == f"{body}\n\nQ: {item.question}\nA: Let's think step by step."


def test_the_answer_only_prompt_keeps_the_exemplars_without_their_reasoning(sample):
    item = next(i for i in sample if i.id == "bbh-boolean_expressions-0")
    prompt = answer_only_prompt(item)
    assert prompt.startswith("Evaluate the result of a random Boolean expression.\n\n")
    assert "Q: not ( ( not not True ) ) is\nA: False\n\nQ: True and False" in prompt
    assert prompt.endswith(f"\n\nQ: {item.question}\nA:")
    assert "step by step" not in prompt and "So the answer is" not in prompt
    assert prompt.count("\nA: ") == 3


def test_the_cot_prompt_keeps_an_inline_reasoning_on_its_line(sample):
    item = next(i for i in sample if i.task == "sports_understanding")
    first = item.exemplars[0]
    assert first.inline and first.answer == "yes"
    assert f"A: Let's think step by step. {first.reasoning} So the answer is yes.\n\n" in (
        cot_prompt(item)
    )


def test_the_sample_is_found_where_the_package_keeps_it_and_is_small():
    shipped = locate.sample("bbh")
    assert shipped is not None and shipped.path == SAMPLE and shipped.license == "MIT"
    size = sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file())
    assert size < 250_000


def test_the_sample(sample):
    assert len(sample) == 27 * 6
    assert Counter(i.task for i in sample) == {t: 6 for t in task_names(SAMPLE)}
    _well_formed(sample)


@needs_shared
def test_the_sample_is_read_as_the_full_files(full, sample):
    """Every sample item is the full release's item of the same id, format and options
    included; the prompt files are the release's."""
    by_id = {i.id: i for i in full}
    for item in sample:
        assert item == by_id[item.id]
        assert item.features == by_id[item.id].features
    for prompt in (SAMPLE / "cot-prompts").iterdir():
        assert prompt.read_bytes() == (FULL / "cot-prompts" / prompt.name).read_bytes()
    assert (SAMPLE / "LICENSE").read_bytes() == (FULL / "LICENSE").read_bytes()


def test_a_subset_of_tasks(sample):
    items = read_bbh(SAMPLE, tasks=["snarks", "navigate"])
    assert [i.task for i in items] == ["navigate"] * 6 + ["snarks"] * 6
    assert items == [i for i in sample if i.task in ("navigate", "snarks")]
    with pytest.raises(UsageError, match=r"no BBH task 'navigation' in .*choose from .*navigate"):
        read_bbh(SAMPLE, tasks=["navigation"])


def test_options_are_the_lettered_lines_after_options():
    assert options_of("Which?\nOptions:\n(A) a b\n(B) c") == (("(A)", "a b"), ("(B)", "c"))
    assert options_of("Plausible?\nOptions:\n- Yes\n- No") == ()
    assert options_of("No options here: (A) x") == ()


# bad files: one line naming the file, the record and the field


def _folder(tmp_path: Path, task: str = "date_understanding") -> Path:
    for sub, suffix in (("bbh", ".json"), ("cot-prompts", ".txt")):
        (tmp_path / sub).mkdir()
        shutil.copyfile(SAMPLE / sub / f"{task}{suffix}", tmp_path / sub / f"{task}{suffix}")
    return tmp_path


def _examples(folder: Path, edit) -> None:
    path = folder / "bbh" / "date_understanding.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(edit(doc)), encoding="utf-8")


def _set(field: str, value):
    def edit(doc):
        doc["examples"][2][field] = value
        return doc

    return edit


def _drop(field: str):
    def edit(doc):
        del doc["examples"][2][field]
        return doc

    return edit


TASK_FAULTS = {
    "target missing": (_drop("target"), "field 'examples[2].target': missing"),
    "target a number": (_set("target", 3), "field 'examples[2].target': 3 is not a string"),
    "empty input": (_set("input", " "), "field 'examples': examples[2].input is empty"),
    "no examples": (lambda doc: {"examples": []}, "field 'examples': no examples"),
    "not an object": (lambda doc: doc["examples"], "record top level: expected a JSON object"),
    "label not an option": (
        _set("target", "(Z)"),
        "record examples[2]: field 'target': target '(Z)' is not one of the options",
    ),
    "labels out of order": (
        _set("input", "When?\nOptions:\n(A) today\n(C) never"),
        "record examples[2]: field 'input': options labelled (A), (C), not in order",
    ),
}


@pytest.mark.parametrize("fault", list(TASK_FAULTS))
def test_a_bad_task_file_is_one_line(tmp_path, fault):
    edit, message = TASK_FAULTS[fault]
    folder = _folder(tmp_path)
    _examples(folder, edit)
    with pytest.raises(DataError) as err:
        read_bbh(folder)
    assert "\n" not in str(err.value)
    assert str(err.value).startswith(str(folder / "bbh" / "date_understanding.json"))
    assert message in str(err.value)


def test_a_task_file_that_is_not_json_is_one_line(tmp_path):
    folder = _folder(tmp_path)
    (folder / "bbh" / "date_understanding.json").write_text('{"examples": [', encoding="utf-8")
    with pytest.raises(DataError, match=r"date_understanding.json: not valid JSON") as err:
        read_bbh(folder)
    assert "\n" not in str(err.value)


PROMPT_FAULTS = {
    "no cue": (
        lambda t: t.replace("A: Let's think step by step.\nIf tomorrow", "A: If tomorrow"),
        "record exemplar 2: field 'reasoning': no line 'A: Let's think step by step.'",
    ),
    "no answer": (
        lambda t: t.replace("So the answer is (B).\n\nQ: Jane", "Hence (B).\n\nQ: Jane"),
        "record exemplar 2: field 'answer': the reasoning does not end 'So the answer is",
    ),
    "no exemplar": (
        lambda t: t.split("\n\nQ: ")[0],
        "record top level: field 'exemplars': no exemplar",
    ),
    "empty reasoning": (
        lambda t: t.replace(
            "A: Let's think step by step.\nIf tomorrow is 11/12/2019, then today is 11/11/2019. "
            "The date one year ago from today is 11/11/2018.",
            "A: Let's think step by step.\n ",
        ),
        "field 'exemplars': exemplar 2 has no reasoning",
    ),
}


@pytest.mark.parametrize("fault", list(PROMPT_FAULTS))
def test_a_bad_prompt_file_is_one_line(tmp_path, fault):
    edit, message = PROMPT_FAULTS[fault]
    folder = _folder(tmp_path)
    path = folder / "cot-prompts" / "date_understanding.txt"
    text = path.read_text(encoding="utf-8")
    changed = edit(text)
    assert changed != text
    path.write_text(changed, encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_bbh(folder)
    assert "\n" not in str(err.value)
    assert str(err.value).startswith(str(path))
    assert message in str(err.value)


def test_a_task_without_its_prompt_or_a_folder_without_tasks_is_one_line(tmp_path):
    folder = _folder(tmp_path)
    (folder / "cot-prompts" / "date_understanding.txt").unlink()
    with pytest.raises(DataError, match=r"date_understanding.txt: missing: the prompt of task"):
        read_bbh(folder)
    with pytest.raises(DataError, match=r"not a BBH folder: no bbh/ folder"):
        read_bbh(folder / "cot-prompts")


def test_a_folder_where_a_file_is_expected_and_a_file_where_a_folder_is_are_one_line(tmp_path):
    """Refused whatever ``tasks`` names, never left out (a folder bbh/<task>.json used to be
    dropped under tasks=all, and called "no such task" by name)."""
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    folder = _folder(tmp_path / "a")
    (folder / "bbh" / "navigate.json").mkdir()
    for tasks in (None, ["navigate"], ["date_understanding"]):
        with pytest.raises(DataError, match=r"bbh/navigate.json: is not a file: a task is a"):
            read_bbh(folder, tasks)
    folder = _folder(tmp_path / "b")
    (folder / "cot-prompts" / "date_understanding.txt").unlink()
    (folder / "cot-prompts" / "date_understanding.txt").mkdir()
    with pytest.raises(DataError, match=r"date_understanding.txt: is a folder, not a file"):
        read_bbh(folder)
    shutil.rmtree(folder / "cot-prompts")
    (folder / "cot-prompts").write_text("prompts\n")
    with pytest.raises(DataError, match=r"cot-prompts: is not a folder: the prompts are"):
        read_bbh(folder)
    shutil.rmtree(folder / "bbh")
    (folder / "bbh").write_text("tasks\n")
    with pytest.raises(DataError, match=r"not a BBH folder: bbh/ is a file, not bbh/ folder"):
        read_bbh(folder)


def test_a_task_whose_name_cannot_be_written_is_one_line(tmp_path):
    """A file name with a byte that is not UTF-8 becomes a lone surrogate in Python, which
    no results table can hold: refused before any item is made of it."""
    folder = _folder(tmp_path)
    odd = os.fsencode(folder / "bbh") + b"/dates\xff.json"
    shutil.copyfile(folder / "bbh" / "date_understanding.json", odd)
    with pytest.raises(DataError, match=r"the task's name holds a lone surrogate") as err:
        task_names(folder)
    assert "\\udcff" in str(err.value).encode("utf-8", "backslashreplace").decode()


def test_a_prompt_without_the_canary_reads_alike(tmp_path):
    source = SAMPLE / "cot-prompts" / "navigate.txt"
    bare = tmp_path / "navigate.txt"
    bare.write_text(source.read_text(encoding="utf-8").split("\n-----\n", 1)[1] + "\n")
    assert read_prompt(bare) == read_prompt(source)


# the catalogue's entry


def test_the_catalogue_lists_every_file_of_the_release_at_one_commit():
    entry = dataset("bbh")
    tasks = task_names(SAMPLE)
    expected = {f"bbh/bbh/{t}.json" for t in tasks} | {f"bbh/cot-prompts/{t}.txt" for t in tasks}
    assert {f.path for f in entry.files} == expected | {"bbh/LICENSE"}
    commit = "9ee07bd481feebf959a6b59d61ea57bdcf30964d"
    for remote in entry.files:
        upstream = remote.path.removeprefix("bbh/")
        assert remote.url == (
            f"https://raw.githubusercontent.com/suzgunmirac/BIG-Bench-Hard/{commit}/{upstream}"
        )
        assert remote.sha256 is not None and remote.member is None
    assert entry.path == "bbh" and entry.license == "MIT"


@needs_shared
def test_the_catalogue_checksums_are_those_of_the_copies_at_hand():
    for remote in dataset("bbh").files:
        assert sha256(SHARED / remote.path) == remote.sha256, remote.path


def test_the_sample_prompts_and_license_pass_the_catalogue_checksums():
    """The shipped prompts and LICENSE are the release's files (the task files are cut)."""
    for remote in dataset("bbh").files:
        if not remote.path.startswith("bbh/bbh/"):
            assert sha256(locate.SAMPLES / remote.path) == remote.sha256, remote.path
