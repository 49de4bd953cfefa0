"""The ``shout`` suite: pairs, requests (the default: score the candidates), rows, metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd

from faithprobe.expectations import ANSWER_UNCHANGED
from faithprobe.interventions import Pair
from faithprobe.metrics.intervals import wilson
from faithprobe.records import ClozeExample
from faithprobe.suite_protocol import Suite

CAPITALS = [("France", "Paris"), ("Italy", "Rome"), ("Spain", "Madrid"), ("Chile", "Santiago"),
            ("Peru", "Lima"), ("Japan", "Tokyo"), ("Kenya", "Nairobi"), ("Egypt", "Cairo")]  # fmt: skip


class ShoutSuite(Suite):
    name = "shout"
    items_noun = "cloze items"

    def pairs(self, data, seed: int) -> list[Pair]:
        cities = tuple(city for _, city in CAPITALS)
        out = []
        for country, city in CAPITALS[: self.options.items]:
            context = f"The capital of {country} is"
            original = ClozeExample(f"{country}", context, city, cities)
            shouted = ClozeExample(f"{country}-shout", context.upper(), city, cities)
            out.append(Pair(original, shouted, "uppercase", ANSWER_UNCHANGED))
        return out

    def stratum(self, pair: Pair) -> str:
        return "all"

    def rows(self, pairs, subject, answers) -> list[dict]:
        out = []
        for pair in pairs:
            o, x = pair.original, pair.intervened
            pick = {e.id: e.candidates[int(np.argmax(answers[e.id].logprobs))] for e in (o, x)}
            out.append({"pair_id": pair.id, "context": x.context, "gold": x.target,
                        "original_prediction": pick[o.id], "prediction": pick[x.id]})  # fmt: skip
        return out

    def metrics(self, results: pd.DataFrame, seed: int) -> dict:
        kept = []
        for subject, rows in results.groupby("subject", sort=False):
            met = rows["expectation_met"].astype(bool)
            low, high = wilson(int(met.sum()), len(met))
            kept.append({"subject": subject, "value": float(met.mean()), "ci_low": low,
                         "ci_high": high, "n": len(met)})  # fmt: skip
        return {"kept": kept}
