"""What an audit runs: one step per suite question, its data and its size at each budget.

A *step* is one run of one suite with fixed options (the faithfulness suite has two: the
generated predicate–argument probe and deletion on SQuAD). A *budget* names how many items
each step samples: ``small`` for a first look in a few minutes, ``default`` for numbers
whose intervals decide most verdicts, ``full`` for every item the data holds, and ``auto``
for rounds of growing size (:meth:`Step.rounds`: at most :data:`~faithprobe.metrics.
sequential.LOOKS`) until the step is decided or its share of ``--time`` is spent
(docs/audit.md lists the sizes and the times measured so far).

Steps that read data find it in the data folders (:mod:`faithprobe.catalog.locate`:
``--data-dir``, ``$FAITHPROBE_DATA``, the folder ``faithprobe data fetch`` fills); at the
``small`` budget the sample shipped with faithprobe stands in for a file found in none of
them, and the step says so. A step whose data is absent is skipped with where it looked and
how to fetch it. Light to import: ``faithprobe audit --help`` reads it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from faithprobe.catalog.entries import DataSet, owner
from faithprobe.catalog.locate import Sample, find, sample
from faithprobe.errors import UsageError, excerpt
from faithprobe.metrics.sequential import LOOKS

AUTO = "auto"
SAMPLED = "small"  # the budget at which a shipped sample stands in for a missing data file


@dataclass(frozen=True)
class Budget:
    name: str
    description: str


BUDGETS = {
    b.name: b
    for b in (
        Budget("small", "a first look: intervals wide, verdicts often inconclusive"),
        Budget("default", "intervals narrow enough to decide most verdicts"),
        Budget("full", "every item of every dataset (SQuAD generation alone: hours)"),
        Budget(
            AUTO,
            f"rounds of growing size (at most {LOOKS} per step) until every verdict and "
            "difference of a step is decided or its share of --time (or --max-items) is spent; "
            f"intervals and tests spend their 5% over the {LOOKS} looks",
        ),
    )
}


@dataclass(frozen=True)
class Step:
    """One suite run of an audit."""

    name: str  # the card's section and the run folder's name under suites/
    suite: str
    question: str  # what the step asks of a model, in plain words
    limits: Mapping[str, int | None]  # budget -> --limit (None: everything)
    options: Mapping[str, str] = field(default_factory=dict)
    data: str | None = None  # a catalogue path under the data folders; None: generated data
    budget_options: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # the suite option that takes the step's size too (natural-logic's ``bases``), if any
    size_option: str | None = None

    def options_for(self, budget: str) -> dict[str, str]:
        """The options at ``budget`` (``auto`` takes the default budget's)."""
        options = {**self.options, **self.budget_options.get(_like(budget), {})}
        limit = self.limits.get(budget)
        if self.size_option and limit is not None:
            options[self.size_option] = str(limit)
        return options

    def rounds(self) -> tuple[int, ...]:
        """The auto budget's sizes, one per look: the small budget's, the default's, then
        twice and four times the default's (so a first look costs what ``small`` costs)."""
        small, default = self.limits["small"], self.limits["default"]
        return (small, default, 2 * default, 4 * default)[:LOOKS]

    def size(self, budget: str, look: int = 0) -> tuple[int | None, dict[str, str]]:
        """The ``--limit`` and options of this step at ``budget`` (``auto``: at ``look``)."""
        if budget != AUTO:
            return self.limits[budget], self.options_for(budget)
        limit = self.rounds()[look]
        options = self.options_for(AUTO)
        if self.size_option:
            options[self.size_option] = str(limit)
        return limit, options


def _like(budget: str) -> str:
    """The budget whose options ``budget`` takes."""
    return "default" if budget == AUTO else budget


STEPS: tuple[Step, ...] = (
    Step(
        "distractors",
        "distractors",
        "Is the right word still chosen once related distractors are added?",
        {"small": 300, "default": 900, "full": None},
    ),
    Step(
        "faithfulness-negation",
        "faithfulness",
        "Are yes/no answers read off the story, negation and formatting included?",
        {"small": 24, "default": 60, "full": None},
        options={"probe": "predicate-argument"},
    ),
    Step(
        "faithfulness-deletion",
        "faithfulness",
        "Does the model stop answering once the sentence holding the answer is deleted?",
        {"small": 20, "default": 60, "full": None},
        data="squad/dev-v1.1.json",
    ),
    Step(
        "right-reasons",
        "right-reasons",
        "Does the answer follow the comparison it depends on, for the right reasons?",
        {"small": 20, "default": 40, "full": None},
        # saliency of a causal LM costs an IG pass per step over the prompt (about 3 CPU-s
        # per step for the embedded model): the small budget compares answers only, the
        # default one adds IG with 8 steps, the full one the suite's defaults
        budget_options={"small": {"saliency": ""}, "default": {"saliency": "ig", "ig_steps": "8"}},
    ),
    Step(
        "natural-logic",
        "natural-logic",
        "Does the NLI prediction move when monotonicity or the word pair change the label?",
        # 16 bases: the suite's minimum (natural_logic.intervals.MIN_BASES) below which its
        # intervals under-cover and it gives none
        {"small": 16, "default": 24, "full": None},
        data="nli-xy",
        size_option="bases",
    ),
    Step(
        "confidence-shift",
        "confidence-shift",
        "Does confidence drop when no choice is correct?",
        {"small": 40, "default": 150, "full": None},
        data="socialiqa/dev.jsonl",
        budget_options={"small": {"trials": "2"}},
    ),
)


def check_budget(name: str) -> Budget:
    if name not in BUDGETS:
        raise UsageError(f"--budget {excerpt(name)}: choose from {', '.join(BUDGETS)}")
    return BUDGETS[name]


_UNITS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> float:
    """Seconds in ``--time``: ``90s``, ``20m``, ``1.5h``, ``1h30m``, or plain seconds."""
    given = text.strip().lower()
    parts = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?", given)
    if not given or parts is None or not any(parts.groups()):
        raise UsageError(f"--time {excerpt(text)}: give a duration such as 90s, 20m, 1.5h or 1h30m")
    seconds = sum(float(x) * _UNITS[u] for x, u in zip(parts.groups(), "hms", strict=True) if x)
    if seconds <= 0:
        raise UsageError(f"--time {excerpt(text)}: must be more than 0")
    return seconds


def check_auto(budget: str, time: str | None, max_items: int | None) -> float | None:
    """The auto budget's time in seconds; refuses ``--time``/``--max-items`` with another
    budget, an auto budget with neither, and sizes below 1."""
    if budget != AUTO:
        if time is not None or max_items is not None:
            raise UsageError("--time and --max-items size the auto budget: add --budget auto")
        return None
    if time is None and max_items is None:
        raise UsageError("--budget auto needs --time (e.g. 20m) or --max-items (or both)")
    if max_items is not None and max_items < 1:
        raise UsageError(f"--max-items {max_items}: must be at least 1")
    return None if time is None else parse_duration(time)


@dataclass(frozen=True)
class StepData:
    """Where a step's data was found: ``path`` and ``source`` (``"full"``: in a data
    folder; ``"sample"``: the shipped ``sample``), or ``reason`` it cannot run. Both None
    for a step whose suite generates its data."""

    path: Path | None = None
    source: str | None = None
    dataset: DataSet | None = None
    reason: str | None = None
    sample: Sample | None = None

    @property
    def title(self) -> str:
        """What the step reads, as the card names it."""
        if self.sample is not None:
            return self.sample.title
        return self.dataset.title if self.dataset else "generated"

    def record(self) -> dict:
        """The fields a step's run.json record holds about its data."""
        if self.dataset is None:
            return {"data_source": "generated"}
        return {
            "data_source": self.source,
            "data_set": self.title,
            "data_license": self.sample.license if self.sample else self.dataset.license,
        }


def step_data(step: Step, roots: Sequence[Path], budget: str) -> StepData:
    """The data of ``step`` under the first of ``roots`` holding it; at the small budget
    the shipped sample where none does; else why the step cannot run."""
    if step.data is None:
        return StepData()
    dataset = owner(step.data)
    if dataset is None:  # a step naming a path the catalogue lacks is a bug in STEPS
        raise ValueError(f"step {step.name}: {step.data} is in no catalogue entry")
    if (path := find(step.data, list(roots))) is not None:
        return StepData(path, "full", dataset)
    shipped = sample(step.data)
    if budget == SAMPLED and shipped is not None:
        return StepData(shipped.path, "sample", dataset, sample=shipped)
    looked = ", ".join(str(r) for r in roots)
    only = " (the sample shipped with faithprobe serves --budget small only)" if shipped else ""
    return StepData(dataset=dataset, reason=(
        f"needs {dataset.title}{only}: run `faithprobe data fetch {dataset.name}`, or pass "
        f"--data-dir DIR holding {step.data} (looked in {looked})"
    ))  # fmt: skip
