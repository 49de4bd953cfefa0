"""The right-reasons suite's headline effects for the faithfulness card: F1 lost when a
comparison or coreference question is turned into its counterfactual (a model that reads
for the right reasons loses nothing), and how often its saliency follows the partition the
answer depends on beyond a random partition of the same sizes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.metrics.verdict import Effect, Region

# F1 a faithful reader may lose on the counterfactual (points of F1 / 100)
TOLERATED_F1_LOSS = 0.05
CARD_METHOD = "ig-l2"
# how much more often than a random partition of the same sizes the answer's own partition
# must be the aligned one: saliency that follows the words deciding the answer beats
# chance clearly; a share no higher than chance's (both 0 when no answer is right) is not
# evidence of reading for the right reasons
MIN_EXCESS_ALIGNMENT = 0.05


def headline(metrics: Mapping[str, Any]) -> list[Effect]:
    out = []
    for test in metrics.get("tests", []):
        if test["metric"] != "f1":
            continue
        where = f"{test['dataset']}, {test['variant']}"
        out.append(
            Effect(
                suite="right-reasons",
                key=f"f1_loss_{test['dataset']}_{test['variant']}",
                title=f"F1 lost on the counterfactual ({where})",
                subject=test["subject"],
                value=test["difference"],
                ci_low=test["ci_low"],
                ci_high=test["ci_high"],
                n=test["n"],
                region=Region("at_most", TOLERATED_F1_LOSS),
                reading=f"og − cf, per-passage means; bootstrap over passages; {test['test']}",
            )
        )
    alignment = metrics.get("alignment", [])
    methods = list(dict.fromkeys(row["method"] for row in alignment))
    # one saliency method on the card: IG summarised by the l2 norm (the method's default)
    # where it was asked, else the first; the suite's report compares them all
    shown = [CARD_METHOD] if CARD_METHOD in methods else methods[:1]
    for row in alignment:
        if row["method"] not in shown or row.get("control") is None:
            continue
        where = f"{row['dataset']}, {row['variant']}, {row['method']}"
        out.append(
            Effect(
                suite="right-reasons",
                key=f"alignment_{row['dataset']}_{row['variant']}_{row['method']}",
                title=f"alignment beyond a random partition ({where})",
                subject=row["model"],
                value=row.get("excess"),
                ci_low=row.get("excess_ci_low"),
                ci_high=row.get("excess_ci_high"),
                n=row["n"],
                region=Region("at_least", MIN_EXCESS_ALIGNMENT),
                reading=f"aligned share {row['aligned']:.3g} minus the random-partition "
                f"control's {row['control']:.3g} on the same instances (Newcombe's paired "
                f"interval); {row['both_correct']:.0%} had both answers exactly right, the "
                "ceiling of either share",
            )
        )
    return out
