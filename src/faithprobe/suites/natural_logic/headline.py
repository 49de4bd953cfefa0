"""The natural-logic suite's headline for the faithfulness card: per subject, its competence
(two-class accuracy on the base examples against the best constant label), and per feature
(context monotonicity, inserted word pair) how much more the model's prediction moves when a
swap of the feature changes the gold label (TCE) than when it does not (DCE), read two ways
as the method reads it: the difference TCE − DCE and the ratio, here DCE/TCE (the method's
TCE/DCE inverted: at most 0.5 where TCE/DCE is at least 2, and bounded for a model that
never moves on a label-preserving swap, whose TCE/DCE is infinite).

A model that ignores its input cannot be faithful here: one that never moves has TCE = DCE
= 0 (a difference of 0, a ratio with no interval), one that answers at random moves as
often on either set (a difference near 0, a ratio near 1), and neither beats the best
constant label on the bases. The ratio is undefined, so decides nothing, when neither rate
is clearly above 0; the difference then speaks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.metrics.headline import EffectSpec, Headline

SUITE = "natural-logic"
RATIO_EDGE, DELTA_EDGE = f"{SUITE}.dce_over_tce", f"{SUITE}.tce_minus_dce"
EDGES: dict[str, tuple[float, str]] = {
    RATIO_EDGE: (
        0.5,
        "The method's TCE/DCE of at least 2, inverted: a swap that keeps the gold label may "
        "move the prediction at most half as often as one that changes it. A model answering "
        "at random scores 1, the reader 0; 2 is the card's tolerance, the smallest ratio at "
        "which the feature, not any change of the input, is what moves the prediction.",
    ),
    DELTA_EDGE: (
        0.2,
        "A model ignoring the input scores 0 and the reader 1 (it flips every label-changing "
        "pair and no other); 0.2, the card's tolerance, asks the feature to move a prediction "
        "on at least one pair in five more when it changes the gold label than when it does "
        "not.",
    ),
}
_FEATURES = {"context": "context (monotonicity)", "insertion": "inserted word pair"}


def _ci(estimate: Mapping[str, Any]) -> str:
    def number(x: Any) -> str:
        return "–" if x is None else f"{x:.3g}"

    return (
        f"{number(estimate['value'])} [{number(estimate['ci_low'])}, {number(estimate['ci_high'])}]"
    )


def _texts(row: Mapping[str, Any]) -> dict[str, str]:
    """The feature in words; TCE and DCE with their intervals."""
    feature = _FEATURES.get(row["feature"], row["feature"])
    return {"feature_label": feature, "tce_text": _ci(row["tce"]), "dce_text": _ci(row["dce"])}


READING = "sets {tce_set} vs {dce_set}; TCE {tce_text}, DCE {dce_text}; {interval}"
# per subject its competence, then per feature the ratio and the difference
headline = Headline(
    SUITE,
    EDGES,
    (
        EffectSpec(
            "effects", RATIO_EDGE, "at_most", estimate="dce_over_tce", n=("n_bases",),
            key="dce_over_tce_{feature}",
            title="DCE/TCE (the method's ratio, inverted): {feature_label}",
            reading=READING, fields=_texts,
            control="about 1 for a model answering at random (TCE ≈ DCE); no interval for one "
            "that never moves (TCE = DCE = 0), which TCE − DCE = 0 places outside",
        ),
        EffectSpec(
            "effects", DELTA_EDGE, "at_least", estimate="delta", n=("n_bases",),
            key="delta_{feature}", title="TCE − DCE: {feature_label}", reading=READING,
            fields=_texts,
            control="0 for a model ignoring its input: a constant one never moves (TCE = DCE "
            "= 0), one answering at random moves as often on either set (TCE ≈ DCE)",
        ),
    ),
)  # fmt: skip
