"""How often the competence test calls a model competent that ignores its input (the false
"competent" rate, to be at most 5%), and how often it calls a genuinely competent model
competent (the power), on simulated items drawn like the audit's steps'.

Items (one per cluster; gold keys as the suites write them):

* ``yes/no``: "no" on 59% of the items (the negation step's stories), else "yes";
* ``nli-3``: three labels on 36%, 33% and 31% of the items (near, not exactly, balanced);
* ``mc-4``: the right choice at one of four positions, each equally often;
* ``span``: a free answer, unique on 90% of the items; the rest one of ten recurring answers
  with Zipf weights (the commonest right on 3.4% of the items), like SQuAD's dates and
  numbers ("1546").

Models that ignore the input: every constant answer fixed in advance (each label or
position; for spans the commonest recurring answer; the row shows the worst of them), the
*leading* constant (whichever answer is commonest in the sample: a model whose answer prior
was fitted to these very items), a random guesser (uniform over the labels; for spans a
draw from the answer distribution), and "unknown" (never a gold on the original items). The
competent model knows the answer on a share of the items and otherwise gives the best
constant answer, for an accuracy 0.15 above the best constant's (power). The *edge* model
sits on the edge of what competence rules out: it knows the answer on a share of the items
and otherwise gives the runner-up constant answer, for an accuracy exactly the margin above
the best constant's; where the runner-up leads a sample by chance, a test against the
sample's leading constant alone sees it beat that constant by more than the margin.

Tests, each a one-sided test at 5% of "accuracy exceeds the baseline's by more than 0.05"
with the paired cluster bootstrap:

* ``before``: the constant answer right on most items of the sample, its p alone (the test
  until issue 41);
* ``after``: :func:`faithprobe.metrics.competence.competence`, every constant answer right
  on some item, the largest p (intersection-union);
* ``cross-fit``: the commonest answer on the other folds (5 folds), the alternative the
  issue proposed and :mod:`faithprobe.metrics.competence` rejects.

    python benchmarks/competence_simulation.py [--reps 1000] [--n 20 50 200] [--steps span ...]
        [--json benchmarks/results/competence_simulation.json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from faithprobe.metrics.competence import (
    ALPHA,
    COMPETENCE_MARGIN,
    best_constant,
    competence,
)
from faithprobe.metrics.intervals import paired_cluster_difference

EXCESS = 0.15  # the competent model's accuracy above the best constant answer's
FOLDS = 5


@dataclass(frozen=True)
class Step:
    """How a step's gold answers are drawn: ``answers`` with probabilities ``shares``; the
    probability left over is a fresh answer per item (unique, never repeated)."""

    name: str
    answers: tuple[str, ...]
    shares: tuple[float, ...]

    @property
    def best_share(self) -> float:
        return max(self.shares)

    @property
    def runner_up(self) -> str:
        return self.answers[int(np.argsort(self.shares, kind="stable")[-2])]

    @property
    def fixed_constants(self) -> tuple[str, ...]:
        """The constants a model could have been fixed to in advance: each label, or for
        spans the commonest recurring answer."""
        if sum(self.shares) < 1:
            return (self.answers[int(np.argmax(self.shares))],)
        return self.answers

    def draw(self, n: int, rng: np.random.Generator, fresh: str = "gold") -> np.ndarray:
        """``n`` answers; the fresh ones named ``<fresh>-<item>``, so that two draws with
        different names share only the recurring answers."""
        rest = 1 - sum(self.shares)
        pick = rng.choice(len(self.answers) + 1, size=n, p=[*self.shares, max(rest, 0.0)])
        out = np.array([f"{fresh}-{i}" for i in range(n)], dtype=object)
        recurring = pick < len(self.answers)
        out[recurring] = np.array(self.answers, dtype=object)[pick[recurring]]
        return out


ZIPF = 1 / np.arange(1, 11) / (1 / np.arange(1, 11)).sum()
STEPS = (
    Step("yes/no", ("no", "yes"), (0.59, 0.41)),
    Step("nli-3", ("entailment", "neutral", "contradiction"), (0.36, 0.33, 0.31)),
    Step("mc-4", ("position:0", "position:1", "position:2", "position:3"), (0.25,) * 4),
    Step("span", tuple(f"recurring-{i}" for i in range(10)), tuple(0.10 * ZIPF)),
)


def _keys(gold: np.ndarray) -> list[frozenset[str]]:
    return [frozenset({str(g)}) for g in gold]


def before(correct: np.ndarray, keys, clusters, seed: int) -> bool:
    """The test until issue 41: the sample's most accurate constant answer, its p alone."""
    _, constant = best_constant(keys)
    p = paired_cluster_difference(correct, constant, clusters, seed=seed,
                                  null=COMPETENCE_MARGIN)["p_above"]  # fmt: skip
    return bool(p < ALPHA)


