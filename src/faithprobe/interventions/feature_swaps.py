"""Natural-logic feature swaps on the NLI-XY grid (Rozanova, Valentino & Freitas).

An NLI-XY example is a context with a monotonicity at its slot and an inserted word pair
with a relation; the gold label is a function of those two features. Each intervention
here swaps one of the two parts for another from the grid and either changes the gold label
(a *total causal effect* probe: a model that uses the feature must change its prediction)
or keeps it (a *direct causal effect* probe: only surface form changed, so a robust model
keeps its prediction). The method's Table 4:

=====  =======================  ==================================================
 I0    ``swap_context_flip``    other context, other monotonicity, other gold; same pair
 I1    ``swap_pair_flip``       other pair, other relation, other gold; same context
 I2    ``swap_context_keep``    other context, same monotonicity and gold; same pair
 I3    ``swap_pair_keep``       other pair, same relation and gold; same context
=====  =======================  ==================================================

``swap_pair_reverse`` is I1 as the method apparently built it: only swaps between the two
directional relations (``leq`` <-> ``geq``), leaving out word pairs of relation ``none``
(whose swap also flips the gold label). With it the expected I1 size for N = 400 bases
(the mean over all seed sets) on the shared NLI-XY grid is 22,623, against the method's
reported 22,640 (``swap_pair_flip``: 31,698); the natural-logic suite's option
``i1=leq-geq`` selects it.

Nothing is drawn at random: each returns *every* grid example meeting its condition (the
method pairs each base example with all of them), in id order. An alternative whose
premise and hypothesis are the very texts of the base (a duplicated context row) is left
out: it would not be an intervention. The pool is the :class:`NLIXYGrid` the base comes
from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from faithprobe.datasets.nli_xy import NLIXYGrid
from faithprobe.expectations import PREDICTION_CHANGES, PREDICTION_KEPT
from faithprobe.interventions import register
from faithprobe.records import NLIExample, Outcome

if TYPE_CHECKING:  # only annotations: `faithprobe list` imports this module, not numpy
    import numpy as np

FAMILY = "natural-logic"
NO_ALTERNATIVE = "no other grid example meets the conditions"
Condition = Callable[[NLIExample, NLIExample], bool]


def _same(key: str) -> Condition:
    return lambda a, b: a.features[key] == b.features[key]


def _differs(key: str) -> Condition:
    return lambda a, b: a.features[key] != b.features[key]


DIRECTIONAL = ("leq", "geq")


def _both_directional(a: NLIExample, b: NLIExample) -> bool:
    return a.features["relation"] in DIRECTIONAL and b.features["relation"] in DIRECTIONAL


def _label_differs(a: NLIExample, b: NLIExample) -> bool:
    return a.label != b.label


def _label_same(a: NLIExample, b: NLIExample) -> bool:
    return a.label == b.label


def _alternatives(
    base: NLIExample, pool: NLIXYGrid, held: str, conditions: tuple[Condition, ...]
) -> list[NLIExample]:
    """Grid examples sharing ``base``'s ``held`` part (context or insertion) and meeting
    every condition."""
    index = pool.by_context if held == "context_id" else pool.by_insertion
    out = []
    for alt in index[base.features[held]]:
        if (alt.premise, alt.hypothesis) == (base.premise, base.hypothesis):
            continue
        if all(cond(base, alt) for cond in conditions):
            out.append(alt)
    return sorted(out, key=lambda e: e.id)


def _swap(held: str, *conditions: Condition):
    """The intervention function for one row of the table below."""

    def swap(example: NLIExample, rng: np.random.Generator, pool: NLIXYGrid) -> Outcome:
        alternatives = _alternatives(example, pool, held, conditions)
        return Outcome.kept(*alternatives) if alternatives else Outcome.dropped(NO_ALTERNATIVE)

    return swap


# name -> (part held fixed, conditions on an alternative, changes, holds, expectation)
SWAPS = {
    "swap_context_flip": (
        "insertion_id",
        (_differs("context_id"), _differs("monotonicity"), _label_differs),
        "the context, to one of the other monotonicity, so the gold label flips",
        "the inserted word pair",
        PREDICTION_CHANGES,
    ),
    "swap_pair_flip": (
        "context_id",
        (_differs("insertion_id"), _differs("relation"), _label_differs),
        "the inserted word pair, to one of another relation, so the gold label flips",
        "the context",
        PREDICTION_CHANGES,
    ),
    "swap_pair_reverse": (
        "context_id",
        (_differs("insertion_id"), _differs("relation"), _both_directional, _label_differs),
        "the inserted word pair, leq to geq or back, so the gold label flips",
        "the context",
        PREDICTION_CHANGES,
    ),
    "swap_context_keep": (
        "insertion_id",
        (_differs("context_id"), _same("monotonicity"), _label_same),
        "the context, to another of the same monotonicity (gold label unchanged)",
        "the inserted word pair, the monotonicity and the gold label",
        PREDICTION_KEPT,
    ),
    "swap_pair_keep": (
        "context_id",
        (_differs("insertion_id"), _same("relation"), _label_same),
        "the inserted word pair, to another of the same relation (gold label unchanged)",
        "the context, the relation and the gold label",
        PREDICTION_KEPT,
    ),
}

for _name, (_held, _conditions, _changes, _holds, _expectation) in SWAPS.items():
    register(_name, family=FAMILY, changes=_changes, holds=_holds, expectation=_expectation)(
        _swap(_held, *_conditions)
    )
