"""The faithfulness card's numbers: each ran step's headline effects (read off its
metrics.json by its suite's ``headline`` function), their verdicts, a verdict per step and
model, the models' differences the intervals support, and a count per model. This is the
audit's ``metrics.json``; docs/audit.md documents every field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from faithprobe.audit.plan import Budget
from faithprobe.metrics.verdict import RULE, VERDICTS, Effect, combined, intervals_differ
from faithprobe.registry import load_target
from faithprobe.suite import SUITES

SCHEMA_VERSION = 1


def headline_effects(suite: str, metrics: Mapping[str, Any]) -> list[Effect]:
    """The headline effects suite ``suite`` reads off its ``metrics``; none if it names no
    headline function."""
    target = SUITES.get(suite).headline
    return load_target(target)(metrics) if target else []


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


def card_metrics(
    runs: Sequence[Mapping[str, Any]],
    models: Sequence[Mapping[str, str]],
    *,
    budget: Budget,
    seed: int,
) -> dict:
    """The audit's metrics.json from its step records (each with the step's ``metrics``
    when it ran) and its models (spec, name, fingerprint)."""
    names = [m["name"] for m in models]
    steps, effects, differences = [], [], []
    for r in runs:
        step = {k: r[k] for k in ("step", "suite", "question", "status")}
        if r["status"] != "ran":
            steps.append({**step, "reason": r["reason"], "verdicts": {}})
            continue
        found = headline_effects(r["suite"], r["metrics"])
        verdicts = {m: combined(e.verdict for e in found if e.subject == m) for m in r["models"]}
        keep = ("report", "limit", "options", "data", "n_pairs", "seconds", "models")
        steps.append(
            {**step, **{k: r[k] for k in keep}, "skipped_models": r["skipped_models"],
             "verdicts": verdicts, "n_effects": len({e.key for e in found})}
        )  # fmt: skip
        effects += [{"step": r["step"], **e.record()} for e in found]
        differences += _differences(r["step"], found, names)
    counts = {
        m: {v: sum(e["subject"] == m and e["verdict"] == v for e in effects) for v in VERDICTS}
        for m in names
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "audit",
        "budget": {"name": budget.name, "description": budget.description},
        "seed": seed,
        "rule": RULE,
        "models": list(models),
        "steps": steps,
        "effects": effects,
        "differences": differences,
        "summary": counts,
    }
