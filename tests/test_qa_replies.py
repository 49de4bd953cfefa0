"""Reading generated replies (faithprobe.qa.replies) on hand-written replies: yes, no,
abstentions, hedges, refusals and the rest, for yes/no and for other questions."""

from __future__ import annotations

import pytest

from faithprobe.qa.answers import extract_answer
from faithprobe.qa.replies import KINDS, SPAN_KINDS, YES_NO_KINDS, read_reply

YES_NO_REPLIES = [
    ("Yes.", "yes", "yes"),
    ("yes, Tom has a red ball", "yes", "yes"),
    ("A: Yes", "yes", "yes"),
    ('"Yes."', "yes", "yes"),
    ("Correct.", "yes", "yes"),
    ("No.", "no", "no"),
    ("No, the car was red.", "no", "no"),
    ("No, the text does not say Tom has a dog.", "no", "no"),  # it commits first
    ("Nope", "no", "no"),
    ("Not at all.", "no", "no"),
    ("unknown", "abstention", "unknown"),
    ("Unknown.", "abstention", "Unknown"),
    ("I don't know.", "abstention", "I don't know"),
    ("No answer", "abstention", "No answer"),
    ("No, I don't know.", "abstention", "No, I don't know"),
    ("It is not mentioned in the story.", "abstention", "It is not mentioned in the story"),
    ("The text does not say.", "abstention", "The text does not say"),
    ("The passage doesn't mention a dog.", "abstention", "The passage doesn't mention a dog"),
    ("There is not enough information to tell.", "abstention",
     "There is not enough information to tell"),
    ("It cannot be determined from the story.", "abstention",
     "It cannot be determined from the story"),
    ("I'm sorry, but the story does not say.", "abstention",
     "I'm sorry, but the story does not say"),
    ("Not necessarily.", "hedge", "Not necessarily"),
    ("No, not necessarily.", "hedge", "No, not necessarily"),
    ("It depends on the weather.", "hedge", "It depends on the weather"),
    ("Yes and no.", "hedge", "Yes and no"),
    ("Yes, probably.", "hedge", "Yes, probably"),
    ("Maybe.", "hedge", "Maybe"),
    ("Perhaps he did.", "hedge", "Perhaps he did"),
    ("I'm not sure.", "hedge", "I'm not sure"),
    ("It might be blue.", "hedge", "It might be blue"),
    ("He could have.", "hedge", "He could have"),
    ("Sometimes.", "hedge", "Sometimes"),
    ("The car may or may not be blue.", "hedge", "The car may or may not be blue"),
    ("It is hard to say.", "hedge", "It is hard to say"),
    ("I'm sorry, but I can't help with that.", "refusal", "I'm sorry, but I can't help with that"),
    ("I cannot answer that question.", "refusal", "I cannot answer that question"),
    ("As an AI language model, I have no opinion.", "refusal",
     "As an AI language model, I have no opinion"),
    ("The car was red.", "other", "The car was red"),
    ("None of them.", "other", "None of them"),
    ("blue", "other", "blue"),
    ("", "empty", ""),
    ("  \n", "empty", ""),
    ("A:", "empty", ""),
]  # fmt: skip


@pytest.mark.parametrize("reply, kind, answer", YES_NO_REPLIES)
def test_yes_no_replies(reply, kind, answer):
    read = read_reply(reply, yes_no=True)
    assert (read.kind, read.answer) == (kind, answer)
    assert read.abstained == (kind == "abstention")
    assert kind in YES_NO_KINDS


SPAN_REPLIES = [
    ("Paris", "answer"),
    ("The answer is Paris.", "answer"),
    ("No one came.", "answer"),  # a leading "no" is only a yes/no answer to a yes/no question
    ("Yes", "answer"),
    ("None of them were red", "answer"),
    ("The Tomb of the Unknown Soldier", "answer"),
    ("He depends on his mother.", "answer"),  # "depends" is a hedge only at the start
    ("He could be executed.", "answer"),  # "it/he might, could" is a hedge on yes/no only
    ("Partly cloudy", "answer"),
    ("A", "empty"),  # the article alone: nothing said (is_unknown("A") is true)
    ("unknown", "abstention"),
    ("The text does not mention it.", "abstention"),
    ("Cannot be determined from the passage.", "abstention"),
    ("Probably Paris.", "hedge"),
    ("It depends on the season.", "hedge"),
    ("I'm sorry, I cannot answer.", "refusal"),
    ("", "empty"),
]


@pytest.mark.parametrize("reply, kind", SPAN_REPLIES)
def test_span_replies(reply, kind):
    read = read_reply(reply, yes_no=False)
    assert read.kind == kind and kind in SPAN_KINDS
    # the answer scored is the reply's answer text, whatever its kind: no yes/no label made
    assert read.answer == extract_answer(reply)


def test_the_kinds_are_listed_once_in_reading_order():
    assert set(YES_NO_KINDS) | set(SPAN_KINDS) == set(KINDS)
    assert len(set(KINDS)) == len(KINDS)
    assert YES_NO_KINDS[:2] == ("yes", "no") and SPAN_KINDS[0] == "answer"
