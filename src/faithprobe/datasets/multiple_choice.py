"""Multiple-choice benchmarks -> :class:`ChoiceExample`.

* Social IQA: ``<split>.jsonl`` (``context``, ``question``, ``answerA``..``answerC``) with
  the 1-based labels in ``<split>-labels.lst`` beside it. The prompt is the context and the
  question joined by a space; ``features["category"]`` is the kind of question
  (:func:`~faithprobe.datasets.socialiqa_questions.question_kind`).
* HellaSwag, original jsonl (``ind``, ``activity_label``, ``ctx_a``, ``ctx_b``, ``ctx``,
  ``endings``, ``label``, ...); ``features["category"]`` is the ``activity_label``. Read
  by one of two rules (:data:`RULES`):

  - ``standard`` (default): as lm-evaluation-harness scores HellaSwag -- the prompt is
    ``activity_label + ": " + ctx_a + " " + ctx_b.capitalize()`` and every text is cleaned
    of the WikiHow markers by :func:`hellaswag_clean` (lm-eval's ``preprocess``); the
    endings continue the prompt's sentence, so the examples are marked
    ``features["frame"] = "continuation"`` (scored right after the prompt, no Q/A frame);
  - ``qa``: the raw ``ctx`` (or ``ctx_a`` + ``ctx_b``) and endings, markers left in, framed
    as a question like every other format (faithprobe's rule before the standard one).
* Generic jsonl: ``prompt``, ``choices``, ``label`` (0-based), optional ``id`` and
  ``category``.

Social IQA and generic examples are questions (``features["frame"] = "question"``): lm-eval
scores Social IQA as ``"Q: <context> <question>\nA:"`` + ``" " + answer``, which is the
frame :mod:`faithprobe.multiple_choice_prompts` puts around a question.

:func:`read_choices` tells the three apart by the fields of the first record. Ids are
``socialiqa-<split>-<line>`` for Social IQA; otherwise the record's own (``id``, or
HellaSwag's ``ind``), or ``<file stem>-<line>`` if it has none.

Each format declares its schema here, beside its reader (:data:`SOCIALIQA_SCHEMA` and
:data:`SOCIALIQA_LABELS_SCHEMA`, :data:`HELLASWAG_SCHEMA`, :data:`CHOICE_JSONL_SCHEMA`;
:mod:`faithprobe.datasets.schema`), and the reader checks every record against it before
reading it, so a bad field or label is one line naming the file, the line, the field and
what is allowed. HellaSwag's schema is the standard rule's; rule ``qa`` checks the same
fields with the ones it does not read made optional (:data:`HELLASWAG_SCHEMAS`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from faithprobe.datasets.jsonl import checked_records, iter_records, read_text, string_list
from faithprobe.datasets.schema import (
    INTEGER,
    TEXT,
    TEXT_OR_INTEGER,
    TEXTS,
    Condition,
    DataSchema,
    Field,
    Record,
    Rule,
)
from faithprobe.datasets.socialiqa_questions import question_kind
from faithprobe.errors import DataError, UsageError, excerpt
from faithprobe.multiple_choice_prompts import CONTINUATION, QUESTION
from faithprobe.records import ChoiceExample

SOCIALIQA_ANSWERS = ("answerA", "answerB", "answerC")
SOCIALIQA_LABELS = (1, 2, 3)  # 1-based, one per answer
MIN_CHOICES = 2  # the fewest choices a probe can leave without a right one
RULES = {
    "standard": "each format as its community scores it (HellaSwag: lm-eval's cleaned "
    "query, endings as continuations)",
    "qa": "the raw text of every format, framed as a question",
}
_WIKIHOW_MARKER = re.compile(r"\[.*?\]")


def _index(value) -> int | None:
    """A 0-based label as an integer (a string of digits counts), or None."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _enough_choices(name: str) -> Rule:
    """The rule that ``name`` holds at least :data:`MIN_CHOICES` choices."""

    def fault(record: Record) -> str | None:
        n = len(record[name])
        return f"needs at least two choices, got {n}" if n < MIN_CHOICES else None

    return Rule(name, f"{name} holds at least {MIN_CHOICES} choices", fault)


