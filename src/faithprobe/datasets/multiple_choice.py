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
frame :mod:`faithprobe.prompts` puts around a question.

:func:`read_choices` tells the three apart by the fields of the first record. Ids are
``socialiqa-<split>-<line>`` for Social IQA; otherwise the record's own (``id``, or
HellaSwag's ``ind``), or ``<file stem>-<line>`` if it has none.
"""

from __future__ import annotations

import re
from pathlib import Path

from faithprobe.datasets.jsonl import field, iter_records, read_text, string_list
from faithprobe.datasets.socialiqa_questions import question_kind
from faithprobe.errors import DataError, UsageError, excerpt
from faithprobe.examples import ChoiceExample
from faithprobe.prompts import CONTINUATION, QUESTION

SOCIALIQA_ANSWERS = ("answerA", "answerB", "answerC")
RULES = {
    "standard": "each format as its community scores it (HellaSwag: lm-eval's cleaned "
    "query, endings as continuations)",
    "qa": "the raw text of every format, framed as a question",
}
_WIKIHOW_MARKER = re.compile(r"\[.*?\]")


def _label(path: Path, line: int, value, n_choices: int, name: str = "label") -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < n_choices:
        raise DataError(
            path,
            f"expected a choice index in 0..{n_choices - 1}, got {excerpt(value)}",
            record=f"line {line}",
            field=name,
        )
    return value


def _unique_id(path: Path, line: int, item_id: str, seen: set[str]) -> str:
    if item_id in seen:
        raise DataError(path, f"duplicate id {excerpt(item_id)}", record=f"line {line}", field="id")
    seen.add(item_id)
    return item_id


def socialiqa_labels_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}-labels.lst")


def read_socialiqa(path: str | Path, labels: str | Path | None = None) -> list[ChoiceExample]:
    path = Path(path)
    labels_path = Path(labels) if labels else socialiqa_labels_path(path)
    if not labels_path.is_file():
        raise DataError(path, f"Social IQA labels file {labels_path} not found")
    label_lines = read_text(labels_path).split()
    records = list(iter_records(path))
    if len(label_lines) != len(records):
        raise DataError(
            labels_path, f"holds {len(label_lines)} labels but {path} holds {len(records)} records"
        )
    items = []
    for i, ((line, record), raw) in enumerate(zip(records, label_lines, strict=True)):
        context = field(path, line, record, "context", str).strip()
        question = field(path, line, record, "question", str).strip()
        choices = tuple(field(path, line, record, k, str) for k in SOCIALIQA_ANSWERS)
        if not raw.isdigit() or not 1 <= int(raw) <= 3:
            raise DataError(
                labels_path, f"expected 1, 2 or 3, got {excerpt(raw)}", record=f"line {i + 1}"
            )
        items.append(
            ChoiceExample(
                id=f"socialiqa-{path.stem}-{line:05d}",
                prompt=f"{context} {question}".strip(),
                choices=choices,
                label=int(raw) - 1,
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


def _hellaswag_text(path: Path, line: int, record: dict, rule: str) -> tuple[str, list[str]]:
    """The prompt and the endings of one HellaSwag record under ``rule``."""
    endings = string_list(path, line, record, "endings")
    if rule == "standard":
        label = field(path, line, record, "activity_label", str)
        a = field(path, line, record, "ctx_a", str)
        b = field(path, line, record, "ctx_b", str)
        query = hellaswag_clean(f"{label}: {a} {b.capitalize()}")
        return query, [hellaswag_clean(e) for e in endings]
    ctx = field(path, line, record, "ctx", str, required=False)
    if ctx is None:
        a = field(path, line, record, "ctx_a", str)
        b = field(path, line, record, "ctx_b", str)
        ctx = f"{a} {b}" if b else a
    return ctx.strip(), endings


def read_hellaswag(path: str | Path, rule: str = "standard") -> list[ChoiceExample]:
    """HellaSwag's original jsonl, read by ``rule`` (see the module docstring)."""
    path = Path(path)
    if rule not in RULES:
        raise UsageError(f"unknown rule {excerpt(rule)}; known: {', '.join(RULES)}")
    frame = CONTINUATION if rule == "standard" else QUESTION
    items, seen = [], set()
    for line, record in iter_records(path):
        prompt, endings = _hellaswag_text(path, line, record, rule)
        if "label" not in record:
            raise DataError(
                path, "missing (unlabelled split?)", record=f"line {line}", field="label"
            )
        ind = record.get("ind")
        item_id = f"hellaswag-{ind}" if ind is not None else f"{path.stem}-{line:05d}"
        items.append(
            ChoiceExample(
                id=_unique_id(path, line, item_id, seen),
                prompt=prompt,
                choices=tuple(endings),
                label=_label(path, line, record["label"], len(endings)),
                features={
                    "source": "hellaswag",
                    "line": line,
                    "frame": frame,
                    "category": record.get("activity_label"),
                },
            )
        )
    return items


def read_choice_jsonl(path: str | Path) -> list[ChoiceExample]:
    path = Path(path)
    items, seen = [], set()
    for line, record in iter_records(path):
        prompt = field(path, line, record, "prompt", str)
        choices = string_list(path, line, record, "choices")
        if len(choices) < 2:
            raise DataError(
                path, "needs at least two choices", record=f"line {line}", field="choices"
            )
        item_id = field(path, line, record, "id", (str, int), required=False)
        item_id = str(item_id) if item_id is not None else f"{path.stem}-{line:05d}"
        items.append(
            ChoiceExample(
                id=_unique_id(path, line, item_id, seen),
                prompt=prompt.strip(),
                choices=tuple(choices),
                label=_label(
                    path, line, field(path, line, record, "label", (int, str)), len(choices)
                ),
                features={
                    "source": path.stem,
                    "line": line,
                    "frame": QUESTION,
                    "category": field(path, line, record, "category", str, required=False),
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
