"""The faithfulness card's numbers: each ran step's competence and headline effects (read
off its metrics.json by its suite's ``headline`` function), their verdicts, a verdict per
step and model, the models' differences the intervals support, and a count per model.
This is the audit's ``metrics.json``; docs/audit.md documents every field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

from faithprobe.audit.edges import Edges
from faithprobe.audit.plan import Budget
from faithprobe.metrics.verdict import (
    NOT_ASSESSABLE,
    RULE,
    VERDICTS,
    Competence,
    Effect,
    Region,
    combined,
    intervals_differ,
)
from faithprobe.registry import load_target
from faithprobe.suite import SUITES

SCHEMA_VERSION = 2


def headline(suite: str, metrics: Mapping[str, Any]) -> tuple[list[Effect], list[Competence]]:
    """The headline effects and the competence records suite ``suite`` reads off its
    ``metrics``; none if it names no headline function. A headline function returns both
    kinds of record in one list (a plug-in's may return effects only: its steps are then
    judged without a competence check, and the card says so)."""
    target = SUITES.get(suite).headline
    found = load_target(target)(metrics) if target else []
    return (
        [r for r in found if isinstance(r, Effect)],
        [r for r in found if isinstance(r, Competence)],
    )


def headline_effects(suite: str, metrics: Mapping[str, Any]) -> list[Effect]:
    """The headline effects alone (:func:`headline`)."""
    return headline(suite, metrics)[0]


def moved(effects: Sequence[Effect], edges: Edges) -> list[Effect]:
    """``effects`` with the bounds of the edges ``edges`` overrides put in their regions."""
    return [
        replace(e, region=Region(e.region.side, edges.overrides[e.edge]))
        if e.edge in edges.overrides
        else e
        for e in effects
    ]


def _differences(step: str, effects: Sequence[Effect], models: Sequence[str]) -> list[dict]:
    """Every pair of models, per effect both have: the difference and whether their
    intervals are apart (:func:`~faithprobe.metrics.verdict.intervals_differ`)."""
    by_key: dict[str, dict[str, Effect]] = {}
    for e in effects:
        by_key.setdefault(e.key, {})[e.subject] = e
    out = []
    for key, per_model in by_key.items():
        for a, b in combinations([m for m in models if m in per_model], 2):
            ea, eb = per_model[a], per_model[b]
            out.append(
                {
                    "step": step,
                    "key": key,
                    "title": ea.title,
                    "a": a,
                    "b": b,
                    "difference": eb.value - ea.value,
                    "supported": intervals_differ(ea, eb),
                }
            )
    return out


def _step_record(r: Mapping[str, Any], found: list[Effect], able: list[Competence]) -> dict:
    competence = {c.subject: c for c in able}
    verdicts = {
        m: combined([e for e in found if e.subject == m], competence.get(m)) for m in r["models"]
    }
    keep = ("report", "limit", "options", "data", "n_pairs", "seconds", "models")
    return {
        **{k: r[k] for k in ("step", "suite", "question", "status")},
        **{k: r[k] for k in keep},
        "skipped_models": r["skipped_models"],
        "verdicts": verdicts,
        "not_assessable": {m: c.reason for m, c in competence.items() if not c.competent},
        "competence_stated": bool(able),
        "n_effects": len({e.key for e in found}),
    }


def _effect_record(step: str, effect: Effect, unable: bool) -> dict:
    """An effect as metrics.json holds it; its verdict is "not assessable" where the model
    lacks the step's competence (the interval is kept, but reads nothing)."""
    record = {"step": step, **effect.record()}
    if unable:
        record["verdict"] = NOT_ASSESSABLE
    return record


def card_metrics(
    runs: Sequence[Mapping[str, Any]],
    models: Sequence[Mapping[str, str]],
    *,
    budget: Budget,
    seed: int,
    edges: Edges | None = None,
) -> dict:
    """The audit's metrics.json from its step records (each with the step's ``metrics``
    when it ran) and its models (spec, name, fingerprint); ``edges``: the bounds in force
    (defaults, and what ``--edge`` moved)."""
    edges = edges or Edges.defaults(sorted({r["suite"] for r in runs}))
    names = [m["name"] for m in models]
    steps, effects, competence, differences = [], [], [], []
    for r in runs:
        if r["status"] != "ran":
            step = {k: r[k] for k in ("step", "suite", "question", "status")}
            steps.append({**step, "reason": r["reason"], "verdicts": {}})
            continue
        found, able = headline(r["suite"], r["metrics"])
        found = moved(found, edges)
        steps.append(_step_record(r, found, able))
        unable = {c.subject for c in able if not c.competent}
        effects += [_effect_record(r["step"], e, e.subject in unable) for e in found]
        competence += [{"step": r["step"], **c.record()} for c in able]
        differences += _differences(r["step"], found, names)
    counts = {
        m: {v: sum(s["verdicts"].get(m) == v for s in steps) for v in VERDICTS} for m in names
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "audit",
        "budget": {"name": budget.name, "description": budget.description},
        "seed": seed,
        "rule": RULE,
        "edges": edges.records(),
        "models": list(models),
        "steps": steps,
        "competence": competence,
        "effects": effects,
        "differences": differences,
        "summary": counts,
    }
