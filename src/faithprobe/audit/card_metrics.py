"""The faithfulness card's numbers: each ran step's competence and headline effects (read
off its metrics.json by its suite's declared headline, :mod:`faithprobe.metrics.headline`),
their verdicts, a verdict per step and model, how each model answered each step (its answer
mode), the models' paired differences (:mod:`faithprobe.audit.differences`), and a count per
model. This is the audit's ``metrics.json``; docs/audit.md documents every field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from faithprobe.audit.differences import adjustment_text, model_differences, settle, to_decide
from faithprobe.audit.edges import Edges
from faithprobe.audit.plan import Budget
from faithprobe.metrics.comparison import ALPHA
from faithprobe.metrics.sequential import spent_alpha, widened
from faithprobe.metrics.verdict import (
    NOT_ASSESSABLE,
    RULE,
    VERDICTS,
    Competence,
    Effect,
    Region,
    combined,
)
from faithprobe.registry import load_target
from faithprobe.subjects.endpoint.self_check import VOUCHES_FOR
from faithprobe.suite_protocol import SUITES

SCHEMA_VERSION = 4  # 4: each step's answer_modes; effects that need what a model lacks


def headline(suite: str, metrics: Mapping[str, Any]) -> tuple[list[Effect], list[Competence]]:
    """The headline effects and the competence records suite ``suite`` reads off its
    ``metrics``; none if it names no headline. A suite whose metrics hold no competence
    records (a plug-in's may not) is judged without a competence check, and the card says
    so."""
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


# where a step's data came from (audit.plan.StepData.record): "full", "sample" or "generated"
DATA_FIELDS = ("data_source", "data_set", "data_license")


def answer_modes(
    metrics: Mapping[str, Any], checks: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, str]:
    """Model -> how it answered the step (its answer mode(s) in words, :mod:`faithprobe.
    metrics.answer_modes`), read off the step's metrics.json; none where the suite does not
    say. ``checks``: model -> the endpoint self-checks it passed (its run.json
    ``self_check``); a mode one of them vouches for says so."""
    modes = {r["subject"]: r["answer_mode"] for r in metrics.get("answer_modes") or []}
    return {m: _vouched(mode, (checks or {}).get(m) or {}) for m, mode in modes.items()}


def _vouched(mode: str, checks: Mapping[str, Any]) -> str:
    """``mode``, and "endpoint self-check passed" where a passed check vouches for it
    (:data:`~faithprobe.subjects.endpoint.self_check.VOUCHES_FOR`)."""
    for check, record in checks.items():
        vouched = VOUCHES_FOR.get(check)
        if vouched and record.get("passed") and mode.startswith(vouched):
            return f"{mode}; endpoint self-check passed"
    return mode


def _step_record(r: Mapping[str, Any], found: list[Effect], able: list[Competence]) -> dict:
    competence = {c.subject: c for c in able}
    verdicts = {
        m: combined([e for e in found if e.subject == m], competence.get(m)) for m in r["models"]
    }
    keep = ("report", "limit", "options", "data", "n_pairs", "seconds", "models")
    return {
        **{k: r[k] for k in ("step", "suite", "question", "status")},
        **{k: r[k] for k in keep},
        **{k: r[k] for k in DATA_FIELDS if k in r},
        "skipped_models": r["skipped_models"],
        "answer_modes": answer_modes(r["metrics"], r.get("self_checks")),
        "verdicts": verdicts,
        "not_assessable": {m: c.reason for m, c in competence.items() if not c.competent},
        "competence_stated": bool(able),
        "n_effects": len({e.key for e in found}),
    }


def _effect_record(step: str, effect: Effect, unable: bool, size: Mapping[str, Any]) -> dict:
    """An effect as metrics.json holds it; its verdict is "not assessable" where the model
    lacks the step's competence (the interval is kept, but reads nothing), and says what the
    model did not give where it could not be computed ("needs probabilities"). An
    inconclusive one says what would likely decide it (``to_decide``)."""
    record = {"step": step, **effect.record(), "paired": effect.units is not None}
    if unable and not effect.needs:
        record["verdict"] = NOT_ASSESSABLE
    elif needs := to_decide(effect, size):
        record["to_decide"] = needs
    return record


def card_metrics(
    runs: Sequence[Mapping[str, Any]],
    models: Sequence[Mapping[str, str]],
    *,
    budget: Budget,
    seed: int,
    edges: Edges | None = None,
    adjustment: str = "holm",
    looks: int = 1,
) -> dict:
    """The audit's metrics.json from its step records (each with the step's ``metrics``
    when it ran) and its models (spec, name, fingerprint); ``edges``: the bounds in force
    (defaults, and what ``--edge`` moved); ``adjustment``: how the differences' p-values
    are adjusted ("holm" or "bh"); ``looks``: how many times the audit may have looked at
    its data (``--budget auto``), over which every interval and test spends its alpha
    (:mod:`faithprobe.metrics.sequential`)."""
    edges = edges or Edges.defaults(sorted({r["suite"] for r in runs}))
    names = [m["name"] for m in models]
    steps, effects, competence, differences = [], [], [], []
    sizes = {r["step"]: r for r in runs if r["status"] == "ran"}
    for r in runs:
        if r["status"] != "ran":
            step = {k: r[k] for k in ("step", "suite", "question", "status")}
            steps.append({**step, "reason": r["reason"], "verdicts": {}})
            continue
        found, able = headline(r["suite"], r["metrics"])
        found = moved(found, edges)
        # tested on the 95% intervals (an unpaired test reads its standard errors off them);
        # the tests spend their alpha over the looks in settle() below
        measured = [e for e in found if not e.needs]
        differences += model_differences(r["step"], measured, names, seed=seed)
        found = [widened(e, looks) for e in found]
        steps.append(_step_record(r, found, able))
        unable = {c.subject for c in able if not c.competent}
        effects += [_effect_record(r["step"], e, e.subject in unable, r) for e in found]
        competence += [{"step": r["step"], **c.record()} for c in able]
    alpha = spent_alpha(looks, ALPHA)
    differences = settle(differences, adjustment=adjustment, alpha=alpha, sizes=sizes)
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
        "comparisons": {
            "adjustment": adjustment,
            "alpha": alpha,
            "looks": looks,
            "rule": adjustment_text(adjustment, alpha),
            "n": sum(d["p"] is not None for d in differences),
            "supported": sum(d["supported"] for d in differences),
        },
        "summary": counts,
    }
