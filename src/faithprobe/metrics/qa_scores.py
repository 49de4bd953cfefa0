"""QA metrics of the ``faithfulness`` suite: SQuAD/CoQA EM and F1, *unknown* answers, and
the method's negation (Table 10) and predicate–argument (Table 12) accuracies.

Answer scoring follows the official SQuAD v1.1 and CoQA evaluation scripts:

* answers normalised by :func:`~faithprobe.qa.answers.normalize_answer` (lowercase, drop
  ASCII punctuation, drop the articles a/an/the as whole words, collapse whitespace);
* ``exact_match``: normalised strings equal; ``f1``: token-level F1 of the normalised
  strings' bags of tokens; both the maximum over the gold answers (SQuAD v1.1's
  ``metric_max_over_ground_truths``; CoQA's turn score is :func:`coqa_turn_score`);
* empty strings (after normalisation) as in CoQA and SQuAD 2.0: F1 is 1 if prediction and
  gold are both empty, else 0 where either is. (SQuAD v1.1 gives F1 0 when both are empty;
  its golds are never empty.) No gold answers at all counts as one empty gold (SQuAD 2.0).

*Unknown.* :func:`~faithprobe.qa.answers.is_unknown` recognises an abstention. In the
tables, a prediction flagged unknown is scored as the string ``"unknown"`` and a gold that
is unknown (empty, or an unknown phrasing such as CoQA's ``"unknown"``) as ``"unknown"``
too, so abstaining earns EM/F1 exactly where the gold says *unknown* and nowhere else.

Results frame: one row per (subject, answered input). Columns:

=================== ========================================================================
``subject``         model name
``variant``         dataset variant: ``OS``, ``TS``, ``TS-R``, ``TS-R+Aug``, ``OS-R`` ... for
                    deletions; ``original``/``negated`` for negation; for the predicate–
                    argument probe the story variant ``original``/``space``/``newline``/
                    ``negated``
``prediction``      the model's answer text (``"yes"``/``"no"`` for a yes/no decision)
``answers``         list (or tuple) of gold answers: always the *original* gold answers
``predicted_unknown`` optional bool: the model abstained (e.g. a null answer won); missing or
                    NA means ``is_unknown(prediction)``
``original_id``     the same question across variants (pairs rows for negation and flips)
``form``            predicate–argument only: question form ``original``/``paraphrase``/
                    ``control``
``story_id``        predicate–argument only: the story (cluster of its questions)
``correct``         optional bool; missing means computed: for a yes/no gold,
                    ``yes_no_label(prediction) == gold``, otherwise EM > 0
``reply_kind``      optional: how the reply was read (:mod:`faithprobe.qa.replies`); where
                    given, only a ``yes``/``no`` reply has a yes/no label (a hedge such as
                    "No, not necessarily" is neither yes nor no)
(cluster column)    optional, named by ``cluster=``: rows sharing a value are resampled
                    together (e.g. a CoQA story, a SQuAD article)
=================== ========================================================================

Every table function returns a long frame, one row per number, with the fields of
:class:`~faithprobe.metrics.intervals.Estimate` (``value``, ``ci_low``, ``ci_high``, ``n``,
``n_clusters``, ``method``) plus the keys that identify it and a ``metric`` name. Values are
fractions in [0, 1]. Intervals are 95%.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from faithprobe.metrics.intervals import Estimate, clustered_mean, paired_difference, wilson
from faithprobe.qa.answers import is_unknown, normalize_answer, yes_no_label
from faithprobe.qa.replies import NO, SPAN_KINDS, YES, YES_NO_KINDS
from faithprobe.records import UNKNOWN


def _tokens(text: str) -> list[str]:
    return normalize_answer(text).split() if text else []


def _golds(golds: str | Iterable[str]) -> list[str]:
    golds = [golds] if isinstance(golds, str) else list(golds)
    return golds or [""]


def _f1_one(prediction: str, gold: str) -> float:
    pred, ref = _tokens(prediction), _tokens(gold)
    if not pred or not ref:
        return float(pred == ref)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, golds: str | Iterable[str]) -> float:
    """1.0 if the normalised prediction equals a normalised gold answer, else 0.0."""
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(g) for g in _golds(golds)))


def f1(prediction: str, golds: str | Iterable[str]) -> float:
    """Token-level F1, the maximum over the gold answers."""
    return max(_f1_one(prediction, g) for g in _golds(golds))


def coqa_turn_score(prediction: str, golds: Sequence[str]) -> dict[str, float]:
    """CoQA's official turn score: with n > 1 golds, the mean over i of the maximum over
    the golds other than gold i (leave one out); with one gold, the plain score."""
    golds = _golds(golds)
    if len(golds) == 1:
        return {"em": exact_match(prediction, golds), "f1": f1(prediction, golds)}
    rest = [golds[:i] + golds[i + 1 :] for i in range(len(golds))]
    return {
        "em": float(np.mean([exact_match(prediction, r) for r in rest])),
        "f1": float(np.mean([f1(prediction, r) for r in rest])),
    }


def contains_answer(prediction: str, golds: str | Iterable[str]) -> float:
    """1.0 if some normalised gold answer occurs in the normalised prediction as a run of
    whole tokens ("gold rush" in "the finding of gold caused a gold rush"), else 0.0; an
    empty gold is contained only in an empty prediction."""
    pred = f" {normalize_answer(prediction)} "
    for gold in _golds(golds):
        norm = normalize_answer(gold)
        if (norm and f" {norm} " in pred) or (not norm and not pred.strip()):
            return 1.0
    return 0.0


# ---- results tables --------------------------------------------------------------------


def _predicted_unknown(frame: pd.DataFrame) -> pd.Series:
    computed = frame["prediction"].map(is_unknown)
    if "predicted_unknown" not in frame:
        return computed.astype(bool)
    given = frame["predicted_unknown"]
    return given.where(given.notna(), computed).astype(bool)


def _scored(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``unk``, ``answer`` (the prediction as scored: ``"unknown"`` when
    ``unk``), ``label`` (its yes/no label), ``em``, ``f1``, ``contains``, ``empty`` (not
    an abstention, yet nothing said) and ``correct``."""
    out = frame.copy()
    out["unk"] = _predicted_unknown(frame)
    out["answer"] = [
        UNKNOWN if u else str(p) for u, p in zip(out["unk"], out["prediction"], strict=True)
    ]
    out["label"] = out["answer"].map(yes_no_label)
    if "reply_kind" in frame:  # a hedge, refusal, ... has no yes/no label, whatever it says
        read = frame["reply_kind"]
        out["label"] = out["label"].where(read.isna() | read.isin([YES, NO]), None)
    golds = [[UNKNOWN if is_unknown(g) else g for g in _golds(a)] for a in out["answers"]]
    out["em"] = [exact_match(p, g) for p, g in zip(out["answer"], golds, strict=True)]
    out["f1"] = [f1(p, g) for p, g in zip(out["answer"], golds, strict=True)]
    out["contains"] = [contains_answer(p, g) for p, g in zip(out["answer"], golds, strict=True)]
    out["empty"] = ~out["unk"] & (out["answer"].map(normalize_answer) == "")
    if "correct" not in frame:
        correct = []
        for label, gold, em in zip(out["label"], golds, out["em"], strict=True):
            want = normalize_answer(gold[0])
            correct.append(label == want if want in ("yes", "no") else em > 0)
        out["correct"] = correct
    out["correct"] = out["correct"].astype(bool)
    return out


