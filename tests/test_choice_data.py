"""Multiple-choice loaders and the no-correct-choice probes, on hand-built instances."""

import json
from pathlib import Path

import pytest

from faithprobe.datasets import read_choices, read_hellaswag, read_socialiqa
from faithprobe.errors import DataError
from faithprobe.interventions import get
from faithprobe.interventions.no_correct_choice import NO_DONOR, words
from faithprobe.records import ChoiceExample

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "socialiqa"


def _write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _siqa(tmp_path: Path, labels="2\n1\n") -> Path:
    path = _write_jsonl(
        tmp_path / "dev.jsonl",
        [
            {"context": "Ann fed the cat.", "question": "Why?", "answerA": "a", "answerB": "b",
             "answerC": "c"},
            {"context": "Bo ran.", "question": "How?", "answerA": "fast", "answerB": "slow",
             "answerC": "late"},
        ],
    )  # fmt: skip
    (tmp_path / "dev-labels.lst").write_text(labels)
    return path


def test_socialiqa_joins_context_and_question_and_reads_1_based_labels(tmp_path):
    items = read_socialiqa(_siqa(tmp_path))
    assert [i.label for i in items] == [1, 0]
    assert items[0].prompt == "Ann fed the cat. Why?"
    assert items[0].choices == ("a", "b", "c")
    assert items[0].id == "socialiqa-dev-00001"


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ("2\n", "holds 1 labels"),
        ("2\n4\n", r"record line 2: field 'label': 4 is not allowed \(allowed values: 1, 2, 3\)"),
    ],
)
def test_socialiqa_bad_labels_name_the_file_and_line(tmp_path, labels, message):
    with pytest.raises(DataError, match=message) as err:
        read_socialiqa(_siqa(tmp_path, labels))
    assert "dev-labels.lst" in str(err.value)


def test_socialiqa_missing_field_names_line_and_field(tmp_path):
    path = _write_jsonl(tmp_path / "x.jsonl", [{"context": "c", "answerA": "a"}])
    (tmp_path / "x-labels.lst").write_text("1\n")
    with pytest.raises(DataError, match=r"x.jsonl: record line 1: field 'question': missing"):
        read_socialiqa(path)


def test_hellaswag_and_generic_formats_are_detected(tmp_path):
    hs = _write_jsonl(
        tmp_path / "hs.jsonl",
        [
            {"ind": 7, "ctx_a": "A man sits.", "ctx_b": "he", "endings": ["w", "x", "y", "z"],
             "label": "2"},
            {"ind": 8, "ctx": "A dog runs.", "endings": ["a", "b", "c", "d"], "label": 0},
        ],
    )  # fmt: skip
    items = read_choices(hs, rule="qa")  # the raw text: ctx, or ctx_a + ctx_b
    assert [i.id for i in items] == ["hellaswag-7", "hellaswag-8"]
    assert items[0].prompt == "A man sits. he" and items[0].label == 2
    assert items[0].features["frame"] == "question"
    with pytest.raises(DataError, match="record line 1: field 'activity_label': missing"):
        read_choices(hs)  # the standard rule needs HellaSwag's own fields
    gen = _write_jsonl(
        tmp_path / "g.jsonl", [{"id": "q1", "prompt": "2+2?", "choices": ["3", "4"], "label": 1}]
    )
    assert read_choices(gen) == [ChoiceExample("q1", "2+2?", ("3", "4"), 1)]


def test_out_of_range_label_is_a_data_error(tmp_path):
    hs = _write_jsonl(tmp_path / "hs.jsonl", [{"ctx": "c", "endings": ["a", "b"], "label": 5}])
    with pytest.raises(DataError, match=r"record line 1: field 'label': expected a choice index"):
        read_hellaswag(hs, rule="qa")
    with pytest.raises(DataError, match="not a multiple-choice file"):
        read_choices(_write_jsonl(tmp_path / "z.jsonl", [{"text": "t"}]))


HELLASWAG = Path(__file__).parent / "data" / "hellaswag_val_tiny.jsonl"


def test_hellaswag_standard_rule_is_lm_evals_preprocessing():
    """The query and choices lm-evaluation-harness builds for HellaSwag (its own
    ``process_docs``, run here on the same records) are what the standard rule reads."""
    utils = pytest.importorskip("lm_eval.tasks.hellaswag.utils")
    datasets = pytest.importorskip("datasets")
    records = [json.loads(line) for line in HELLASWAG.read_text().splitlines()]
    docs = utils.process_docs(datasets.Dataset.from_list(records))
    items = read_choices(HELLASWAG)
    assert [i.prompt for i in items] == [d["query"] for d in docs]
    assert [list(i.choices) for i in items] == [d["choices"] for d in docs]
    assert [i.label for i in items] == [d["gold"] for d in docs]
    assert all(i.features["frame"] == "continuation" for i in items)
    # what the rule does, spelled out on the fixture: activity label, ctx_b capitalised (the
    # rest of it lower-cased, as str.capitalize does), WikiHow markers gone
    assert items[0].prompt == "Roof shingle removal: A man is sitting on a roof. He"
    assert items[1].prompt == (
        "Home and Garden: How to start a kitchen garden. Choose a sunny spot. Most vegetables "
        "need six hours of sun a day."
    )
    assert items[2].prompt.endswith("Then kai hands her a pick and she")
    assert not any("[" in c for i in items for c in (i.prompt, *i.choices))


