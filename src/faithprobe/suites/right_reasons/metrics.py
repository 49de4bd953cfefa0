"""Metrics of the ``right-reasons`` suite, pure functions of its results table (one row per
(pair, subject), see :mod:`faithprobe.suites.right_reasons`).

* ``competence``: per subject, exact match (EM) on the original questions against the best
  constant answer on the same questions (gold keys: the normalised gold answers), paired
  over questions, bootstrap over passages (:func:`~faithprobe.metrics.competence.
  competence`). An original with a CF and a CF-ood pair counts once.
* ``follows``: per (subject, dataset, variant) whether the answers follow the
  counterfactual: the share of counterfactuals answered with their own gold (EM) *minus*
  the share answered with the original's answer again (``same_answer``), paired over
  pairs, bootstrap over passages (:func:`~faithprobe.metrics.intervals.
  paired_cluster_difference`). A reader scores 1; a model that ignores the change (gives
  the same answer to both) at most 0, and one picking either entity at random 0. ``units``
  (:class:`~faithprobe.metrics.units.Units`): per pair (its pair id) its ``cf_em`` and
  ``same_answer``, clustered by passage, for paired comparisons between models.
* ``scores``: EM and F1 of the original (``og``) and the counterfactual (``cf``) per
  (subject, dataset, variant), each with a 95% cluster-bootstrap interval over passages (the
  questions of one passage are resampled together, as in the ``faithfulness`` suite).
* ``tests``: og minus cf per (subject, dataset, variant, metric): the mean per-passage
  difference with a bootstrap interval and a Wilcoxon signed-rank test over passages
  (:func:`~faithprobe.metrics.intervals.paired_difference`). Not a verdict: a model that
  gives the same answer to both loses nothing when it is as often wrong as right.
* ``comparatives``: ``scores`` per comparative word and its counterfactual's word
  (``comparative``, ``antonym``: "earlier" -> "later" in ``CF``, -> "subsequently" in
  ``CF-ood``) within each (subject, dataset, variant): EM and F1 of the original and the
  counterfactual with their intervals, the method's per-comparative view (a model may
  follow "older"/"younger" and not "earlier"/"later").
* ``consistency``: per (subject, dataset, variant) how often the original and the
  counterfactual got the same answer, with a cluster-bootstrap interval over passages.
* ``alignment``: per (dataset, model, method) the share of aligned instances and of the
  random-partition control among those answered exactly right on both the original and
  the counterfactual (the method's denominator), the share whose real and whose random
  partition passed the saliency test (the random one's *significance rate* is the method's
  sanity check), and exact McNemar tests of real vs random
  (:func:`~faithprobe.metrics.alignment.alignment_scores`), per scorer (a saliency method
  under one summary: ``ig-l2``, ``ig-l1``, ``ig-dot``, ``occlusion``). Every scorer reads
  the same instances (those every scorer decided), so they share one denominator. An
  original with both a CF and a CF-ood pair counts once per variant (``variant`` column),
  since its alignment depends on the counterfactual's exact match. ``units``: per instance
  (its pair id, which names the variant) with a saliency decision, its ``aligned`` and
  ``control_aligned``, NaN where it is outside the model's denominator (not answered right
  on both inputs); each instance its own cluster, as Newcombe's interval takes them.
* ``sizes`` and ``drops``: per (dataset, variant) the items, answered and dropped pairs (for
  coreference: the resolver and how the counterfactuals were made), and the drops by reason.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from faithprobe.metrics.alignment import GROUPS, alignment_scores
from faithprobe.metrics.competence import competence
from faithprobe.metrics.intervals import (
    clustered_mean,
    paired_cluster_difference,
    paired_difference,
)
from faithprobe.metrics.units import Units
from faithprobe.qa.answers import normalize_answer

KEYS = ["subject", "dataset", "variant"]
COMPETENCE_METRIC = "exact match (EM) on the original questions"


def _per_pair(results: pd.DataFrame) -> pd.DataFrame:
    """One row per pair (drops do not depend on the subject)."""
    return results.drop_duplicates("pair_id")


def sizes(results: pd.DataFrame) -> list[dict]:
    """Per (dataset, variant): pairs, answered, dropped; for coreference also the resolver
    that made the clusters and how many counterfactuals were made by rule or imported."""
    out = []
    for (dataset, variant), rows in _per_pair(results).groupby(["dataset", "variant"]):
        n_dropped = int(rows["dropped_reason"].notna().sum())
        record = {"dataset": dataset, "variant": variant, "items": len(rows),
                  "answered": len(rows) - n_dropped, "dropped": n_dropped}  # fmt: skip
        resolvers = rows["resolver"].dropna().unique() if "resolver" in rows else []
        if len(resolvers):
            made = rows["cf_generated"].dropna().astype(bool)
            record.update(resolver=", ".join(sorted(resolvers)),
                          cf_by_rule=int(made.sum()), cf_imported=int((~made).sum()))  # fmt: skip
        out.append(record)
    return out


def drops(results: pd.DataFrame) -> list[dict]:
    pairs = _per_pair(results)
    dropped = pairs[pairs["dropped_reason"].notna()]
    counts = dropped.groupby(["dataset", "variant", "dropped_reason"]).size()
    return [{"dataset": d, "variant": v, "reason": r, "count": int(c)}
            for (d, v, r), c in counts.items()]  # fmt: skip


def _gold_keys(answers) -> set[str]:
    """The constant answers right on a question: its normalised gold answers."""
    return {f"text:{key}" for a in answers if (key := normalize_answer(a))}


def competence_records(results: pd.DataFrame, seed: int) -> list[dict]:
    """Per subject, :func:`~faithprobe.metrics.competence.competence` of its exact match on
    the original questions (each once, whatever its counterfactuals), clusters passages."""
    originals = results.drop_duplicates(["subject", "original_id"])
    originals = originals[originals["og_em"].notna()]
    out = []
    for subject, rows in originals.groupby("subject", sort=True):
        keys = [_gold_keys(a) for a in rows["og_answers"]]
        correct = rows["og_em"].astype(float)
        found = competence(correct, keys, rows["passage_id"], seed=seed, metric=COMPETENCE_METRIC)
        out.append({"subject": subject, **found})
    return out


def follows(answered: pd.DataFrame, seed: int) -> list[dict]:
    """The ``follows`` records (module docstring): ``agrees`` (counterfactual answered with
    its gold), ``keeps`` (with the original's answer) and their paired difference. Empty for
    a results table written before ``same_answer`` existed."""
    if "same_answer" not in answered:
        return []
    out = []
    for key, rows in answered.groupby(KEYS, sort=True):
        agrees, keeps = rows["cf_em"].astype(float), rows["same_answer"].astype(float)
        out.append(
            {
                **dict(zip(KEYS, key, strict=True)),
                "agrees": float(agrees.mean()),
                "keeps": float(keeps.mean()),
                **paired_cluster_difference(agrees, keeps, rows["passage_id"], seed=seed),
                "units": Units.build(
                    "difference", rows["pair_id"], rows["passage_id"], agrees, keeps
                ).record(),
            }
        )
    return out


def _side_estimates(rows: pd.DataFrame, keys: dict, seed: int) -> list[dict]:
    """EM and F1 of the original and the counterfactual of ``rows``, each with its 95%
    cluster-bootstrap interval over passages, as records under ``keys``."""
    out = []
    for metric in ("em", "f1"):
        for side in ("og", "cf"):
            est = clustered_mean(
                rows[f"{side}_{metric}"].astype(float), rows["passage_id"], seed=seed,
                proportion=metric == "em",
            )  # fmt: skip
            out.append({**keys, "metric": metric, "side": side, **est.as_dict()})
    return out


def scores(answered: pd.DataFrame, seed: int) -> tuple[list[dict], list[dict]]:
    """The ``scores`` and ``tests`` records (module docstring)."""
    estimates, tests = [], []
    for key, rows in answered.groupby(KEYS, sort=True):
        keys = dict(zip(KEYS, key, strict=True))
        estimates += _side_estimates(rows, keys, seed)
        for metric in ("em", "f1"):
            per_passage = rows.groupby("passage_id")[[f"og_{metric}", f"cf_{metric}"]].mean()
            diff = paired_difference(
                per_passage[f"og_{metric}"], per_passage[f"cf_{metric}"], seed=seed
            )
            tests.append({**keys, "metric": metric, "items": len(rows), **diff})
    return estimates, tests


def comparatives(answered: pd.DataFrame, seed: int) -> list[dict]:
    """The ``comparatives`` records (module docstring): :func:`scores`' estimates per
    (subject, dataset, variant, comparative, antonym) of the comparison pairs. Empty for a
    results table written before the comparative columns existed, or without comparisons."""
    if "og_comparative" not in answered:
        return []
    pairs = answered[answered["og_comparative"].notna()]
    out = []
    for key, rows in pairs.groupby([*KEYS, "og_comparative", "cf_comparative"], sort=True):
        keys = dict(zip([*KEYS, "comparative", "antonym"], key, strict=True))
        out += _side_estimates(rows, keys, seed)
    return out


def consistency(answered: pd.DataFrame, seed: int) -> list[dict]:
    """Per (subject, dataset, variant) the share of pairs whose original and counterfactual
    got the same answer (``same_answer``, after SQuAD normalisation), with a 95%
    cluster-bootstrap interval over passages. The counterfactual's gold differs from the
    original's, so a consistent pair has at most one side right: a high rate explains og and
    cf scores near each other (and near half, for two-entity comparisons). Empty for a
    results table written before the column existed."""
    if "same_answer" not in answered:
        return []
    out = []
    for key, rows in answered.groupby(KEYS, sort=True):
        est = clustered_mean(
            rows["same_answer"].astype(float), rows["passage_id"], seed=seed, proportion=True
        )
        out.append({**dict(zip(KEYS, key, strict=True)), **est.as_dict()})
    return out


def _alignment_units(rows: pd.DataFrame) -> dict:
    """The ``units`` of one (dataset, model, method)'s excess: aligned minus control over
    the instances answered right on both inputs (the others NaN, so outside both means),
    clustered by passage as the suite's other effects are (questions on one passage share
    it; Newcombe's interval on the card treats them as independent)."""
    both = rows["both_correct"]
    aligned, control = (rows[c].astype(float).where(both) for c in ("aligned", "control_aligned"))
    return Units.build("difference", rows["pair_id"], rows["passage_id"], aligned, control).record()


def alignment(answered: pd.DataFrame, methods: Sequence[str]) -> list[dict]:
    """:func:`alignment_scores` per variant, over the rows every method decided
    (``<method>_aligned``: one denominator for all), with the variant as a column and each
    record's ``units`` (module docstring)."""
    columns = [f"{method}_aligned" for method in methods]
    if not methods or not all(c in answered for c in columns):  # no saliency asked
        return []
    decided = answered[answered[columns].notna().all(axis=1)]
    both_correct = (decided["og_em"] == 1) & (decided["cf_em"] == 1)
    long = pd.concat(
        [
            pd.DataFrame(
                {
                    "dataset": decided["dataset"],
                    "variant": decided["variant"],
                    "model": decided["subject"],
                    "pair_id": decided["pair_id"],
                    "passage_id": decided["passage_id"],
                    "method": method,
                    "both_correct": both_correct,
                    **{
                        name: decided[f"{method}_{name}"].astype(bool)
                        for name in ("aligned", "control_aligned", "passed", "control_passed")
                    },
                }
            )
            for method in methods
        ],
        ignore_index=True,
    )
    out = []
    for variant, rows in long.groupby("variant", sort=True):
        table = alignment_scores(rows)
        table.insert(1, "variant", variant)
        units = {key: _alignment_units(group) for key, group in rows.groupby(GROUPS, sort=True)}
        out += [
            {**record, "units": units[tuple(record[g] for g in GROUPS)]}
            for record in table.to_dict("records")
        ]
    return out


def right_reasons_metrics(results: pd.DataFrame, methods: Sequence[str], seed: int) -> dict:
    if results.empty:
        return {"sizes": [], "drops": [], "competence": [], "follows": [], "scores": [],
                "tests": [], "consistency": [], "alignment": [], "comparatives": []}  # fmt: skip
    answered = results[results["dropped_reason"].isna()]
    estimates, tests = scores(answered, seed) if len(answered) else ([], [])
    return {
        "sizes": sizes(results),
        "drops": drops(results),
        "competence": competence_records(results, seed),
        "follows": follows(answered, seed) if len(answered) else [],
        "scores": estimates,
        "tests": tests,
        "consistency": consistency(answered, seed) if len(answered) else [],
        "alignment": alignment(answered, methods),
        "comparatives": comparatives(answered, seed) if len(answered) else [],
    }
