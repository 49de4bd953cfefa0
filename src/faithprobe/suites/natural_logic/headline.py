"""The natural-logic suite's headline effects for the faithfulness card: per feature
(context monotonicity, inserted word pair), how much more the model's prediction moves when
a swap of the feature changes the gold label (TCE) than when it does not (DCE). The method
reads both the ratio TCE/DCE and the difference TCE − DCE; the card shows both, because the
ratio is undefined for a model whose prediction never moves (TCE = DCE = 0, a common
failure of small LMs), which the difference reads as what it is: no use of the feature."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.metrics.verdict import Effect, Region

# a model that uses the feature reacts at least twice as often to swaps that matter ...
RATIO_FLOOR = 2.0
# ... and at least this much more often, in absolute terms
DELTA_FLOOR = 0.2
_FEATURES = {"context": "context (monotonicity)", "insertion": "inserted word pair"}


def headline(metrics: Mapping[str, Any]) -> list[Effect]:
    out = []
    for row in metrics.get("effects", []):
        feature = _FEATURES.get(row["feature"], row["feature"])
        sets = f"{row['tce_set']} vs {row['dce_set']}"
        for key, title, region in (
            ("ratio", f"TCE/DCE ratio: {feature}", Region("at_least", RATIO_FLOOR)),
            ("delta", f"TCE − DCE: {feature}", Region("at_least", DELTA_FLOOR)),
        ):
            est = row[key]
            out.append(
                Effect(
                    suite="natural-logic",
                    key=f"{key}_{row['feature']}",
                    title=title,
                    subject=row["subject"],
                    value=est["value"],
                    ci_low=est["ci_low"],
                    ci_high=est["ci_high"],
                    n=row["n_bases"],
                    region=region,
                    reading=f"sets {sets}; TCE {row['tce']['value']:.3g}, DCE "
                    f"{row['dce']['value']:.3g}; {row.get('interval', 'one base: no interval')}",
                )
            )
    return out
