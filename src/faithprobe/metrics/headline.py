"""A suite's headline for the faithfulness card, declared as data and read by one function.

Every suite reads its headline effects the same way: each row of a list in its
``metrics.json`` (``table``) holds an estimate with its 95% interval for one model, and
becomes one :class:`~faithprobe.metrics.verdict.Effect` whose faithful region is one side
of a named edge. A suite states that as :class:`EffectSpec` records in a :class:`Headline`
(``headline = Headline(...)`` in its ``headline.py``, named by
:attr:`faithprobe.suite_protocol.SuiteEntry.headline`); called on the suite's metrics, the headline
builds the effects, after each model's :class:`~faithprobe.metrics.verdict.Competence`
(read off ``metrics["competence"]`` where the suite writes one).

The texts an effect carries (key, title, reading, control) are :meth:`str.format`
templates over the row (``"{value:.3g}"``, ``"{excess[method]}"``); what a text needs that
the row does not hold as it is (a label for a code, a clause shown only when a number is
there) comes from the spec's ``fields`` function, the only code a headline declares.

Rows are read table by table, in the order the tables' first effects are declared, and
each row gives its effects in the order they are declared: the card lists them so.

An effect computed from what a model did not give (a confidence spread from a model whose
answers were letters parsed from its replies: no probabilities) is still listed for it: the
suite writes a row naming what it lacks into ``metrics["needs"]`` (:func:`needs_row`, naming
the table the effect is read from), which becomes an effect with no estimate whose verdict
says what it needs (:attr:`~faithprobe.metrics.verdict.Effect.needs`), so the card says
"needs probabilities" rather than leaving the model out.

Light to import (no pandas): the card's readers import the suites' headlines.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from faithprobe.metrics.verdict import Competence, Effect, competences

Row = Mapping[str, Any]
# metrics.json's list of effects a model has no estimate of, and a row's column saying what
# the model did not give (needs_row)
NEEDS = "needs"
PROBABILITIES = "probabilities"
NO_ESTIMATE = {"value": None, "ci_low": None, "ci_high": None, "n_clusters": 0}


def needs_row(subject: str, table: str, why: str, what: str = PROBABILITIES, **fields: Any) -> dict:
    """A row of ``metrics["needs"]``: the rows of headline table ``table`` that ``subject``
    has no estimate for, because it did not give ``what`` (``why``, in words); ``fields``
    are the row's identifying columns (a probe, a setting) that the effect's texts read."""
    return {"subject": subject, "table": table, **fields, NEEDS: what,
            "note": f"needs {what}: {why}"}  # fmt: skip


@dataclass(frozen=True)
class EffectSpec:
    """One headline effect per matching row of ``metrics[table]``."""

    table: str  # the list of metrics.json whose rows hold the effect, one row per model
    edge: str  # the edge (a name in the headline's ``edges``) bounding the faithful region
    side: Literal["at_most", "at_least"]  # which side of the edge a faithful model is on
    # templates over the row and ``fields(row)``: the effect's stable id within the suite,
    # what it is, how it was estimated, and what a model ignoring its input scores
    key: str
    title: str
    reading: str
    control: str = ""
    # where the estimate (value, ci_low, ci_high; units where paired) is: None, the row
    # itself; a name, the row's field holding it; a mapping, Effect field -> row column
    estimate: str | Mapping[str, str] | None = None
    # the row's columns counting the units the interval resamples: the first one set, else
    # the last as it is; none: the estimate's ``n_clusters``
    n: Sequence[str] = ()
    subject: str = "subject"  # the row's column naming the model
    match: Mapping[str, Collection[Any]] = field(default_factory=dict)  # column -> values kept
    # (column, value): the rows of one value of ``column`` only, ``value`` where a row has
    # it, else the first row's (one of several scorers on the card)
    prefer: tuple[str, Any] | None = None
    fields: Callable[[Row], Mapping[str, Any]] | None = None  # more fields the texts use

    def rows(self, rows: Sequence[Row]) -> list[Row]:
        """The rows of its table this effect is read from."""
        kept = [r for r in rows if all(r[c] in values for c, values in self.match.items())]
        if self.prefer is None:
            return kept
        column, value = self.prefer
        found = list(dict.fromkeys(r[column] for r in kept))
        shown = value if value in found else found[0] if found else None
        return [r for r in kept if r[column] == shown]

    def effect(self, row: Row, suite: str, edges: Mapping[str, tuple[float, str]]) -> Effect:
        """The effect ``row`` holds (one with no estimate for a :func:`needs_row`)."""
        texts = {**row, **(self.fields(row) if self.fields else {})}
        if row.get(NEEDS):
            return Effect.from_estimate(
                NO_ESTIMATE, self.side, self.edge, edges, n=0, suite=suite,
                key=self.key.format_map(texts), title=self.title.format_map(texts),
                subject=row[self.subject], reading=row["note"], needs=row[NEEDS],
                control=self.control.format_map(texts),
            )  # fmt: skip
        if self.estimate is None:
            estimate = row
        elif isinstance(self.estimate, str):
            estimate = row[self.estimate]
        else:
            estimate = {name: row.get(column) for name, column in self.estimate.items()}
        return Effect.from_estimate(
            estimate,
            self.side,
            self.edge,
            edges,
            n=self._units(row),
            suite=suite,
            key=self.key.format_map(texts),
            title=self.title.format_map(texts),
            subject=row[self.subject],
            reading=self.reading.format_map(texts),
            control=self.control.format_map(texts),
        )

    def _units(self, row: Row) -> int | None:
        if not self.n:
            return None
        *first, last = self.n
        return next((row[c] for c in first if row.get(c)), row[last])


@dataclass(frozen=True)
class Headline:
    """What a suite's ``metrics.json`` says on the card: each model's competence, then the
    effects ``effects`` declare, on the edges ``edges`` (name -> (default bound, where the
    default comes from); ``faithprobe audit --edge NAME=VALUE`` moves one)."""

    suite: str
    edges: Mapping[str, tuple[float, str]]
    effects: Sequence[EffectSpec]
    # how a stored constant answer is shown in the competence record (default: as it is)
    baseline_answer: Callable[[Any], str] | None = None

    def __call__(self, metrics: Mapping[str, Any]) -> list[Effect | Competence]:
        """Each model's competence, then the declared effects (module docstring)."""
        out: list[Effect | Competence] = [*competences(self.suite, metrics, self.baseline_answer)]
        for table in dict.fromkeys(spec.table for spec in self.effects):
            rows = list(metrics.get(table, []))
            rows += [r for r in metrics.get(NEEDS, []) if r["table"] == table]
            specs = [
                (spec, {id(r) for r in spec.rows(rows)})
                for spec in self.effects
                if spec.table == table
            ]
            for row in rows:
                out += [spec.effect(row, self.suite, self.edges) for spec, kept in specs
                        if id(row) in kept]  # fmt: skip
        return out
