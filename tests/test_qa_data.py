"""QA loaders (SQuAD/Quoref, CoQA, HotpotQA) on small files in their real formats, and the
sentence splitters they use."""

import json
from pathlib import Path

import pytest

from faithprobe.datasets.qa_formats import (
    detect_qa_format,
    read_coqa,
    read_hotpotqa,
    read_qa,
    read_squad,
)
from faithprobe.errors import DataError, UsageError
from faithprobe.records import UNKNOWN
from faithprobe.sentences import SPLITTERS, spans_from_starts, split_many, split_sentences

SQUAD_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "squad" / "dev-v1.1.json"

STORY = "Alice lives in Paris. She works at the Louvre. Bob lives in Rome."


def _write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _squad(tmp_path: Path, qas: list[dict], context: str = STORY, **para) -> Path:
    doc = {"version": "1.1", "data": [{"title": "T", "paragraphs": [
        {"context": context, "qas": qas, **para}]}]}  # fmt: skip
    return _write(tmp_path / "squad.json", doc)


def _qa(qid: str, text: str, start: int, question: str = "Q?") -> dict:
    return {"id": qid, "question": question, "answers": [{"text": text, "answer_start": start}]}


def _text(example, span) -> str:
    return example.context[span[0] : span[1]]


# --- sentences -------------------------------------------------------------------------

TRICKY = "Dr. Smith went to Washington. He arrived at 5 p.m. on Monday! Did he stay?\n\nYes.  It was 3.5 km."


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_splitters_give_clean_spans_that_cover_the_text(splitter):
    spans = split_sentences(TRICKY, splitter)
    assert [TRICKY[s:e] for s, e in spans] == [
        "Dr. Smith went to Washington.",
        "He arrived at 5 p.m. on Monday!",
        "Did he stay?",
        "Yes.",
        "It was 3.5 km.",
    ]
    assert split_many([TRICKY, "One. Two."], splitter)[0] == spans


def test_spans_from_starts_keeps_every_character_whatever_the_starts():
    text = "  One two. Three\n\nfour.  "
    spans = spans_from_starts(text, [5, 5, 99, 11])
    assert [text[s:e] for s, e in spans] == ["One", "two.", "Three", "four."]
    assert "".join(text[s:e] for s, e in spans) == "".join(text.split())


def test_unknown_splitter_is_refused():
    with pytest.raises(UsageError, match="unknown sentence splitter 'nltk'"):
        split_sentences("A. B.", "nltk")


# --- SQuAD / Quoref --------------------------------------------------------------------


@pytest.mark.parametrize("splitter", SPLITTERS)
def test_squad_rationale_is_the_sentence_holding_the_answer(tmp_path, splitter):
    path = _squad(tmp_path, [_qa("q1", "the Louvre", 35), _qa("q2", "Rome", 60)])
    first, second = read_squad(path, splitter=splitter)
    assert first.id == "squad-q1" and first.answers == ("the Louvre",)
    assert first.answer_starts == (35,) and first.answer_type == "span"
    assert [_text(first, s) for s in first.rationale] == ["She works at the Louvre."]
    assert [_text(second, s) for s in second.rationale] == ["Bob lives in Rome."]
    assert first.features["splitter"] == splitter and first.features["rationale"] == "sentence"


def test_squad_answer_rationale_and_an_answer_across_sentences(tmp_path):
    path = _squad(tmp_path, [_qa("q1", "the Louvre", 35), _qa("q2", "Louvre. Bob", 39)])
    by_answer = read_squad(path, rationale="answer")
    assert [_text(by_answer[0], s) for s in by_answer[0].rationale] == ["the Louvre"]
    across = read_squad(path)[1]  # the answer runs into the next sentence: both are kept
    assert [_text(across, s) for s in across.rationale] == [
        "She works at the Louvre. Bob lives in Rome."
    ]


def test_squad_v2_impossible_question_is_unknown(tmp_path):
    qa = {"id": "q9", "question": "Who?", "answers": [], "is_impossible": True,
          "plausible_answers": [{"text": "Bob", "answer_start": 47}]}  # fmt: skip
    (example,) = read_squad(_squad(tmp_path, [qa]))
    assert example.answer_type == UNKNOWN and example.answers == (UNKNOWN,)
    assert example.rationale == () and example.features["plausible_answers"] == ["Bob"]


def test_squad_offsets_a_little_off_are_repaired_and_counted(tmp_path):
    (example,) = read_squad(_squad(tmp_path, [_qa("q1", "Paris", 14)]))
    assert example.answer_starts == (15,) and example.features["offsets_repaired"] == 1


