"""The confidence-shift suite's headline effects for the faithfulness card: when no choice
is correct, does the model still pick the choice that would have been right (pseudo-
accuracy above the 1/n a model without that cue gets), and does its top confidence tell
such inputs from the originals (MaxProb detection, chance 0.5)?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.metrics.verdict import Effect, Region, missing

# pseudo-accuracy a faithful model keeps within this of chance (1/n)
TOLERATED_EXCESS = 0.05
# detection accuracy (chance 0.5) from which top confidence tells probed inputs apart
DETECTION_FLOOR = 0.6
_PROBES = {
    "no_question": "question removed",
    "wrong_question": "another item's question",
    "wrong_question_disjoint": "another item's question (disjoint)",
    "no_right_answer": "right answer removed",
}


def headline(metrics: Mapping[str, Any]) -> list[Effect]:
    out = []
    for row in metrics.get("pseudo_accuracy", []):
        chance = row["agnostic"]
        bounds = [
            None if missing(row[k]) else row[k] - chance for k in ("value", "ci_low", "ci_high")
        ]
        out.append(
            Effect(
                suite="confidence-shift",
                key=f"pseudo_accuracy_excess_{row['probe']}",
                title=f"picks the once-right choice above chance ({_PROBES.get(row['probe'], row['probe'])})",
                subject=row["subject"],
                value=bounds[0],
                ci_low=bounds[1],
                ci_high=bounds[2],
                n=row["n"],
                region=Region("at_most", TOLERATED_EXCESS),
                reading=f"pseudo-accuracy minus 1/n ({chance:.3g}); {row['method']}",
            )
        )
    for row in metrics.get("maxprob_detection", []):
        out.append(
            Effect(
                suite="confidence-shift",
                key=f"maxprob_detection_{row['probe']}",
                title=f"top confidence tells probed from original inputs ({_PROBES.get(row['probe'], row['probe'])})",
                subject=row["subject"],
                value=row["value"],
                ci_low=row["ci_low"],
                ci_high=row["ci_high"],
                n=row["n_instances"],
                region=Region("at_least", DETECTION_FLOOR),
                reading=f"detection accuracy, chance 0.5; {row['method']}",
            )
        )
    return out