def test_hellaswag_markers_are_cleaned_like_lm_eval():
    utils = pytest.importorskip("lm_eval.tasks.hellaswag.utils")
    from faithprobe.datasets.multiple_choice import hellaswag_clean

    for text in ("[header] How to x [title] Do y. [step] Then z.", " a  [b] c [title]",
                 "[substeps] Pick one.", "no markers", "  [title] x [title] y  "):  # fmt: skip
        assert hellaswag_clean(text) == utils.preprocess(text), text


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/socialiqa not present")
def test_real_socialiqa_dev_loads():
    items = read_choices(SHARED / "dev.jsonl")
    assert len(items) == 1954
    assert all(len(i.choices) == 3 and i.label in (0, 1, 2) for i in items)


# --------------------------------------------------------------------------- probes

POOL = sorted(
    [
        ChoiceExample("q1", "Kai fed the dog. Why?", ("to help", "to sleep", "to run"), 0),
        ChoiceExample("q2", "Robin lost a bet. How does Robin feel?", ("sad", "happy", "ok"), 0),
        ChoiceExample("q3", "Sam sang loudly at night", ("tired", "calm", "loud"), 2),
        ChoiceExample("q4", "What did Kai want?", ("food", "to help", "rest"), 1),
    ],
    key=lambda e: e.id,
)


def test_no_question_empties_the_prompt_and_keeps_the_choices():
    (x,) = get("no_question").apply(POOL[0], seed=0, trial=3).examples
    assert x.prompt == "" and x.choices == POOL[0].choices
    assert x.label is None and x.features["pseudo_label"] == 0
    assert x.features["probe"] == "no_question" and x.features["trial"] == 3
    assert x.id == "q1/no_question[trial=3]"


def test_wrong_question_takes_another_instances_prompt():
    for trial in range(10):
        (x,) = get("wrong_question").apply(POOL[0], seed=1, pool=POOL, trial=trial).examples
        donor = next(e for e in POOL if e.id == x.features["donor_id"])
        assert donor.id != "q1" and x.prompt == donor.prompt
        assert x.choices == POOL[0].choices and x.features["pseudo_label"] == 0


def test_wrong_question_disjoint_only_takes_prompts_sharing_no_word():
    seen = set()
    for trial in range(20):
        (x,) = (
            get("wrong_question")
            .apply(POOL[0], seed=0, pool=POOL, trial=trial, disjoint=True)
            .examples
        )
        assert not words(x.prompt) & words(POOL[0].prompt)
        seen.add(x.features["donor_id"])
    assert seen == {"q2", "q3"}  # q4 shares "Kai"
    lonely = ChoiceExample("q9", "Kai Robin Sam", ("a", "b"), 0)
    pool = [*POOL, lonely]
    outcome = get("wrong_question").apply(lonely, seed=0, pool=pool, disjoint=True)
    assert outcome.examples == () and outcome.reason == NO_DONOR


def test_no_right_answer_replaces_only_the_right_choice_with_a_foreign_right_answer():
    for trial in range(10):
        (x,) = get("no_right_answer").apply(POOL[3], seed=0, pool=POOL, trial=trial).examples
        donor = next(e for e in POOL if e.id == x.features["donor_id"])
        assert x.prompt == POOL[3].prompt
        assert x.choices[1] == donor.choices[donor.label]
        assert x.choices[0] == "food" and x.choices[2] == "rest"
        assert x.features["pseudo_label"] == 1 and x.label is None
        # q1's right answer "to help" is already a choice of q4, so q1 is never the donor
        assert donor.id != "q1"


def test_probe_draws_depend_on_seed_and_trial_only():
    a = get("wrong_question").apply(POOL[0], seed=5, pool=POOL, trial=2).examples
    b = get("wrong_question").apply(POOL[0], seed=5, pool=list(POOL), trial=2).examples
    assert a == b
    donors = {
        get("wrong_question")
        .apply(POOL[0], seed=5, pool=POOL, trial=t)
        .examples[0]
        .features["donor_id"]
        for t in range(12)
    }
    assert len(donors) > 1