def scored_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (columns as above) with each row's ``unk``, ``answer`` (as scored),
    ``label``, ``em``, ``f1`` and ``correct``: the per-row scores the tables average."""
    return _scored(frame)


def _clusters(rows: pd.DataFrame, cluster: str | None) -> np.ndarray:
    return rows[cluster].to_numpy() if cluster else np.arange(len(rows))


def _wilson_estimate(flags: pd.Series) -> Estimate:
    k, n = int(flags.sum()), len(flags)
    lo, hi = wilson(k, n)
    return Estimate(k / n if n else float("nan"), lo, hi, n, n, "Wilson (items independent)")


def _proportion(rows: pd.DataFrame, column: str, cluster: str | None, seed: int) -> Estimate:
    if cluster is None:
        return _wilson_estimate(rows[column])
    return clustered_mean(rows[column], rows[cluster], seed=seed, proportion=True)


def qa_scores(frame: pd.DataFrame, *, cluster: str | None = None, seed: int = 0) -> pd.DataFrame:
    """Per subject x variant: ``em``, ``f1``, ``contains`` (a gold answer occurs in the
    answer: :func:`contains_answer`, the fair score for models that answer in sentences;
    all means, bootstrap over items, or over ``cluster`` values when given) and ``unk``
    (share of abstentions; Wilson, or the cluster bootstrap when ``cluster`` is given) and
    ``empty`` (share of answers that are empty without being abstentions: a generative
    model that stopped at once; likewise). The method's Tables 4–6, plus ``contains`` and
    ``empty``."""
    scored = _scored(frame)
    out = []
    for (subject, variant), rows in scored.groupby(["subject", "variant"], sort=False):
        keys = {"subject": subject, "variant": variant}
        clusters = _clusters(rows, cluster)
        for metric in ("em", "f1", "contains"):
            est = clustered_mean(rows[metric], clusters, seed=seed, proportion=metric != "f1")
            out.append({**keys, "metric": metric, **est.as_dict()})
        for metric in ("unk", "empty"):
            est = _proportion(rows, metric, cluster, seed)
            out.append({**keys, "metric": metric, **est.as_dict()})
    return pd.DataFrame(out)


def reply_kind_shares(
    frame: pd.DataFrame, keys: Sequence[str], *, cluster: str | None = None, seed: int = 0
) -> pd.DataFrame:
    """Per subject x ``keys`` x reply kind (column ``reply_kind``,
    :mod:`faithprobe.qa.replies`): ``count`` and share (``value``; bootstrap over
    ``cluster`` values, Wilson when it is None) of the replies read as that kind. Every kind
    a question of the group can get is listed, unseen ones with count 0: the yes/no kinds
    where the group's questions are yes/no (column ``yes_no``), the span kinds otherwise
    (both when it mixes them). Rows without a ``reply_kind`` are left out."""
    rows_all = frame[frame["reply_kind"].notna()]
    out = []
    for key, rows in rows_all.groupby(["subject", *keys], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        kinds = []
        if rows["yes_no"].astype(bool).any():
            kinds += YES_NO_KINDS
        if not rows["yes_no"].astype(bool).all():
            kinds += [k for k in SPAN_KINDS if k not in kinds]
        for kind in kinds:
            flags = (rows["reply_kind"] == kind).rename("flag")
            est = _proportion(rows.assign(flag=flags), "flag", cluster, seed)
            out.append({**dict(zip(["subject", *keys], key, strict=True)), "kind": kind,
                        "count": int(flags.sum()), **est.as_dict()})  # fmt: skip
    return pd.DataFrame(out)


def subject_differences(
    frame: pd.DataFrame, *, cluster: str = "passage_id", seed: int = 0
) -> pd.DataFrame:
    """Every later subject against the first (e.g. IBT against OT), per variant and metric
    (``em``, ``f1``, ``unk``): the difference (later minus first) on the items both
    answered, compared through per-``cluster`` means -- mean difference with a bootstrap
    95% CI and a Wilcoxon signed-rank test over clusters
    (:func:`~faithprobe.metrics.intervals.paired_difference`)."""
    scored = _scored(frame)
    scored["unk"] = scored["unk"].astype(float)
    subjects = list(dict.fromkeys(scored["subject"]))
    out = []
    for other in subjects[1:]:
        for variant, rows in scored.groupby("variant", sort=False):
            a = rows[rows["subject"] == other].set_index("original_id")
            b = rows[rows["subject"] == subjects[0]].set_index("original_id")
            both = a.index.intersection(b.index)
            if not len(both):
                continue
            a, b = a.loc[both], b.loc[both]
            for metric in ("em", "f1", "unk"):
                diff = paired_difference(
                    a.groupby(cluster)[metric].mean(), b.groupby(cluster)[metric].mean(), seed=seed
                )
                out.append(
                    {"subject": other, "reference": subjects[0], "variant": variant,
                     "metric": metric, "items": len(both), **diff}
                )  # fmt: skip
    return pd.DataFrame(out)


def expectation_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Per subject x variant: the share of rows whose ``expectation_met`` (bool column) is
    true -- the model did what a faithful model does -- with Wilson intervals."""
    out = []
    for (subject, variant), rows in frame.groupby(["subject", "variant"], sort=False):
        est = _wilson_estimate(rows["expectation_met"].astype(bool))
        out.append({"subject": subject, "variant": variant, "metric": "expectation_met",
                    **est.as_dict()})  # fmt: skip
    return pd.DataFrame(out)


