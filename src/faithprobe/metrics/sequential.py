"""Intervals that stay valid when an audit looks at its data more than once.

``--budget auto`` adds items in rounds and stops a step once its verdicts and differences
are decided. Reading a 95% interval after every round and stopping at the first decision
decides far more often than 5% of the time when the truth sits on an edge (four looks at n,
2n, 4n and 8n items: 14% of the time; ``tests/test_comparison_stats.py`` measures it). The rule here is Bonferroni
alpha spending over a fixed number of looks, stated in advance: each look spends alpha / L,
so every interval read at a look has level 1 - 0.05 / L (each side 0.025 / L), and the
chance of any false decision over all L looks is at most 5% whatever the looks' correlation.
It is conservative (a planned group-sequential boundary would be tighter) but needs no
assumption about how the looks depend on each other, and it works for every interval the
suites compute: an interval read at 95% is widened on each side by z(1 - 0.025 / L) /
z(0.975), its own shape kept.
"""

from __future__ import annotations

from dataclasses import replace
from statistics import NormalDist

from faithprobe.metrics.verdict import SIDE_ALPHA, Effect

LOOKS = 4  # the auto budget's rounds: every step is looked at no more than this often


def spent_alpha(looks: int, alpha: float = 2 * SIDE_ALPHA) -> float:
    """The level each of ``looks`` looks spends (Bonferroni)."""
    return alpha / max(1, looks)


def widening(looks: int) -> float:
    """How much wider each side of a 95% interval is at a look's spent level."""
    z = NormalDist().inv_cdf
    return z(1 - SIDE_ALPHA / max(1, looks)) / z(1 - SIDE_ALPHA)


def widened(effect: Effect, looks: int) -> Effect:
    """``effect`` with its interval at the level one of ``looks`` looks spends."""
    if looks <= 1 or not effect.has_interval:
        return effect
    f = widening(looks)
    low = effect.value - f * (effect.value - effect.ci_low)
    high = effect.value + f * (effect.ci_high - effect.value)
    return replace(effect, ci_low=low, ci_high=high, reading=f"{effect.reading}; {_said(looks)}")


def _said(looks: int) -> str:
    level = 1 - spent_alpha(looks)
    return f"interval widened to {level:.2%} (alpha spent over {looks} looks)"
