"""What the suites' report views share: the :class:`ReportView` they subclass, reading rows
of ``metrics.json``, formatting an estimate (as a value or in percent) and seeded example
picks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..seeding import rng_for
from .figures import Plot
from .html import Examples, Section
from .tables import (
    DASH,
    Ordering,
    Table,
    fmt_general,
    fmt_percent,
    is_missing,
    order_rows,
    subject_order,
)


def f3(x: Any) -> str:
    return fmt_general(x, ".3f")


def estimate_text(r: Mapping[str, Any], se: bool = True) -> str:
    """``0.412 ± 0.011 [0.390, 0.434]`` (without ``± SE`` when ``se`` is False)."""
    if r.get("value") is None:
        return DASH
    spread = f" ± {f3(r.get('se'))}" if se else ""
    return f"{f3(r['value'])}{spread} [{f3(r.get('ci_low'))}, {f3(r.get('ci_high'))}]"


def percent_text(r: Mapping[str, Any]) -> str:
    """``41.2 [35.0, 47.5]`` (percent, 95% interval)."""
    if is_missing(r.get("value")):
        return DASH
    return f"{fmt_percent(r['value'])} [{fmt_percent(r.get('ci_low'))}, {fmt_percent(r.get('ci_high'))}]"


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


class ReportView:
    """What a suite's report shows, read from its ``metrics.json`` (and example rows from
    its results). A suite's view subclasses this and overrides what it has: the defaults
    show no plots, every table in one section, and no examples. ``summary`` is the headline
    table (printed on the terminal and atop the page); ``tables`` are all tables by name
    (written to ``tables/<name>.csv`` and ``.md``), ``plots`` draws figures into a folder."""

    summary_title: str | Callable[[Mapping[str, Any]], str] = "results"

    @staticmethod
    def tables(metrics: Mapping[str, Any]) -> dict[str, Table]:
        return {}

    @classmethod
    def summary(cls, metrics: Mapping[str, Any]) -> pd.DataFrame:
        summary = cls.tables(metrics).get("summary")
        return summary.display if summary is not None else pd.DataFrame()

    @staticmethod
    def plots(metrics: Mapping[str, Any], folder: Path) -> list[Plot]:
        return []

    @staticmethod
    def sections(tables: Mapping[str, Table], metrics: Mapping[str, Any]) -> list[Section]:
        return [Section("tables", "Tables", list(tables.values()))]

    @staticmethod
    def examples(results: pd.DataFrame, seed: int, subjects: Sequence[str]) -> Examples:
        return Examples([], pd.DataFrame())