def _label_within(name: str) -> Rule:
    """The rule that ``label`` is a 0-based index into the list ``name``."""

    def fault(record: Record) -> str | None:
        n, index = len(record[name]), _index(record["label"])
        if index is None or not 0 <= index < n:
            return f"expected a choice index in 0..{n - 1}, got {excerpt(record['label'])}"
        return None

    return Rule("label", f"label is 0-based: 0 up to the number of {name} − 1", fault)


def _label_field(name: str, meaning: str) -> Field:
    """The required 0-based ``label`` into the list ``name`` (:func:`_label_within` checks it)."""
    return Field(
        "label",
        TEXT_OR_INTEGER,
        meaning,
        required=True,
        values=f"0 up to the number of {name} − 1 (a whole number, or its digits as a string)",
    )


def _label(value) -> int:
    """A label the schema has checked, as an integer."""
    index = _index(value)
    assert index is not None, value
    return index


def _unique_id(path: Path, line: int, item_id: str, seen: set[str]) -> str:
    if item_id in seen:
        raise DataError(path, f"duplicate id {excerpt(item_id)}", record=f"line {line}", field="id")
    seen.add(item_id)
    return item_id


def socialiqa_labels_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}-labels.lst")


SOCIALIQA_SCHEMA = DataSchema(
    name="Social IQA (<split>.jsonl)",
    record="one instance per JSON line, the official release's format; its label is the same "
    "line of <split>-labels.lst beside it",
    fields=(
        Field(
            "context",
            TEXT,
            "the situation; the prompt is the context, a space, the question",
            required=True,
        ),
        Field(
            "question",
            TEXT,
            "the question; its wording gives the instance's category "
            "(intent, need, want, attribute, reaction, effect, other)",
            required=True,
        ),
        *(
            Field(k, TEXT, f"choice {k[-1]} (label {i})", required=True)
            for i, k in enumerate(SOCIALIQA_ANSWERS, start=1)
        ),
    ),
    links="the n-th record (non-blank line) is instance socialiqa-<split>-<its line number>; "
    "its label is line n of <split>-labels.lst, and the two files hold as many",
)

SOCIALIQA_LABELS_SCHEMA = DataSchema(
    name="Social IQA labels (<split>-labels.lst)",
    record="one label per line, beside <split>.jsonl (dev.jsonl: dev-labels.lst)",
    fields=(
        Field(
            "label",
            INTEGER,
            "the right answer, 1-based: 1 is answerA, 2 answerB, 3 answerC",
            required=True,
            allowed=SOCIALIQA_LABELS,
        ),
    ),
    links="line n is the label of the n-th record of <split>.jsonl",
)


def read_socialiqa(path: str | Path, labels: str | Path | None = None) -> list[ChoiceExample]:
    path = Path(path)
    labels_path = Path(labels) if labels else socialiqa_labels_path(path)
    if not labels_path.is_file():
        raise DataError(path, f"Social IQA labels file {labels_path} not found")
    label_lines = read_text(labels_path).split()
    records = list(checked_records(path, SOCIALIQA_SCHEMA))
    if len(label_lines) != len(records):
        raise DataError(
            labels_path, f"holds {len(label_lines)} labels but {path} holds {len(records)} records"
        )
    items = []
    for i, ((line, record), raw) in enumerate(zip(records, label_lines, strict=True)):
        label = int(raw) if raw.isdigit() else raw
        SOCIALIQA_LABELS_SCHEMA.check(labels_path, f"line {i + 1}", {"label": label})
        question = record["question"].strip()
        items.append(
            ChoiceExample(
                id=f"socialiqa-{path.stem}-{line:05d}",
                prompt=f"{record['context'].strip()} {question}".strip(),
                choices=tuple(record[k] for k in SOCIALIQA_ANSWERS),
                label=label - 1,
                features={
                    "source": "socialiqa",
                    "line": line,
                    "frame": QUESTION,
                    "category": question_kind(question),
                },
            )
        )
    return items


