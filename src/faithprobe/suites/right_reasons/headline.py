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

from faithprobe.metrics.verdict import Competence, Effect, competences

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
FOLLOWS_CONTROL = (
    "at most 0 for a model that gives the same answer to the original and the "
    "counterfactual (a constant answer, the first entity named), 0 for one picking either "
    "entity at random"
)
ALIGNMENT_CONTROL = (
    "undefined for a model that ignores the input: it never answers both the original and "
    "the counterfactual right, so no instance enters the denominator"
)


def _follows(record: Mapping[str, Any]) -> Effect:
    where = f"{record['dataset']}, {record['variant']}"
    return Effect.from_estimate(
        record,
        "at_least",
        FOLLOWS,
        EDGES,
        suite=SUITE,
        key=f"follows_{record['dataset']}_{record['variant']}",
        title=f"answers follow the counterfactual ({where})",
        subject=record["subject"],
        reading=f"counterfactuals answered with their own gold (EM) {record['agrees']:.3g} "
        f"minus answered with the original's answer again {record['keeps']:.3g}, "
        f"{record['n']} pairs; {record['method']}",
        control=FOLLOWS_CONTROL,
    )


def _alignment(record: Mapping[str, Any]) -> Effect:
    where = f"{record['dataset']}, {record['variant']}, {record['method']}"
    shares = (
        f"aligned share {record['aligned']:.3g} minus the random-partition control's "
        f"{record['control']:.3g}"
        if record["n"]
        else "no instance answered right on both: nothing can align"
    )
    excess = {
        "value": record.get("excess"),
        "ci_low": record.get("excess_ci_low"),
        "ci_high": record.get("excess_ci_high"),
        "units": record.get("units"),
    }
    return Effect.from_estimate(
        excess,
        "at_least",
        ALIGNMENT,
        EDGES,
        n=record["n"],
        suite=SUITE,
        key=f"alignment_{record['dataset']}_{record['variant']}_{record['method']}",
        title=f"alignment beyond a random partition ({where})",
        subject=record["model"],
        reading=f"{shares}; denominator: the {record['n']} of {record['instances']} instances "
        "with saliency answered exactly right on both the original and the counterfactual "
        "(the method's, shared by every saliency method); Newcombe's paired interval",
        control=ALIGNMENT_CONTROL,
    )


def headline(metrics: Mapping[str, Any]) -> list[Effect | Competence]:
    """Each subject's competence, then per subject, dataset and variant whether its answers
    follow the counterfactual, then its alignment beyond the control (:data:`CARD_METHOD`)
    where saliency was asked (read off ``competence``, ``follows`` and ``alignment``)."""
    out: list[Effect | Competence] = [*competences(SUITE, metrics)]
    out += [_follows(r) for r in metrics.get("follows", [])]
    alignment = metrics.get("alignment", [])
    methods = list(dict.fromkeys(r["method"] for r in alignment))
    shown = CARD_METHOD if CARD_METHOD in methods else methods[0] if methods else None
    return out + [_alignment(r) for r in alignment if r["method"] == shown]
