"""Statistics of the ``natural-logic`` suite: change of prediction, TCE, DCE, their ratio
and difference, rankings, and two-class accuracies.

A pair's change of prediction CP is 1 when the model's two-class predictions on its two
inputs differ. TCE (a label-changing set) and DCE (a label-preserving set) are mean CP over
the set's pairs. For each feature the method compares the two: ratio TCE/DCE (how much more
the model reacts to a change that matters than to one that does not; higher is better) and
delta TCE - DCE.

Pairs are not independent: every base example is paired with all of its alternatives (tens
of pairs each), and a model's behaviour on one base colours all of its pairs. Intervals
therefore come from a bootstrap that resamples *base examples*: each replicate draws the
seed set's bases with replacement and recomputes TCE and DCE over the drawn bases' pairs
(a base with no pair in one set adds nothing to that set). Because TCE and DCE of a feature
are computed from the same replicate, the ratio and delta intervals account for their
correlation. Percentile intervals, 95%, ``N_BOOT`` replicates, seeded by the run seed.

Challenge-set accuracies are proportions of independent items, with Wilson intervals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from faithprobe.examples import ENTAILMENT
from faithprobe.metrics.intervals import LEVEL, N_BOOT, wilson

# the method's Table 4; ``method_size``: the set's size the paper reports for N = 400
SETS: dict[str, dict] = {
    "I0": {
        "intervention": "swap_context_flip",
        "effect": "TCE",
        "feature": "context",
        "title": "TCE(C on Y): context swapped, monotonicity and gold change",
        "method_size": 14270,
    },
    "I1": {
        "intervention": "swap_pair_flip",
        "effect": "TCE",
        "feature": "insertion",
        "title": "TCE(W on Y): word pair swapped, relation and gold change",
        "method_size": 22640,
    },
    "I2": {
        "intervention": "swap_context_keep",
        "effect": "DCE",
        "feature": "context",
        "title": "DCE(S on Y): context swapped, monotonicity and gold kept",
        "method_size": 20910,
    },
    "I3": {
        "intervention": "swap_pair_keep",
        "effect": "DCE",
        "feature": "insertion",
        "title": "DCE(T on Y): word pair swapped, relation and gold kept",
        "method_size": 25960,
    },
}
FEATURES = ("insertion", "context")


def _set_of(feature: str, effect: str) -> str:
    return next(k for k, s in SETS.items() if s["feature"] == feature and s["effect"] == effect)


def _pairs(results: pd.DataFrame) -> pd.DataFrame:
    return results[results["set"].isin(list(SETS))]


def set_sizes(results: pd.DataFrame) -> list[dict]:
    """Per set: the intervention that built it (option ``i1`` chooses I1's), pairs, bases
    with at least one pair, distinct alternatives, the method's size (pairs are the same for
    every subject, so the first subject's are counted)."""
    pairs = _pairs(results)
    if pairs.empty:
        return []
    pairs = pairs[pairs["subject"] == pairs["subject"].iloc[0]]
    n_seed = int(pairs["original_id"].nunique())
    out = []
    for name, spec in SETS.items():
        s = pairs[pairs["set"] == name]
        out.append(
            {
                "set": name,
                "title": spec["title"],
                "effect": spec["effect"],
                "feature": spec["feature"],
                "intervention": s["feature_swap"].iloc[0] if len(s) else None,
                "pairs": len(s),
                "bases": int(s["original_id"].nunique()),
                "seed_set": n_seed,
                "alternatives": int(s["intervened_id"].nunique()),
                "pairs_per_base": len(s) / n_seed if n_seed else float("nan"),
                "method_size": spec["method_size"],
            }
        )
    return out


def _quantiles(values: np.ndarray) -> tuple[float, float]:
    """Percentile interval without interpolation (so infinite ratios stay ordered)."""
    finite_or_inf = values[~np.isnan(values)]
    if len(finite_or_inf) < len(values) * LEVEL:  # too many undefined replicates
        return float("nan"), float("nan")
    alpha = (1 - LEVEL) / 2
    lo, hi = np.quantile(finite_or_inf, [alpha, 1 - alpha], method="inverted_cdf")
    return float(lo), float(hi)


def _per_base(pairs: pd.DataFrame, bases: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CP sums and pair counts of each base in ``bases`` (0 where it has no pair)."""
    grouped = pairs.groupby("original_id")["cp"].agg(["sum", "count"]).reindex(bases, fill_value=0)
    return grouped["sum"].to_numpy(float), grouped["count"].to_numpy(float)


def _ratio(a: float, b: float) -> float:
    if b == 0:
        return float("inf") if a > 0 else float("nan")
    return a / b


def _replicates(
    tce_pairs: pd.DataFrame, dce_pairs: pd.DataFrame, bases: np.ndarray, seed: int
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Point estimates and bootstrap replicates of TCE, DCE, ratio and delta over ``bases``
    (the resampled indices depend only on ``seed`` and the number of bases, so two subjects
    with the same bases get the same resamples); no replicates for fewer than two bases."""
    ts, tn = _per_base(tce_pairs, bases)
    ds, dn = _per_base(dce_pairs, bases)
    tce = ts.sum() / tn.sum() if tn.sum() else float("nan")
    dce = ds.sum() / dn.sum() if dn.sum() else float("nan")
    point = {"tce": tce, "dce": dce, "ratio": _ratio(tce, dce), "delta": tce - dce}
    if len(bases) < 2:
        return point, {}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(bases), size=(N_BOOT, len(bases)))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = ts[idx].sum(1) / tn[idx].sum(1)
        d = ds[idx].sum(1) / dn[idx].sum(1)
        boot = {
            "tce": t,
            "dce": d,
            "ratio": np.where(d == 0, np.where(t > 0, np.inf, np.nan), t / d),
            "delta": t - d,
        }
    return point, boot


def _bases(*frames: pd.DataFrame) -> np.ndarray:
    return np.array(sorted(set().union(*(set(f["original_id"]) for f in frames))))


def effect_pair(tce_pairs: pd.DataFrame, dce_pairs: pd.DataFrame, seed: int) -> dict:
    """TCE, DCE, ratio and delta with a joint base-resampling bootstrap (module docstring)."""
    bases = _bases(tce_pairs, dce_pairs)
    point, boot = _replicates(tce_pairs, dce_pairs, bases, seed)
    out = {
        "n_bases": len(bases),
        "n_tce_pairs": int(tce_pairs["cp"].count()),
        "n_dce_pairs": int(dce_pairs["cp"].count()),
    }
    if len(bases) < 2:
        return {
            **out,
            **{k: {"value": v, "ci_low": None, "ci_high": None} for k, v in point.items()},
        }
    for k, v in point.items():
        lo, hi = _quantiles(boot[k])
        out[k] = {"value": v, "ci_low": lo, "ci_high": hi}
    out["interval"] = f"percentile bootstrap over {len(bases)} base examples, {N_BOOT} resamples"
    return out


def subject_differences(results: pd.DataFrame, seed: int) -> list[dict]:
    """Per feature and pair of subjects (A listed before B): TCE and DCE of A minus B, from
    one bootstrap that resamples the shared base examples for both (paired: the subjects
    answered the same pairs). Test: two-sided bootstrap p-value, twice the smaller share of
    replicate differences on either side of 0. Models trained with and without HELP, say,
    differ in sensitivity when the TCE difference's interval excludes 0."""
    pairs = _pairs(results)
    subjects = list(dict.fromkeys(pairs["subject"]))
    out = []
    for feature in FEATURES:
        sets = _set_of(feature, "TCE"), _set_of(feature, "DCE")
        rows = pairs[pairs["set"].isin(sets)]
        bases = _bases(rows)
        if len(bases) < 2:
            continue
        fits = {}
        for subject in subjects:
            own = rows[rows["subject"] == subject]
            fits[subject] = _replicates(
                own[own["set"] == sets[0]], own[own["set"] == sets[1]], bases, seed
            )
        for i, a in enumerate(subjects):
            for b in subjects[i + 1 :]:
                for quantity in ("tce", "dce"):
                    diff = fits[a][1][quantity] - fits[b][1][quantity]
                    diff = diff[~np.isnan(diff)]
                    lo, hi = _quantiles(diff)
                    p = min(1.0, 2 * min((diff <= 0).mean(), (diff >= 0).mean()))
                    out.append(
                        {
                            "feature": feature,
                            "quantity": quantity.upper(),
                            "subject_a": a,
                            "subject_b": b,
                            "value": fits[a][0][quantity] - fits[b][0][quantity],
                            "ci_low": lo,
                            "ci_high": hi,
                            "p_value": float(p),
                            "n_bases": len(bases),
                            "test": f"paired percentile bootstrap over {len(bases)} base "
                            f"examples, {N_BOOT} resamples (two-sided)",
                        }
                    )
    return out


def causal_effects(results: pd.DataFrame, seed: int) -> list[dict]:
    """One row per subject x feature (the method's Figures 3 and 4)."""
    pairs = _pairs(results)
    out = []
    for subject, rows in pairs.groupby("subject", sort=False):
        for feature in FEATURES:
            tce_set, dce_set = _set_of(feature, "TCE"), _set_of(feature, "DCE")
            est = effect_pair(rows[rows["set"] == tce_set], rows[rows["set"] == dce_set], seed)
            out.append(
                {
                    "subject": subject,
                    "feature": feature,
                    "tce_set": tce_set,
                    "dce_set": dce_set,
                    **est,
                }
            )
    return out


def ranking(effects: list[dict]) -> list[dict]:
    """The method's Table 5: per feature, subjects ranked by robustness (DCE, lower is
    better), sensitivity (TCE, higher is better) and their ratio (higher is better). Ranks
    follow the point estimates; ``tce``/``dce`` intervals say how firm an order is."""
    out = []
    for feature in FEATURES:
        rows = [e for e in effects if e["feature"] == feature]

        def rank(key: str, descending: bool, rows=rows) -> dict[str, int]:
            vals = [(r["subject"], r[key]["value"]) for r in rows]
            vals = [(s, v) for s, v in vals if v is not None and not np.isnan(v)]
            ordered = sorted(vals, key=lambda sv: -sv[1] if descending else sv[1])
            return {s: i + 1 for i, (s, _) in enumerate(ordered)}

        robust, sensitive, ratio = rank("dce", False), rank("tce", True), rank("ratio", True)
        for r in rows:
            s = r["subject"]
            out.append(
                {
                    "feature": feature,
                    "subject": s,
                    "robustness_rank": robust.get(s),
                    "sensitivity_rank": sensitive.get(s),
                    "ratio_rank": ratio.get(s),
                    "dce": r["dce"]["value"],
                    "tce": r["tce"]["value"],
                    "ratio": r["ratio"]["value"],
                }
            )
    return out


def _accuracy(rows: pd.DataFrame) -> dict:
    n = len(rows)
    correct = int(rows["correct"].sum())
    lo, hi = wilson(correct, n)
    gold_ent = rows["gold"] == ENTAILMENT
    pred_ent = rows["prediction"] == ENTAILMENT
    recall_ent = float((pred_ent & gold_ent).sum() / gold_ent.sum()) if gold_ent.any() else None
    recall_non = (
        float((~pred_ent & ~gold_ent).sum() / (~gold_ent).sum()) if (~gold_ent).any() else None
    )
    return {
        "n": n,
        "correct": correct,
        "value": correct / n if n else float("nan"),
        "ci_low": lo,
        "ci_high": hi,
        "interval": "Wilson 95%",
        "gold_entailment_share": float(gold_ent.mean()) if n else None,
        "predicted_entailment_share": float(pred_ent.mean()) if n else None,
        "majority_baseline": float(max(gold_ent.mean(), 1 - gold_ent.mean())) if n else None,
        "entailment_recall": recall_ent,
        "non_entailment_recall": recall_non,
    }


# one example's columns, whether it was a pair's original (base) or its alternative
EXAMPLE_COLUMNS = ["example_id", "gold", "prediction", "correct"]


def base_accuracy(results: pd.DataFrame) -> list[dict]:
    """Two-class accuracy on the NLI-XY examples a subject saw: the seed set, and every
    distinct example (bases and alternatives)."""
    base_cols = ["original_id", "original_gold", "original_prediction", "original_correct"]
    alt_cols = ["intervened_id", "gold", "prediction", "correct"]
    out = []
    for subject, rows in _pairs(results).groupby("subject", sort=False):
        bases = rows.drop_duplicates("original_id")[base_cols].set_axis(EXAMPLE_COLUMNS, axis=1)
        alts = rows[alt_cols].set_axis(EXAMPLE_COLUMNS, axis=1)
        seen = pd.concat([bases, alts]).drop_duplicates("example_id")
        out.append({"subject": subject, "examples": "seed set", **_accuracy(bases)})
        out.append({"subject": subject, "examples": "all evaluated", **_accuracy(seen)})
    return out


def challenge_accuracy(results: pd.DataFrame) -> list[dict]:
    """Two-class accuracy per subject and challenge set."""
    rows = results[~results["set"].isin(list(SETS))]
    return [
        {"subject": subject, "source": source, **_accuracy(g)}
        for (subject, source), g in rows.groupby(["subject", "source"], sort=False)
    ]
