"""What an audit runs: one step per suite question, its data and its size at each budget.

A *step* is one run of one suite with fixed options (the faithfulness suite has two: the
generated predicate–argument probe and deletion on SQuAD). A *budget* names how many items
each step samples: ``small`` for a first look in a few minutes, ``default`` for numbers
whose intervals decide most verdicts, ``full`` for every item the data holds
(docs/audit.md lists the sizes and the times measured so far).

Steps that read data find it under a data folder laid out as the project's shared data
(``--data-dir``, or ``$FAITHPROBE_DATA``); a step whose data is absent is skipped with the
path it looked for. Light to import: ``faithprobe audit --help`` reads it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from faithprobe.errors import UsageError, excerpt

DATA_ENV = "FAITHPROBE_DATA"


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
    data: str | None = None  # path under the data folder; None: the suite's generated data
    data_name: str = ""  # what that data is, for a skip reason
    budget_options: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def options_for(self, budget: str) -> dict[str, str]:
        return {**self.options, **self.budget_options.get(budget, {})}


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
        data_name="SQuAD 1.1 dev",
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
        data_name="NLI-XY",
        budget_options={"small": {"bases": "16"}, "default": {"bases": "24"}},
    ),
    Step(
        "confidence-shift",
        "confidence-shift",
        "Does confidence drop when no choice is correct?",
        {"small": 40, "default": 150, "full": None},
        data="socialiqa/dev.jsonl",
        data_name="Social IQA dev",
        budget_options={"small": {"trials": "2"}},
    ),
)


def check_budget(name: str) -> Budget:
    if name not in BUDGETS:
        raise UsageError(f"--budget {excerpt(name)}: choose from {', '.join(BUDGETS)}")
    return BUDGETS[name]


def data_root(given: Path | None) -> Path | None:
    """The data folder: ``--data-dir``, else ``$FAITHPROBE_DATA``, else none."""
    if given is not None:
        if not Path(given).is_dir():
            raise UsageError(f"--data-dir {given}: no such folder")
        return Path(given)
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else None


def step_data(step: Step, root: Path | None) -> tuple[Path | None, str | None]:
    """The data file or folder of ``step`` and None, or None and why it cannot run."""
    if step.data is None:
        return None, None
    if root is None:
        return None, (
            f"needs {step.data_name}: pass --data-dir DIR holding {step.data} (or set ${DATA_ENV})"
        )
    path = root / step.data
    if not path.exists():
        return None, f"needs {step.data_name}: {path} not found"
    return path, None
