"""Deletion interventions (TS, TS-R, OS-R, +Aug) on hand-made stories: which sentences go
and what is appended."""

import json

import pytest

from faithprobe.datasets.qa_formats import read_hotpotqa
from faithprobe.expectations import ANSWER_UNCHANGED, ANSWER_UNKNOWN
from faithprobe.interventions import get
from faithprobe.interventions.deletion import (
    AUGMENT_FAILED,
    FIRST_SENTENCE,
    NO_RATIONALE,
    NOTHING_LEFT,
    RESTORED,
    UNKNOWN_GOLD,
    Augmenter,
    occurs,
    remove_sentences,
)
from faithprobe.records import UNKNOWN, QAExample
from faithprobe.sentences import SPLITTERS

STORY = (
    "Tom has a red ball. He plays in the garden. His sister is Ann. Ann likes cats. "
    "The cat is black."
)


def _example(answer: str, rationale: str, answer_type: str = "span", **kw) -> QAExample:
    start = STORY.index(rationale)
    starts = (STORY.index(answer, start),) if answer_type == "span" else ()
    return QAExample(
        id="x1",
        context=STORY,
        question="Q?",
        answers=(answer,),
        answer_type=answer_type,
        answer_starts=starts,
        rationale=((start, start + len(rationale)),),
        **kw,
    )


SISTER = _example("Ann", "His sister is Ann.")


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_truncate_story_cuts_after_the_rationale_sentence(splitter):
    (ts,) = get("truncate_story").apply(SISTER, seed=0, splitter=splitter).examples
    assert ts.context == "Tom has a red ball. He plays in the garden. His sister is Ann."
    assert ts.features["removed"] == ["Ann likes cats.", "The cat is black."]
    assert ts.features["expected"] == "answer" and ts.features["variant"] == "TS"
    assert ts.answers == ("Ann",) and ts.answer_starts == SISTER.answer_starts
    assert ts.rationale == SISTER.rationale and ts.id == "x1/ts"


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_truncate_remove_rationale_removes_it_and_appends_the_answer(splitter):
    (tsr,) = get("truncate_remove_rationale").apply(SISTER, seed=0, splitter=splitter).examples
    assert tsr.context == "Tom has a red ball. He plays in the garden. Ann"
    assert tsr.features["removed"] == ["His sister is Ann."]
    assert tsr.features["appended"] == "Ann" and not tsr.features["answer_present"]
    assert tsr.features["expected"] == UNKNOWN and tsr.features["original_id"] == "x1"
    assert tsr.answers == ("Ann",) and tsr.rationale == () and tsr.id == "x1/ts-r"


def test_remove_support_keeps_the_rest_and_appends_only_a_missing_answer():
    (osr,) = get("remove_support").apply(SISTER, seed=0).examples
    assert (
        osr.context
        == "Tom has a red ball. He plays in the garden. Ann likes cats. The cat is black."
    )
    assert osr.features["appended"] is None and osr.features["answer_present"]
    red = _example("red", "Tom has a red ball.")
    (osr,) = get("remove_support").apply(red, seed=0).examples
    assert (
        osr.context
        == "He plays in the garden. His sister is Ann. Ann likes cats. The cat is black. red"
    )


def test_no_reinsertion_when_turned_off_or_for_yes_no_answers():
    (tsr,) = get("truncate_remove_rationale").apply(SISTER, seed=0, reinsert=False).examples
    assert tsr.context == "Tom has a red ball. He plays in the garden."
    assert tsr.features["appended"] is None
    black = _example("yes", "The cat is black.", answer_type="yes")
    (tsr,) = get("truncate_remove_rationale").apply(black, seed=0).examples
    assert (
        tsr.context
        == "Tom has a red ball. He plays in the garden. His sister is Ann. Ann likes cats."
    )
    (ts,) = get("truncate_story").apply(black, seed=0).examples
    assert ts.context == STORY and ts.features["removed"] == []


def test_a_rationale_across_sentences_removes_every_sentence_it_touches():
    garden = _example("garden", "in the garden. His sister")
    (tsr,) = get("truncate_remove_rationale").apply(garden, seed=0).examples
    assert tsr.context == "Tom has a red ball. garden"
    assert tsr.features["removed"] == ["He plays in the garden.", "His sister is Ann."]