def hellaswag_clean(text: str) -> str:
    """HellaSwag text as lm-evaluation-harness cleans it before scoring (its
    ``tasks/hellaswag/utils.py: preprocess``): stripped, " [title]" made a sentence break,
    the other WikiHow markers (``[header]``, ``[step]``, ...) removed, double spaces made
    single."""
    text = text.strip().replace(" [title]", ". ")
    return _WIKIHOW_MARKER.sub("", text).replace("  ", " ")


STANDARD_ONLY = Condition("under rule=standard (the default)", lambda r: True)
STANDARD_OR_NO_CTX = Condition(
    "under rule=standard (the default); under rule=qa when ctx is absent", lambda r: True
)
NO_CTX = Condition("when ctx is absent", lambda r: "ctx" not in r)

HELLASWAG_SCHEMA = DataSchema(
    name="HellaSwag (original jsonl)",
    record="one instance per JSON line, as the official release (and its Hugging Face copy) "
    "writes it; other fields (split, split_type, source_id, ...) are ignored",
    fields=(
        Field(
            "ind",
            TEXT_OR_INTEGER,
            "the instance's id is hellaswag-<ind> (absent: <file stem>-<line number>); unique "
            "in the file",
        ),
        Field(
            "activity_label",
            TEXT,
            "the activity (ActivityNet or WikiHow): the prompt's start under rule=standard, "
            "and the instance's category",
            required=STANDARD_ONLY,
        ),
        Field("ctx_a", TEXT, "the context's first sentence", required=STANDARD_OR_NO_CTX),
        Field(
            "ctx_b",
            TEXT,
            "the start of the sentence the endings complete (may be empty)",
            required=STANDARD_OR_NO_CTX,
        ),
        Field("ctx", TEXT, "the whole context (ctx_a + ' ' + ctx_b): the prompt under rule=qa"),
        Field(
            "endings",
            TEXTS,
            "the choices: endings of the context's last sentence, each non-empty (the "
            "release has 4)",
            required=True,
        ),
        _label_field(
            "endings",
            "the right ending, 0-based (the release's test split has none, so it cannot be probed)",
        ),
    ),
    rules=(_enough_choices("endings"), _label_within("endings")),
)


def _under_qa(f: Field) -> Field:
    """A HellaSwag field as rule ``qa`` needs it: the raw ``ctx``, or ``ctx_a`` + ``ctx_b``."""
    if f.required is STANDARD_ONLY:
        return replace(f, required=False)
    return replace(f, required=NO_CTX) if f.required is STANDARD_OR_NO_CTX else f


# what each rule checks: the declared schema (rule=standard), and what rule=qa reads of it
HELLASWAG_SCHEMAS = {
    "standard": HELLASWAG_SCHEMA,
    "qa": replace(HELLASWAG_SCHEMA, fields=tuple(map(_under_qa, HELLASWAG_SCHEMA.fields))),
}


def _hellaswag_text(path: Path, line: int, record: dict, rule: str) -> tuple[str, list[str]]:
    """The prompt and the endings of one checked HellaSwag record under ``rule``."""
    endings = string_list(path, line, record, "endings")
    if rule == "standard":
        a, b = record["ctx_a"], record["ctx_b"]
        query = hellaswag_clean(f"{record['activity_label']}: {a} {b.capitalize()}")
        return query, [hellaswag_clean(e) for e in endings]
    ctx = record.get("ctx")
    if ctx is None:
        a, b = record["ctx_a"], record["ctx_b"]
        ctx = f"{a} {b}" if b else a
    return ctx.strip(), endings


