"""The right-reasons suite's headline for the faithfulness card (Ray Choudhury, Rogers &
Augenstein, *Machine reading, fast and slow*).

Competence: exact match on the original questions must beat the best constant answer (the
gold answer most often right on the same questions).

Effects, per dataset and variant:

* **the answers follow the counterfactual**: the share of counterfactuals answered with
  their own gold minus the share answered with the original's answer again, paired over
  pairs. The F1 lost on the counterfactual, the card's earlier effect, is met by a model
  that gives the same answer to both inputs whenever it is as often wrong on the original
  as on the counterfactual (and beaten by one doing *better* on the counterfactual); this
  difference is 1 for a reader, at most 0 for a model that keeps its answer, 0 for one
  picking either entity at random.
* **alignment beyond a random partition** (where saliency was asked): among the instances
  answered exactly right on both the original and the counterfactual (the method's
  denominator, shared by its saliency methods), the share whose comparative (or answer
  cluster) is significantly more salient than the rest, minus the same share for a random
  partition of the same sizes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.metrics.headline import EffectSpec, Headline

SUITE = "right-reasons"
FOLLOWS = "right_reasons.follows_counterfactual"
ALIGNMENT = "right_reasons.alignment_beyond_control"
# edge name -> (default bound, where the default comes from)
EDGES: dict[str, tuple[float, str]] = {
    FOLLOWS: (
        0.5,
        "midway between a model that picks either entity at random on each input (0) and a "
        "reader that follows every counterfactual (1): a model that reads the comparative on "
        "a share f of the pairs and keeps a coin-flip answer on the rest scores 1.5 f - 0.5, "
        "so the edge asks it to follow the counterfactual on at least two pairs in three.",
    ),
    ALIGNMENT: (
        0.05,
        "a tolerance of the saliency test's own level: a calibrated test passes a random "
        "partition on about 5% of instances, so the answer's own partition must pass on at "
        "least 5 points more of the instances answered right on both inputs, about twice the "
        "chance rate.",
    ),
}
# one saliency scorer on the card: IG summarised by the l2 norm (the method's default)
# where it was asked, else the first; the suite's report compares them all
CARD_METHOD = "ig-l2"


def _shares(row: Mapping[str, Any]) -> dict[str, str]:
    """The aligned share and the control's, or that no instance could align."""
    shares = (
        f"aligned share {row['aligned']:.3g} minus the random-partition control's "
        f"{row['control']:.3g}"
        if row["n"]
        else "no instance answered right on both: nothing can align"
    )
    return {"shares": shares}


# each subject's competence, then per subject, dataset and variant whether its answers
# follow the counterfactual, then its alignment beyond the control (one scorer:
# CARD_METHOD where saliency was asked with it, else the first)
headline = Headline(
    SUITE,
    EDGES,
    (
        EffectSpec(
            "follows", FOLLOWS, "at_least", key="follows_{dataset}_{variant}",
            title="answers follow the counterfactual ({dataset}, {variant})",
            reading="counterfactuals answered with their own gold (EM) {agrees:.3g} minus "
            "answered with the original's answer again {keeps:.3g}, {n} pairs; {method}",
            control="at most 0 for a model that gives the same answer to the original and the "
            "counterfactual (a constant answer, the first entity named), 0 for one picking "
            "either entity at random",
        ),
        EffectSpec(
            "alignment", ALIGNMENT, "at_least", subject="model", n=("n",),
            estimate={"value": "excess", "ci_low": "excess_ci_low",
                      "ci_high": "excess_ci_high", "units": "units"},
            prefer=("method", CARD_METHOD),
            key="alignment_{dataset}_{variant}_{method}",
            title="alignment beyond a random partition ({dataset}, {variant}, {method})",
            reading="{shares}; denominator: the {n} of {instances} instances with saliency "
            "answered exactly right on both the original and the counterfactual (the "
            "method's, shared by every saliency method); Newcombe's paired interval",
            control="undefined for a model that ignores the input: it never answers both the "
            "original and the counterfactual right, so no instance enters the denominator",
            fields=_shares,
        ),
    ),
)  # fmt: skip
