"""The faithfulness suite's headline effects for the faithfulness card (Chaturvedi et al.):

* deletion runs (``--data``): how often the model says *unknown* once the sentence holding
  the answer is deleted (TS-R); a model that reads the passage cannot answer any more;
* negation (edits or ``negate=rule``): Comb-Acc, both the original and the negated question
  right;
* the predicate–argument probe: yes/no accuracy on negated stories (whose answers flip),
  and how often a harmless formatting change (a trailing space or newline) flips an answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.metrics.verdict import Effect, Region

# at least half the answers after the support is deleted should be "unknown"
UNKNOWN_FLOOR = 0.5
# yes/no accuracy (chance 0.5; Comb-Acc chance 0.25) a reader of negation reaches
NEGATION_FLOOR = 0.75
# answers a formatting change may flip
TOLERATED_FLIPS = 0.05


def _effect(row: Mapping[str, Any], key: str, title: str, region: Region, reading: str) -> Effect:
    return Effect(
        suite="faithfulness",
        key=key,
        title=title,
        subject=row["subject"],
        value=row["value"],
        ci_low=row["ci_low"],
        ci_high=row["ci_high"],
        n=row.get("n_clusters") or row["n"],
        region=region,
        reading=reading + (f"; {row['method']}" if row.get("method") else ""),
    )


def headline(metrics: Mapping[str, Any]) -> list[Effect]:
    out = []
    for row in metrics.get("scores", []):
        if row["variant"] == "TS-R" and row["metric"] == "unk":
            out.append(_effect(
                row, "unknown_after_ts_r",
                "answers 'unknown' once the supporting sentence is deleted (TS-R)",
                Region("at_least", UNKNOWN_FLOOR), "share of unknown answers",
            ))  # fmt: skip
    for row in metrics.get("negation", []):
        if row.get("negation") == "all" and row.get("metric") == "comb_acc":
            out.append(_effect(
                row, "comb_acc_negation", "Comb-Acc under negation (original and negated right)",
                Region("at_least", NEGATION_FLOOR), "both answers right",
            ))  # fmt: skip
    for row in metrics.get("predicate_argument", []):
        if (
            row["metric"] == "accuracy"
            and row["variant"] == "negated"
            and row["form"] == "original"
        ):
            out.append(_effect(
                row, "negated_story_accuracy", "yes/no accuracy on negated stories",
                Region("at_least", NEGATION_FLOOR), "predicate–argument probe, chance 0.5",
            ))  # fmt: skip
        elif row["metric"] == "flip_rate" and row["form"] == "original":
            out.append(_effect(
                row, f"formatting_flips_{row['variant']}",
                f"answers flipped by a harmless trailing {row['variant']}",
                Region("at_most", TOLERATED_FLIPS), "predicate–argument probe",
            ))  # fmt: skip
    return out
