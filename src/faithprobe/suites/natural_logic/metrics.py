"""Statistics of the ``natural-logic`` suite: change of prediction, TCE, DCE, their ratio
and difference, rankings, competence and two-class accuracies.

A pair's change of prediction CP is 1 when the model's two-class predictions on its two
inputs differ. TCE (a label-changing set) and DCE (a label-preserving set) are mean CP over
the set's pairs. For each feature the method compares the two: ratio TCE/DCE (how much more
the model reacts to a change that matters than to one that does not; higher is better) and
delta TCE - DCE. The card reads the ratio inverted, DCE/TCE (at most 0.5 where TCE/DCE is at
least 2), whose interval stays bounded for a model that never moves on a label-preserving
swap (DCE = 0, TCE/DCE infinite).

Pairs are not independent: every base example is paired with all of its alternatives (tens
of pairs each), and a model's behaviour on one base colours all of its pairs. Intervals
therefore treat *base examples* as the units (:mod:`~faithprobe.suites.natural_logic.
intervals`: a studentized bootstrap over bases, never narrower than the t-interval, TCE and
DCE of a feature from the same resamples so that their difference and ratio account for
their correlation), and need at least ``MIN_BASES`` bases: below that every effect is
reported without an interval, so it decides no verdict.

For paired comparisons between models, the card's two effects carry their ``units``
(:class:`~faithprobe.metrics.units.Units`): one unit per pair of either set (its pair id),
clustered by its base, with its CP in the TCE column or the DCE column. TCE and DCE are
means over pairs, not over bases, so the means of these columns are the rates exactly, and
resampling the bases resamples the ratio estimators the intervals are built on.

Competence (:func:`competence_records`): two-class accuracy on the base examples against the
best constant label on the same bases (:mod:`faithprobe.metrics.competence`); a model that
never moves has TCE = DCE = 0 whatever it reads, so its effects mean nothing without it.

Challenge-set accuracies are proportions of independent items, with Wilson intervals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from faithprobe.metrics.competence import competence
from faithprobe.metrics.intervals import N_BOOT, wilson
from faithprobe.metrics.units import Units
from faithprobe.records import ENTAILMENT, NON_ENTAILMENT
from faithprobe.suites.natural_logic.intervals import MIN_BASES, BaseRates, base_rates

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


def _per_base(pairs: pd.DataFrame, bases: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CP sums and pair counts of each base in ``bases`` (0 where it has no pair)."""
    grouped = pairs.groupby("original_id")["cp"].agg(["sum", "count"]).reindex(bases, fill_value=0)
    return grouped["sum"].to_numpy(float), grouped["count"].to_numpy(float)


def _base_rates(frames: list[pd.DataFrame], bases: np.ndarray, seed: int) -> BaseRates:
    """The rates (mean CP) of ``frames`` over the same ``bases``, with their resamples."""
    sums, counts = zip(*(_per_base(f, bases) for f in frames), strict=True)
    return base_rates(np.vstack(sums), np.vstack(counts), seed)


def _bases(*frames: pd.DataFrame) -> np.ndarray:
    return np.array(sorted(set().union(*(set(f["original_id"]) for f in frames))))


def _mean_cp(pairs: pd.DataFrame) -> float:
    return float(pairs["cp"].mean()) if len(pairs) else float("nan")


def _too_few(k: int) -> str:
    return (
        f"{k} base example{'s' if k != 1 else ''}: no interval below {MIN_BASES} bases (the "
        "interval over so few bases is not trusted to cover), so no verdict"
    )


def _units(formula: str, first: pd.DataFrame, second: pd.DataFrame) -> dict:
    """The ``units`` record of ``formula`` over the pairs of two sets (module docstring):
    ``first``'s CP in column 0, ``second``'s in column 1, each NaN on the other's pairs. A
    pair's id is the suite's: ``<set>:<base>><alternative>``."""
    pairs = pd.concat([first, second])
    ids = [f"{s}:{o}>{x}" for s, o, x in pairs[["set", "original_id", "intervened_id"]].to_numpy()]
    cp = pairs["cp"].astype(float).to_numpy()
    in_first = np.arange(len(pairs)) < len(first)
    return Units.build(
        formula,
        ids,
        pairs["original_id"],
        np.where(in_first, cp, np.nan),
        np.where(in_first, np.nan, cp),
    ).record()


def _point_only(value: float | None) -> dict:
    return {"value": value, "ci_low": None, "ci_high": None}


def _estimate(contrast: dict) -> dict:
    return {key: contrast[key] for key in ("value", "ci_low", "ci_high")}


def _inverse(ratio: dict) -> dict:
    """The bounds of TCE/DCE from those of DCE/TCE: swapped and inverted (a lower bound of 0
    becomes an unbounded upper one, an unbounded upper one a lower bound of 0)."""
    low, high = ratio["ci_low"], ratio["ci_high"]
    return {
        "ci_low": None if low is None else (0.0 if high is None else 1 / high),
        "ci_high": None if low is None or low == 0 else 1 / low,
    }


