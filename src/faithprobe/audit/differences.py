"""The card's second question, "does this model's effect differ from that one's?": every
pair of models, per effect both have, tested paired over the same items
(:func:`~faithprobe.metrics.comparison.compare_effects`), adjusted across every comparison
on the card, and, where not supported, the items that would likely support it.

``audit --compare OLD NEW`` reads two audits' effects through the same functions
(:mod:`faithprobe.audit.compare`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from faithprobe.metrics.comparison import (
    ADJUSTMENT_TEXT,
    ALPHA,
    POWER,
    adjust,
    compare_effects,
    effect_se,
    scale_to_decide,
)
from faithprobe.metrics.verdict import INCONCLUSIVE, Effect


def model_differences(
    step: str, effects: Sequence[Effect], models: Sequence[str], *, seed: int
) -> list[dict]:
    """Every pair of models (a listed before b), per effect both have: b - a (:func:`tested`)
    with its interval and unadjusted p (:func:`settle` adjusts them)."""
    by_key: dict[str, dict[str, Effect]] = {}
    for e in effects:
        by_key.setdefault(e.key, {})[e.subject] = e
    out = []
    for key, per_model in by_key.items():
        for a, b in combinations([m for m in models if m in per_model], 2):
            out.append(
                {
                    "step": step,
                    "key": key,
                    "title": per_model[a].title,
                    "a": a,
                    "b": b,
                    **tested(per_model[a], per_model[b], seed=seed),
                }
            )
    return out


def settle(
    differences: list[dict],
    *,
    adjustment: str = "holm",
    alpha: float = ALPHA,
    sizes: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict]:
    """``differences`` with ``p_adjusted`` (over all of them), ``supported`` (adjusted p
    below ``alpha``) and, for each one not supported, what 80% power at the observed
    difference would need (``to_support``: :func:`power_needs`, at the strictest level
    the adjustment can ask of one comparison, alpha / m). ``sizes``: per step its
    ``n_pairs`` and ``seconds`` in this run."""
    adjusted = adjust([d["p"] if d["p"] is not None else math.nan for d in differences],
                      adjustment)  # fmt: skip
    m = sum(not math.isnan(p) for p in adjusted)
    out = []
    for d, p in zip(differences, adjusted, strict=True):
        supported = not math.isnan(p) and p < alpha
        record = {**d, "p_adjusted": None if math.isnan(p) else p, "supported": supported}
        if not supported and d.get("se") is not None:
            clusters = min(d["n_clusters"]) if d.get("n_clusters") else None
            scale = scale_to_decide(d["se"], d["difference"], alpha=alpha / max(m, 1),
                                    clusters=clusters)  # fmt: skip
            record["to_support"] = power_needs(scale, (sizes or {}).get(d["step"]))
        out.append(record)
    return out


def adjustment_text(adjustment: str, alpha: float = ALPHA) -> str:
    return f"{ADJUSTMENT_TEXT[adjustment]}; supported: adjusted p < {alpha:g}"


def power_needs(scale: float | None, size: Mapping[str, Any] | None) -> dict | None:
    """The step's items times ``scale`` and the minutes they would take at this run's
    rate; None where nothing can be said."""
    if scale is None or not size or not size.get("n_pairs"):
        return None
    return {
        "times_items": round(scale, 2),
        "items": math.ceil(size["n_pairs"] * scale),
        "minutes": round(size["seconds"] * scale / 60, 1),
        "power": POWER,
    }


def to_decide(effect: Effect, size: Mapping[str, Any] | None) -> dict | None:
    """For an inconclusive effect with an interval: the items that would likely decide it
    (80% power that its 95% interval clears the edge, the estimate taken as the truth)."""
    if effect.verdict != INCONCLUSIVE or not effect.has_interval:
        return None
    distance = effect.value - effect.region.bound
    return power_needs(scale_to_decide(effect_se(effect), distance, clusters=effect.n), size)


def tested(a: Effect, b: Effect, *, seed: int) -> dict:
    """b - a as metrics.json holds it (:func:`~faithprobe.metrics.comparison.
    compare_effects`; the estimate as ``difference``, NaN as None)."""
    found = compare_effects(a, b, seed=seed)
    found["difference"] = found.pop("value")
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in found.items()}