@pytest.mark.parametrize(
    ("qas", "field", "message"),
    [
        ([_qa("q1", "Paris", 40)], "answer_start", "'Paris' is not at offset 40"),
        ([{"id": "q1", "answers": [{"text": "Paris", "answer_start": 15}]}], "question", "missing"),
        ([{"id": "q1", "question": "Q?", "answers": []}], "answers", "no answers"),
        ([_qa("q1", "Paris", 15), _qa("q1", "Rome", 60)], "id", "duplicate id"),
        (
            [{"id": "q1", "question": "Q?", "answers": [{"text": "Paris"}]}],
            "answer_start",
            "missing",
        ),
    ],
)
def test_squad_bad_records_name_file_record_and_field(tmp_path, qas, field, message):
    with pytest.raises(DataError, match=message) as err:
        read_squad(_squad(tmp_path, qas), offset_tolerance=0)
    assert err.value.field == field
    assert "squad.json" in str(err.value) and "qas[" in str(err.value)


def test_quoref_ids_and_multi_span_rationale(tmp_path):
    qa = {"id": "z1", "question": "Who live somewhere?", "answers": [
        {"text": "Alice", "answer_start": 0}, {"text": "Bob", "answer_start": 47}]}  # fmt: skip
    (example,) = read_squad(_squad(tmp_path, [qa], context_id="c1"))
    assert example.id == "quoref-z1" and example.features["multi_span"]
    assert [_text(example, s) for s in example.rationale] == [
        "Alice lives in Paris.",
        "Bob lives in Rome.",
    ]


