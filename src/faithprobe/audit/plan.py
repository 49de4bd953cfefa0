"""What an audit runs: the steps the registered suites declare, their data and their size
at each budget.

A *step* is one run of one suite with fixed options, declared by the suite
(:class:`~faithprobe.suite_protocol.AuditStep` in its ``SUITE`` entry; a suite may declare several).
The audit runs them in the order they declare, so a new suite's folder alone adds its
step to the card. A *budget* names how many items each step samples: ``small`` for a
first look in a few minutes, ``default`` for numbers whose intervals decide most
verdicts, ``full`` for every item the data holds, and ``auto`` for rounds of growing size
(:meth:`Step.rounds`: at most :data:`~faithprobe.metrics.sequential.LOOKS`) until the step
is decided or its share of ``--time`` is spent (docs/audit.md lists the sizes and the
times measured so far).

Steps that read data find it in the data folders (:mod:`faithprobe.catalog.locate`:
``--data-dir``, ``$FAITHPROBE_DATA``, the folder ``faithprobe data fetch`` fills); at the
``small`` budget the sample shipped with faithprobe stands in for a file found in none of
them, and the step says so. A step whose data is absent is skipped with where it looked and
how to fetch it. Light to import: ``faithprobe audit --help`` reads it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from faithprobe.catalog.entries import DataSet, owner
from faithprobe.catalog.locate import Sample, find, sample
from faithprobe.errors import UsageError, excerpt
from faithprobe.metrics.sequential import LOOKS
from faithprobe.options import check_among
from faithprobe.suite_protocol import SUITES, AuditStep

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


@dataclass(frozen=True, kw_only=True)
class Step(AuditStep):
    """One suite run of an audit: a step its suite declares, with the suite's name."""

    suite: str

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


def declared_steps() -> tuple[Step, ...]:
    """Every step the registered suites declare, in card order (their ``order``, then
    their names). A step not sized for each budget, or two steps of one name, is a bug in
    a suite's entry, told at once."""
    steps = sorted(
        (
            Step(**{f.name: getattr(step, f.name) for f in fields(AuditStep)}, suite=name)
            for name in SUITES.names()
            for step in SUITES.get(name).audit
        ),
        key=lambda s: (s.order, s.name),
    )
    sized = set(BUDGETS) - {AUTO}
    for step in steps:
        if set(step.limits) != sized or not set(step.budget_options) <= sized:
            raise ValueError(f"suite {step.suite}: step {step.name} is not sized for the "
                             f"budgets {', '.join(sorted(sized))}")  # fmt: skip
    if len(names := [s.name for s in steps]) != len(set(names)):
        raise ValueError(f"two audit steps share a name: {', '.join(names)}")
    return tuple(steps)


def __getattr__(name: str) -> tuple[Step, ...]:
    """``STEPS``: :func:`declared_steps`, read when first asked for (finding the suites
    imports their entries, which ``audit --help`` need not do)."""
    if name == "STEPS":
        return declared_steps()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_budget(name: str) -> Budget:
    check_among(name, BUDGETS, f"--budget {excerpt(name)}")
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
    check_sized(budget, time, max_items)
    if max_items is not None and max_items < 1:
        raise UsageError(f"--max-items {max_items}: must be at least 1")
    return None if time is None else parse_duration(time)


def check_sized(budget: str, time: str | float | None, max_items: int | None) -> None:
    """Refuse an auto budget given neither a time (``time``: ``--time`` as given or in
    seconds) nor a largest limit: the one check, for the command line and library calls."""
    if budget == AUTO and time is None and max_items is None:
        raise UsageError("--budget auto needs --time (e.g. 20m) or --max-items (or both)")


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
    if dataset is None:  # a step naming a path the catalogue lacks is a bug in its suite
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
