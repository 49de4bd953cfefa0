"""The faithfulness card: an audit folder's ``index.html`` and its console summary, views of
the audit's ``metrics.json`` (:mod:`faithprobe.audit.card`) and ``run.json``.

The page is one self-contained file (inline CSS shared with the suite reports, no scripts,
no external resources), rendered with autoescaping, laid out to be read at 1280 px without
scrolling sideways: fixed-layout tables that wrap long names. Each step links to its suite's
full report under ``suites/``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from faithprobe.atomic import write_text
from faithprobe.metrics.verdict import Region

from .html import environment
from .tables import DASH, fmt_general

TEMPLATE = "card.html.j2"


def interval_text(value: Any, low: Any, high: Any) -> str:
    """``0.42 [0.30, 0.55]``, with a dash for what is missing."""
    if value is None:
        return DASH
    return f"{fmt_general(value)} [{fmt_general(low)}, {fmt_general(high)}]"


def region_text(region: Mapping[str, Any]) -> str:
    return Region(**region).text()


GLYPH_WIDTH = 150
FAR = 100  # beyond this many times a run's items, the card says "more than" rather than a count  # px of the interval drawing in each cell


def _finite(*xs: Any) -> bool:
    return all(isinstance(x, int | float) and math.isfinite(x) for x in xs)


def _glyphs(row: dict, effects: list[Mapping[str, Any]]) -> None:
    """Give each model's cell of ``row`` an interval drawing on one scale shared by the
    row's models: the faithful region shaded, its edge, the interval and the estimate (in
    px of :data:`GLYPH_WIDTH`). Rows with a missing or unbounded number get none."""
    edge = effects[0]["region"]["bound"]
    points = [edge] + [e[k] for e in effects for k in ("value", "ci_low", "ci_high")]
    if not _finite(*points):
        return
    lo, hi = min(points), max(points)
    pad = (hi - lo) * 0.06 or 0.05
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return round((v - lo) / (hi - lo) * GLYPH_WIDTH, 1)

    at_most = effects[0]["region"]["side"] == "at_most"
    region = (0.0, x(edge)) if at_most else (x(edge), float(GLYPH_WIDTH))
    for e in effects:
        row["cells"][e["subject"]]["glyph"] = {
            "region_x": region[0], "region_w": round(region[1] - region[0], 1),
            "edge": x(edge), "low": x(e["ci_low"]), "high": x(e["ci_high"]), "value": x(e["value"]),
        }  # fmt: skip


def step_effects(metrics: Mapping[str, Any], step: str) -> list[dict]:
    """The effects of ``step``, one entry per effect with a cell per model."""
    rows: dict[str, dict] = {}
    found: dict[str, list] = {}
    for e in metrics["effects"]:
        if e["step"] != step:
            continue
        found.setdefault(e["key"], []).append(e)
        row = rows.setdefault(
            e["key"],
            {"title": e["title"], "reading": e["reading"], "region": region_text(e["region"]),
             "cells": {}},
        )  # fmt: skip
        row["cells"][e["subject"]] = {
            "text": interval_text(e["value"], e["ci_low"], e["ci_high"]),
            "verdict": e["verdict"],
            "n": e["n"],
            "glyph": None,
            "to_decide": _needs_text(e.get("to_decide"), "would likely decide it"),
        }
    for key, row in rows.items():
        _glyphs(row, found[key])
        row["differences"] = [
            difference_cell(d)
            for d in metrics.get("differences", [])
            if d["step"] == step and d["key"] == key
        ]
    return list(rows.values())


def _needs_text(needs: Mapping[str, Any] | None, what: str) -> str:
    """E.g. 'about 240 items (4× this run's, 6.5 min at its rate) would likely decide it'."""
    if not needs:
        return ""
    if needs["times_items"] > FAR:
        return f"more than {FAR}× this run's items {what}"
    return (
        f"about {needs['items']} items ({fmt_general(needs['times_items'])}× this run's, "
        f"{fmt_general(needs['minutes'])} min at its rate) {what}"
    )


