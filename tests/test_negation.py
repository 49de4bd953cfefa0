"""Negation: edit files (validated, applied) and the rule-based negator."""

import json
from pathlib import Path

import pytest

from faithprobe.errors import DataError
from faithprobe.expectations import ANSWER_FLIPS
from faithprobe.interventions import get
from faithprobe.interventions.negation import (
    NO_EDIT,
    NO_RULE,
    NOT_YES_NO,
    apply_edits,
    negate_sentence,
    read_edits,
)
from faithprobe.records import QAExample

STORY = "Tom has a red ball. The ball is new. Ann likes cats. The ball is round."


def _yes_no(example_id: str, answer: str, rationale: str, **kw) -> QAExample:
    start = STORY.index(rationale)
    return QAExample(
        id=example_id, context=STORY, question="Q?", answers=(answer,), answer_type=answer,
        rationale=((start, start + len(rationale)),), **kw,
    )  # fmt: skip


NEW = _yes_no("q1", "yes", "The ball is new.")
CATS = _yes_no("q2", "yes", "Ann likes cats.")
SPAN = QAExample("q3", STORY, "Who likes cats?", ("Ann",), answer_starts=(STORY.index("Ann"),))
EXAMPLES = [NEW, CATS, SPAN]


def _edits(tmp_path: Path, *records) -> Path:
    path = tmp_path / "edits.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _edit(example_id="q1", original="is new", replacement="is old", answer="no") -> dict:
    return {"id": example_id, "original": original, "replacement": replacement, "answer": answer}


def test_edit_file_is_applied_and_the_gold_flips(tmp_path):
    path = _edits(tmp_path, _edit(), _edit("q2", "Ann likes", "Ann hates", "No"))
    new, cats = apply_edits(EXAMPLES, path)
    assert new.context == "Tom has a red ball. The ball is old. Ann likes cats. The ball is round."
    assert new.answers == ("no",) and new.answer_type == "no" and new.id == "q1/neg"
    assert new.features["gold"] == "no" and new.features["original_answers"] == ["yes"]
    assert new.features["negation"] == "edit-file"
    assert new.context[slice(*new.rationale[0])] == "The ball is old."
    # an edit before a rationale moves it
    assert cats.context[slice(*cats.rationale[0])] == "Ann hates cats."


def test_negation_edit_intervention_uses_the_edits_of_its_example(tmp_path):
    edits = read_edits(_edits(tmp_path, _edit()), EXAMPLES)
    intervention = get("negation_edit")
    assert intervention.expectation is ANSWER_FLIPS
    assert [e.answers for e in intervention.apply(NEW, seed=0, edits=edits).examples] == [("no",)]
    assert intervention.apply(CATS, seed=0, edits=edits).reason == NO_EDIT
    assert intervention.instance_name(edits=edits) == "negation_edit[edits=edits.jsonl]"


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        (_edit("q9"), "id", "no example has id 'q9'"),
        (_edit(original="is blue"), "original", "'is blue' does not occur in the context of q1"),
        (_edit(original="The ball is"), "original", "occurs 2 times"),
        (_edit(answer="yes"), "answer", "expected 'no'"),
        (_edit("q3"), "id", "q3 is not a yes/no question"),
        (_edit(replacement="is new"), "replacement", "same as original"),
        ({"id": "q1", "original": "is new", "answer": "no"}, "replacement", "missing"),
    ],
)
def test_bad_edits_name_file_line_and_field(tmp_path, record, field, message):
    with pytest.raises(DataError, match=message) as err:
        read_edits(_edits(tmp_path, _edit("q2", "Ann likes", "Ann hates"), record), EXAMPLES)
    assert err.value.field == field and err.value.record == "line 2"
    assert "edits.jsonl" in str(err.value)


def test_a_second_edit_for_one_example_and_bad_json_are_errors(tmp_path):
    with pytest.raises(DataError, match="a second edit for 'q1'"):
        read_edits(_edits(tmp_path, _edit(), _edit()), EXAMPLES)
    path = tmp_path / "broken.jsonl"
    path.write_text('{"id": "q1"\n')
    with pytest.raises(DataError, match="broken.jsonl: record line 1: not valid JSON"):
        read_edits(path, EXAMPLES)


@pytest.mark.parametrize(
    ("sentence", "expected", "rule"),
    [
        ("The car was blue.", "The car was not blue.", "insert-not"),
        ("He is not happy.", "He is happy.", "remove-not"),
        ("She didn't go home.", "She did go home.", "remove-not"),
        ("Tom won't come.", "Tom will come.", "remove-not"),
        ("They cannot swim.", "They can swim.", "remove-not"),
        ("They can swim.", "They cannot swim.", "insert-not"),
        ("There were no dogs in the park.", "There were some dogs in the park.", "no->some"),
        ("He had a dog.", "He did not have a dog.", "do-support"),
        ("He has gone home.", "He has not gone home.", "insert-not"),
        ("She will have left by then.", "She will not have left by then.", "insert-not"),
        ("He did his homework.", "He did not do his homework.", "do-support"),
        ("He saw a dog.", "He saw no dog.", "a->no"),
        ("His will was read.", "His will was not read.", "insert-not"),
    ],
)
def test_rule_negator(sentence, expected, rule):
    assert negate_sentence(sentence) == (expected, rule)


@pytest.mark.parametrize(
    "sentence",
    [
        "He went home.",  # no auxiliary, no determiner
        "He never lies.",
        "There was no dog.",  # singular after "no": no safe positive
        "The man is tall and the woman is short.",  # two clauses
        "A lot of people came.",
        "He looks like a coach.",  # "a" after a preposition
        "He saw, as usual, a dog.",
        "It is not only red but also blue.",
        "Is he here?",
        "He is not unhappy, is he not?",
    ],
)
def test_rule_negator_declines_what_it_cannot_do_safely(sentence):
    assert negate_sentence(sentence) is None


def test_rule_negate_intervention_negates_the_rationale_sentence():
    (negated,) = get("rule_negate").apply(NEW, seed=0).examples
    assert (
        negated.context
        == "Tom has a red ball. The ball is not new. Ann likes cats. The ball is round."
    )
    assert negated.answers == ("no",) and negated.features["negation"] == "rule-based"
    assert negated.features["rule"] == "insert-not"
    assert negated.context[slice(*negated.rationale[0])] == "The ball is not new."
    assert get("rule_negate").apply(SPAN, seed=0).reason == NOT_YES_NO
    no_rule = get("rule_negate").apply(CATS, seed=0)
    assert (no_rule.reason, no_rule.detail) == (NO_RULE, "Ann likes cats.")
