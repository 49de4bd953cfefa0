"""Metrics of the distractors suite, as pure functions of the results table.

* accuracy: the share of items whose target scores above every other candidate of its set;
* relative probability: P(target | attractor context) / P(target | base context),
  aggregated as a geometric mean (the ratio is heavy-tailed; its log is averaged); for a
  model answering by letters, over the rows whose target letter has a probability on both
  inputs, and marked ``needs: probabilities`` where none has (letters parsed from replies);
* base accuracy: the share of base items a model gets right; only those items count in the
  competent views (the method's baseline-competence filter). With ``shared`` the items
  counted are those *every* subject of the run gets right, one item set for all models
  (the method's filter); otherwise each subject's own;
* competence (the card's): accuracy on the base items against the best constant answer on
  the same items (always the same word, or always the same position in the candidate set),
  :mod:`faithprobe.metrics.competence`; a model that does not beat it is not assessable;
* one-attractor drops (the card's headline): the accuracy lost to one related attractor
  after the critical fact, and that loss minus the loss to one unrelated attractor on the
  same base items (the method's own control: a model pulled by any extra words, or by
  none, scores 0 there);
* fact-swap drop (the card's check that the critical fact is used at all): on competent base
  items, the accuracy on the base items that state the swapped-in fact minus the accuracy
  on the swapped item (:mod:`.interventions`); a model that follows the fact scores about 0,
  one that answers from memory or ignores the story about its accuracy, while it loses
  nothing to attractors.

The ``main`` view is the method's Figure 1 condition, attractors after the critical fact;
``pooled`` pools the positions. The n = 0 point of every curve is the padded no-attractor
items (neutral sentences after the fact, suite option ``filler``) when the run has them,
else the base items themselves (then 1 for competent items, by construction).

Every number carries a 95% interval from :mod:`faithprobe.metrics.intervals` that resamples
base items, since variants of one base item are not independent.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from faithprobe.datasets.stories import POSITIONS
from faithprobe.metrics import competence as constant_baseline
from faithprobe.metrics.headline import NEEDS, PROBABILITIES
from faithprobe.metrics.intervals import (
    clustered_mean,
    geometric_mean_ratio,
    paired_cluster_difference,
    paired_difference,
    wilson,
)
from faithprobe.metrics.units import Units
from faithprobe.suites.distractors.interventions import FACT_SWAP

CURVE = ["setting", "attractor_type", "n_attractors"]
RELATED = ("B", "T")  # attractor types of the background's or the target's class
EVERY_POSITION = POSITIONS["multi"]  # the order the tests' labels name positions in
# view -> (columns it splits by, the attractor positions it keeps; None: every position)
VIEWS: dict[str, tuple[list[str], tuple[str, ...] | None]] = {
    "main": ([], ("after",)),  # the method's Figure 1: attractors after the critical fact
    "pooled": ([], None),
    "by_position": (["position"], None),
    "by_item_set": (["item_set"], None),
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
            out.append({**common, "metric": "accuracy", **acc.as_dict()})
            out.append({**common, "metric": "relative_probability", **_relative(part, seed)})
    return out


def _relative(part: pd.DataFrame, seed: int) -> dict:
    """The relative probability of the rows that have one (a letter answer's target may be
    outside the endpoint's top k); where none has, it needs probabilities (``needs``)."""
    known = part[part["log_relative_probability"].notna()]
    rel = geometric_mean_ratio(known["log_relative_probability"], known["original_id"], seed=seed)
    return {**rel.as_dict(), **({} if len(known) else {NEEDS: PROBABILITIES})}


def _padding(results: pd.DataFrame) -> pd.Series:
    """Neutral sentences padding each row's item (0 in results written before padding)."""
    if "n_padding" in results.columns:
        return results["n_padding"]
    return pd.Series(0, index=results.index)


def zero_rows(results: pd.DataFrame) -> pd.DataFrame:
    """The n = 0 condition: the padded no-attractor items if the run has them, else the
    base items (pairs of a base item with itself)."""
    padded = results[
        (results["n_attractors"] == 0) & (_padding(results) > 0) & (results["n_filler"] == 0)
    ]
    return padded if not padded.empty else results[results["intervention"] == "none"]


def zero_point(results: pd.DataFrame) -> dict:
    """What the n = 0 point of the curves measures."""
    zero = zero_rows(results)
    padding = sorted({int(k) for k in _padding(zero)})
    return {
        "items": "padded" if padding and padding[0] > 0 else "base",
        "n_padding": padding[0] if padding else 0,
        "n_items": int(zero["original_id"].nunique()),
    }


def competent_ids(results: pd.DataFrame, shared: bool = False) -> set[tuple[str, str]]:
    """(subject, base item) pairs that count in the competent views: each subject's base
    items it answers correctly, or (``shared``) the base items every subject answers
    correctly, for every subject."""
    base = results[results["intervention"] == "none"]
    ok = base[base["competent"]]
    own = set(zip(ok["subject"], ok["original_id"], strict=True))
    if not shared:
        return own
    subjects = list(base["subject"].unique())
    every = set(base["original_id"])
    for subject in subjects:
        every &= set(ok.loc[ok["subject"] == subject, "original_id"])
    return {(s, b) for s in subjects for b in every}


def _keep(df: pd.DataFrame, ids: set[tuple[str, str]]) -> pd.DataFrame:
    keep = [(s, b) in ids for s, b in zip(df["subject"], df["original_id"], strict=True)]
    return df[np.asarray(keep, dtype=bool)]


def estimates(results: pd.DataFrame, seed: int = 0, shared: bool = False) -> list[dict]:
    ids = competent_ids(results, shared)
    zero = zero_rows(results)
    out: list[dict] = []
    rows = _view_rows(results, ids)
    for view, (extra, _) in VIEWS.items():
        out += _curve_estimates(rows[view], _keep(zero, ids), view, extra, 0, seed)
    out += _curve_estimates(rows["all_items"], zero, "all_items", [], 0, seed)
    for n_filler in sorted(set(results["n_filler"]) - {0}):
        with_filler = results[results["n_filler"] == n_filler]
        zero_f = with_filler[with_filler["n_attractors"] == 0]
        more = with_filler[with_filler["n_attractors"] > 0]
        out += _curve_estimates(
            _keep(more, ids), _keep(zero_f, ids), "filler", [], int(n_filler), seed
        )
    return out


def _view_rows(results: pd.DataFrame, ids: set[tuple[str, str]]) -> dict[str, pd.DataFrame]:
    """The attractor rows each view of :func:`estimates` reads (its n = 0 point aside)."""
    variants = results[results["n_attractors"] > 0]
    plain = variants[variants["n_filler"] == 0]
    out = {
        view: _keep(plain if positions is None else plain[plain["position"].isin(positions)], ids)
        for view, (_, positions) in VIEWS.items()
    }
    out["all_items"] = plain
    out["filler"] = _keep(variants[variants["n_filler"] > 0], ids)
    return out


def views_used(results: pd.DataFrame, shared: bool = False) -> list[dict]:
    """Per subject and view: how many attractor items (pairs) and base items the view's
    curves counted, and how many attractor items of the run it left out (other positions,
    filler levels, or base items the subject gets wrong)."""
    ids = competent_ids(results, shared)
    out = []
    for subject in sorted(results["subject"].unique()):
        mine = results[results["subject"] == subject]
        n_variants = int((mine["n_attractors"] > 0).sum())
        for view, rows in _view_rows(mine, ids).items():
            out.append(
                {
                    "subject": subject,
                    "view": view,
                    "n_items": len(rows),
                    "n_base": int(rows["original_id"].nunique()),
                    "n_left_out": n_variants - len(rows),
                }
            )
    return out


def competent_set(results: pd.DataFrame, shared: bool = False) -> list[dict]:
    """Per subject: the rule deciding which base items count, its own competent items and
    the items counted under the rule."""
    base = results[results["intervention"] == "none"]
    ids = competent_ids(results, shared)
    own = competent_ids(results, False)
    out = []
    for subject, part in base.groupby("subject", sort=True):
        n_base = int(part["original_id"].nunique())
        counted = sum(1 for s, _ in ids if s == subject)
        lo, hi = wilson(counted, n_base)
        out.append(
            {
                "subject": subject,
                "rule": "shared" if shared else "each",
                "n_base": n_base,
                "n_own_competent": sum(1 for s, _ in own if s == subject),
                "n_counted": counted,
                "value": counted / n_base if n_base else float("nan"),
                "ci_low": lo,
                "ci_high": hi,
                "method": "Wilson (base items are independent)",
            }
        )
    return out


def competence(results: pd.DataFrame, seed: int = 0) -> list[dict]:
    """Per subject: accuracy on the base items (no attractors) against the best constant
    answer on them, a word or a position in the candidate set (each item's gold keys are
    its target's text and index), resampling base items."""
    base = results[results["intervention"] == "none"]
    out = []
    for subject, part in base.groupby("subject", sort=True):
        keys = [
            {f"position:{list(candidates).index(target)}", f"text:{target}"}
            for candidates, target in zip(part["candidates"], part["target"], strict=True)
        ]
        record = constant_baseline.competence(
            part["competent"].astype(float),
            keys,
            part["original_id"],
            seed=seed,
            metric="cloze accuracy on the base items (no attractors)",
        )
        out.append({"subject": subject, **record})
    return out


def base_accuracy(results: pd.DataFrame) -> list[dict]:
    """Per subject and item set: base items, how many the model gets right, how many drop
    out of the competent views."""
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


def _paired(a: pd.Series, b: pd.Series, seed: int) -> dict:
    """``a - b`` over the base items both hold, one cluster per base item, with its
    ``units`` (per base item: ``a`` and ``b``) for paired comparisons between models."""
    on = a.index.intersection(b.index).sort_values()
    units = Units.build("difference", on, on, a[on], b[on])
    return {**paired_cluster_difference(a[on], b[on], on, seed=seed), "units": units.record()}


def one_attractor_drops(results: pd.DataFrame, seed: int = 0, shared: bool = False) -> list[dict]:
    """Per subject and setting, on competent items with ONE attractor AFTER the critical fact
    (the method's Figure 1 condition), no filler, each base item weighing one:

    * ``related_drop``: accuracy at n = 0 (the padded copy when the run has one, else 1, the
      competent base item) minus accuracy with a related (B/T) attractor;
    * ``related_minus_unrelated``: that drop minus the drop to an unrelated attractor, on the
      base items that have both (= accuracy with unrelated minus with related attractors).

    Intervals: paired cluster bootstrap over base items. ``units``: per base item, the
    accuracies of both sides (ids: the base item's, so two models' units pair up on the
    competent items both have). Where the data holds no unrelated attractor after the fact
    (or none on a base item with a related one), the record's ``note`` says so and its
    numbers are null (its units are empty)."""
    ids = competent_ids(results, shared)
    after = results[
        (results["n_attractors"] == 1)
        & (results["position"] == "after")
        & (results["n_filler"] == 0)
    ]
    rows = _keep(after, ids)
    zero = _keep(zero_rows(results), ids)
    padded = zero[zero["intervention"] != "none"]
    settings = sorted(set(results.loc[results["n_attractors"] > 0, "setting"]))
    out = []
    for subject in sorted(results["subject"].unique()):
        mine, pad = rows[rows["subject"] == subject], padded[padded["subject"] == subject]
        for setting in settings:
            cell = mine[mine["setting"] == setting]
            related = _per_base(cell[cell["attractor_type"].isin(RELATED)])
            unrelated = _per_base(cell[cell["attractor_type"] == "unrelated"])
            if pad.empty:
                zero_acc, zero_what = pd.Series(1.0, index=related.index), "competent base (1.0)"
            else:
                zero_acc, zero_what = _per_base(pad), "padded no-attractor copy"
            common = {
                "subject": subject,
                "setting": setting,
                "n_related": int(cell["attractor_type"].isin(RELATED).sum()),
                "n_unrelated": int((cell["attractor_type"] == "unrelated").sum()),
            }
            note = ""
            if unrelated.empty:
                note = f"no unrelated attractor after the critical fact in the data ({setting})"
            elif related.index.intersection(unrelated.index).empty:
                note = "no base item has both a related and an unrelated attractor after the fact"
            out += [
                {
                    **common,
                    "effect": "related_drop",
                    "comparison": f"accuracy at n=0 ({zero_what}) − with one related attractor",
                    **_paired(zero_acc, related, seed),
                    "note": "",
                },
                {
                    **common,
                    "effect": "related_minus_unrelated",
                    "comparison": "accuracy with one unrelated − with one related attractor "
                    "(the related drop minus the unrelated drop)",
                    **_paired(unrelated, related, seed),
                    "note": note,
                },
            ]
    return out


def _made_swaps(results: pd.DataFrame) -> pd.DataFrame:
    """The critical-fact swap rows whose swap was made (a data file's item may have none)."""
    swaps = results[results["intervention"] == FACT_SWAP]
    return swaps[swaps["dropped_reason"].isna()]


def fact_swap_drops(results: pd.DataFrame, seed: int = 0, shared: bool = False) -> list[dict]:
    """Per subject, on its competent base items with a critical-fact swap: the accuracy on
    the base items that state the swapped-in fact (any entity: whether the model knows the
    new target at all) minus the accuracy on the swapped item. A model that follows the fact
    scores about 0 (a swap to a fact it does not know costs it nothing here); one that keeps
    the old target, about its accuracy on those base items.

    A base item whose swapped-in fact no base row of the run states is left out
    (``n_fact_unasked``). Interval: paired cluster bootstrap over base items, ``units`` as in
    :func:`one_attractor_drops`. None where the run has no swap rows (results written before
    the swap existed); where none could be made, a record without numbers says so."""
    swaps = results[results["intervention"] == FACT_SWAP]
    if swaps.empty:
        return []
    made = _keep(_made_swaps(results), competent_ids(results, shared))
    base = results[results["intervention"] == "none"]
    out = []
    for subject in sorted(results["subject"].unique()):
        mine = made[made["subject"] == subject].set_index("original_id")
        mine_base = base[base["subject"] == subject]
        knows = mine_base.groupby(["item_set", "background"])["competent"].mean()
        fact = pd.Series(
            [knows.get(k, np.nan) for k in zip(mine["item_set"], mine["background"], strict=True)],
            index=mine.index,
            dtype=float,
        )
        asked = fact.notna()
        note = ""
        if not asked.any():
            note = "no competent base item has a swap whose swapped-in fact a base row states"
        out.append(
            {
                "subject": subject,
                "effect": "fact_swap_drop",
                "comparison": "accuracy on the base items stating the swapped-in fact − "
                "on the swapped items",
                "n_swapped": len(mine),
                "n_fact_unasked": int((~asked).sum()),
                **_paired(fact[asked], mine.loc[asked, "correct"].astype(float), seed),
                "note": note,
            }
        )
    return out


def _like_with_like(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Both sides cut to the attractor positions both hold (a comparison of like with like:
    where only related attractors come between entity and fact, those items would weigh on
    one side only), and those positions, as the test's label names them."""
    common = [p for p in EVERY_POSITION if p in set(a["position"]) & set(b["position"])]
    label = ", ".join(common) or "no position on both sides"
    return a[a["position"].isin(common)], b[b["position"].isin(common)], label


def _comparisons(
    rows: pd.DataFrame, padded: pd.DataFrame
) -> Iterable[tuple[str, str, pd.Series, pd.Series]]:
    """(name, comparison, a, b): per-base-item accuracies to compare, paired by base item,
    like with like: "one related attractor" once per attractor position, the others on the
    positions both sides hold (named in the label); ``rows`` hold no filler. The n = 0 side
    of "one related attractor" is the padded items' accuracy when ``padded`` holds any, else
    1 (the competent base item)."""
    related = rows[rows["attractor_type"].isin(RELATED)]
    padded_zero = None if padded.empty else _per_base(padded)
    what = "competent base (1.0)" if padded_zero is None else "accuracy at n=0 (padded)"
    for setting, part in rows.groupby("setting", sort=True):
        rel = part[part["attractor_type"].isin(RELATED)]
        one = rel[rel["n_attractors"] == 1]
        for position in [p for p in EVERY_POSITION if p in set(one["position"])]:
            at = one[one["position"] == position]
            zero = padded_zero
            if zero is None:
                zero = pd.Series(1.0, index=at["original_id"].unique())
            yield (
                f"one related attractor ({setting}, {position})",
                f"{what} − accuracy at n=1 ({position})",
                zero,
                _per_base(at),
            )
        b, t, where = _like_with_like(
            part[part["attractor_type"] == "B"], part[part["attractor_type"] == "T"]
        )
        yield f"B vs T ({setting}; {where})", "accuracy B-type − T-type", _per_base(b), _per_base(t)
        unrelated, rel_same, where = _like_with_like(
            part[part["attractor_type"] == "unrelated"], rel
        )
        yield (
            f"unrelated vs related ({setting}; {where})",
            "accuracy unrelated − related (B, T)",
            _per_base(unrelated),
            _per_base(rel_same),
        )
    single, multi, where = _like_with_like(
        related[related["setting"] == "single"], related[related["setting"] == "multi"]
    )
    yield (
        f"single vs multi (related; {where})",
        "accuracy single − multi",
        _per_base(single),
        _per_base(multi),
    )


def tests(results: pd.DataFrame, seed: int = 0, shared: bool = False) -> list[dict]:
    """Named paired tests on competent items (each subject's own or, with ``shared``, the
    items all subjects pass) without filler, with BH q-values per subject."""
    ids = competent_ids(results, shared)
    rows = _keep(results[(results["n_attractors"] > 0) & (results["n_filler"] == 0)], ids)
    zero = _keep(zero_rows(results), ids)
    padded = zero[zero["intervention"] != "none"]  # empty unless the run has padded items
    out = []
    for subject, part in rows.groupby("subject", sort=True):
        found = []
        for name, comparison, a, b in _comparisons(part, padded[padded["subject"] == subject]):
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
    variants = first[~first["intervention"].isin(["none", FACT_SWAP])]
    cols = ["setting", "attractor_type", "n_attractors", "position", "n_filler"]
    cols += ["n_padding"] if "n_padding" in variants.columns else []
    counts = variants.groupby(cols, sort=True).size().rename("count").reset_index()
    out = {
        "n_pairs": int(len(variants)),
        "n_base": int((first["intervention"] == "none").sum()),
        "by_condition": counts.to_dict("records"),
    }
    if "linked_by" in variants.columns and variants["linked_by"].notna().any():
        links = variants["linked_by"].dropna().value_counts().sort_index()
        out["linked_by"] = [{"rule": r, "count": int(c)} for r, c in links.items()]
    swaps = first[first["intervention"] == FACT_SWAP]
    if swaps.empty:  # results written before the swap existed
        return out
    not_made = swaps["dropped_reason"].dropna().value_counts().sort_index()
    return out | {
        "fact_swaps": {
            "made": len(_made_swaps(first)),
            "not_made": [{"reason": r, "count": int(c)} for r, c in not_made.items()],
        }
    }
