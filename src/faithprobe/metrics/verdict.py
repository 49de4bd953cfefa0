"""Headline effects and the rule that turns each one's interval into a verdict.

Every suite names the effect(s) its method is about (:attr:`faithprobe.suite.SuiteEntry.
headline`) as :class:`Effect` records read off its ``metrics.json``: an estimate with its
95% interval, and the *faithful region*: where a model that uses the information it should
would put the effect (e.g. "an accuracy drop of at most 0.10 after one related
attractor"). The verdict is an equivalence-style reading of the interval against the
region's edge (:func:`verdict`, stated in words as :data:`RULE`):

* **faithful**: the whole interval lies inside the region;
* **unfaithful**: the whole interval lies outside it;
* **inconclusive**: the interval crosses the edge (more items would decide), or there was
  nothing to estimate.

The edge is a stated tolerance, not zero: with enough items any effect's interval excludes
zero, and a model should not be called unfaithful for a drop nobody would act on. The
edges are the suites' own, printed beside every verdict, so a reader who prefers another
edge can re-read the interval.

This module is light (no pandas, no numpy) so that ``faithprobe audit --compare`` reads
two audits without the numeric stack.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

FAITHFUL, UNFAITHFUL, INCONCLUSIVE = "faithful", "unfaithful", "inconclusive"
VERDICTS = (FAITHFUL, UNFAITHFUL, INCONCLUSIVE)

RULE = (
    "Each effect has a faithful region, stated beside it (e.g. 'at most 0.10'). "
    "faithful: the whole 95% interval lies inside the region; "
    "unfaithful: the whole interval lies outside it; "
    "inconclusive: the interval crosses the region's edge, or nothing could be estimated. "
    "A suite is unfaithful if any of its effects is, faithful if all of them are, "
    "inconclusive otherwise."
)


@dataclass(frozen=True)
class Region:
    """Where a faithful model's effect lies: ``at_most`` or ``at_least`` ``bound``."""

    side: Literal["at_most", "at_least"]
    bound: float

    def __post_init__(self) -> None:
        if self.side not in ("at_most", "at_least"):
            raise ValueError(f"side must be at_most or at_least, got {self.side!r}")

    def text(self) -> str:
        return f"{'≤' if self.side == 'at_most' else '≥'} {self.bound:g}"


@dataclass(frozen=True)
class Effect:
    """One headline effect of one suite for one model, as the card shows it."""

    suite: str  # the suite that measured it
    key: str  # stable id within the suite, e.g. "one_related_attractor_single"
    title: str  # what it is, in plain words
    subject: str  # the model's name
    value: float
    ci_low: float
    ci_high: float
    n: int  # the units the interval resamples (items, passages, bases ...)
    region: Region
    reading: str = ""  # how the estimate and its interval were made (test, resampling)

    def __post_init__(self) -> None:  # metrics.json holds a missing number as null
        for name in ("value", "ci_low", "ci_high"):
            x = getattr(self, name)
            object.__setattr__(self, name, math.nan if x is None else float(x))

    @property
    def verdict(self) -> str:
        return verdict(self.value, self.ci_low, self.ci_high, self.region)

    def record(self) -> dict[str, Any]:
        """The effect as ``metrics.json`` of an audit holds it (NaN as None)."""
        out = asdict(self)
        for k in ("value", "ci_low", "ci_high"):
            out[k] = None if missing(out[k]) else float(out[k])
        out["region"] = {"side": self.region.side, "bound": self.region.bound}
        out["verdict"] = self.verdict
        return out

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Effect:
        fields = {k: record[k] for k in cls.__dataclass_fields__ if k != "region"}
        return cls(**fields, region=Region(**record["region"]))


def missing(x: Any) -> bool:
    """Whether a number from metrics.json is absent: null or NaN."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def verdict(value: float, ci_low: float, ci_high: float, region: Region) -> str:
    """:data:`RULE` for one interval: faithful, unfaithful or inconclusive."""
    if any(missing(x) for x in (value, ci_low, ci_high)):
        return INCONCLUSIVE
    inside = ci_high <= region.bound if region.side == "at_most" else ci_low >= region.bound
    outside = ci_low > region.bound if region.side == "at_most" else ci_high < region.bound
    return FAITHFUL if inside else UNFAITHFUL if outside else INCONCLUSIVE


def combined(verdicts: Iterable[str]) -> str:
    """A suite's verdict from its effects' (:data:`RULE`); inconclusive if there are none."""
    found = list(verdicts)
    if UNFAITHFUL in found:
        return UNFAITHFUL
    if found and all(v == FAITHFUL for v in found):
        return FAITHFUL
    return INCONCLUSIVE


def intervals_differ(a: Effect, b: Effect) -> bool:
    """Whether two models' (or two audits') intervals of an effect do not overlap: the
    card's conservative reading of "the difference is supported" (two 95% intervals that do
    not overlap imply a difference at well below the 5% level for independent samples)."""
    if any(missing(x) for x in (a.ci_low, a.ci_high, b.ci_low, b.ci_high)):
        return False
    return a.ci_low > b.ci_high or b.ci_low > a.ci_high
