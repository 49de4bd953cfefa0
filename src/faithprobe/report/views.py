"""What the suites' report views share: the :class:`ReportView` they subclass to declare
their tables, figures, sections (:class:`SectionSpec`) and example rows
(:class:`ExampleRows`), reading rows of ``metrics.json``, formatting an estimate (as a
value or in percent) and seeded example picks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..seeding import rng_for
from .example_columns import ExampleColumn, example_frame
from .figures import FigureMaker, Plot, save_figures
from .html import Examples, Section
from .tables import (
    BY_SUBJECT,
    NO_SPREAD,
    Ordering,
    Table,
    fmt_general,
    fmt_percent,
    interval_text,
    is_missing,
    order_rows,
    subject_order,
)


def f3(x: Any) -> str:
    return fmt_general(x, ".3f")


def estimate_text(r: Mapping[str, Any], se: bool = True) -> str:
    """``0.412 ± 0.011 [0.390, 0.434]`` (without ``± SE`` when ``se`` is False)."""
    spread = r.get("se") if se else NO_SPREAD
    return interval_text(r.get("value"), r.get("ci_low"), r.get("ci_high"), f3, spread=spread)


def percent_text(r: Mapping[str, Any]) -> str:
    """``41.2 [35.0, 47.5]`` (percent, 95% interval)."""
    return interval_text(r.get("value"), r.get("ci_low"), r.get("ci_high"), fmt_percent,
                         blank=is_missing)  # fmt: skip


def metric_frame(metrics: Mapping[str, Any], key: str, ordering: Ordering) -> pd.DataFrame:
    """The list ``metrics[key]`` as a flat frame, in the reading order ``ordering`` declares
    (subjects in run order)."""
    rows = list(metrics.get(key) or [])
    if not rows:
        return pd.DataFrame()
    return order_rows(pd.json_normalize(rows), subject_order(metrics), ordering)


def examples_rng(seed: int) -> np.random.Generator:
    """The generator every report draws its example rows from (one per report, per seed)."""
    return rng_for(int(seed), "report", "examples")


def pick_ids(rng: np.random.Generator, ids, k: int) -> set:
    """``k`` of the distinct ``ids`` (at most all of them), drawn without replacement from
    their sorted order, so the draw depends on the seed, not on the order of the rows."""
    ids = sorted(set(ids))
    return {ids[i] for i in rng.choice(len(ids), size=min(k, len(ids)), replace=False)}


def answered(results: pd.DataFrame) -> pd.DataFrame:
    """The rows whose intervention could be applied (no ``dropped_reason``)."""
    return results[results["dropped_reason"].isna()]


@dataclass(frozen=True)
class SectionSpec:
    """A section of the report page as a view declares it: the tables it shows, by name
    (``"prefix*"``: every table so named, in the order the view makes them), and its lead
    sentence (or a function of the metrics giving it). ``when``: a function of the metrics
    saying whether the section is shown (by default it always is)."""

    id: str
    title: str
    tables: tuple[str, ...]
    lead: str | Callable[[Mapping[str, Any]], str] = ""
    empty: str = Section.empty
    when: Callable[[Mapping[str, Any]], bool] | None = None

    def section(self, tables: Mapping[str, Table], metrics: Mapping[str, Any]) -> Section:
        shown = [
            t
            for name in self.tables
            for t in (
                [t for n, t in tables.items() if fnmatchcase(n, name)]
                if "*" in name
                else [tables.get(name)]
            )
        ]
        lead = self.lead(metrics) if callable(self.lead) else self.lead
        return Section(self.id, self.title, shown, lead=lead, empty=self.empty)


@dataclass(frozen=True)
class ExampleRows:
    """Which result rows a report shows as examples: a seeded draw of ids from the rows
    ``pool`` keeps (every row, by default), each drawn id shown with all its rows, about
    ``n`` rows in all (``n`` per value of ``per``, drawn within each value, where given);
    in the run's subject order, then by ``sort``; shown as ``columns``."""

    columns: Sequence[ExampleColumn]
    note: str = ""
    pool: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    draw: str = "pair_id"
    per: str | None = None
    n: int = 24
    sort: tuple[str, ...] = ()
    ordering: Ordering = BY_SUBJECT

    def examples(self, results: pd.DataFrame, seed: int, subjects: Sequence[str]) -> Examples:
        empty = Examples(self.columns, pd.DataFrame(), self.note)
        if results.empty:
            return empty
        pool = self.pool(results) if self.pool else results
        if pool.empty:
            return empty
        rows_per_id = max(1, pool.groupby(self.draw)["pair_id"].nunique().max())
        k = max(1, self.n // (rows_per_id * max(1, pool["subject"].nunique())))
        rng = examples_rng(seed)
        groups = [g for _, g in pool.groupby(self.per)] if self.per else [pool]
        picked = set().union(*(pick_ids(rng, g[self.draw], k) for g in groups))
        rows = order_rows(pool[pool[self.draw].isin(picked)], subjects, self.ordering)
        if self.sort:
            rows = rows.sort_values(list(self.sort), kind="stable")
        frame = example_frame(self.columns, rows).reset_index(drop=True)
        return Examples(self.columns, frame, self.note)


# a function of the metrics making one table, none, or several (in a list, or by name)
TableMaker = Callable[[Mapping[str, Any]], "Table | None | Iterable[Table] | Mapping[str, Table]"]


def _made(out: Table | None | Iterable[Table] | Mapping[str, Table]) -> Iterable[Table | None]:
    if isinstance(out, Mapping):
        return out.values()
    return [out] if out is None or isinstance(out, Table) else out


class ReportView:
    """What a suite's report shows, read from its ``metrics.json`` (and example rows from
    its results), declared by a subclass: ``table_makers`` make its tables from the metrics
    (each gives one table, none, or several), in the order the page and ``tables/`` list
    them; ``headline`` names the tables whose first one made is also the headline table
    (``summary``, printed on the terminal and atop the page) where no maker makes that one;
    ``figures`` are (name, title, function of the metrics drawing a figure or None);
    ``layout`` places the tables in sections (by default one section holds them all);
    ``example_rows`` says which result rows are shown (none by default). A view whose page
    needs more overrides the method that reads the declaration."""

    summary_title: str | Callable[[Mapping[str, Any]], str] = "results"
    table_makers: tuple[TableMaker, ...] = ()
    headline: tuple[str, ...] = ()
    figures: tuple[tuple[str, str, FigureMaker], ...] = ()
    layout: tuple[SectionSpec, ...] = ()
    example_rows: ExampleRows | None = None

    @classmethod
    def tables(cls, metrics: Mapping[str, Any]) -> dict[str, Table]:
        """Every table the makers make, by name; the headline first."""
        made: dict[str, Table] = {}
        for make in cls.table_makers:
            made.update((t.name, t) for t in _made(make(metrics)) if t is not None)
        first = next((made[name] for name in cls.headline if name in made), None)
        if first is None:
            return made
        return {"summary": Table("summary", "Headline", first.data, first.display, first.note),
                **made}  # fmt: skip

    @classmethod
    def summary(cls, metrics: Mapping[str, Any]) -> pd.DataFrame:
        summary = cls.tables(metrics).get("summary")
        return summary.display if summary is not None else pd.DataFrame()

    @classmethod
    def plots(cls, metrics: Mapping[str, Any], folder: Path) -> list[Plot]:
        return save_figures(metrics, folder, cls.figures) if cls.figures else []

    @classmethod
    def sections(cls, tables: Mapping[str, Table], metrics: Mapping[str, Any]) -> list[Section]:
        if not cls.layout:
            return [Section("tables", "Tables", list(tables.values()))]
        return [s.section(tables, metrics) for s in cls.layout if s.when is None or s.when(metrics)]

    @classmethod
    def examples(cls, results: pd.DataFrame, seed: int, subjects: Sequence[str]) -> Examples:
        if cls.example_rows is None:
            return Examples([], pd.DataFrame())
        return cls.example_rows.examples(results, seed, subjects)
