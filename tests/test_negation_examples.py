"""The hand-written negation examples (examples/negation) load and fit together."""

from pathlib import Path

import pytest

from faithprobe.datasets.coqa import read_coqa
from faithprobe.interventions import get
from faithprobe.interventions.negation import FLIP, apply_edit, read_edits

HERE = Path(__file__).parents[1] / "examples" / "negation"


@pytest.fixture(scope="module")
def examples():
    return read_coqa(HERE / "stories.coqa.json")


@pytest.fixture(scope="module")
def edits(examples):
    return read_edits(HERE / "edits.jsonl", examples)  # validates every edit


def test_36_yes_no_questions_half_yes_half_no(examples):
    assert len(examples) == 36 and len({e.id for e in examples}) == 36
    golds = [e.answer_type for e in examples]
    assert golds.count("yes") == 18 and golds.count("no") == 18
    for e in examples:
        assert e.answers == (e.answer_type,) and len(e.rationale) == 1


def test_every_rationale_lies_after_the_first_sentence(examples):
    for e in examples:
        assert get("truncate_remove_rationale").apply(e, seed=0).reason is None, e.id


def test_one_edit_per_example_flips_the_answer(examples, edits):
    assert set(edits) == {e.id for e in examples}
    for e in examples:
        edit = edits[e.id]
        assert edit.answer == FLIP[e.answer_type]
        changed = apply_edit(e, edit)
        assert edit.replacement in changed.context
        assert edit.original not in changed.context or edit.original in edit.replacement
        assert changed.answers == (edit.answer,) and changed.answer_type == edit.answer
