"""One self-contained HTML page: inline CSS, PNGs as base64 data URIs, no external resources.

Rendered with jinja2 with autoescaping on: every string from the run (dataset texts,
subject names, table cells) is escaped. Tables are passed to the template as lists of
strings and built there, never as pre-rendered HTML.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from .example_columns import ExampleColumn
from .figures import Plot
from .tables import DASH, Table, fmt_general

TEMPLATES = Path(__file__).parent / "templates"
TEMPLATE = "report.html.j2"

_NUMERIC_CELL = re.compile(r"^[-+0-9.,eE\[\]\s–∞<>]+$")


def environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _cell(x: Any) -> str:
    if x is None:
        return DASH
    if isinstance(x, str):
        return x
    return fmt_general(x)


def table_context(df: pd.DataFrame) -> dict[str, Any]:
    """Columns, rows of strings and a right-align flag per column, for the template."""
    rows = [[_cell(x) for x in r] for r in df.itertuples(index=False, name=None)]
    numeric = [
        bool(rows) and all(r[i] == DASH or _NUMERIC_CELL.match(r[i]) for r in rows)
        for i in range(len(df.columns))
    ]
    return {"columns": [str(c) for c in df.columns], "rows": rows, "numeric": numeric}


def _table(t: Table | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"name": t.name, "title": t.title, "note": t.note, **table_context(t.display)}


def _data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


@dataclass(frozen=True)
class Examples:
    """Example rows for the report: the ``frame`` shown as ``columns``; rows whose
    ``correct`` is False are shaded."""

    columns: Sequence[ExampleColumn]
    frame: pd.DataFrame
    note: str = ""


def _examples_context(examples: Examples) -> dict[str, Any]:
    records = []
    for r in examples.frame.to_dict("records"):
        correct = r.get("correct")
        ok = None if correct is None or pd.isna(correct) else bool(correct)
        cells = []
        for column in examples.columns:
            value = r.get(column.key)
            if column.key == "correct":
                value = DASH if ok is None else ("yes" if ok else "no")
            cells.append({"text": _cell(value), "is_text": column.text})
        records.append({"cells": cells, "ok": ok})
    return {
        "headings": [c.heading for c in examples.columns],
        "rows": records,
        "note": examples.note,
    }


@dataclass(frozen=True)
class Section:
    """A titled part of the report page holding tables (and an optional lead sentence)."""

    id: str
    title: str
    tables: Sequence[Table | None]
    lead: str = ""
    empty: str = "Nothing recorded."


def _run_info(run: Mapping[str, Any], metrics: Mapping[str, Any]) -> list[tuple[str, str]]:
    def show(x: Any) -> str:
        return DASH if x is None else str(x)

    return [
        ("command", show(run.get("command"))),
        ("suite", show(run.get("suite", metrics.get("suite")))),
        ("seed", show(run.get("seed", metrics.get("seed")))),
        ("options", ", ".join(f"{k}={v!r}" for k, v in (run.get("options") or {}).items()) or DASH),
        ("limit", show(run.get("limit"))),
        ("batch size", show(run.get("batch_size"))),
        ("pairs", show(run.get("n_pairs"))),
        ("started", show(run.get("started"))),
        ("finished", show(run.get("finished"))),
    ]


def _subjects(run: Mapping[str, Any], metrics: Mapping[str, Any]) -> list[dict[str, str]]:
    listed = list(run.get("subjects") or metrics.get("subjects") or [])
    fingerprints = {s.get("name"): s.get("fingerprint") for s in metrics.get("subjects", [])}
    out = []
    for s in listed:
        name = s.get("name")
        out.append(
            {
                "name": str(name),
                "kind": str(s.get("kind") or DASH),
                "fingerprint": str(s.get("fingerprint") or fingerprints.get(name) or DASH),
            }
        )
    return out


def render_html(
    *,
    run: Mapping[str, Any],
    metrics: Mapping[str, Any],
    summary: Table | None,
    sections: Sequence[Section],
    plots: Sequence[Plot],
    examples: Examples,
) -> str:
    """The report page as a string."""
    suite = run.get("suite") or metrics.get("suite") or "run"
    context = {
        "title": f"faithprobe report — {suite}",
        "run_info": _run_info(run, metrics),
        "versions": sorted((str(k), str(v)) for k, v in (run.get("versions") or {}).items()),
        "subjects": _subjects(run, metrics),
        "summary": _table(summary),
        "plots": [{"title": p.title, "name": p.name, "src": _data_uri(p.path)} for p in plots],
        "sections": [
            {
                "id": sec.id,
                "title": sec.title,
                "lead": sec.lead,
                "empty": sec.empty,
                "tables": [_table(t) for t in sec.tables if t is not None],
            }
            for sec in sections
        ],
        "examples": _examples_context(examples),
        "schema_version": str(metrics.get("schema_version", DASH)),
    }
    return environment().get_template(TEMPLATE).render(**context)