NEGATION_LABELS = {
    "org_acc": "Org-Acc",
    "mod_acc": "Mod-Acc",
    "comb_acc": "Comb-Acc",
    "org_no": "no% Org",
    "mod_no": "no% Mod",
}


def _paired(
    scored: pd.DataFrame, keys: list[str], original: str, modified: str
) -> tuple[pd.DataFrame, int, int]:
    """One row per (``keys``, ``original_id``) answered in both the ``original`` and the
    ``modified`` variant, with ``correct`` and ``label`` of each side (suffixes ``_org``,
    ``_mod``); and how many original and how many modified rows lacked a partner."""
    cols = [*keys, "original_id", "correct", "label"]
    org = scored.loc[scored["variant"] == original, cols]
    mod = scored.loc[scored["variant"] == modified, cols]
    both = org.merge(mod, on=[*keys, "original_id"], suffixes=("_org", "_mod"), validate="1:1")
    return both, len(org) - len(both), len(mod) - len(both)


def negation_accuracy(
    frame: pd.DataFrame, *, original: str = "original", modified: str = "negated"
) -> pd.DataFrame:
    """Per subject, over items (``original_id``) answered in both the ``original`` and the
    ``modified`` variant: Org-Acc (original right), Mod-Acc (modified right; its gold is
    the flipped answer), Comb-Acc (both right), with Wilson intervals. The method's Table 10,
    plus the share of "no" answers on each side (``org_no``, ``mod_no``: a model that keeps
    its answer whatever the text says shows the same share on both). ``n_unpaired`` counts
    rows whose partner is missing (left out)."""
    out = []
    for subject, rows in _scored(frame).groupby("subject", sort=False):
        both, org_alone, mod_alone = _paired(rows, [], original, modified)
        both["comb"] = both["correct_org"] & both["correct_mod"]
        both["org_no"], both["mod_no"] = both["label_org"] == "no", both["label_mod"] == "no"
        columns = {"org_acc": "correct_org", "mod_acc": "correct_mod", "comb_acc": "comb",
                   "org_no": "org_no", "mod_no": "mod_no"}  # fmt: skip
        for metric, column in columns.items():
            out.append(
                {
                    "subject": subject,
                    "metric": metric,
                    "label": NEGATION_LABELS[metric],
                    **_wilson_estimate(both[column]).as_dict(),
                    "n_unpaired": org_alone + mod_alone,
                }
            )
    return pd.DataFrame(out)


