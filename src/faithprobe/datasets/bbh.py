"""BIG-Bench Hard (Suzgun et al. 2022, "Challenging BIG-Bench Tasks and Whether
Chain-of-Thought Can Solve Them") read as reasoning items, with the authors' few-shot
chain-of-thought prompts.

Layout (the authors' repository, and the ``bbh`` folder ``faithprobe data fetch bbh``
fills)::

    bbh/<task>.json         {"canary": "...", "examples": [{"input": ..., "target": ...}]}
    cot-prompts/<task>.txt  the task's 3-shot chain-of-thought prompt

Each example is one :class:`~faithprobe.records.ReasoningExample` with id
``bbh-<task>-<index>`` (its 0-based place in the task's file, so a sample cut from the
start of a file keeps the full file's ids).

**Answer formats** come from the data, not from a list of task names:

1. an item whose input ends in an ``Options:`` line followed only by lettered lines
   ``(A) text``, ``(B) text``, ... (labels in order from A) and whose target is one of those
   labels is *multiple choice*, with those options; a target shaped like a label that is
   not among them is refused;
2. the task's other items take the narrowest format all their targets fit (case aside):
   ``True``/``False`` (*true-false*), ``Yes``/``No`` (*yes-no*), ``valid``/``invalid``
   (*valid-invalid*), a whole number (*number*), else *free* text (a Dyck closing, a sorted
   word list).

BBH 9ee07bd has three items whose options were split at their commas upstream, so that the
target is the answer's text and no option holds it (``movie_recommendation`` 163 "Monsters,
Inc"; ``ruin_names`` 99 and 144); rule 2 makes them *free*, and their
``features["defect"]`` says why. ``snarks`` 88, whose input was cut after its first option,
stays multiple choice with that ``defect`` noted. A suite that scores letters drops them.

**Prompts** (:func:`cot_prompt`) are the authors': the prompt file's text after its canary
line, then ``Q: <input>`` and ``A: Let's think step by step.``, as their evaluation builds
them; the exemplars are parsed so that a suite can cut or replace their parts, and render
back to the file's text exactly. The answer-only prompt (:func:`answer_only_prompt`) is
derived: the same instruction and exemplar questions, each answered ``A: <answer>`` with
its reasoning left out, then ``Q: <input>`` and ``A:`` (the paper's answer-only prompts
use the same exemplars; they are not in the release).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from faithprobe.datasets.json_doc import get, load_json
from faithprobe.datasets.jsonl import read_text
from faithprobe.datasets.schema import BOOLEAN, OBJECTS, TEXT, DataSchema, Field, Record, Rule
from faithprobe.errors import DataError, excerpt
from faithprobe.json_values import unwritable
from faithprobe.options import check_among
from faithprobe.qa.cot import ANSWER_CUE, options_of
from faithprobe.records import MULTIPLE_CHOICE, Exemplar, ReasoningExample

TASKS_DIR = "bbh"
PROMPTS_DIR = "cot-prompts"
COT_CUE = "A: Let's think step by step."
LABEL = re.compile(r"\([A-Z]\)")
NUMBER = re.compile(r"-?\d+")
# the closed answer sets a task's targets may all fall in (compared case aside)
CLOSED_FORMATS = {
    "true-false": {"true", "false"},
    "yes-no": {"yes", "no"},
    "valid-invalid": {"valid", "invalid"},
}
SPLIT_OPTIONS = "lettered options but a text target: the options were split at its commas"
ONE_OPTION = "a single option: the input was cut short"


def _empty_example(record: Record) -> str | None:
    for i, example in enumerate(record.get("examples") or ()):
        for name in ("input", "target"):
            if isinstance(example.get(name), str) and not example[name].strip():
                return f"examples[{i}].{name} is empty"
    return None


def _empty_exemplar(record: Record) -> str | None:
    for i, exemplar in enumerate(record.get("exemplars") or ()):
        for name in ("question", "reasoning", "answer"):
            if not exemplar.get(name, "").strip():
                return f"exemplar {i + 1} has no {name}"
    return None


TASK_SCHEMA = DataSchema(
    name="BIG-Bench Hard task file (bbh/<task>.json)",
    record="one JSON object per task, holding its examples; each example is one item, id "
    "bbh-<task>-<index>",
    fields=(
        Field("canary", TEXT, "the BIG-bench canary string (not read)"),
        Field("examples", OBJECTS, "the task's examples, in order", required=True),
        Field(
            "examples[].input",
            TEXT,
            "the question; a multiple-choice one ends in an 'Options:' line and lettered "
            "lines '(A) text', '(B) text', ...",
            required=True,
        ),
        Field(
            "examples[].target",
            TEXT,
            "the gold answer: an option's label '(A)' for multiple choice, else True/False, "
            "Yes/No, valid/invalid, a whole number or free text",
            required=True,
        ),
    ),
    rules=(
        Rule(
            "examples",
            "there is at least one example",
            lambda r: None if r.get("examples") else "no examples",
        ),
        Rule("examples", "no example's input or target is empty", _empty_example),
    ),
    links="the task's prompt is cot-prompts/<task>.txt beside the bbh folder; a "
    "multiple-choice target names one of its own input's options",
)

PROMPT_SCHEMA = DataSchema(
    name="BIG-Bench Hard chain-of-thought prompt (cot-prompts/<task>.txt)",
    record="one text file per task: the canary line and '-----' (optional), the task's "
    "instruction, then exemplars, each after a blank line as 'Q: <question>', "
    f"'{COT_CUE}' and its reasoning ending '{ANSWER_CUE} <answer>.'",
    fields=(
        Field("instruction", TEXT, "the text before the first exemplar", required=True),
        Field("exemplars", OBJECTS, "the worked examples, in order", required=True),
        Field("exemplars[].question", TEXT, "the text after 'Q: '", required=True),
        Field(
            "exemplars[].reasoning",
            TEXT,
            f"the text between '{COT_CUE}' and ' {ANSWER_CUE}'",
            required=True,
        ),
        Field(
            "exemplars[].answer",
            TEXT,
            f"the text after '{ANSWER_CUE} ', without its final full stop",
            required=True,
        ),
        Field(
            "exemplars[].inline",
            BOOLEAN,
            "whether the reasoning starts on the answer's line (else on the next)",
            required=True,
        ),
    ),
    rules=(
        Rule(
            "instruction",
            "the instruction is not empty",
            lambda r: None if r["instruction"].strip() else "empty",
        ),
        Rule(
            "exemplars",
            "there is at least one exemplar",
            lambda r: None if r["exemplars"] else "no exemplar",
        ),
        Rule("exemplars", "no exemplar's question, reasoning or answer is empty", _empty_exemplar),
    ),
    links="the prompt of the task whose file in bbh/ has the same name",
)


def task_names(folder: str | Path) -> list[str]:
    """The tasks of the BBH folder ``folder`` (its ``bbh/*.json`` files), sorted. Anything
    else of that name (a folder ``bbh/<task>.json``, a FIFO) is refused rather than left
    out, and so is a name that cannot be written as UTF-8 (an undecodable byte): the task's
    name goes into every item's id."""
    tasks = Path(folder) / TASKS_DIR
    if not tasks.is_dir():
        what = f"{TASKS_DIR}/ is a file, not" if tasks.exists() else "no"
        raise DataError(folder, f"not a BBH folder: {what} {TASKS_DIR}/ folder of <task>.json "
                        "files")  # fmt: skip
    found = sorted(tasks.glob("*.json"))
    for path in found:
        if not path.is_file():
            raise DataError(path, "is not a file: a task is a <task>.json file")
        if why := unwritable(path.stem):
            raise DataError(path, f"the task's name {why}")
    if not found:
        raise DataError(tasks, "holds no <task>.json file")
    return [p.stem for p in found]


def read_bbh(folder: str | Path, tasks: Sequence[str] | None = None) -> list[ReasoningExample]:
    """The items of the BBH folder ``folder`` (module docstring), task by task in name
    order; ``tasks`` reads only those (an unknown name is refused, listing the known ones)."""
    folder = Path(folder)
    known = task_names(folder)
    if tasks is not None:
        for task in tasks:
            check_among(task, known, f"no BBH task {excerpt(task)} in {folder}")
    chosen = known if tasks is None else [t for t in known if t in set(tasks)]
    return [item for task in chosen for item in read_task(folder, task)]


def read_task(folder: Path, task: str) -> list[ReasoningExample]:
    """The items of one task, each with the task's prompt."""
    if (folder / PROMPTS_DIR).exists() and not (folder / PROMPTS_DIR).is_dir():
        raise DataError(
            folder / PROMPTS_DIR, "is not a folder: the prompts are <task>.txt files in it"
        )
    prompt_path = folder / PROMPTS_DIR / f"{task}.txt"
    if not prompt_path.exists():
        raise DataError(
            prompt_path, f"missing: the prompt of task {task} ({TASKS_DIR}/{task}.json)"
        )
    instruction, exemplars = read_prompt(prompt_path)
    path = folder / TASKS_DIR / f"{task}.json"
    doc = load_json(path)
    get(path, "top level", doc, "examples", list)  # an object (the schema cannot say so)
    TASK_SCHEMA.check(path, "top level", doc)
    examples = doc["examples"]
    lettered = [options_of(e["input"]) for e in examples]
    chosen = [
        _choice(path, i, e["target"], opts)
        for i, (e, opts) in enumerate(zip(examples, lettered, strict=True))
    ]
    fmt = _closed_format(
        [e["target"] for e, opts in zip(examples, chosen, strict=True) if not opts]
    )
    items = []
    for i, (example, options) in enumerate(zip(examples, chosen, strict=True)):
        features: dict[str, Any] = {"index": i}
        if lettered[i] and not options:
            features["defect"] = SPLIT_OPTIONS
        if len(options) == 1:
            features["defect"] = ONE_OPTION
        items.append(
            ReasoningExample(
                id=f"bbh-{task}-{i}",
                task=task,
                question=example["input"],
                target=example["target"],
                answer_format=MULTIPLE_CHOICE if options else fmt,
                options=options,
                instruction=instruction,
                exemplars=exemplars,
                features=features,
            )
        )
    return items


def _choice(
    path: Path, i: int, target: str, options: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """``options`` where the item is multiple choice (its target is one of their labels),
    else none (module docstring, rule 1); labels out of order, or a target shaped like a
    label that is not among them, are refused."""
    labels = [label for label, _ in options]
    if labels != [f"({chr(ord('A') + k)})" for k in range(len(labels))]:
        raise DataError(path, f"options labelled {', '.join(labels)}, not in order from (A)",
                        record=f"examples[{i}]", field="input")  # fmt: skip
    if options and target not in labels and LABEL.fullmatch(target):
        raise DataError(path, f"target {excerpt(target)} is not one of the options "
                        f"{', '.join(labels)}", record=f"examples[{i}]", field="target")  # fmt: skip
    return options if target in labels else ()


def _closed_format(targets: list[str]) -> str:
    """The narrowest format all ``targets`` fit (module docstring, rule 2)."""
    for fmt, values in CLOSED_FORMATS.items():
        if targets and all(t.lower() in values for t in targets):
            return fmt
    if targets and all(NUMBER.fullmatch(t) for t in targets):
        return "number"
    return "free"


def read_prompt(path: str | Path) -> tuple[str, tuple[Exemplar, ...]]:
    """The instruction and exemplars of a chain-of-thought prompt file (:data:`PROMPT_SCHEMA`)."""
    path = Path(path)
    text = read_text(path).rstrip()
    head = text.split("\n", 2)
    body = head[2] if len(head) == 3 and head[1] == "-----" else text  # after the canary
    instruction, *blocks = body.split("\n\nQ: ")
    exemplars = [_exemplar(path, n, block) for n, block in enumerate(blocks, 1)]
    record = {
        "instruction": instruction,
        "exemplars": [asdict(e) for e in exemplars],
    }
    PROMPT_SCHEMA.check(path, "top level", record)
    return instruction, tuple(exemplars)


def _exemplar(path: Path, n: int, block: str) -> Exemplar:
    question, cue, rest = block.partition(f"\n{COT_CUE}")
    if not cue or not rest[:1].isspace():
        raise DataError(path, f"no line '{COT_CUE}' after the question, followed by reasoning",
                        record=f"exemplar {n}", field="reasoning")  # fmt: skip
    reasoning, cue, answer = rest[1:].rpartition(f" {ANSWER_CUE} ")
    if not cue or not answer.endswith("."):
        raise DataError(path, f"the reasoning does not end '{ANSWER_CUE} <answer>.'",
                        record=f"exemplar {n}", field="answer")  # fmt: skip
    return Exemplar(question, reasoning, answer.removesuffix("."), inline=rest[0] == " ")


def _shots(item: ReasoningExample, answered: Callable[[Exemplar], str]) -> str:
    """The instruction, the exemplars (each ``Q: <question>`` and ``answered(exemplar)``)
    and the item's ``Q: <question>``, ready for its ``A: ...`` to follow."""
    shots = [f"Q: {e.question}\n{answered(e)}" for e in item.exemplars]
    return "\n\n".join([item.instruction, *shots, f"Q: {item.question}"])


def _reasoned(e: Exemplar) -> str:
    """An exemplar's answer as the chain-of-thought prompt writes it."""
    return f"{COT_CUE}{' ' if e.inline else chr(10)}{e.reasoning} {ANSWER_CUE} {e.answer}."


def cot_prompt(item: ReasoningExample) -> str:
    """The authors' chain-of-thought prompt for ``item``, ending ``A: Let's think step
    by step.`` (module docstring)."""
    return f"{_shots(item, _reasoned)}\n{COT_CUE}"


def answer_only_prompt(item: ReasoningExample) -> str:
    """The answer-only prompt for ``item``: the same exemplars answered ``A: <answer>``,
    ending ``A:`` (module docstring)."""
    return f"{_shots(item, lambda e: f'A: {e.answer}')}\nA:"