def difference_cell(d: Mapping[str, Any]) -> dict[str, Any]:
    """One difference between two models as the card shows it."""
    return {
        "pair": f"{d['b']} − {d['a']}",
        "text": interval_text(d["difference"], d.get("ci_low"), d.get("ci_high")),
        "p": fmt_general(d.get("p_adjusted")),
        "supported": d["supported"],
        "paired": d.get("paired", False),
        "method": d.get("method", ""),
        "to_support": _needs_text(d.get("to_support"), "would give 80% power"),
    }


def competence_cells(metrics: Mapping[str, Any], step: str) -> dict[str, dict]:
    """Per model, the step's competence as the card shows it: accuracy [95% CI] against the
    best constant answer on the same items, and whether the model clears it."""
    out = {}
    for c in metrics.get("competence", []):
        if c["step"] != step:
            continue
        out[c["subject"]] = {
            "text": interval_text(c["value"], c["ci_low"], c["ci_high"]),
            "baseline": f"{fmt_general(c['baseline'])} ({c['baseline_answer']})",
            "competent": c["competent"],
            "p": fmt_general(c["p_value"]),
            "margin": fmt_general(c["margin"]),
            "metric": c["metric"],
            "n": c["n"],
        }
    return out


def _competence_line(cell: Mapping[str, Any] | None) -> str:
    if cell is None:
        return DASH
    verdict = "competent" if cell["competent"] else "not competent"
    return f"{cell['text']} vs constant {cell['baseline']}: {verdict}"


def render_card(metrics: Mapping[str, Any], run: Mapping[str, Any]) -> str:
    steps = []
    for s in metrics["steps"]:
        steps.append(
            {
                **s,
                "options_text": ", ".join(f"{k}={v}" for k, v in (s.get("options") or {}).items()),
                "effects": step_effects(metrics, s["step"]),
                "competence": competence_cells(metrics, s["step"]),
            }
        )
    context = {
        "title": "faithprobe faithfulness card",
        "budget": metrics["budget"],
        "seed": metrics["seed"],
        "finished": run.get("finished", DASH),
        "rule": metrics["rule"],
        "models": metrics["models"],
        "steps": steps,
        "summary": metrics["summary"],
        "edges": metrics.get("edges", {}),
        "comparisons": metrics.get("comparisons"),
        "command": run.get("command") or DASH,
        "data_dir": run.get("data_dir") or "none (steps that read data were skipped)",
        "versions": sorted((str(k), str(v)) for k, v in (run.get("versions") or {}).items()),
        "schema_version": metrics["schema_version"],
    }
    return environment().get_template(TEMPLATE).render(**context)


def write_card(folder: Path) -> Path:
    """``index.html`` of the audit folder ``folder`` from its metrics.json and run.json."""
    folder = Path(folder)
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    write_text(folder / "index.html", render_card(metrics, run))
    return folder / "index.html"


def card_rows(metrics: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The card as a console table: a row per step (its verdict per model, or why it was
    skipped), its competence row, then a row per headline effect (estimate [95% CI] and
    the effect's own reading)."""
    names = [m["name"] for m in metrics["models"]]
    pairs = len(names) > 1
    header = ["step / effect", "faithful if", *names, *(["difference (adj. p)"] if pairs else [])]
    rows = []
    for s in metrics["steps"]:
        if s["status"] != "ran":
            rows.append([s["step"], "", *[f"skipped: {s['reason']}"] + [""] * (len(header) - 3)])
            continue
        rows.append([s["step"], "", *[s["verdicts"].get(n, "not run") for n in names],
                     *([""] if pairs else [])])  # fmt: skip
        competence = competence_cells(metrics, s["step"])
        if competence:
            margin = next(iter(competence.values()))["margin"]
            rows.append(
                [
                    "  competence: accuracy vs best constant answer",
                    f"> constant + {margin}",
                    *[_competence_line(competence.get(n)) for n in names],
                    *([""] if pairs else []),
                ]
            )
        for e in step_effects(metrics, s["step"]):
            cells = [
                f"{c['text']} {c['verdict']}" if (c := e["cells"].get(n)) else DASH for n in names
            ]
            if pairs:
                cells.append("; ".join(_console_difference(d) for d in e["differences"]) or DASH)
            rows.append([f"  {e['title']}", e["region"], *cells])
    return header, rows


def _console_difference(d: Mapping[str, Any]) -> str:
    said = "supported" if d["supported"] else "not supported"
    return f"{d['pair']}: {d['text']} (p = {d['p']}) {said}"
