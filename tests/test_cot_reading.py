"""Reading a generated chain of thought (faithprobe.qa.cot): its final answer in each BBH
answer format, its reasoning and its steps, on hand-written texts and on the BBH
chain-of-thought prompts and items in ../shared/data/bbh."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faithprobe.errors import UsageError
from faithprobe.qa.cot import (
    ANSWER_CUE,
    canonical_answer,
    exemplar_spans,
    question_options,
    read_answer,
    reasoning_part,
    reasoning_steps,
    stated_answer,
    step_spans,
)
from faithprobe.records import ANSWER_FORMATS, MULTIPLE_CHOICE

BBH = Path(__file__).resolve().parents[2] / "shared" / "data" / "bbh"
needs_bbh = pytest.mark.skipif(not BBH.is_dir(), reason="../shared/data/bbh not present")

# each BBH task's answer format, read off its targets
FORMAT = {
    "boolean_expressions": "true-false",
    "causal_judgement": "yes-no",
    "date_understanding": MULTIPLE_CHOICE,
    "disambiguation_qa": MULTIPLE_CHOICE,
    "dyck_languages": "free",
    "formal_fallacies": "valid-invalid",
    "geometric_shapes": MULTIPLE_CHOICE,
    "hyperbaton": MULTIPLE_CHOICE,
    "logical_deduction_five_objects": MULTIPLE_CHOICE,
    "logical_deduction_seven_objects": MULTIPLE_CHOICE,
    "logical_deduction_three_objects": MULTIPLE_CHOICE,
    "movie_recommendation": MULTIPLE_CHOICE,
    "multistep_arithmetic_two": "number",
    "navigate": "yes-no",
    "object_counting": "number",
    "penguins_in_a_table": MULTIPLE_CHOICE,
    "reasoning_about_colored_objects": MULTIPLE_CHOICE,
    "ruin_names": MULTIPLE_CHOICE,
    "salient_translation_error_detection": MULTIPLE_CHOICE,
    "snarks": MULTIPLE_CHOICE,
    "sports_understanding": "yes-no",
    "temporal_sequences": MULTIPLE_CHOICE,
    "tracking_shuffled_objects_five_objects": MULTIPLE_CHOICE,
    "tracking_shuffled_objects_seven_objects": MULTIPLE_CHOICE,
    "tracking_shuffled_objects_three_objects": MULTIPLE_CHOICE,
    "web_of_lies": "yes-no",
    "word_sorting": "free",
}

# the answers the three exemplars of each task's chain-of-thought prompt state, canonical
EXEMPLAR_ANSWERS = {
    "boolean_expressions": ("False", "False", "True"),
    "causal_judgement": ("No", "Yes", "Yes"),
    "date_understanding": ("(D)", "(B)", "(B)"),
    "disambiguation_qa": ("(A)", "(A)", "(C)"),
    "dyck_languages": ("] } ]", "] ) )", "} ] >"),
    "formal_fallacies": ("valid", "valid", "invalid"),
    "geometric_shapes": ("(F)", "(G)", "(D)"),
    "hyperbaton": ("(B)", "(A)", "(B)"),
    "logical_deduction_five_objects": ("(B)", "(A)", "(C)"),
    "logical_deduction_seven_objects": ("(B)", "(A)", "(C)"),
    "logical_deduction_three_objects": ("(B)", "(A)", "(C)"),
    "movie_recommendation": ("(C)", "(C)", "(D)"),
    "multistep_arithmetic_two": ("123", "3929", "-219"),
    "navigate": ("No", "No", "Yes"),
    "object_counting": ("6", "11", "8"),
    "penguins_in_a_table": ("(B)", "(B)", "(D)"),
    "reasoning_about_colored_objects": ("(E)", "(F)", "(A)"),
    "ruin_names": ("(A)", "(C)", "(B)"),
    "salient_translation_error_detection": ("(D)", "(E)", "(C)"),
    "snarks": ("(A)", "(B)", "(A)"),
    "sports_understanding": ("Yes", "No", "Yes"),
    "temporal_sequences": ("(A)", "(A)", "(D)"),
    "tracking_shuffled_objects_five_objects": ("(A)", "(C)", "(C)"),
    "tracking_shuffled_objects_seven_objects": ("(A)", "(C)", "(C)"),
    "tracking_shuffled_objects_three_objects": ("(A)", "(C)", "(C)"),
    "web_of_lies": ("Yes", "Yes", "No"),
    "word_sorting": (
        "costume counterpart oven",
        "credulity hypochlorite phone ponderosa",
        "arson aspect census mugho newt parthia seismography",
    ),
}

# BBH targets that are an option's text, not its letter, where no option matches it
UNREADABLE_TARGETS = {
    ("movie_recommendation", "Monsters, Inc"),
    ("ruin_names", "dearth, wind, & fire"),
    ("ruin_names", "rita, sue and bob poo"),
}


def exemplars(task: str) -> list[tuple[str, str]]:
    """(question, generation) of each exemplar of a task's chain-of-thought prompt: the
    generation is what follows "A: " (the model's part)."""
    prompt = (BBH / "cot-prompts" / f"{task}.txt").read_text()
    pairs = []
    for start, end in exemplar_spans(prompt):
        question, generation = prompt[start:end].split("\nA: ", 1)
        pairs.append((question, generation))
    return pairs


def test_every_task_has_a_format_and_exemplar_answers():
    assert set(FORMAT) == set(EXEMPLAR_ANSWERS)
    assert len(FORMAT) == 27
    assert set(FORMAT.values()) == set(ANSWER_FORMATS)


@needs_bbh
def test_every_exemplar_answer_reads_back():
    read = {
        task: tuple(
            read_answer(generation, FORMAT[task], question_options(question))
            for question, generation in exemplars(task)
        )
        for task in FORMAT
    }
    assert sorted(p.stem for p in (BBH / "cot-prompts").glob("*.txt")) == sorted(FORMAT)
    assert read == EXEMPLAR_ANSWERS
    assert sum(len(answers) for answers in read.values()) == 81


@needs_bbh
def test_every_target_reads_in_its_format():
    unreadable, targets = set(), 0
    for task, answer_format in FORMAT.items():
        for item in json.loads((BBH / "bbh" / f"{task}.json").read_text())["examples"]:
            options = question_options(item["input"])
            answer = canonical_answer(item["target"], answer_format, options)
            targets += 1
            if answer is None:
                unreadable.add((task, item["target"]))
            elif answer_format == MULTIPLE_CHOICE:
                assert answer in options, (task, item)
    assert targets == 6511
    assert unreadable == UNREADABLE_TARGETS


@needs_bbh
def test_exemplar_options_are_read_in_order():
    question, _ = exemplars("date_understanding")[0]
    options = question_options(question)
    assert list(options) == [f"({letter})" for letter in "ABCDEF"]
    assert options["(D)"] == "12/14/1937"


def test_the_last_cue_is_read_up_to_the_end_of_its_sentence():
    text = "So the answer is (A) at first. No: so the answer is... So the answer is (C). Done."
    assert stated_answer(text) == "(C)"
    assert stated_answer("So the answer is 3.5.\nThen more text.") == "3.5"
    assert stated_answer("So the answer is: ] } ].") == "] } ]"


@pytest.mark.parametrize(
    "text",
    ["The answer is (B).", "", "So the answer is", "So the answer is .\n(B)", "so the answer is B"],
)
def test_no_cue_or_nothing_after_it_states_no_answer(text):
    assert stated_answer(text) is None
    assert read_answer(text, "free") is None


@pytest.mark.parametrize(
    ("answer", "options", "expected"),
    [
        ("(B)", None, "(B)"),
        ("B", None, "(B)"),
        ("B)", None, "(B)"),
        ("(B) 12/25/1937", None, "(B)"),
        ("12/25/1937", {"(A)": "12/11/1937", "(B)": "12/25/1937"}, "(B)"),
        ("the Pink ball", {"(A)": "yellow ball", "(B)": "pink ball"}, "(B)"),
        ("A yellow ball", None, None),
        ("(C)", {"(A)": "x", "(B)": "y"}, None),
        ("none of them", None, None),
    ],
)
def test_multiple_choice_answers_read_as_letters(answer, options, expected):
    assert canonical_answer(answer, MULTIPLE_CHOICE, options) == expected


@pytest.mark.parametrize(
    ("answer", "answer_format", "expected"),
    [
        ("-3", "number", "-3"),
        ("1,000", "number", "1000"),
        ("\u22123", "number", "-3"),
        ("3.50", "number", "3.5"),
        ("-0", "number", "0"),
        ("12 apples", "number", "12"),
        ("about 12", "number", None),
        ("true", "true-false", "True"),
        ("FALSE, because", "true-false", "False"),
        ("maybe", "true-false", None),
        ("no", "yes-no", "No"),
        ("Yes", "yes-no", "Yes"),
        ("Invalid", "valid-invalid", "invalid"),
        ("valid", "valid-invalid", "valid"),
        ("validity", "valid-invalid", None),
        ("] } ].", "free", "] } ]"),
        ("  apple   banana ", "free", "apple banana"),
    ],
)
def test_answers_read_in_their_format(answer, answer_format, expected):
    assert canonical_answer(answer, answer_format) == expected


def test_a_generation_is_read_through_its_last_cue():
    generation = "Today is 12/24/1937.\nSo the answer is (B) 12/25/1937. I am sure."
    assert read_answer(generation, MULTIPLE_CHOICE) == "(B)"
    assert read_answer(f"1 + 1 = 2. {ANSWER_CUE} 1,000.", "number") == "1000"


def test_an_unknown_format_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown answer format 'letters'"):
        read_answer("So the answer is (A).", "letters")


def test_the_reasoning_is_what_comes_before_the_last_cue():
    assert reasoning_part("A is 1. B is 2. So the answer is 3.") == "A is 1. B is 2."
    assert reasoning_part("  A is 1.\nB is 2.\n") == "A is 1.\nB is 2."


def test_a_line_break_and_a_sentence_end_end_a_step():
    reasoning = "(0) Start: Alice: red, Bob: blue\n(1) They swap. Now Alice: blue.\n\nDone"
    assert reasoning_steps(reasoning) == (
        "(0) Start: Alice: red, Bob: blue",
        "(1) They swap.",
        "Now Alice: blue.",
        "Done",
    )


@needs_bbh
def test_steps_cover_every_character_of_the_exemplar_reasonings():
    for task in FORMAT:
        for _, generation in exemplars(task):
            reasoning = reasoning_part(generation.split("step by step.", 1)[1])
            spans = step_spans(reasoning)
            assert spans, task
            covered = {i for s, e in spans for i in range(s, e)}
            assert all(i in covered for i, ch in enumerate(reasoning) if not ch.isspace())
            assert all(s < e for s, e in spans)
            assert all(e1 <= s2 for (_, e1), (s2, _) in zip(spans, spans[1:], strict=False))


@needs_bbh
def test_a_tracking_exemplar_has_one_step_a_line():
    _, generation = exemplars("tracking_shuffled_objects_three_objects")[0]
    steps = reasoning_steps(reasoning_part(generation.split("step by step.", 1)[1]))
    assert len(steps) == 5
    assert steps[0] == "(0) At the start: Alice: yellow, Bob: blue, Claire: pink."
    assert steps[-1] == "At the end of the game, Bob has the yellow ball."
