"""CoQA JSON -> :class:`QAExample`, one example per turn, id ``coqa-<story id>-<turn>``.

The context is the story; the question is the turn's question alone, and the
``history_turns`` turns before it go into ``history`` as (question, *gold* answer) pairs,
oldest first (the method puts the two previous turns with their gold answers before the
question). The rationale is the turn's ``span_start``/``span_end`` with surrounding
whitespace trimmed; it must match ``span_text`` (up to whitespace).

The answer type comes from the free-text answer (``input_text``): ``yes``, ``no`` or
``unknown`` (case and final punctuation ignored); otherwise ``span`` if the answer occurs
in the story (its offset is the occurrence inside or after the rationale when there is one)
and ``free`` if it does not. The dev set's ``additional_answers`` (other annotators'
answers) follow the main answer in ``answers``.

``rules="method"`` reads CoQA as the faithfulness method's code does (its CoQA processor):
the misspellings and hedges of :data:`METHOD_YES_NO` are yes/no answers too (their gold
becomes the plain word, the annotator's text kept in ``features["input_text"]``), and the
history skips earlier turns whose answer is unknown (the last ``history_turns`` answered
ones).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faithprobe.datasets.json_doc import get, load_json, record_id, within
from faithprobe.datasets.schema import (
    INTEGER,
    OBJECT,
    OBJECTS,
    TEXT,
    TEXT_OR_INTEGER,
    DataSchema,
    Field,
)
from faithprobe.errors import DataError, UsageError, excerpt
from faithprobe.records import UNKNOWN, QAExample

_CLOSED = {"yes": "yes", "no": "no", "unknown": UNKNOWN}
# free-text answers the method's code also reads as yes or no
METHOD_YES_NO = {
    "yese": "yes", "ye": "yes", "es": "yes",
    "no not at all": "no", "not": "no", "not at all": "no", "not yet": "no", "not really": "no",
}  # fmt: skip
COQA_RULES = ("faithprobe", "method")
DEFAULT_HISTORY_TURNS = 2  # the method's: the two previous turns with their gold answers
TURN_IDS = {
    name: Field(
        f"data[].{name}[].turn_id",
        INTEGER,
        "the turn (1 for the first question of a story); a question and its answer share it",
        required=True,
        minimum=1,
    )
    for name in ("questions", "answers")
}
SPAN_START = Field(
    "data[].answers[].span_start",
    INTEGER,
    "the rationale's first character in the story (-1 or absent: no rationale)",
    minimum=-1,
)
SPAN_END = Field(
    "data[].answers[].span_end",
    INTEGER,
    "the character after the rationale (-1 or absent: no rationale)",
    minimum=-1,
)

COQA_SCHEMA = DataSchema(
    name="CoQA JSON",
    record="one JSON document of stories, each with its questions and answers by turn; a "
    "turn is one item, id coqa-<story id>-<turn_id>",
    fields=(
        Field("data", OBJECTS, "the stories", required=True),
        Field("data[].id", TEXT_OR_INTEGER, "the story's id, unique in the file", required=True),
        Field("data[].story", TEXT, "the story: every turn's context", required=True),
        Field("data[].source", TEXT, "the story's domain (kept in the item's features)"),
        Field("data[].questions", OBJECTS, "the story's questions, one per turn", required=True),
        Field("data[].questions[].input_text", TEXT, "the question", required=True),
        TURN_IDS["questions"],
        Field("data[].answers", OBJECTS, "the story's answers, one per turn", required=True),
        Field(
            "data[].answers[].input_text",
            TEXT,
            "the free-text gold answer: yes, no or unknown (case and a final . or ! aside) "
            "make a yes/no/unknown item; otherwise a span of the story if it occurs there, "
            "else free text",
            required=True,
        ),
        TURN_IDS["answers"],
        SPAN_START,
        SPAN_END,
        Field(
            "data[].answers[].span_text",
            TEXT,
            "the rationale's text; must match the story between span_start and span_end "
            "(whitespace aside)",
        ),
        Field(
            "data[].additional_answers",
            OBJECT,
            "other annotators' answers: annotator -> a list of answers with turn_id and "
            "input_text, as in answers; they follow the main answer as alternatives",
        ),
    ),
    links="a question and an answer of one story link by turn_id: every turn has both. The "
    "two turns before a question (option history_turns) come before it with their gold "
    "answers.",
)


def read_coqa(
    path: str | Path, *, history_turns: int = DEFAULT_HISTORY_TURNS, rules: str = COQA_RULES[0]
) -> list[QAExample]:
    path = Path(path)
    return coqa_examples(path, load_json(path), history_turns=history_turns, rules=rules)


def answer_kind(text: str, rules: str = "faithprobe") -> str:
    """``"yes"``, ``"no"``, ``"unknown"`` or ``"span"`` (to be checked against the story);
    ``rules="method"`` reads :data:`METHOD_YES_NO` too."""
    said = text.strip().lower().rstrip(".!")
    if rules == "method" and said in METHOD_YES_NO:
        return METHOD_YES_NO[said]
    return _CLOSED.get(said, "span")


def coqa_examples(
    path: Path,
    doc: Any,
    *,
    history_turns: int = DEFAULT_HISTORY_TURNS,
    rules: str = COQA_RULES[0],
) -> list[QAExample]:
    if history_turns < 0:
        raise UsageError("history_turns must be >= 0")
    if rules not in COQA_RULES:
        raise UsageError(f"CoQA rules must be one of {', '.join(COQA_RULES)}, got {excerpt(rules)}")
    examples = []
    seen: set[str] = set()
    for i, rec in enumerate(get(path, "top level", doc, "data", list)):
        story_id, where_s = record_id(path, f"data[{i}]", rec, "id", seen)
        story = get(path, where_s, rec, "story", str)
        questions = _by_turn(path, where_s, rec, "questions")
        answers = _by_turn(path, where_s, rec, "answers")
        if set(questions) != set(answers):
            odd = sorted(set(questions) ^ set(answers))
            raise DataError(
                path, f"turns {odd} have a question or an answer but not both", record=where_s,
                field="answers",
            )  # fmt: skip
        extra = _additional(path, where_s, rec)
        history: list[tuple[str, str]] = []
        for turn in sorted(questions):
            q_where, question = questions[turn]
            question_text = get(path, q_where, question, "input_text", str)
            a_where, answer = answers[turn]
            main = get(path, a_where, answer, "input_text", str).strip()
            if not main:
                raise DataError(path, "empty answer", record=a_where, field="input_text")
            rationale = _rationale(path, a_where, story, answer)
            others = (get(path, w, a, "input_text", str).strip() for w, a in extra.get(turn, []))
            kind = answer_kind(main, rules)
            said = main
            if kind in ("yes", "no") and main.strip().lower().rstrip(".!") != kind:
                main = kind  # the method's reading of a misspelt or hedged yes/no
            golds = (main, *(g for g in others if g))
            starts: tuple[int, ...] = ()
            if kind == "span":
                after = rationale[0][0] if rationale else 0
                starts = tuple(_find(story, g, after) for g in golds)
                if starts[0] < 0:
                    kind = "free"
            examples.append(
                QAExample(
                    id=f"coqa-{story_id}-{turn}",
                    context=story,
                    question=question_text,
                    answers=golds,
                    answer_type=kind,
                    answer_starts=starts,
                    rationale=rationale,
                    history=tuple(history[-history_turns:] if history_turns else ()),
                    features={
                        "source": "coqa",
                        "story_id": story_id,
                        "turn": turn,
                        "domain": rec.get("source"),
                        **({"input_text": said} if said != main else {}),
                    },
                )
            )
            if rules != "method" or kind != UNKNOWN:
                history.append((question_text, main))
    COQA_SCHEMA.check(path, "top level", doc)  # what the reader only passes along
    return examples


def _by_turn(path: Path, where: str, rec: Any, name: str) -> dict[int, tuple[str, Any]]:
    """``{turn_id: (where, record)}`` for the question or answer list ``name``."""
    out: dict[int, tuple[str, Any]] = {}
    for k, item in enumerate(get(path, where, rec, name, list)):
        item_where = f"{where}.{name}[{k}]"
        turn = within(path, item_where, get(path, item_where, item, "turn_id", int), TURN_IDS[name])
        if turn in out:
            raise DataError(path, f"turn {turn} given twice", record=item_where, field="turn_id")
        out[turn] = (item_where, item)
    return out


def _additional(path: Path, where: str, rec: Any) -> dict[int, list[tuple[str, Any]]]:
    """Other annotators' answers by turn (``additional_answers``: annotator -> answers)."""
    out: dict[int, list[tuple[str, Any]]] = {}
    for annotator, items in get(path, where, rec, "additional_answers", dict, {}).items():
        if not isinstance(items, list):
            raise DataError(
                path, "expected a list of answers", record=where,
                field=f"additional_answers.{annotator}",
            )  # fmt: skip
        for k, item in enumerate(items):
            item_where = f"{where}.additional_answers.{annotator}[{k}]"
            out.setdefault(get(path, item_where, item, "turn_id", int), []).append(
                (item_where, item)
            )
    return out


