"""Metrics of the distractors suite, as pure functions of the results table.

* accuracy: the share of items whose target scores above every other candidate of its set;
* relative probability: P(target | attractor context) / P(target | base context),
  aggregated as a geometric mean (the ratio is heavy-tailed; its log is averaged);
* competence: the share of base items a model gets right; only those items count in the
  competent views (the method's baseline-competence filter).

Every number carries a 95% interval from :mod:`faithprobe.metrics.intervals` that resamples
base items, since variants of one base item are not independent.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from faithprobe.metrics.intervals import (
    clustered_mean,
    geometric_mean_ratio,
    paired_difference,
    wilson,
)

CURVE = ["setting", "attractor_type", "n_attractors"]
VIEWS = {
    "main": [],
    "by_position": ["position"],
    "by_item_set": ["item_set"],
}


def _curve_estimates(
    rows: pd.DataFrame, zero: pd.DataFrame, view: str, extra: list[str], n_filler: int, seed: int
) -> list[dict]:
    """Accuracy and relative probability per curve point; ``zero`` holds the 0-attractor
    rows, repeated as the first point of every (setting, attractor type) curve."""
    out = []
    keys = ["subject", *extra, "setting", "attractor_type"]
    for key, cell in rows.groupby(keys, sort=True):
        label = dict(zip(keys, key, strict=True))
        base = zero[zero["subject"] == label["subject"]]
        for col in extra:  # 0-attractor rows have no position: they start every curve
            if (base[col] != "none").any():
                base = base[base[col] == label[col]]
        points = [(0, base)] + sorted(cell.groupby("n_attractors"))
        for n, part in points:
            if part.empty:
                continue
            common = {
                "view": view,
                **label,
                "n_attractors": int(n),
                "n_filler": n_filler,
                "position": label.get("position", "all"),
                "item_set": label.get("item_set", "all"),
            }
            acc = clustered_mean(part["correct"], part["original_id"], seed=seed, proportion=True)
            rel = geometric_mean_ratio(
                part["log_relative_probability"], part["original_id"], seed=seed
            )
            out.append({**common, "metric": "accuracy", **acc.as_dict()})
            out.append({**common, "metric": "relative_probability", **rel.as_dict()})
    return out


def estimates(results: pd.DataFrame, seed: int = 0) -> list[dict]:
    base = results[results["intervention"] == "none"]
    variants = results[(results["n_attractors"] > 0)]
    competent_ids = set(
        zip(
            base.loc[base["competent"], "subject"],
            base.loc[base["competent"], "original_id"],
            strict=True,
        )
    )

    def competent(df: pd.DataFrame) -> pd.DataFrame:
        keep = [
            (s, b) in competent_ids for s, b in zip(df["subject"], df["original_id"], strict=True)
        ]
        return df[np.asarray(keep, dtype=bool)]

    out: list[dict] = []
    plain = variants[variants["n_filler"] == 0]
    for view, extra in VIEWS.items():
        out += _curve_estimates(competent(plain), competent(base), view, extra, 0, seed)
    out += _curve_estimates(plain, base, "all_items", [], 0, seed)
    for n_filler in sorted(set(results["n_filler"]) - {0}):
        with_filler = results[results["n_filler"] == n_filler]
        zero = with_filler[with_filler["n_attractors"] == 0]
        more = with_filler[with_filler["n_attractors"] > 0]
        out += _curve_estimates(competent(more), competent(zero), "filler", [], int(n_filler), seed)
    return out


def competence(results: pd.DataFrame) -> list[dict]:
    """Per subject and item set: base items, how many the model gets right, how many drop."""
    base = results[results["intervention"] == "none"]
    out = []
    for (subject, item_set), part in base.groupby(["subject", "item_set"], sort=True):
        k, n = int(part["competent"].sum()), len(part)
        lo, hi = wilson(k, n)
        out.append(
            {
                "subject": subject,
                "item_set": item_set,
                "n_base": n,
                "n_competent": k,
                "n_dropped": n - k,
                "value": k / n,
                "ci_low": lo,
                "ci_high": hi,
                "n": n,
                "n_clusters": n,
                "method": "Wilson (base items are independent)",
            }
        )
    return out


def _per_base(df: pd.DataFrame) -> pd.Series:
    return df.groupby("original_id")["correct"].mean()


def _comparisons(rows: pd.DataFrame) -> Iterable[tuple[str, str, pd.Series, pd.Series]]:
    """(name, comparison, a, b): per-base-item accuracies to compare, paired by base item."""
    related = rows[rows["attractor_type"].isin(["B", "T"])]
    for setting, part in rows.groupby("setting", sort=True):
        rel = part[part["attractor_type"].isin(["B", "T"])]
        one = rel[rel["n_attractors"] == 1]
        ones = pd.Series(1.0, index=one["original_id"].unique())
        yield (
            f"one related attractor ({setting})",
            "competent base (1.0) − accuracy at n=1",
            ones,
            _per_base(one),
        )
        yield (
            f"B vs T ({setting})",
            "accuracy B-type − T-type",
            _per_base(part[part["attractor_type"] == "B"]),
            _per_base(part[part["attractor_type"] == "T"]),
        )
        yield (
            f"unrelated vs related ({setting})",
            "accuracy unrelated − related (B, T)",
            _per_base(part[part["attractor_type"] == "unrelated"]),
            _per_base(rel),
        )
    yield (
        "single vs multi (related)",
        "accuracy single − multi",
        _per_base(related[related["setting"] == "single"]),
        _per_base(related[related["setting"] == "multi"]),
    )


def tests(results: pd.DataFrame, seed: int = 0) -> list[dict]:
    """Named paired tests on competent items without filler, with BH q-values per subject."""
    base = results[results["intervention"] == "none"]
    rows = results[(results["n_attractors"] > 0) & (results["n_filler"] == 0)]
    out = []
    for subject, part in rows.groupby("subject", sort=True):
        ok = set(base.loc[(base["subject"] == subject) & base["competent"], "original_id"])
        part = part[part["original_id"].isin(ok)]
        found = []
        for name, comparison, a, b in _comparisons(part):
            found.append(
                {
                    "subject": subject,
                    "name": name,
                    "comparison": comparison,
                    **paired_difference(a, b, seed=seed),
                }
            )
        ps = np.array([t["p_value"] for t in found], dtype=float)
        valid = ~np.isnan(ps)
        qs = np.full_like(ps, np.nan)
        if valid.any():
            from scipy import stats  # imported when metrics are computed, not remembered

            qs[valid] = stats.false_discovery_control(ps[valid])
        for t, q in zip(found, qs, strict=True):
            t["q_value"] = float(q)
        out += found
    return out


def dataset_breakdown(results: pd.DataFrame) -> dict:
    first = results[results["subject"] == results["subject"].iloc[0]]
    variants = first[first["intervention"] != "none"]
    cols = ["setting", "attractor_type", "n_attractors", "position", "n_filler"]
    counts = variants.groupby(cols, sort=True).size().rename("count").reset_index()
    return {
        "n_pairs": int(len(variants)),
        "n_base": int((first["intervention"] == "none").sum()),
        "by_condition": counts.to_dict("records"),
    }
