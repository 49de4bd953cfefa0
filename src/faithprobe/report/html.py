"""One self-contained HTML page: inline CSS, PNGs as base64 data URIs, no external resources.

Rendered with jinja2 with autoescaping on: every string from the run (dataset texts,
subject names, table cells) is escaped. Tables are passed to the template as lists of
strings and built there, never as pre-rendered HTML.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..seeding import rng_for
from .plots import Plot
from .tables import DASH, Table, fmt_general, order_rows

TEMPLATES = Path(__file__).parent / "templates"
TEMPLATE = "report.html.j2"
N_EXAMPLES = 20

EXAMPLE_COLUMNS = [
    "subject",
    "condition",
    "original_context",
    "original_prediction",
    "context",
    "target",
    "prediction",
    "correct",
]
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


def _condition(r: Mapping[str, Any]) -> str:
    parts = [
        str(r.get("setting", "")),
        str(r.get("attractor_type", "")),
        f"n={r.get('n_attractors', '')}",
        str(r.get("position", "")),
    ]
    if r.get("n_filler"):
        parts.append(f"filler={r['n_filler']}")
    return " · ".join(p for p in parts if p)


def example_rows(
    results: pd.DataFrame, seed: int = 0, k: int = N_EXAMPLES, subjects: Sequence[str] = ()
) -> pd.DataFrame:
    """About ``k`` result rows: a seeded sample of intervened pairs, every subject per pair.

    Pairs whose base item at least one subject answers correctly are preferred (only
    those enter the estimates); base rows are shown only if there is nothing else.
    """
    if results.empty:
        return pd.DataFrame(columns=EXAMPLE_COLUMNS)
    pool = results
    if "intervention" in pool.columns:
        intervened = pool[pool["intervention"] != "none"]
        pool = intervened if not intervened.empty else pool
    if "competent" in pool.columns:
        competent = pool[pool["competent"].astype(bool)]
        pool = competent if not competent.empty else pool
    n_subjects = max(1, results["subject"].nunique()) if "subject" in results else 1
    pair_ids = sorted(pool["pair_id"].astype(str).unique())
    n_pairs = min(len(pair_ids), max(1, k // n_subjects))
    rng = rng_for(int(seed), "report", "examples")
    chosen = sorted(rng.choice(len(pair_ids), size=n_pairs, replace=False).tolist())
    picked = {pair_ids[i] for i in chosen}
    rows = results[results["pair_id"].astype(str).isin(picked)]
    if "intervention" in rows.columns:
        rows = rows[rows["intervention"] != "none"]
    rows = order_rows(rows, subjects).sort_values("pair_id", kind="stable")
    out = pd.DataFrame(
        {
            "subject": rows.get("subject"),
            "condition": [_condition(r) for r in rows.to_dict("records")],
            "original_context": rows.get("original_context"),
            "original_prediction": rows.get("original_prediction"),
            "context": rows.get("context"),
            "target": rows.get("target"),
            "prediction": rows.get("prediction"),
            "correct": rows.get("correct"),
        }
    )
    return out.reset_index(drop=True)


def _examples_context(df: pd.DataFrame) -> list[dict[str, str | bool]]:
    records = []
    for r in df.to_dict("records"):
        correct = r.get("correct")
        ok = None if correct is None or pd.isna(correct) else bool(correct)
        rec = {c: _cell(r.get(c)) for c in EXAMPLE_COLUMNS}
        rec["correct"] = DASH if ok is None else ("yes" if ok else "no")
        rec["ok"] = ok
        records.append(rec)
    return records


def _run_info(run: Mapping[str, Any], metrics: Mapping[str, Any]) -> list[tuple[str, str]]:
    def show(x: Any) -> str:
        return DASH if x is None else str(x)

    return [
        ("command", show(run.get("command"))),
        ("suite", show(run.get("suite", metrics.get("suite")))),
        ("seed", show(run.get("seed", metrics.get("seed")))),
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
    tables: Mapping[str, Table],
    plots: Sequence[Plot],
    examples: pd.DataFrame,
) -> str:
    """The report page as a string."""
    curve_tables = [
        _table(t)
        for name, t in tables.items()
        if name.startswith(("accuracy_", "relative_probability_"))
    ]
    dataset = metrics.get("dataset") or {}
    suite = run.get("suite") or metrics.get("suite") or "run"
    context = {
        "title": f"faithprobe report — {suite}",
        "run_info": _run_info(run, metrics),
        "versions": sorted((str(k), str(v)) for k, v in (run.get("versions") or {}).items()),
        "subjects": _subjects(run, metrics),
        "summary": _table(tables.get("summary")),
        "plots": [{"title": p.title, "name": p.name, "src": _data_uri(p.path)} for p in plots],
        "curve_tables": curve_tables,
        "competence": _table(tables.get("competence")),
        "tests": _table(tables.get("tests")),
        "dataset": _table(tables.get("dataset")),
        "n_pairs": DASH if dataset.get("n_pairs") is None else str(dataset["n_pairs"]),
        "n_base": DASH if dataset.get("n_base") is None else str(dataset["n_base"]),
        "examples": _examples_context(examples),
        "schema_version": str(metrics.get("schema_version", DASH)),
    }
    return environment().get_template(TEMPLATE).render(**context)