# the method's Table 12: accuracy on each question form of the probe
TABLE12_LABELS = {"original": "Org-Acc", "paraphrase": "Mod-Acc", "control": "New-Acc"}
FORMATTING_VARIANTS = ("space", "newline")


def formatting_flip_rate(
    frame: pd.DataFrame, *, cluster: str | None = "story_id", seed: int = 0
) -> pd.DataFrame:
    """Per subject x form x formatting variant (``space``, ``newline``): the share of
    questions whose yes/no label (anything else counts as one label, "other") differs from
    the label on the ``original`` story; bootstrap over ``cluster`` (stories) or Wilson when
    ``None``. ``n_unpaired`` counts variant rows without an original (left out)."""
    scored = _scored(frame)
    scored["label"] = scored["label"].fillna("other")
    keys = ["subject", "form", *([cluster] if cluster else [])]
    out = []
    for variant in FORMATTING_VARIANTS:
        both, _, unpaired = _paired(scored, keys, "original", variant)
        both["flip"] = both["label_org"] != both["label_mod"]
        for (subject, form), rows in both.groupby(["subject", "form"], sort=False):
            est = _proportion(rows, "flip", cluster, seed)
            keys_out = {"subject": subject, "variant": variant, "form": form}
            out.append({**keys_out, "metric": "flip_rate", **est.as_dict(), "n_unpaired": unpaired})
    return pd.DataFrame(out)


def predicate_argument_accuracy(
    frame: pd.DataFrame, *, cluster: str | None = "story_id", seed: int = 0
) -> pd.DataFrame:
    """Per subject x story variant x question form: ``accuracy`` (labelled Org-Acc for the
    original form, Mod-Acc for the paraphrase, New-Acc for the ungrammatical control) and
    ``share_no`` (the share of "no" answers: on an original story half the golds are "no",
    so a model that always says "no" scores 50% without reading); then the formatting
    ``flip_rate`` rows of :func:`formatting_flip_rate`. Intervals: bootstrap over
    ``cluster`` (a story's questions are not independent), Wilson when it is ``None``."""
    scored = _scored(frame)
    scored["no"] = scored["label"] == "no"
    out = []
    groups = scored.groupby(["subject", "variant", "form"], sort=False)
    for (subject, variant, form), rows in groups:
        keys = {"subject": subject, "variant": variant, "form": form}
        label = TABLE12_LABELS.get(form, form)
        for metric, column in (("accuracy", "correct"), ("share_no", "no")):
            est = _proportion(rows, column, cluster, seed)
            out.append({**keys, "metric": metric, "label": label, **est.as_dict()})
    flips = formatting_flip_rate(frame, cluster=cluster, seed=seed)
    if not flips.empty:
        flips.insert(4, "label", flips["form"].map(lambda f: TABLE12_LABELS.get(f, f)))
    return pd.concat([pd.DataFrame(out), flips], ignore_index=True)
