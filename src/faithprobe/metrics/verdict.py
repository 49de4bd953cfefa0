"""Headline effects and the rule that turns each one's interval into a verdict.

Every suite names the effect(s) its method is about (:attr:`faithprobe.suite_protocol.SuiteEntry.
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

This module is light (no pandas, no numpy): ``faithprobe audit --help`` and the card's
readers import it; the paired comparisons of effects are in :mod:`faithprobe.metrics.
comparison`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from faithprobe.metrics.units import Units

FAITHFUL, UNFAITHFUL, INCONCLUSIVE = "faithful", "unfaithful", "inconclusive"
NOT_ASSESSABLE = "not assessable"
VERDICTS = (FAITHFUL, UNFAITHFUL, INCONCLUSIVE, NOT_ASSESSABLE)
# one-sided level of each side of a two-sided 95% interval
SIDE_ALPHA = 0.025
Z_SIDE = 1.959963984540054  # the standard normal's 97.5% quantile

RULE = (
    "Competence first: on each step a model must beat the best constant answer on the "
    "step's original items by the stated margin (one-sided test at 5%); a model that does "
    "not is not assessable there, whatever its effects. "
    "Each effect has a faithful region, stated beside it (e.g. 'at most 0.10'). "
    "faithful: the whole 95% interval lies inside the region; "
    "unfaithful: the whole interval lies outside it; "
    "inconclusive: the interval crosses the region's edge, or nothing could be estimated. "
    "A step is faithful if every effect is (an intersection-union test: each at its own "
    "level, no correction needed); unfaithful if at least one effect lies outside its region "
    "after Holm's correction over the step's k effects (one-sided 2.5% family-wise; for one "
    "effect, its whole interval outside); inconclusive otherwise. An effect without an "
    "interval is shown but decides nothing."
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
    # the name of the tolerance the region's bound is (docs/audit.md justifies each; ``audit
    # --edge NAME=VALUE`` moves it); "" for an edge that cannot be moved
    edge: str = ""
    control: str = ""  # what a model that ignores the input scores here, in words
    # the per-unit numbers the value is a function of, for paired comparisons between
    # models (faithprobe.metrics.comparison); None where the suite gives none
    units: Units | None = field(default=None, compare=False, repr=False)
    # what the model did not give that the effect is computed from (e.g. "probabilities",
    # for a model whose answers were letters parsed from its replies): the effect has no
    # estimate, its verdict says so, and it decides nothing; "" for an effect measured
    needs: str = ""

    def __post_init__(self) -> None:  # metrics.json holds a missing number as null
        for name in ("value", "ci_low", "ci_high"):
            x = getattr(self, name)
            object.__setattr__(self, name, math.nan if x is None else float(x))

    @property
    def verdict(self) -> str:
        if self.needs:
            return needs_verdict(self.needs)
        return verdict(self.value, self.ci_low, self.ci_high, self.region)

    def record(self) -> dict[str, Any]:
        """The effect as ``metrics.json`` of an audit holds it (NaN as None; the units stay
        in the step's own metrics.json; ``needs`` only where it is set)."""
        out = asdict(replace(self, units=None))
        del out["units"]
        if not self.needs:
            del out["needs"]
        for k in ("value", "ci_low", "ci_high"):
            out[k] = None if missing(out[k]) else float(out[k])
        out["region"] = {"side": self.region.side, "bound": self.region.bound}
        out["verdict"] = self.verdict
        return out

    @classmethod
    def from_estimate(
        cls,
        estimate: Mapping[str, Any],
        side: Literal["at_most", "at_least"],
        edge: str,
        edges: Mapping[str, tuple[float, str]],
        *,
        n: int | None = None,
        **fields: Any,
    ) -> Effect:
        """The effect an estimate of a suite's metrics.json holds (``value``, ``ci_low``,
        ``ci_high`` and, unless ``n`` is given, ``n_clusters``), faithful on ``side`` of
        ``edge``'s default bound in ``edges`` (a suite's ``EDGES``: name -> (bound, source));
        ``fields`` are the rest of the Effect (suite, key, title, subject, reading, control).
        The estimate's ``units`` record, where it has one, becomes the effect's units."""
        if estimate.get("units") is not None and "units" not in fields:
            from faithprobe.metrics.units import Units

            fields["units"] = Units.from_record(estimate["units"])
        return cls(
            value=estimate["value"],
            ci_low=estimate["ci_low"],
            ci_high=estimate["ci_high"],
            n=estimate["n_clusters"] if n is None else n,
            region=Region(side, edges[edge][0]),
            edge=edge,
            **fields,
        )

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Effect:
        fields = {k: record[k] for k in cls.__dataclass_fields__ if k != "region" and k in record}
        return cls(**fields, region=Region(**record["region"]))

    @property
    def has_interval(self) -> bool:
        return not any(missing(x) for x in (self.value, self.ci_low, self.ci_high))

    def p_outside(self) -> float:
        """One-sided p-value of "the effect lies outside its region", read off the 95%
        interval's half-width on the side facing the edge as a normal standard error (the
        interval's own level: an interval whose near end just touches the edge gives
        p = 0.025). 1 where there is no interval or the estimate is inside the region."""
        if not self.has_interval:
            return 1.0
        if self.region.side == "at_most":  # outside: above the bound
            gap, half = self.value - self.region.bound, self.value - self.ci_low
        else:
            gap, half = self.region.bound - self.value, self.ci_high - self.value
        if gap <= 0:
            return 1.0
        if half <= 0:
            return 0.0
        return 0.5 * math.erfc(gap / (half / Z_SIDE) / math.sqrt(2))


@dataclass(frozen=True)
class Competence:
    """Whether one model does one step's task at all: its accuracy on the original items
    against every constant answer on the same items (:mod:`faithprobe.metrics.
    competence` computes it; a suite's headline function reads it off its metrics.json)."""

    suite: str
    subject: str
    metric: str  # what was measured, e.g. "yes/no accuracy on the original stories"
    value: float
    ci_low: float
    ci_high: float
    baseline: float  # the binding constant answer's accuracy on the same items
    baseline_answer: str  # which constant that is (the largest p; usually the most accurate)
    excess_ci_low: float  # lower end of the paired interval of value - baseline
    margin: float
    p_value: float  # one-sided: value - baseline > margin
    competent: bool
    n: int
    reading: str = ""

    def __post_init__(self) -> None:
        for name in ("value", "ci_low", "ci_high", "baseline", "excess_ci_low", "p_value"):
            x = getattr(self, name)
            object.__setattr__(self, name, math.nan if x is None else float(x))

    @property
    def reason(self) -> str:
        """Why the model is not assessable (empty when it is competent)."""
        if self.competent:
            return ""
        return (
            f"{self.metric} {self.value:.3g} does not beat the constant answer "
            f"({self.baseline_answer}: {self.baseline:.3g}) by more than {self.margin:g} "
            f"(one-sided p = {self.p_value:.2g}, the largest over the constant answers)"
        )

    def record(self) -> dict[str, Any]:
        out = asdict(self)
        for k, v in out.items():
            if isinstance(v, float) and math.isnan(v):
                out[k] = None
        out["reason"] = self.reason
        return out

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Competence:
        return cls(**{k: record[k] for k in cls.__dataclass_fields__ if k in record})


def competences(
    suite: str,
    metrics: Mapping[str, Any],
    baseline_answer: Callable[[Any], str] | None = None,
) -> list[Competence]:
    """Each subject's :class:`Competence` on ``suite``, read off ``metrics["competence"]``
    (its ``method`` as the reading); ``baseline_answer`` turns a stored constant answer
    into the one shown."""
    out = []
    for row in metrics.get("competence", []):
        record = {**row, "suite": suite, "reading": row["method"]}
        if baseline_answer is not None:
            record["baseline_answer"] = baseline_answer(row["baseline_answer"])
        out.append(Competence.from_record(record))
    return out


def needs_verdict(what: str) -> str:
    """The verdict of an effect that could not be computed because the model did not give
    ``what`` (:attr:`Effect.needs`): e.g. "needs probabilities"."""
    return f"needs {what}"


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


def holm(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down rejections of ``p_values`` at family-wise level ``alpha``."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - rank):
            break
        rejected[i] = True
    return rejected


def combined(effects: Iterable[Effect], competence: Competence | None = None) -> str:
    """A step's verdict for one model, by :data:`RULE`: not assessable without competence;
    faithful if every effect with an interval is inside its region; unfaithful if Holm's
    correction over them finds one outside; inconclusive otherwise (and when there are
    none)."""
    if competence is not None and not competence.competent:
        return NOT_ASSESSABLE
    found = [e for e in effects if e.has_interval]
    if not found:
        return INCONCLUSIVE
    if any(holm([e.p_outside() for e in found], SIDE_ALPHA)):
        return UNFAITHFUL
    if all(e.verdict == FAITHFUL for e in found):
        return FAITHFUL
    return INCONCLUSIVE