def effect_pair(tce_pairs: pd.DataFrame, dce_pairs: pd.DataFrame, seed: int) -> dict:
    """TCE, DCE, TCE - DCE, DCE/TCE and TCE/DCE over the bases of both sets, with intervals
    (:mod:`~faithprobe.suites.natural_logic.intervals`) from :data:`MIN_BASES` bases on; the
    card's two (delta, DCE/TCE) with their ``units``."""
    bases = _bases(tce_pairs, dce_pairs)
    k = len(bases)
    tce, dce = _mean_cp(tce_pairs), _mean_cp(dce_pairs)
    out = {
        "n_bases": k,
        "n_tce_pairs": int(tce_pairs["cp"].count()),
        "n_dce_pairs": int(dce_pairs["cp"].count()),
    }
    ratio = tce / dce if dce > 0 else (float("inf") if tce > 0 else float("nan"))
    units = {
        "delta": _units("difference", tce_pairs, dce_pairs),
        "dce_over_tce": _units("ratio", dce_pairs, tce_pairs),
    }
    if k < MIN_BASES:
        return {
            **out,
            "tce": _point_only(tce),
            "dce": _point_only(dce),
            "delta": {**_point_only(tce - dce), "units": units["delta"]},
            "dce_over_tce": {
                **_point_only(dce / tce if tce > 0 else None),
                "units": units["dce_over_tce"],
            },
            "ratio": _point_only(ratio),
            "interval": _too_few(k),
        }
    rates = _base_rates([tce_pairs, dce_pairs], bases, seed)
    dce_over_tce = rates.ratio(1, 0)
    return {
        **out,
        "tce": _estimate(rates.contrast([1, 0], 0.0, 1.0)),
        "dce": _estimate(rates.contrast([0, 1], 0.0, 1.0)),
        "delta": {
            **_estimate(rates.contrast([1, -1], -1.0, 1.0)),
            "units": units["delta"],
        },
        "dce_over_tce": {**dce_over_tce, "units": units["dce_over_tce"]},
        "ratio": {"value": ratio, **_inverse(dce_over_tce)},
        "interval": f"bootstrap-t over {k} base examples ({N_BOOT} resamples), never narrower "
        f"than the t-interval with {k - 1} df; DCE/TCE by Fieller's construction",
    }


def subject_differences(results: pd.DataFrame, seed: int) -> list[dict]:
    """Per feature and pair of subjects (A listed before B): TCE and DCE of A minus B over
    the base examples both answered, paired (the same resamples of the bases for both).
    Test: two-sided, the larger of the bootstrap-t's and t's p-values. Models trained with
    and without HELP, say, differ in sensitivity when the TCE difference's interval excludes
    0. No interval below :data:`MIN_BASES` bases."""
    pairs = _pairs(results)
    subjects = list(dict.fromkeys(pairs["subject"]))
    out = []
    for feature in FEATURES:
        rows = pairs[pairs["set"].isin([_set_of(feature, "TCE"), _set_of(feature, "DCE")])]
        bases = _bases(rows)
        if not len(bases):
            continue
        for i, a in enumerate(subjects):
            for b in subjects[i + 1 :]:
                for quantity in ("TCE", "DCE"):
                    own = rows[rows["set"] == _set_of(feature, quantity)]
                    frames = [own[own["subject"] == a], own[own["subject"] == b]]
                    if len(bases) >= MIN_BASES:
                        est = _base_rates(frames, bases, seed).contrast([1, -1], -1.0, 1.0)
                        test = (
                            f"paired bootstrap-t over {len(bases)} base examples ({N_BOOT} "
                            "resamples), never narrower than t's; p two-sided"
                        )
                    else:
                        difference = _mean_cp(frames[0]) - _mean_cp(frames[1])
                        est = {**_point_only(difference), "p_value": None}
                        test = _too_few(len(bases))
                    out.append(
                        {
                            "feature": feature,
                            "quantity": quantity,
                            "subject_a": a,
                            "subject_b": b,
                            **est,
                            "n_bases": len(bases),
                            "test": test,
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
    pred_non = rows["prediction"] == NON_ENTAILMENT  # neither: no answer (a letter reply)
    recall_ent = float((pred_ent & gold_ent).sum() / gold_ent.sum()) if gold_ent.any() else None
    recall_non = (
        float((pred_non & ~gold_ent).sum() / (~gold_ent).sum()) if (~gold_ent).any() else None
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


def competence_records(results: pd.DataFrame, seed: int) -> list[dict]:
    """Per subject, :func:`~faithprobe.metrics.competence.competence` on the base examples
    (the originals of the pairs; each its own cluster): two-class accuracy against the best
    constant label on the same bases."""
    out = []
    for subject, rows in _pairs(results).groupby("subject", sort=False):
        bases = rows.drop_duplicates("original_id")
        record = competence(
            bases["original_correct"].astype(float).to_numpy(),
            [{f"text:{gold}"} for gold in bases["original_gold"]],
            bases["original_id"].to_numpy(),
            seed=seed,
            metric="two-class accuracy on the base examples",
        )
        out.append({"subject": subject, **record})
    return out


def challenge_accuracy(results: pd.DataFrame) -> list[dict]:
    """Two-class accuracy per subject and challenge set."""
    rows = results[~results["set"].isin(list(SETS))]
    return [
        {"subject": subject, "source": source, **_accuracy(g)}
        for (subject, source), g in rows.groupby(["subject", "source"], sort=False)
    ]