def after(correct: np.ndarray, keys, clusters, seed: int) -> bool:
    return competence(correct, keys, clusters, seed=seed)["competent"]


def cross_fit(correct: np.ndarray, keys, clusters, seed: int) -> bool:
    """Against the commonest answer on the other folds, fold by fold."""
    fold = np.arange(len(keys)) % FOLDS
    constant = np.zeros(len(keys), dtype=bool)
    for f in range(FOLDS):
        answer, _ = best_constant([k for k, g in zip(keys, fold, strict=True) if g != f])
        constant[fold == f] = [answer in keys[i] for i in np.flatnonzero(fold == f)]
    p = paired_cluster_difference(correct, constant, clusters, seed=seed,
                                  null=COMPETENCE_MARGIN)["p_above"]  # fmt: skip
    return bool(p < ALPHA)


TESTS: dict[str, Callable[..., bool]] = {"before": before, "after": after, "cross-fit": cross_fit}


def models(step: Step, gold: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each model's per-item correctness on ``gold`` (module docstring); ``fixed:<answer>``
    for each constant fixed in advance."""
    n = len(gold)
    labels = np.array(step.answers, dtype=object)
    if sum(step.shares) < 1:
        guess = step.draw(n, rng, fresh="guess")
    else:
        guess = labels[rng.integers(0, len(labels), size=n)]
    best = step.answers[int(np.argmax(step.shares))]
    knows = rng.random(n) < EXCESS / (1 - step.best_share)
    runner_up = step.shares[step.answers.index(step.runner_up)]
    edge = (step.best_share + COMPETENCE_MARGIN - runner_up) / (1 - runner_up)
    knows_some = rng.random(n) < edge
    out = {f"fixed:{c}": gold == c for c in step.fixed_constants}
    out |= {
        "leading constant": best_constant(_keys(gold))[1],
        "random guess": guess == gold,
        "unknown": np.zeros(n, dtype=bool),
        "edge": knows_some | (gold == step.runner_up),
        "competent": knows | (gold == best),
    }
    return {k: v.astype(float) for k, v in out.items()}


def simulate(
    step: Step, n: int, reps: int, seed: int = 0, tests: Sequence[str] = tuple(TESTS)
) -> dict[str, dict[str, float]]:
    """Per model (the fixed constants as their worst, ``fixed constant (worst)``) and each of
    ``tests``, the share of ``reps`` samples of ``n`` items in which the model is called
    competent."""
    rng = np.random.default_rng([seed, n, STEPS.index(step)])
    hits: dict[str, dict[str, int]] = {}
    for rep in range(reps):
        gold = step.draw(n, rng)
        keys, clusters = _keys(gold), np.arange(n)
        for model, correct in models(step, gold, rng).items():
            row = hits.setdefault(model, dict.fromkeys(tests, 0))
            for name in tests:
                row[name] += TESTS[name](correct, keys, clusters, rep)
    rates = {m: {t: h / reps for t, h in row.items()} for m, row in hits.items()}
    fixed = [m for m in rates if m.startswith("fixed:")]
    worst = {t: max(rates[m][t] for m in fixed) for t in tests}
    return {"fixed constant (worst)": worst, **{m: r for m, r in rates.items() if m not in fixed}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--n", type=int, nargs="+", default=[20, 50, 200])
    parser.add_argument("--steps", nargs="+", choices=[s.name for s in STEPS],
                        default=[s.name for s in STEPS])  # fmt: skip
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    start = time.perf_counter()
    figures = []
    print(f"share of {args.reps} samples called competent (test at {ALPHA:g}, margin "
          f"{COMPETENCE_MARGIN:g}); columns: before / after / cross-fit")  # fmt: skip
    print(f"{'step':8} {'n':>4}  {'model':24} " + "  ".join(f"{t:>9}" for t in TESTS))
    for step in (s for s in STEPS if s.name in args.steps):
        for n in args.n:
            for model, rates in simulate(step, n, args.reps).items():
                figures.append({"step": step.name, "n": n, "model": model, **rates})
                cells = "  ".join(f"{rates[t]:9.3f}" for t in TESTS)
                print(f"{step.name:8} {n:>4}  {model:24} {cells}")
    seconds = time.perf_counter() - start
    print(f"{seconds:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"reps": args.reps, "alpha": ALPHA,
                                         "margin": COMPETENCE_MARGIN, "excess": EXCESS,
                                         "seconds": seconds, "figures": figures}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