@pytest.mark.parametrize(
    ("name", "example", "reason"),
    [
        ("truncate_remove_rationale", _example("red", "Tom has a red ball."), FIRST_SENTENCE),
        ("truncate_story", _example(UNKNOWN, "Tom has", answer_type=UNKNOWN), UNKNOWN_GOLD),
        (
            "remove_support",
            QAExample("x2", STORY, "Q?", ("Tom",), answer_starts=(0,)),
            NO_RATIONALE,
        ),
        ("remove_support", _example("The cat is black.", "The cat is black."), RESTORED),
    ],
)
def test_dropped_examples_give_no_output_and_a_reason(name, example, reason):
    outcome = get(name).apply(example, seed=0)
    assert outcome.examples == () and outcome.reason == reason


def test_augment_appends_a_generated_sentence_or_drops_the_example():
    echo = Augmenter("echo", lambda example, answer: f" It may be {answer}. ")
    (tsr,) = get("truncate_remove_rationale").apply(SISTER, seed=0, augment=echo).examples
    assert tsr.context == "Tom has a red ball. He plays in the garden. It may be Ann."
    assert tsr.features["appended"] == "It may be Ann."
    assert tsr.features["variant"] == "TS-R+Aug" and tsr.id == "x1/ts-r+aug"
    name = get("truncate_remove_rationale").instance_name(augment=echo)
    assert name == "truncate_remove_rationale[augment=echo]"

    bad = Augmenter("bad", lambda example, answer: "No idea.")
    dropped = get("remove_support").apply(
        _example("red", "Tom has a red ball."), seed=0, augment=bad
    )
    assert dropped.examples == ()
    assert dropped.reason == AUGMENT_FAILED and dropped.detail == "No idea."
    with pytest.raises(ValueError, match="needs reinsert=True"):
        get("remove_support").apply(SISTER, seed=0, augment=echo, reinsert=False)


def test_an_answer_inside_a_longer_word_does_not_count_as_present():
    assert occurs("Ann", "ann likes cats") and occurs("St. Louis", "in St. Louis.")
    assert not occurs("2", "in 2015") and not occurs("Ann", "Anna") and not occurs(" ", "a b")


def test_registry_metadata():
    assert get("truncate_story").expectation is ANSWER_UNCHANGED
    for name in ("truncate_remove_rationale", "remove_support"):
        assert get(name).expectation is ANSWER_UNKNOWN and get(name).family == "deletion"


PARAGRAPHS = "Title\nA one. B two.\n\nTitle2\nC three."
SPANS = [(6, 12), (13, 19), (28, 36)]


@pytest.mark.parametrize(
    ("gone", "expected"),
    [
        ([1], "Title\nA one.\n\nTitle2\nC three."),
        ([0], "Title\nB two.\n\nTitle2\nC three."),
        ([0, 1], "Title2\nC three."),  # a title goes with the last of its sentences
        ([2], "Title\nA one. B two."),
        ([1, 2], "Title\nA one."),
        ([0, 1, 2], ""),
    ],
)
def test_remove_sentences_keeps_lines_and_maps_the_kept_spans(gone, expected):
    text, kept = remove_sentences(PARAGRAPHS, SPANS, gone)
    assert text == expected
    texts = [PARAGRAPHS[s:e] for i, (s, e) in enumerate(SPANS) if i not in gone]
    assert [text[s:e] for s, e in kept] == texts


def test_remove_support_on_hotpotqa_uses_its_own_sentences(tmp_path):
    record = {
        "_id": "h1", "question": "Who was born in Rome?", "answer": "Bob", "type": "bridge",
        "level": "easy", "supporting_facts": [["Bob", 1], ["Ann", 0]],
        "context": [["Bob", ["Bob is a painter.", " He was born in Rome."]],
                    ["Ann", ["Ann is a singer.", " She was born in Paris."]]],
    }  # fmt: skip
    path = tmp_path / "h.json"
    path.write_text(json.dumps([record]))
    (example,) = read_hotpotqa(path)
    (osr,) = get("remove_support").apply(example, seed=0).examples
    assert osr.context == "Bob\nBob is a painter.\n\nAnn\nShe was born in Paris."
    assert osr.features["deletion_splitter"] == "native" and osr.features["appended"] is None
    assert [osr.context[s:e] for s, e in osr.features["sentences"]] == [
        "Bob is a painter.",
        "She was born in Paris.",
    ]


PAINTERS = [
    ["Bob", ["Bob is a painter.", " He was born in Rome."]],
    ["Ann", ["Ann is a singer.", " She was born in Paris."]],
    ["Cy", ["Cy is a poet.", " He lives in Oslo."]],
]


def _hotpot_os_r(tmp_path, answer: str, facts: list, context=PAINTERS):
    record = {
        "_id": "h2", "question": "Q?", "answer": answer, "type": "bridge", "level": "easy",
        "supporting_facts": facts, "context": context,
    }  # fmt: skip
    path = tmp_path / "h.json"
    path.write_text(json.dumps([record]))
    (example,) = read_hotpotqa(path)
    return example, get("remove_support").apply(example, seed=0)