def read_hellaswag(path: str | Path, rule: str = "standard") -> list[ChoiceExample]:
    """HellaSwag's original jsonl, read by ``rule`` (see the module docstring)."""
    path = Path(path)
    if rule not in RULES:
        raise UsageError(f"unknown rule {excerpt(rule)}; known: {', '.join(RULES)}")
    frame = CONTINUATION if rule == "standard" else QUESTION
    items, seen = [], set()
    for line, record in checked_records(path, HELLASWAG_SCHEMAS[rule]):
        prompt, endings = _hellaswag_text(path, line, record, rule)
        ind = record.get("ind")
        item_id = f"hellaswag-{ind}" if ind is not None else f"{path.stem}-{line:05d}"
        items.append(
            ChoiceExample(
                id=_unique_id(path, line, item_id, seen),
                prompt=prompt,
                choices=tuple(endings),
                label=_label(record["label"]),
                features={
                    "source": "hellaswag",
                    "line": line,
                    "frame": frame,
                    "category": record.get("activity_label"),
                },
            )
        )
    return items


CHOICE_JSONL_SCHEMA = DataSchema(
    name="prompt/choices/label (JSON lines)",
    record="one instance per JSON line: any multiple-choice question written as prompt, "
    "choices and a 0-based label",
    fields=(
        Field(
            "id",
            TEXT_OR_INTEGER,
            "the instance's id, unique in the file (absent: <file stem>-<line number>)",
        ),
        Field(
            "prompt",
            TEXT,
            "the question (with its context), asked as 'Q: <prompt>\\nA:'",
            required=True,
        ),
        Field("choices", TEXTS, "the choices, each non-empty", required=True),
        _label_field("choices", "the right choice, 0-based"),
        Field("category", TEXT, "a kind of instance, compared in the kept-confidence view"),
    ),
    rules=(_enough_choices("choices"), _label_within("choices")),
)


def read_choice_jsonl(path: str | Path) -> list[ChoiceExample]:
    path = Path(path)
    items, seen = [], set()
    for line, record in checked_records(path, CHOICE_JSONL_SCHEMA):
        choices = string_list(path, line, record, "choices")
        item_id = record.get("id")
        item_id = str(item_id) if item_id is not None else f"{path.stem}-{line:05d}"
        items.append(
            ChoiceExample(
                id=_unique_id(path, line, item_id, seen),
                prompt=record["prompt"].strip(),
                choices=tuple(choices),
                label=_label(record["label"]),
                features={
                    "source": path.stem,
                    "line": line,
                    "frame": QUESTION,
                    "category": record.get("category"),
                },
            )
        )
    return items


CHOICE_FORMATS = {
    "socialiqa": read_socialiqa,
    "hellaswag": read_hellaswag,
    "choice-jsonl": read_choice_jsonl,
}


def detect_choice_format(path: str | Path) -> str:
    path = Path(path)
    line, first = next(iter_records(path))
    if "answerA" in first and "context" in first:
        return "socialiqa"
    if "endings" in first:
        return "hellaswag"
    if "prompt" in first and "choices" in first:
        return "choice-jsonl"
    raise DataError(
        path,
        "not a multiple-choice file faithprobe knows: expected Social IQA fields (context, "
        "question, answerA..C), HellaSwag fields (ctx, endings, label) or prompt/choices/label",
        record=f"line {line}",
    )


def read_choices(
    path: str | Path, format: str = "auto", rule: str = "standard"
) -> list[ChoiceExample]:
    """Read any of the supported multiple-choice formats (``format="auto"`` detects it) by
    ``rule`` (:data:`RULES`; only HellaSwag reads differently under the two)."""
    name = detect_choice_format(path) if format == "auto" else format
    if name not in CHOICE_FORMATS:
        raise DataError(path, f"unknown format {excerpt(name)}; known: {', '.join(CHOICE_FORMATS)}")
    if name == "hellaswag":
        return read_hellaswag(path, rule)
    return CHOICE_FORMATS[name](path)
