"""Reading a generated chain of thought: its final answer, its reasoning and its steps.

A BIG-Bench Hard chain of thought (Suzgun et al. 2022) ends with the answer cue
``"So the answer is"`` followed by the answer: ``"... that is 12/14/1937. So the answer is
(D)."``. The reasoning is the text before the cue; its steps are what the interventions cut
and corrupt (:mod:`faithprobe.interventions.reasoning_edits`).

**The stated answer** (:func:`stated_answer`) is read as Suzgun et al.'s evaluation reads
it: the text after the *last* cue, stripped. The cue is matched as written: "so the answer
is" or "The answer is" is no cue. Unlike their script, which keeps everything
after the cue, it is cut at the end of its line and at the end of its first sentence (a
``.``, ``!`` or ``?`` followed by whitespace or the end), and one final period is dropped,
so that a model that goes on talking after its answer is still read ("So the answer is (B).
I am confident." reads ``(B)``).

**Answer formats** are those of :class:`~faithprobe.records.ReasoningExample`
(``ANSWER_FORMATS``: the BBH reader gives each item one). :func:`canonical_answer` maps a
stated answer, or a gold target, to one spelling per format:

=================== =============================================================
format              canonical answer
=================== =============================================================
``multiple-choice`` the option's label as BBH writes its targets: ``"(B)"``, ``"B"``,
                    ``"B)"``, ``"(B) 12/25/1937"`` all read ``"(B)"``; with the options
                    given (label → text, as ``dict(example.options)``), an answer that is
                    an option's text (compared by
                    :func:`~faithprobe.qa.answers.normalize_answer`) reads that option's
                    label, and a label that is not an option reads None
``true-false``      ``"True"`` or ``"False"`` (the first word, any case)
``yes-no``          ``"Yes"`` or ``"No"`` (the first word, any case: BBH spells sports
                    understanding's targets ``yes``/``no`` and the other tasks' ``Yes``/``No``)
``valid-invalid``   ``"valid"`` or ``"invalid"`` (the first word, any case)
``number``          the number the answer starts with, as plain digits: ``"-3"``,
                    ``"1,000"`` → ``"1000"``, ``"3.50"`` → ``"3.5"``, ``"−3"`` (a Unicode
                    minus) → ``"-3"``
``free``            the answer with its whitespace collapsed (dyck languages, word sorting)
=================== =============================================================

A gold target is compared after the same mapping (``canonical_answer(example.target,
...)``), so that "yes" and "Yes" are one answer.

**No answer** (None) when the text has no cue, when nothing but whitespace, colons and a
final period follows the last cue on its line, or when what follows does not read in the format (a multiple-choice answer
that is neither a label nor an option's text; a yes/no answer whose first word is neither
yes nor no; a number answer that does not start with a number).

**Steps** (:func:`step_spans`): Lanham et al. 2023 split a chain of thought into its
sentences. We do the same with one of the project's splitters (:mod:`faithprobe.sentences`),
and additionally end a step at every line break: BBH's exemplars write one step a line
without a final period (the state after each swap in the tracking tasks, the stack in dyck
languages, the items of a count), which a sentence splitter would otherwise run together.
The splitter is pySBD (``STEP_SPLITTER``), not the project's default spaCy senter: on the 81
exemplar reasonings of the BBH chain-of-thought prompts, split by line and then by sentence,
the senter makes 792 steps of which 238 have fewer than two words (it cuts "(0) At the
start: ..." after "(0)" and a stack "[ { [" into pieces), pySBD 647 steps of which 116 (most
of them whole lines such as "1: [ ; stack: [").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation

from faithprobe.errors import UsageError
from faithprobe.qa.answers import normalize_answer
from faithprobe.records import ANSWER_FORMATS, MULTIPLE_CHOICE, ReasoningExample
from faithprobe.sentences import Span, split_many

ANSWER_CUE = "So the answer is"
STEP_SPLITTER = "pysbd"  # see "Steps" in the module docstring
# the binary formats' two answers, canonical spelling, keyed by their lowercase form
BINARY_ANSWERS: dict[str, tuple[str, str]] = {
    "true-false": ("True", "False"),
    "yes-no": ("Yes", "No"),
    "valid-invalid": ("valid", "invalid"),
}

_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
OPTIONS_LINE = "\nOptions:\n"
OPTION = re.compile(r"\(([A-Z])\) (.*)")
_LETTER = re.compile(r"^\(([A-Z])\)|^([A-Z])(?:[).:]|$)")
_NUMBER = re.compile(r"^[-−]?\d[\d,]*(?:\.\d+)?")
_EXEMPLAR = re.compile(r"^Q: ", re.MULTILINE)


def check_format(answer_format: str) -> str:
    if answer_format not in ANSWER_FORMATS:
        known = ", ".join(ANSWER_FORMATS)
        raise UsageError(f"unknown answer format {answer_format!r}; known: {known}")
    return answer_format


def stated_answer(text: str) -> str | None:
    """The answer as the text states it after the last cue (see the module docstring), or
    None when there is no cue or nothing follows it on its line."""
    at = text.rfind(ANSWER_CUE)
    if at < 0:
        return None
    rest = text[at + len(ANSWER_CUE) :].split("\n", 1)[0].strip()
    if end := _SENTENCE_END.search(rest):
        rest = rest[: end.start()]
    rest = rest.strip().strip(":").strip()
    return rest or None


def options_of(question: str) -> tuple[tuple[str, str], ...]:
    """The lettered options after the question's last ``Options:`` line, as (label, text)
    pairs (``("(A)", "12/14/1937")``), as BBH writes them; empty unless every line after it
    is ``(X) text``."""
    _, found, tail = question.rpartition(OPTIONS_LINE)
    if not found:
        return ()
    matches = [OPTION.fullmatch(line) for line in tail.split("\n")]
    if not all(matches):
        return ()
    return tuple((f"({m.group(1)})", m.group(2)) for m in matches if m)


def question_options(question: str) -> dict[str, str]:
    """:func:`options_of` as a mapping, ``{"(A)": "12/14/1937", ...}``."""
    return dict(options_of(question))


def exemplar_spans(prompt: str) -> tuple[Span, ...]:
    """Where the exemplars of a BBH few-shot prompt are: each from a line starting "Q: " up
    to the next such line (or the end), so that the text before the first one (the task's
    description) and the exemplars make up the whole prompt."""
    starts = [m.start() for m in _EXEMPLAR.finditer(prompt)]
    return tuple(zip(starts, [*starts[1:], len(prompt)], strict=True))


def _label(answer: str, options: Mapping[str, str] | None) -> str | None:
    if options:
        spoken = normalize_answer(answer)
        for label, option in options.items():
            if normalize_answer(option) == spoken:
                return label
    if m := _LETTER.match(answer):
        label = f"({m.group(1) or m.group(2)})"
        return label if not options or label in options else None
    return None


def _number(answer: str) -> str | None:
    m = _NUMBER.match(answer.replace("−", "-"))
    if not m:
        return None
    try:
        value = Decimal(m.group(0).replace(",", ""))
    except InvalidOperation:
        return None
    return "0" if value == 0 else format(value.normalize(), "f")


def canonical_answer(
    answer: str, answer_format: str, options: Mapping[str, str] | None = None
) -> str | None:
    """``answer`` (a stated answer or a gold target) in its format's canonical spelling, or
    None when it does not read in that format (the table in the module docstring).
    ``options`` map the question's option labels to their text (:func:`question_options`,
    or ``dict(example.options)``)."""
    check_format(answer_format)
    answer = " ".join(answer.split())
    if answer_format == MULTIPLE_CHOICE:
        return _label(answer, options)
    if answer_format == "number":
        return _number(answer)
    if answer_format == "free":
        return answer.removesuffix(".").strip() or None
    first = re.match(r"\w+", answer)
    word = first.group(0).lower() if first else ""
    return next((a for a in BINARY_ANSWERS[answer_format] if a.lower() == word), None)


def gold_answer(item: ReasoningExample) -> str:
    """An item's right answer in the canonical spelling its replies are read to (its target
    as it is where no canonical spelling reads it)."""
    return canonical_answer(item.target, item.answer_format, dict(item.options)) or item.target


def read_answer(
    text: str, answer_format: str, options: Mapping[str, str] | None = None
) -> str | None:
    """The final answer of a generated text, canonical (:func:`canonical_answer`), or None
    when it states none (see "No answer" in the module docstring)."""
    check_format(answer_format)
    stated = stated_answer(text)
    return None if stated is None else canonical_answer(stated, answer_format, options)


def reasoning_part(text: str) -> str:
    """The reasoning of a generation: the text before its last answer cue, stripped; the
    whole text when it has no cue (the model reasoned but never answered)."""
    at = text.rfind(ANSWER_CUE)
    return (text if at < 0 else text[:at]).strip()


def step_spans(reasoning: str, splitter: str = STEP_SPLITTER) -> tuple[Span, ...]:
    """The ``(start, end)`` character spans of the steps of ``reasoning``: its sentences,
    and a line break always ends a step (see the module docstring)."""
    lines = [(m.start(), m.group(0)) for m in re.finditer(r"[^\n]+", reasoning)]
    lines = [(start, line) for start, line in lines if line.strip()]
    per_line = split_many([line for _, line in lines], splitter)
    return tuple(
        (start + s, start + e)
        for (start, _), spans in zip(lines, per_line, strict=True)
        for s, e in spans
    )


def reasoning_steps(reasoning: str, splitter: str = STEP_SPLITTER) -> tuple[str, ...]:
    """The steps of ``reasoning`` as text (:func:`step_spans`)."""
    return tuple(reasoning[s:e] for s, e in step_spans(reasoning, splitter))
