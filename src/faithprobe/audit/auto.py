"""The auto budget's schedule: which step gets the next round.

Every step first runs its first round (the small budget's size). Then, while time is left,
the next round goes to the undecided step where it is most worth running: the step whose
next round is expected to decide the most open questions (inconclusive effects,
competences not shown that more items may still show, unsupported differences) per second. Each open question says how many times its items it needs for 80%
power (:func:`faithprobe.audit.differences.power_needs`); a round giving g times the items
decides a question needing s times with probability about Phi(2.80 sqrt(g / s) - 1.96)
(0.8 at g = s, the normal power curve). Ties (nothing likely anywhere) go to the cheapest
round, since time is left. A step stops when it is decided, when it has had its
:data:`~faithprobe.metrics.sequential.LOOKS` rounds, or when its next round does not fit in
the time left (predicted from its last round's rate).

The schedule looks at the data, but no step is looked at more than LOOKS times, and the
card spends each interval's 5% over those looks, so the choice of which step goes next
does not change the error rates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from faithprobe.metrics.comparison import scale_to_decide
from faithprobe.metrics.verdict import INCONCLUSIVE, Z_SIDE


@dataclass
class AutoStep:
    """One step under the auto budget: its rounds so far and what is still open."""

    index: int  # the step's place in the audit
    planned: Any  # the Planned step of its last round
    next_limit: int | None = None  # the --limit of its next round (None: no more rounds)
    looks: list[dict] = field(default_factory=list)
    entry: dict | None = None  # the last round's step record
    needs: list[float] = field(default_factory=list)  # per open question: times the items

    @property
    def decided(self) -> bool:
        return self.entry is not None and not self.needs

    def add(self, entry: dict, card: Mapping[str, Any], next_limit: int | None) -> None:
        """Take a finished round: its step record and its one-step card (read at the auto
        budget's spent level)."""
        self.entry, self.next_limit = entry, next_limit
        self.needs = open_questions(card)
        self.looks.append({"limit": entry["limit"], "n_pairs": entry["n_pairs"],
                           "seconds": entry["seconds"], "cpu_seconds": entry["cpu_seconds"],
                           "decided": self.decided})  # fmt: skip

    @property
    def growth(self) -> float:
        """How many times the last round's items the next round has."""
        if self.next_limit is None or not self.entry or not self.entry["limit"]:
            return 0.0
        return self.next_limit / self.entry["limit"]

    def predicted_seconds(self) -> float:
        """The next round's time at the last round's rate (cached answers make it less)."""
        return self.entry["seconds"] * self.growth

    def expected(self) -> float:
        """Open questions the next round is expected to decide (module docstring)."""
        normal = NormalDist()
        g = self.growth
        return sum(normal.cdf(2.80 * math.sqrt(g / s) - 1.96) for s in self.needs)

    def record(self) -> dict:
        """The step's record for run.json: its last round's, with every round."""
        return {**self.entry, "seconds": round(sum(x["seconds"] for x in self.looks), 1),
                "cpu_seconds": round(sum(x["cpu_seconds"] for x in self.looks), 1),
                "looks": self.looks}  # fmt: skip


def open_questions(card: Mapping[str, Any]) -> list[float]:
    """Per open question of a one-step card, the times its items it likely needs (inf where
    nothing can be said): each inconclusive effect of a model whose step verdict is
    inconclusive, each competence not shown that more items may still show
    (:func:`competence_need`), and each unsupported difference."""
    step = card["steps"][0]
    undecided = {m for m, v in step.get("verdicts", {}).items() if v == INCONCLUSIVE}
    needs = [
        _times(e.get("to_decide"))
        for e in card["effects"]
        if e["subject"] in undecided and e["verdict"] == INCONCLUSIVE
    ]
    needs += [n for c in card.get("competence", []) if (n := competence_need(c)) is not None]
    needs += [_times(d.get("to_support")) for d in card["differences"] if not d["supported"]]
    if undecided and not needs:  # inconclusive for want of an interval: more items may help
        needs = [math.inf]
    return needs


def competence_need(c: Mapping[str, Any]) -> float | None:
    """For a model not (yet) shown competent: the times its items that would likely settle
    whether it beats the constant answer by the margin, or None where that is settled
    already (shown, or ruled out: the accuracy's 95% interval ends below constant +
    margin). "Not assessable" is the failure of a one-sided test, not a finding that the
    model is incompetent, so the schedule keeps sampling while it may still be reversed."""
    if c["competent"] or c.get("ci_low") is None or c.get("ci_high") is None:
        return None
    if c["ci_high"] <= c["baseline"] + c["margin"]:
        return None
    se = (c["ci_high"] - c["ci_low"]) / (2 * Z_SIDE)
    scale = scale_to_decide(se, c["value"] - c["baseline"] - c["margin"], clusters=c.get("n"))
    return math.inf if scale is None else scale


def _times(needs: Mapping[str, Any] | None) -> float:
    return needs["times_items"] if needs else math.inf


def next_round(steps: Sequence[AutoStep], seconds_left: float | None) -> AutoStep | None:
    """The step that runs next, or None when none should (:mod:`module docstring
    <faithprobe.audit.auto>`)."""
    candidates = [
        s for s in steps
        if not s.decided and s.growth > 1
        and (seconds_left is None or s.predicted_seconds() <= seconds_left)
    ]  # fmt: skip
    if not candidates:
        return None
    return max(
        candidates,
        key=lambda s: (
            round(s.expected() / max(s.predicted_seconds(), 1e-9), 6),
            -s.predicted_seconds(),
        ),
    )
