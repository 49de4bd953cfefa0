"""A report table declared as data, and the one function that makes it.

Most tables of a report show one list of ``metrics.json`` (``rows``), a row per record: the
records read into a flat frame in the view's reading order (the table's ``data``, written
to CSV), and a display of one formatted cell per column (Markdown and the page). A suite
states that as a :class:`TableSpec`, as it states its card effects as
:class:`~faithprobe.metrics.headline.EffectSpec` records: its ``columns`` map each heading
to a :data:`Cell`, a function of one record, and the spec goes into the view's
``table_makers``, where calling it on the metrics makes the
:class:`~faithprobe.report.tables.Table` (None when the run wrote no such rows). The cells
most tables need are made by the functions below (:func:`value`, :func:`or_dash`,
:func:`count`, :func:`general`, :func:`three_decimals`, :func:`percent`, :func:`estimate`,
:func:`interval`, :func:`signed_points`), each interval written by
:func:`~faithprobe.report.tables.interval_text`, the one formatter of an estimate with its
interval that the suites and the card share.

A table whose display is not one row per record (a pivot) declares ``display`` instead of
``columns``: a function of the data frame and the metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pandas as pd

from .tables import (
    BY_SUBJECT,
    DASH,
    Ordering,
    Table,
    fmt_count,
    fmt_general,
    fmt_percent,
    interval_text,
    is_missing,
    order_rows,
    subject_order,
)
from .views import estimate_text, percent_text

Row = Mapping[str, Any]
Cell = Callable[[Row], Any]


def _at(record: Row, keys: tuple[str, ...]) -> Any:
    """``record[keys[0]][keys[1]]...``: a value inside nested records."""
    for key in keys:
        record = record[key]
    return record


def value(*keys: str) -> Cell:
    """The record's ``keys`` (one, or a path into nested records) as it is."""
    return lambda r: _at(r, keys)


def or_dash(key: str) -> Cell:
    """The record's ``key`` as it is, "–" where missing."""
    return lambda r: DASH if is_missing(r.get(key)) else r[key]


def count(*keys: str) -> Cell:
    """The record's ``keys`` (:func:`value`) as a whole number ("–" where missing)."""
    return lambda r: fmt_count(_at(r, keys))


def general(key: str, spec: str = ".3g") -> Cell:
    """``key`` by :func:`~faithprobe.report.tables.fmt_general` (``spec``)."""
    return lambda r: fmt_general(r[key], spec)


def percent(key: str | None = None) -> Cell:
    """The estimate ``r[key]`` (the record itself where ``key`` is None) in percent with its
    interval (:func:`~faithprobe.report.views.percent_text`)."""
    return lambda r: percent_text(r if key is None else r[key])


def estimate(key: str | None = None, se: bool = True) -> Cell:
    """The estimate ``r[key]`` (the record itself where ``key`` is None) with its standard
    error (unless ``se`` is False) and interval (:func:`~faithprobe.report.views.estimate_text`)."""
    return lambda r: estimate_text(r if key is None else r[key], se=se)


THREE_DECIMALS = partial(fmt_general, spec=".3f")


def interval(
    key: str = "value",
    number: Callable[[Any], str] = THREE_DECIMALS,
    *,
    part: bool = False,
    bounds: tuple[str, str] | None = None,
    blank: Callable[[Any], bool] | None = None,
) -> Cell:
    """``r[key]`` with its interval, each by ``number``, brackets always written: the bounds
    ``ci_low``/``ci_high`` after ``key``'s prefix (``excess`` → ``excess_ci_low``), those of
    an estimate the flat frame spread with ``part`` (``excess.value``, ``excess.ci_low``),
    or the two keys ``bounds`` names; a lone "–" where ``blank`` holds the value missing
    (:func:`~faithprobe.report.tables.interval_text`)."""
    if part:
        keys = (f"{key}.value", f"{key}.ci_low", f"{key}.ci_high")
    else:
        prefix = "" if key == "value" else f"{key}_"
        keys = (key, *(bounds or (f"{prefix}ci_low", f"{prefix}ci_high")))
    return lambda r: interval_text(*(r.get(k) for k in keys), number, blank=blank)


# a difference of shares in percentage points, signed (+33.3)
POINTS = partial(fmt_percent, spec="+.1f")


def signed_points(key: str = "value") -> Cell:
    """A difference of shares in percentage points with its interval (``+33.3 [+25.0,
    +41.7]``; :func:`interval`)."""
    return interval(key, POINTS)


def three_decimals(key: str) -> Cell:
    """``key`` with three decimals ("–" where missing)."""
    return lambda r: THREE_DECIMALS(r[key])


def unless_missing(key: str, cell: Cell, missing: str = DASH) -> Cell:
    """``cell`` of the record where its ``key`` holds something, else ``missing``."""
    return lambda r: cell(r) if r.get(key) else missing


@dataclass(frozen=True)
class TableSpec:
    """One table of a report, declared (module docstring).

    ``rows``: the list of metrics.json shown (``name`` by default). ``ordering``: the reading
    order of its records (:func:`~faithprobe.report.tables.order_rows`); None keeps them as
    the run wrote them, and so does the data frame where ``data_as_written`` (only the
    display is in reading order). ``written``: the cells read the records as the run wrote
    them (nested estimates included, None where a value is missing) rather than the flat
    frame's. ``trim``: what the data frame (CSV) keeps of the flat records (all of it by
    default; the cells read what it keeps). ``columns``: each heading and its cell, or a
    function of the metrics giving them (where a cell reads another list of the metrics).
    ``note``: a text, or a function of the records giving it."""

    name: str
    title: str
    columns: Mapping[str, Cell] | Callable[[Mapping[str, Any]], Mapping[str, Cell]] = field(
        default_factory=dict
    )
    rows: str = ""
    ordering: Ordering | None = BY_SUBJECT
    data_as_written: bool = False
    written: bool = False
    note: str | Callable[[list[Row]], str] = ""
    trim: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    display: Callable[[pd.DataFrame, Mapping[str, Any]], pd.DataFrame] | None = None

    def __call__(self, metrics: Mapping[str, Any]) -> Table | None:
        """The table of ``metrics``, or None where the run wrote no rows for it."""
        rows = list(metrics.get(self.rows or self.name) or [])
        if not rows:
            return None
        data = pd.json_normalize(rows)
        if self.trim is not None:
            data = self.trim(data)
        order = list(range(len(rows)))
        if self.ordering is not None:
            ranked = data.assign(**{WRITTEN: order})
            order = list(order_rows(ranked, subject_order(metrics), self.ordering)[WRITTEN])
        shown = data.iloc[order].reset_index(drop=True)
        if not self.data_as_written:
            data = shown
        records = [rows[i] for i in order] if self.written else shown.to_dict("records")
        if self.display is not None:
            display = self.display(data, metrics)
        else:
            columns = self.columns(metrics) if callable(self.columns) else self.columns
            display = pd.DataFrame(
                {heading: [cell(r) for r in records] for heading, cell in columns.items()}
            )
        note = self.note(records) if callable(self.note) else self.note
        return Table(self.name, self.title, data, display, note=note)


WRITTEN = "__written__"  # a record's place in the list the run wrote, while it is ordered


def without_units(data: pd.DataFrame) -> pd.DataFrame:
    """The frame without the per-unit numbers a headline effect keeps for the card's paired
    comparisons (``units.*``, spread there by the flat frame)."""
    return data.drop(columns=[c for c in data.columns if "units" in c.split(".")])
