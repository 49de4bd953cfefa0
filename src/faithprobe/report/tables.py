"""Tables of the report: the :class:`Table` every view builds, the formatting of its cells,
the reading order of its rows and writing it out. Nothing is estimated here.

Every table has two faces:

* ``data``: the rows of ``metrics.json`` it shows, numeric and at full precision, written
  to ``tables/<name>.csv`` for anyone who wants to compute further;
* ``display``: the same numbers pivoted and formatted for reading ("0.93 [0.88, 0.96]"),
  written to ``tables/<name>.md`` and shown in ``report.html``.

Missing values (NaN / null, e.g. a confidence bound when an estimate rests on one cluster)
are shown as "–".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

DASH = "–"


@dataclass(frozen=True)
class Table:
    """One table of the report: numeric ``data`` (CSV) and formatted ``display`` (Markdown)."""

    name: str
    title: str
    data: pd.DataFrame
    display: pd.DataFrame
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- formatting


def is_missing(x: Any) -> bool:
    """None, NaN or NA; False for anything pandas cannot test (lists, dicts)."""
    if x is None:
        return True
    try:
        return bool(pd.isna(x))
    except (TypeError, ValueError):
        return False


def fmt_number(x: Any, metric: str = "accuracy") -> str:
    """A point value: two decimals for accuracies, a few significant digits otherwise."""
    if is_missing(x):
        return DASH
    x = float(x)
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if metric == "accuracy" or 0.01 <= abs(x) < 1000:
        return f"{x:.2f}"
    return f"{x:.2g}"


def fmt_general(x: Any, spec: str = ".3g") -> str:
    if is_missing(x):
        return DASH
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    try:
        return format(float(x), spec)
    except (TypeError, ValueError):
        return str(x)


def is_none(x: Any) -> bool:
    """None only: where a NaN is still shown (as "–") with its interval."""
    return x is None


NO_SPREAD = object()  # interval_text without a "± spread"


def interval_text(
    value: Any,
    low: Any,
    high: Any,
    number: Callable[[Any], str] = fmt_general,
    *,
    spread: Any = NO_SPREAD,
    unit: str = "",
    blank: Callable[[Any], bool] | None = is_none,
) -> str:
    """The one way the report writes an estimate with its interval: ``0.42 [0.30, 0.55]``,
    each number by ``number`` (:func:`fmt_general` by default: "–" where missing), the value
    followed by ``unit`` (``41.2% [35.0, 47.5]``) and ``± spread`` where given
    (``0.412 ± 0.011 [0.390, 0.434]``). A value that ``blank`` holds missing (None, by
    default) is a lone "–"; with ``blank=None`` the brackets are always written."""
    if blank is not None and blank(value):
        return DASH
    shown = f"{number(value)}{unit}"
    if spread is not NO_SPREAD:
        shown += f" ± {number(spread)}"
    return f"{shown} [{number(low)}, {number(high)}]"


def fmt_estimate(value: Any, ci_low: Any, ci_high: Any, metric: str = "accuracy") -> str:
    """``"0.93 [0.88, 0.96]"`` by :func:`fmt_number`; a missing bound is shown as "–"."""
    return interval_text(value, ci_low, ci_high, partial(fmt_number, metric=metric),
                         blank=is_missing)  # fmt: skip


def fmt_interval(
    value: Any,
    ci_low: Any,
    ci_high: Any,
    spec: str = ".3f",
    blank: Callable[[Any], bool] | None = None,
) -> str:
    """``0.120 [0.050, 0.190]``: a value and its interval, each by :func:`fmt_general`
    (so "–" where missing, the value included, unless ``blank`` holds it missing: then a
    lone "–")."""
    return interval_text(value, ci_low, ci_high, partial(fmt_general, spec=spec), blank=blank)


def fmt_count(x: Any) -> str:
    if is_missing(x):
        return DASH
    try:
        return str(int(x))
    except (TypeError, ValueError):
        return str(x)


def fmt_percent(x: Any, spec: str = ".1f") -> str:
    """A share in percent (``0.412`` → ``41.2``), without the sign; "–" when missing."""
    return DASH if is_missing(x) else format(100 * x, spec)


# --------------------------------------------------------------------------- ordering


def subject_order(metrics: Mapping[str, Any]) -> list[str]:
    """Subjects in the order the run listed them."""
    return [s["name"] for s in metrics.get("subjects", []) if "name" in s]


def rank_values(values: Iterable[Any], preferred: Sequence[Any]) -> dict[Any, int]:
    """Rank: preferred values first in their order, anything else after, sorted."""
    rank = {v: i for i, v in enumerate(preferred)}
    rest = sorted({v for v in values if v not in rank}, key=lambda v: (str(type(v)), str(v)))
    for v in rest:
        rank[v] = len(rank)
    return rank


@dataclass(frozen=True)
class Ordering:
    """The reading order of a view's rows, declared by each view in its own vocabulary.

    Rows are sorted by ``columns`` in turn (those a frame has; the others are skipped).
    Within a column the values ``preferred`` lists come first, in that order, and any
    other value after them, sorted. Subjects come in the order the run listed them.
    """

    columns: Sequence[str]
    preferred: Mapping[str, Sequence[Any]] = field(default_factory=dict)


BY_SUBJECT = Ordering(columns=("subject",))


def order_rows(df: pd.DataFrame, subjects: Sequence[str], ordering: Ordering) -> pd.DataFrame:
    """``df`` sorted (stably) in the reading order ``ordering`` declares."""
    if df.empty:
        return df.reset_index(drop=True)
    preferred = {**ordering.preferred, "subject": subjects}
    cols = [c for c in ordering.columns if c in df.columns]

    def key(s: pd.Series) -> pd.Series:
        rank = rank_values(s.unique(), preferred.get(s.name, ()))
        return s.map(rank)

    return df.sort_values(cols, key=key, kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- writing


def write_tables(tables: Mapping[str, Table], out_dir: Path) -> list[Path]:
    """Write ``<name>.csv`` (numeric data) and ``<name>.md`` (formatted) for every table."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for t in tables.values():
        csv, md = out_dir / f"{t.name}.csv", out_dir / f"{t.name}.md"
        t.data.to_csv(csv, index=False)
        text = f"# {t.title}\n\n"
        if t.note:
            text += f"{t.note}\n\n"
        text += t.display.to_markdown(index=False) + "\n"
        md.write_text(text, encoding="utf-8")
        written += [csv, md]
    return written
