"""Expectations are three-valued: met, not met, or None when they do not apply."""

import pytest

from faithprobe.expectations import (
    ANSWER_FLIPS,
    ANSWER_NEW_ENTITY,
    ANSWER_OTHER_ENTITY,
    ANSWER_UNCHANGED,
    ANSWER_UNKNOWN,
    NO_CHOICE_CORRECT,
    PREDICTION_CHANGES,
    PREDICTION_KEPT,
    Behaviour,
)
from faithprobe.records import UNKNOWN

GOLD_MATCHED = (ANSWER_UNCHANGED, ANSWER_FLIPS, ANSWER_OTHER_ENTITY, ANSWER_NEW_ENTITY)


@pytest.mark.parametrize("expectation", GOLD_MATCHED)
def test_expectations_met_by_giving_the_gold(expectation):
    assert expectation.met(Behaviour("a", "b", "b")) is True
    assert expectation.met(Behaviour("b", "a", "b")) is False
    assert expectation.met(Behaviour("a", None, "b")) is None  # no prediction
    assert expectation.met(Behaviour("a", "b", None)) is None  # gold unknown
    # the original prediction plays no part
    assert expectation.met(Behaviour(None, "b", "b")) is True


def test_no_choice_correct_is_met_by_leaving_the_pseudo_correct_choice():
    assert NO_CHOICE_CORRECT.met(Behaviour("1", "2", "1")) is True
    assert NO_CHOICE_CORRECT.met(Behaviour("1", "1", "1")) is False
    assert NO_CHOICE_CORRECT.met(Behaviour("1", None, "1")) is None
    assert NO_CHOICE_CORRECT.met(Behaviour("1", "2", None)) is None


def test_prediction_changes_and_kept_compare_the_two_predictions():
    changed, kept = Behaviour("yes", "no", "no"), Behaviour("yes", "yes", "no")
    assert PREDICTION_CHANGES.met(changed) is True and PREDICTION_CHANGES.met(kept) is False
    assert PREDICTION_KEPT.met(kept) is True and PREDICTION_KEPT.met(changed) is False
    for expectation in (PREDICTION_CHANGES, PREDICTION_KEPT):
        assert expectation.met(Behaviour(None, "no", "no")) is None
        assert expectation.met(Behaviour("yes", None, "no")) is None
        # the gold plays no part
        assert expectation.met(Behaviour("yes", "yes", None)) is not None


def test_answer_unknown_needs_only_the_intervened_prediction():
    assert ANSWER_UNKNOWN.met(Behaviour(None, UNKNOWN, None)) is True
    assert ANSWER_UNKNOWN.met(Behaviour("Ann", "Ann", "Ann")) is False
    assert ANSWER_UNKNOWN.met(Behaviour("Ann", None, "Ann")) is None
