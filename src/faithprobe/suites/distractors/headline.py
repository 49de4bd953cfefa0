"""The distractors suite's headline effect for the faithfulness card: how much accuracy one
related attractor costs (the method's central finding is that a single semantically
related distractor already pulls models off the target)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.metrics.verdict import Effect, Region

# a faithful reader loses at most this much accuracy to one related attractor
TOLERATED_DROP = 0.10
_SETTINGS = {"single": "one entity", "multi": "several entities"}


def headline(metrics: Mapping[str, Any]) -> list[Effect]:
    """Per subject and setting: accuracy on competent items at 0 attractors (1.0 by the
    competence filter) minus accuracy with one related (B- or T-type) attractor, with the
    bootstrap interval over base items of the suite's paired test."""
    out = []
    for test in metrics.get("tests", []):
        for setting, words in _SETTINGS.items():
            if test["name"] != f"one related attractor ({setting})":
                continue
            out.append(
                Effect(
                    suite="distractors",
                    key=f"one_related_attractor_{setting}",
                    title=f"accuracy lost to one related attractor ({words})",
                    subject=test["subject"],
                    value=test["difference"],
                    ci_low=test["ci_low"],
                    ci_high=test["ci_high"],
                    n=test["n"],
                    region=Region("at_most", TOLERATED_DROP),
                    reading="competent items; bootstrap over base items; " + test["test"],
                )
            )
    return out
