"""How often natural-logic's 95% intervals grant a false "faithful": the coverage table of
:mod:`faithprobe.suites.natural_logic.intervals` (and docs/suites/natural-logic.md, "Why
16"), measured again.

The whole NLI-XY grid (``<data-dir>/nli-xy``, 29,436 examples) is the population. Every
example is a base, paired as the suite pairs it (its own interventions, option ``i1``'s
default) with every grid example meeting each set's condition. Models are fixed on the whole
grid, so what one base brings to a rate (its pairs' CP sum and count) is fixed, and a seed
set of k bases drawn at random from the grid gives the rates' intervals exactly as the suite
computes them (:func:`~faithprobe.suites.natural_logic.metrics.effect_pair`: TCE and DCE of a
feature over the bases of both its sets; TCE - DCE clipped to [-1, 1]; DCE/TCE by Fieller).
The truth is the same ratio estimator on every base of the grid.

A *case* is a model and a feature (context: sets I0 and I2; inserted word pair: I1 and I3):

* ``reader``: partial readers, each blind to the monotonicity of a share of the contexts
  (it reads them as upward) and misreading the relation of a share of the word pairs (leq
  and geq swapped, none read as leq), its prediction flipped on a share of the examples
  (per-example noise);
* ``logistic``: p(entailment) = logistic(strength * (+1 entailment, -1 not) + context
  effect + word-pair effect), random effects normal with the given standard deviations, the
  prediction drawn once per example;
* ``mix``: the reader on a share P of the bases and the memoriser (which never changes its
  answer) on the rest, as ``ref:mix:P``: TCE 0 or 1 and DCE 0 on every base, the shape that
  broke the bootstrap-t before the variance floor (0.91 [-0.79, 1.0] on 24 bases).

Readers and logistic models are placed on the card's edges
(:data:`~faithprobe.suites.natural_logic.headline.EDGES`): their noise, or strength, is set
so that the truth of TCE - DCE is its edge (0.2), or that of DCE/TCE its edge (0.5), on the
case's feature. A CP is 1 where the two predictions of a pair differ.

A miss is an interval on the false "faithful" side of the truth: the lower end of TCE - DCE
above it, the upper end of DCE/TCE below it (an unbounded upper end never misses); each is
2.5% at nominal coverage (the binomial standard error at 300 seed sets is 0.9 points). Each
seed set is scored by the current intervals and, with ``--before FILE``, by another version
of the module (same API: ``base_rates(sums, counts, seed)``), on the same bootstrap
resamples (seeded by the set's number, as the suite seeds them by the run's seed). The
median width of TCE - DCE's interval is the price of a version's coverage. The table gives,
per number of bases and version, the range (and mean) over cases. The cost is the
intervals' 2,000 resamples (a Fieller bound searches about 60 contrasts on them): about 16 ms
per seed set and version on one core, so 300 sets of 26 cases at six k take about 6 minutes
of 2 cores per version (the saved run, with ``--before``, took 12 minutes, the machine
shared). Usage:

    python benchmarks/natural_logic_coverage.py --data-dir ../shared/data [--sets 300]
        [--before FILE] [--jobs 2] [--json benchmarks/results/natural_logic_coverage.json]

The version before the flat-rate variance was added to every rate's (``--before`` of the
saved results, where that variance went only to a rate exactly the same on every base):
``git show b9a9c63^:src/faithprobe/suites/natural_logic/intervals.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from faithprobe.console import print_rows, progress_bars
from faithprobe.datasets.nli_xy import gold_label, read_nli_xy
from faithprobe.interventions import get
from faithprobe.metrics.intervals import N_BOOT
from faithprobe.records import ENTAILMENT
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.natural_logic.headline import DELTA_EDGE, EDGES, RATIO_EDGE
from faithprobe.suites.natural_logic.intervals import base_rates
from faithprobe.suites.natural_logic.metrics import FEATURES, SETS

KS = (12, 16, 20, 24, 32, 48)
MIX_SHARES = (0.75, 0.9, 0.95)
# partial readers: (share of contexts read as upward, share of word pairs misread)
READER_SHARES = ((0.1, 0.1), (0.2, 0.2), (0.5, 0.0))
LOGISTIC_SDS = ((1.0, 1.0), (2.0, 0.5))  # (context effect, word-pair effect) standard deviations
MISREAD = {"leq": "geq", "geq": "leq", "none": "leq"}
CURRENT = "current"
BaseRatesFunction = Callable[[np.ndarray, np.ndarray, int], object]


@dataclass(frozen=True)
class Grid:
    """The NLI-XY grid as arrays: per example its context and word pair (codes), its
    monotonicity and relation, whether its gold label is entailment; per set its pairs as
    the indices of their base and alternative examples."""

    context: np.ndarray
    insertion: np.ndarray
    monotonicity: np.ndarray
    relation: np.ndarray
    entailment: np.ndarray
    pairs: dict[str, tuple[np.ndarray, np.ndarray]]

    @property
    def size(self) -> int:
        return len(self.entailment)


def read_grid(folder: Path) -> Grid:
    """Every example of the NLI-XY folder ``folder`` as a base, paired by the suite's own
    interventions (the suite's default options) with all of its alternatives."""
    grid = read_nli_xy(folder)
    examples = grid.examples
    index = {e.id: i for i, e in enumerate(examples)}
    pairs = {}
    for name, swap in get_suite("natural-logic", {}).swaps.items():
        intervention = get(swap)
        bases, alternatives = [], []
        for i, base in enumerate(examples):
            found = [index[a.id] for a in intervention.apply(base, seed=0, pool=grid).examples]
            bases += [i] * len(found)
            alternatives += found
        pairs[name] = (np.array(bases), np.array(alternatives))

    def codes(key: str) -> np.ndarray:
        return np.unique([e.features[key] for e in examples], return_inverse=True)[1]

    return Grid(
        context=codes("context_id"),
        insertion=codes("insertion_id"),
        monotonicity=np.array([e.features["monotonicity"] for e in examples]),
        relation=np.array([e.features["relation"] for e in examples]),
        entailment=np.array([e.label == ENTAILMENT for e in examples]),
        pairs=pairs,
    )


# per feature, its (TCE set, DCE set)
FEATURE_SETS = {
    feature: tuple(
        next(name for name, s in SETS.items() if s["feature"] == feature and s["effect"] == e)
        for e in ("TCE", "DCE")
    )
    for feature in FEATURES
}
EDGE_OF = {"delta": EDGES[DELTA_EDGE][0], "dce_over_tce": EDGES[RATIO_EDGE][0]}


@dataclass(frozen=True)
class Case:
    """A model fixed on the grid, read on one feature: per base (columns) its TCE set's CP
    sum and pair count (row 0) and its DCE set's (row 1); ``placed`` names the quantity
    whose truth was put on its edge (None: not placed)."""

    model: str
    feature: str
    placed: str | None
    sums: np.ndarray
    counts: np.ndarray

    def truth(self) -> dict[str, float]:
        """TCE, DCE, TCE - DCE and DCE/TCE on every base of the grid."""
        tce, dce = self.sums.sum(1) / self.counts.sum(1)
        return {"tce": tce, "dce": dce, "delta": tce - dce, "dce_over_tce": dce / tce}

    @property
    def bases(self) -> np.ndarray:
        """The bases with a pair in either set (those the suite counts)."""
        return np.flatnonzero(self.counts.sum(0) > 0)


def case_of(grid: Grid, model: str, feature: str, cp: Callable[[str], np.ndarray],
            placed: str | None = None) -> Case:  # fmt: skip
    """The case of ``model`` on ``feature``, ``cp(set)`` giving the CP of each of the set's
    pairs."""
    sets = FEATURE_SETS[feature]
    sums = [np.bincount(grid.pairs[s][0], weights=cp(s), minlength=grid.size) for s in sets]
    counts = [np.bincount(grid.pairs[s][0], minlength=grid.size) for s in sets]
    return Case(model, feature, placed, np.vstack(sums), np.vstack(counts).astype(float))


def changes(grid: Grid, predictions: np.ndarray) -> Callable[[str], np.ndarray]:
    """A classifier's CP per pair of a set: 1 where its predictions on the two differ."""

    def cp(name: str) -> np.ndarray:
        base, alternative = grid.pairs[name]
        return (predictions[base] != predictions[alternative]).astype(float)

    return cp


def _chosen(rng: np.random.Generator, n: int, share: float) -> np.ndarray:
    """A mask of ``round(share * n)`` of ``n`` things, drawn by ``rng``."""
    mask = np.zeros(n, dtype=bool)
    mask[rng.permutation(n)[: round(share * n)]] = True
    return mask


def reader(grid: Grid, blind: float, misread: float, seed: int) -> Callable[[float], np.ndarray]:
    """The partial reader's predictions (entailment: True) as a function of its noise: blind
    to the monotonicity of a share ``blind`` of the contexts (read as upward), misreading
    the relation (:data:`MISREAD`) of a share ``misread`` of the word pairs, its reading
    flipped on the examples whose fixed uniform draw is below the noise."""
    rng = np.random.default_rng(seed)
    blind_at = _chosen(rng, grid.context.max() + 1, blind)[grid.context]
    misread_at = _chosen(rng, grid.insertion.max() + 1, misread)[grid.insertion]
    monotonicity = np.where(blind_at, "up", grid.monotonicity)
    relation = np.where(misread_at, [MISREAD[r] for r in grid.relation], grid.relation)
    reading = np.vectorize(gold_label)(relation, monotonicity) == ENTAILMENT
    draws = rng.random(grid.size)
    return lambda noise: reading ^ (draws < noise)


def logistic(
    grid: Grid, context_sd: float, pair_sd: float, seed: int
) -> Callable[[float], np.ndarray]:
    """The logistic model's predictions as a function of its strength: entailment where the
    example's fixed uniform draw is below logistic(strength * (+1 entailment, -1 not) +
    context effect + word-pair effect)."""
    rng = np.random.default_rng(seed)
    effects = (
        rng.normal(0, context_sd, grid.context.max() + 1)[grid.context]
        + rng.normal(0, pair_sd, grid.insertion.max() + 1)[grid.insertion]
    )
    sign = np.where(grid.entailment, 1.0, -1.0)
    draws = rng.random(grid.size)
    return lambda strength: draws < expit(strength * sign + effects)


def placed(grid: Grid, model: str, feature: str, predictions: Callable[[float], np.ndarray],
           knob: tuple[float, float], quantity: str) -> tuple[Case, float]:  # fmt: skip
    """The case whose knob (in the range ``knob``) puts the truth of ``quantity`` on its
    edge, and the knob."""

    def case(value: float) -> Case:
        return case_of(grid, model, feature, changes(grid, predictions(value)), quantity)

    value = brentq(lambda v: case(v).truth()[quantity] - EDGE_OF[quantity], *knob, xtol=1e-5)
    return case(value), value


def mix(grid: Grid, share: float, seed: int) -> Callable[[str], np.ndarray]:
    """CP per pair of the reader on a share ``share`` of the bases (drawn per base) and the
    memoriser on the rest: the reader moves exactly where the gold label changes."""
    reads = np.random.default_rng(seed).random(grid.size) < share

    def cp(name: str) -> np.ndarray:
        base, alternative = grid.pairs[name]
        return (reads[base] & (grid.entailment[base] != grid.entailment[alternative])).astype(float)

    return cp


def build_cases(grid: Grid, seed: int) -> tuple[list[Case], list[dict]]:
    """Every case (module docstring) and, per case, its model's knob."""
    cases, knobs = [], []
    for feature in FEATURES:
        families = [
            (f"reader(blind {b:g}, misread {m:g})", reader(grid, b, m, seed), (0.0, 0.5))
            for b, m in READER_SHARES
        ] + [
            (
                f"logistic(sd context {c:g}, word pair {w:g})",
                logistic(grid, c, w, seed),
                (0.0, 10.0),
            )
            for c, w in LOGISTIC_SDS
        ]
        for name, predictions, knob in families:
            for quantity in EDGE_OF:
                case, value = placed(grid, name, feature, predictions, knob, quantity)
                cases.append(case)
                knobs.append({"knob": "noise" if name.startswith("reader") else "strength",
                              "value": value})  # fmt: skip
        for share in MIX_SHARES:
            cases.append(case_of(grid, f"mix(P {share:g})", feature, mix(grid, share, seed)))
            knobs.append({})
    return cases, knobs


@cache
def interval_versions(before: str | None) -> dict[str, BaseRatesFunction]:
    """The ``base_rates`` of each version compared: the current module's and, given a
    file, that file's (loaded under the name ``intervals_before``)."""
    versions: dict[str, BaseRatesFunction] = {CURRENT: base_rates}
    if before is not None:
        spec = importlib.util.spec_from_file_location("intervals_before", before)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclass looks its module up there
        spec.loader.exec_module(module)
        versions["before"] = module.base_rates
    return versions


def interval_ends(rates) -> tuple[float, float, float]:
    """The ends the card reads from :class:`~faithprobe.suites.natural_logic.intervals.
    BaseRates` over (TCE, DCE), as :func:`~faithprobe.suites.natural_logic.metrics.
    effect_pair` computes them: TCE - DCE's lower and upper end, DCE/TCE's upper end
    (infinite where it is unbounded or undefined)."""
    delta = rates.contrast([1, -1], -1.0, 1.0)
    high = rates.ratio(1, 0)["ci_high"]
    return delta["ci_low"], delta["ci_high"], np.inf if high is None else high


def misses(ends: np.ndarray, truth: dict[str, float]) -> dict[str, float | int]:
    """What ``ends`` (one row of :func:`interval_ends` per seed set) say of a case with
    ``truth``: the seed sets, the misses on the false "faithful" side (TCE - DCE's lower end
    above its truth, DCE/TCE's upper end below its truth), those on the other side of TCE -
    DCE (its upper end below the truth), the unbounded DCE/TCE intervals, and the median
    width of TCE - DCE's interval."""
    low, high, ratio_high = np.asarray(ends, dtype=float).T
    return {
        "sets": len(low),
        "delta_misses": int((low > truth["delta"]).sum()),
        "ratio_misses": int((ratio_high < truth["dce_over_tce"]).sum()),
        "delta_misses_above": int((high < truth["delta"]).sum()),
        "ratio_unbounded": int(np.isinf(ratio_high).sum()),
        "delta_width": float(np.median(high - low)),
    }


def seed_sets(case: Case, k: int, sets: int, seed: Sequence[int]) -> Iterator[np.ndarray]:
    """``sets`` seed sets of ``k`` bases of ``case`` drawn at random by ``seed``, each in
    the order of the bases' ids (the grid's order), as the suite orders them."""
    rng = np.random.default_rng(seed)
    for _ in range(sets):
        yield np.sort(rng.choice(case.bases, size=k, replace=False))


def coverage(
    case: Case, k: int, sets: int, seed: Sequence[int], before: str | None
) -> dict[str, dict]:
    """Per version, :func:`misses` over :func:`seed_sets`; seed set j's bootstrap is
    seeded by j."""
    versions = interval_versions(before)
    ends = {name: np.empty((sets, 3)) for name in versions}
    for j, bases in enumerate(seed_sets(case, k, sets, seed)):
        for name, base_rates_of in versions.items():
            rates = base_rates_of(case.sums[:, bases], case.counts[:, bases], j)
            ends[name][j] = interval_ends(rates)
    truth = case.truth()
    return {name: misses(e, truth) for name, e in ends.items()}


def run(cases: Sequence[Case], ks: Sequence[int], sets: int, seed: int, before: str | None,
        jobs: int) -> list[dict]:  # fmt: skip
    """:func:`coverage` of every case at every k, on ``jobs`` processes: one record per
    case, k and version."""
    tasks = [(i, k) for i in range(len(cases)) for k in ks]
    out = []
    with ProcessPoolExecutor(jobs) as pool, progress_bars() as start:
        advance = start("cases x bases", len(tasks))
        futures = [pool.submit(coverage, cases[i], k, sets, [seed, i, k], before) for i, k in tasks]
        for (i, k), future in zip(tasks, futures, strict=True):
            for version, figures in future.result().items():
                case = cases[i]
                out.append({"model": case.model, "feature": case.feature, "placed": case.placed,
                            "k": k, "version": version, **figures})  # fmt: skip
            advance(1)
    return out


def _spread(values: Sequence[float], form: str) -> str:
    """``min-max (mean)`` of ``values`` in the format ``form``."""
    return f"{min(values):{form}}-{max(values):{form}} ({np.mean(values):{form}})"


def summary(records: Sequence[dict], ks: Sequence[int], versions: Sequence[str]) -> list[list]:
    """Per k and version: the range (and mean) over cases of the miss rates of TCE - DCE and
    DCE/TCE, and of the median width of TCE - DCE's interval; the case with most misses."""
    rows = []
    for k in ks:
        for version in versions:
            mine = [r for r in records if r["k"] == k and r["version"] == version]
            worst = max(mine, key=lambda r: r["delta_misses"] + r["ratio_misses"])
            rows.append([
                k, version,
                _spread([r["delta_misses"] / r["sets"] for r in mine], ".1%"),
                _spread([r["ratio_misses"] / r["sets"] for r in mine], ".1%"),
                _spread([r["delta_width"] for r in mine], ".3f"),
                f"{worst['model']} {worst['feature']}",
            ])  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"),
                        help="the shared data folder, holding nli-xy/")  # fmt: skip
    parser.add_argument("--sets", type=int, default=300, help="seed sets per case and k")
    parser.add_argument("--ks", type=int, nargs="+", default=list(KS), help="numbers of bases")
    parser.add_argument("--before", type=Path, help="another version of the intervals module")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    folder = args.data_dir / "nli-xy"
    if not (folder / "contexts.tsv").is_file():
        parser.error(f"{folder}: no NLI-XY folder (contexts.tsv, insertions.tsv) there")
    if args.before is not None and not args.before.is_file():
        parser.error(f"--before {args.before}: no such file")
    if args.sets < 1 or min(args.ks) < 2:
        parser.error("--sets must be at least 1 and every --ks at least 2")
    start = time.perf_counter()
    grid = read_grid(folder)
    cases, knobs = build_cases(grid, args.seed)
    before = None if args.before is None else str(args.before.resolve())
    versions = list(interval_versions(before))
    records = run(cases, args.ks, args.sets, args.seed, before, args.jobs)
    seconds = time.perf_counter() - start
    print_rows(
        ["case", "feature", "placed on", "knob", "TCE", "DCE", "TCE - DCE", "DCE/TCE"],
        [
            [c.model, c.feature, c.placed or "-", f"{k['knob']} {k['value']:.3f}" if k else "-",
             *(f"{v:.3f}" for v in c.truth().values())]
            for c, k in zip(cases, knobs, strict=True)
        ],
        title="cases: their truth on the whole grid",
    )  # fmt: skip
    print_rows(
        ["bases", "version", "TCE - DCE misses", "DCE/TCE misses",
         "TCE - DCE width (median per case)", "most misses"],
        summary(records, args.ks, versions),
        title=f"one-sided misses on the false 'faithful' side (2.5% nominal), range (mean) over "
        f"{len(cases)} cases; {args.sets} seed sets each, {N_BOOT} resamples; {seconds:.0f} s",
    )  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({
            "command": " ".join(["python", *sys.argv]),
            "sets": args.sets, "seed": args.seed, "n_boot": N_BOOT, "jobs": args.jobs,
            "before": None if args.before is None else str(args.before), "seconds": seconds,
            "edges": EDGE_OF,
            "cases": [{"model": c.model, "feature": c.feature, "placed": c.placed, **k,
                       "truth": c.truth(), "bases": len(c.bases)}
                      for c, k in zip(cases, knobs, strict=True)],
            "figures": records,
        }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