def _rationale(path: Path, where: str, story: str, answer: Any) -> tuple[tuple[int, int], ...]:
    """The turn's rationale span, trimmed of whitespace; none if ``span_start`` < 0."""
    start = within(path, where, get(path, where, answer, "span_start", int, -1), SPAN_START)
    end = within(path, where, get(path, where, answer, "span_end", int, -1), SPAN_END)
    if start < 0 or end < 0:
        return ()
    if not start < end <= len(story):
        raise DataError(
            path,
            f"span {start}..{end} lies outside the story ({len(story)} characters) or is empty",
            record=where,
            field="span_end",
        )
    text = get(path, where, answer, "span_text", str, None)
    if text is not None and text.split() != story[start:end].split():
        raise DataError(
            path,
            f"span_text {excerpt(text)} does not match the story at {start}..{end} ({excerpt(story[start:end])})",
            record=where,
            field="span_text",
        )
    piece = story[start:end]
    start += len(piece) - len(piece.lstrip())
    end -= len(piece) - len(piece.rstrip())
    return ((start, end),) if start < end else ()


def _find(story: str, answer: str, after: int) -> int:
    """Offset of ``answer`` in ``story``: first at or after ``after``, else anywhere, else
    case-insensitively; -1 if absent."""
    answer = answer.strip()
    if not answer:
        return -1
    for hay, needle in ((story, answer), (story.lower(), answer.lower())):
        at = hay.find(needle, after)
        if at < 0:
            at = hay.find(needle)
        if at >= 0:
            return at
    return -1