def test_bad_json_is_a_data_error(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"data": [')
    with pytest.raises(DataError, match=r"broken.json: not valid JSON"):
        read_qa(path)


@pytest.mark.skipif(not SQUAD_DEV.is_file(), reason="shared SQuAD dev set not present")
def test_squad_dev_loads_every_question_with_a_rationale_around_its_answer():
    examples = read_squad(SQUAD_DEV)
    assert len(examples) == 10_570 and len({e.id for e in examples}) == 10_570
    for e in examples:
        start, end = e.answer_starts[0], e.answer_starts[0] + len(e.answers[0])
        assert e.context[start:end] == e.answers[0]
        assert any(s <= start and end <= t for s, t in e.rationale)


# --- CoQA ------------------------------------------------------------------------------

COQA_STORY = (
    "Tom has a red ball. He plays in the park with Ann. Ann has a cat.\n\nThe cat is black."
)


def _coqa_answer(turn, text, start=-1, end=-1, span=None):
    span = COQA_STORY[start:end] if span is None and start >= 0 else (span or "unknown")
    return {"span_start": start, "span_end": end, "span_text": span, "input_text": text,
            "turn_id": turn}  # fmt: skip


def _coqa(tmp_path: Path, answers=None, **extra) -> Path:
    questions = ["What does Tom have?", "Does he play?", "Is the cat white?",
                 "Where does he live?", "Who is Ann?"]  # fmt: skip
    answers = answers or [
        _coqa_answer(1, "a red ball", 7, 19),
        _coqa_answer(2, "Yes.", 19, 50),  # leading space in the span: trimmed
        _coqa_answer(3, "no", 66, 84),
        _coqa_answer(4, "unknown"),
        _coqa_answer(5, "his friend", 20, 50),
    ]
    story = {"source": "mctest", "id": "s1", "filename": "mc160.dev.1", "story": COQA_STORY,
             "questions": [{"input_text": q, "turn_id": i + 1} for i, q in enumerate(questions)],
             "answers": answers, **extra}  # fmt: skip
    return _write(tmp_path / "coqa.json", {"version": "1.0", "data": [story]})


def test_coqa_one_example_per_turn_with_types_rationales_and_history(tmp_path):
    turns = read_coqa(_coqa(tmp_path))
    assert [t.id for t in turns] == [f"coqa-s1-{i}" for i in range(1, 6)]
    assert [t.answer_type for t in turns] == ["span", "yes", "no", UNKNOWN, "free"]
    assert turns[0].answer_starts == (8,) and turns[0].answers == ("a red ball",)
    assert _text(turns[1], turns[1].rationale[0]) == "He plays in the park with Ann."
    assert _text(turns[2], turns[2].rationale[0]) == "The cat is black."
    assert turns[3].rationale == ()
    assert turns[0].history == ()
    assert turns[3].history == (("Does he play?", "Yes."), ("Is the cat white?", "no"))
    assert read_coqa(_coqa(tmp_path), history_turns=0)[3].history == ()


def test_coqa_additional_answers_follow_the_main_one(tmp_path):
    extra = {"additional_answers": {"0": [_coqa_answer(1, "red ball", 7, 19)]}}
    first = read_coqa(_coqa(tmp_path, **extra))[0]
    assert first.answers == ("a red ball", "red ball") and first.answer_starts == (8, 10)


@pytest.mark.parametrize(
    ("answer", "field", "message"),
    [
        (_coqa_answer(1, "a red ball", 7, 19, span="a blue ball"), "span_text", "does not match"),
        (_coqa_answer(1, "a red ball", 7, 999), "span_end", "outside the story"),
        ({"span_start": 7, "span_end": 19, "turn_id": 1}, "input_text", "missing"),
    ],
)
def test_coqa_bad_answers_name_file_record_and_field(tmp_path, answer, field, message):
    answers = [answer, *(_coqa_answer(t, "unknown") for t in range(2, 6))]
    with pytest.raises(DataError, match=message) as err:
        read_coqa(_coqa(tmp_path, answers))
    assert err.value.field == field and "data[0] (id s1).answers[0]" in str(err.value)


def test_coqa_question_without_answer_is_an_error(tmp_path):
    answers = [_coqa_answer(t, "unknown") for t in range(1, 5)]
    with pytest.raises(DataError, match=r"turns \[5\] have a question or an answer but not both"):
        read_coqa(_coqa(tmp_path, answers))


# --- HotpotQA --------------------------------------------------------------------------

HOTPOT = {
    "_id": "h1",
    "question": "Were Ann and Bob born in the same city?",
    "answer": "no",
    "type": "comparison",
    "level": "easy",
    "supporting_facts": [["Ann", 1], ["Bob", 0], ["Bob", 7]],
    "context": [
        ["Bob", ["Bob is a painter.", " He was born in Rome."]],
        ["Other", ["Nothing here."]],
        ["Ann", ["Ann is a singer.", " She was born in Paris.", " She sings."]],
    ],
}


def test_hotpotqa_keeps_gold_paragraphs_with_titles_and_supporting_sentences(tmp_path):
    other = {**HOTPOT, "_id": "h2", "answer": "Rome", "supporting_facts": [["Bob", 1]]}
    first, second = read_hotpotqa(_write(tmp_path / "hotpot.json", [HOTPOT, other]))
    assert first.context == (
        "Bob\nBob is a painter. He was born in Rome.\n\n"
        "Ann\nAnn is a singer. She was born in Paris. She sings."
    )
    assert [_text(first, s) for s in first.rationale] == [
        "Bob is a painter.",
        "She was born in Paris.",
    ]
    assert first.id == "hotpot-h1" and first.answer_type == "no" and first.answer_starts == ()
    assert first.features["missing_facts"] == [["Bob", 7]]
    assert [_text(first, s) for s in first.features["sentences"]][-1] == "She sings."
    assert second.context == "Bob\nBob is a painter. He was born in Rome."
    start = second.answer_starts[0]
    assert second.answer_type == "span" and second.context[start : start + 4] == "Rome"
    assert read_hotpotqa(tmp_path / "hotpot.json", titles=False)[1].context.startswith("Bob is")


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        ({**HOTPOT, "supporting_facts": [["Ann", "one"]]}, "supporting_facts[0]", "expected"),
        ({**HOTPOT, "supporting_facts": [["Nobody", 0]]}, "supporting_facts", "no supporting"),
        ({**HOTPOT, "context": [["Ann", "text"]]}, "context[0]", "expected"),
        ({k: v for k, v in HOTPOT.items() if k != "answer"}, "answer", "missing"),
    ],
)
def test_hotpotqa_bad_records_name_file_record_and_field(tmp_path, record, field, message):
    with pytest.raises(DataError, match=message) as err:
        read_hotpotqa(_write(tmp_path / "hotpot.json", [record]))
    assert err.value.field == field and err.value.record == "[0] (id h1)"


# --- detection -------------------------------------------------------------------------


def test_read_qa_detects_each_format(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    files = {
        "squad": _squad(tmp_path, [_qa("q1", "Paris", 15)]),
        "coqa": _coqa(tmp_path / "a"),
        "hotpotqa": _write(tmp_path / "b" / "h.json", [HOTPOT]),
    }
    for name, path in files.items():
        assert detect_qa_format(path) == name
        assert read_qa(path)[0].features["source"] == name


def test_unknown_format_is_a_data_error(tmp_path):
    path = _write(tmp_path / "x.json", {"rows": []})
    with pytest.raises(DataError, match="not a QA format faithprobe knows"):
        read_qa(path)
    with pytest.raises(UsageError, match="unknown QA format 'csv'"):
        read_qa(path, format="csv")