@pytest.mark.parametrize(
    ("answer", "facts", "expected", "appended"),
    [
        # the first paragraph is all support: it goes with its title and the blank line
        ("Rome", [["Bob", 0], ["Bob", 1], ["Ann", 0], ["Cy", 1]],
         "Ann\nShe was born in Paris.\n\nCy\nCy is a poet. Rome", "Rome"),
        # a middle one: one blank line is left between its neighbours
        ("Paris", [["Ann", 0], ["Ann", 1], ["Bob", 1], ["Cy", 0]],
         "Bob\nBob is a painter.\n\nCy\nHe lives in Oslo. Paris", "Paris"),
        # the last one: the answer follows the last kept sentence, not a bare title
        ("Oslo", [["Cy", 0], ["Cy", 1], ["Bob", 0], ["Ann", 1]],
         "Bob\nHe was born in Rome.\n\nAnn\nAnn is a singer. Oslo", "Oslo"),
        # the answer is only a title, of a paragraph that keeps a sentence: shown, so present
        ("Ann", [["Ann", 0], ["Bob", 1], ["Cy", 1]],
         "Bob\nBob is a painter.\n\nAnn\nShe was born in Paris.\n\nCy\nCy is a poet.", None),
        # ... of a paragraph that goes whole: the title goes too, so the answer is appended
        ("Ann", [["Ann", 0], ["Ann", 1], ["Bob", 1], ["Cy", 0], ["Cy", 1]],
         "Bob\nBob is a painter. Ann", "Ann"),
        # a yes/no answer is never appended
        ("yes", [["Cy", 0], ["Cy", 1], ["Ann", 1], ["Bob", 0]],
         "Bob\nHe was born in Rome.\n\nAnn\nAnn is a singer.", None),
    ],
)  # fmt: skip
def test_remove_support_on_hotpotqa_takes_a_title_with_its_last_sentence(
    tmp_path, answer, facts, expected, appended
):
    example, outcome = _hotpot_os_r(tmp_path, answer, facts)
    osr = outcome.example
    assert osr.context == expected
    assert osr.features["appended"] == appended
    assert osr.features["answer_present"] is (appended is None and answer not in ("yes", "no"))
    assert [osr.context[s:e] for s, e in osr.features["sentences"]] == [
        example.context[s:e] for s, e in example.features["sentences"]
        if (s, e) not in example.rationale
    ]  # fmt: skip
    for new, old, size in osr.features["copied"]:
        assert osr.context[new : new + size] == example.context[old : old + size]


def test_remove_support_drops_a_hotpotqa_question_whose_context_is_all_support(tmp_path):
    facts = [[title, k] for title, sentences in PAINTERS[:2] for k in range(len(sentences))]
    _, outcome = _hotpot_os_r(tmp_path, "Rome", facts, context=PAINTERS[:2])
    assert outcome.examples == () and outcome.reason == NOTHING_LEFT


PARAGRAPH_STORY = "Tom has a red ball.\nHe plays in the garden. His sister is Ann.\nAnn likes cats."


@pytest.mark.parametrize(
    ("name", "answer", "rationale"),
    [
        ("truncate_story", "Ann", "His sister is Ann."),
        ("truncate_remove_rationale", "Ann", "His sister is Ann."),  # the answer is appended
        ("truncate_remove_rationale", "garden", "His sister is Ann."),  # still in the text
        ("remove_support", "Ann", "He plays in the garden. His sister is Ann."),
        ("remove_support", "ball", "Tom has a red ball."),
    ],
)
def test_copied_pieces_map_the_changed_text_back_to_the_original(name, answer, rationale):
    start = PARAGRAPH_STORY.index(rationale)
    example = QAExample(
        id="p1",
        context=PARAGRAPH_STORY,
        question="Q?",
        answers=(answer,),
        answer_starts=(PARAGRAPH_STORY.index(answer),),
        rationale=((start, start + len(rationale)),),
    )
    changed = get(name).apply(example, seed=0, splitter="pysbd").example
    pieces = changed.features["copied"]
    assert pieces, "something is copied"
    for new, old, size in pieces:
        assert size > 0
        assert changed.context[new : new + size] == PARAGRAPH_STORY[old : old + size]
    covered = sum(size for _, _, size in pieces)
    appended = changed.features.get("appended")
    assert covered == len(changed.context) - (len(appended) + 1 if appended else 0)
