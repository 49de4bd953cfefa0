"""Competence and controlled effects of the ``faithfulness`` suite: the numbers its two
audit steps are judged on (:mod:`faithprobe.suites.faithfulness.headline`), each set
against what a model that ignores its input gets on the same items.

**Competence** (block ``competence``, one record per subject,
:func:`faithprobe.metrics.competence.competence`): on the *original* items, is the model
right more often than the best constant answer, by the margin?

* predicate–argument probe: yes/no accuracy on the original stories, original question
  form ("Was the car blue?"); constant answers "yes" and "no"; clusters: stories;
* deletion runs: exact match (EM > 0 against a gold answer; on a yes/no question the
  right yes/no, as :func:`faithprobe.metrics.qa_scores.scored_rows` scores ``correct``) on the
  original story (``OS``); the constant answers are the items' own normalised gold answers,
  so the baseline is the most common gold; clusters: passages. EM, not F1: a constant
  answer's partial F1 on other items has no finite set of keys, and a reply quoting the
  whole passage would earn ``contains`` everywhere.

**Controlled effects** (block ``controlled``, one record per subject and effect, each a
paired cluster bootstrap over the same items, :func:`~faithprobe.metrics.intervals.
paired_cluster_difference`):

* ``negation_excess`` (probe): accuracy on the negated stories (original form) minus the
  best constant answer's on the same questions (two thirds of their golds are "no", so
  always answering "no" gets 0.67 and gains 0; so does a model that reads each colour as
  asserted, "not" or not; a reader gains 1/3);
* ``formatting_flips`` (probe, per formatting variant: ``space``, ``newline``): the share
  of original-form questions whose answer (yes, no, or anything else as one label) differs
  from the answer on the original story, minus a constant answer's (0: it never flips). The
  same paired bootstrap as the other effects, so a model that never flips gets the point
  interval [0, 0] (the report's formatting table, :func:`faithprobe.metrics.qa_scores.
  formatting_flip_rate`, gives such a model a Wilson interval over stories instead);
* ``unknown_gain`` (deletion, per removal variant: TS-R, TS-R+Aug, OS-R, OS-R+Aug): the
  share of *unknown* answers after the support is deleted minus the share on the original
  story, over the questions answered in both (always answering *unknown*, or never, gains 0;
  a reader 1);
* ``comb_acc_excess`` (deletion with negation edits): Comb-Acc (the story that was edited,
  OS or TS with ``negate_on=ts``, and the negated one both answered right) minus the best
  constant answer's (one answer right on both sides: none, where the edit flips the
  answer), over the items with a ``NEG`` pair.

Each record's ``units`` (:class:`~faithprobe.metrics.units.Units`, formula ``difference``)
hold both sides per question: the model's number (correct, flipped, unknown, both right)
and the control's (the constant answer's correctness; 0 for flips; unknown on the original
story), one unit per question id (``original_id``: the same for every model), clustered as
the interval is (stories, passages), so two models' effects can be compared paired.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from faithprobe.interventions.deletion_variants import ORIGINAL, VARIANTS
from faithprobe.metrics import qa_scores as m
from faithprobe.metrics.competence import best_constant, competence
from faithprobe.metrics.intervals import paired_cluster_difference
from faithprobe.metrics.units import Units
from faithprobe.qa.answers import is_unknown, normalize_answer
from faithprobe.records import UNKNOWN
from faithprobe.suites.faithfulness.probes import NEG, negated_from

PROBE_COMPETENCE = "yes/no accuracy on the original stories (original question form)"
DELETION_COMPETENCE = "exact match on the original stories (OS)"
# the variants whose support is deleted (a faithful model answers unknown there)
REMOVALS = tuple(v for v in VARIANTS if "-R" in v)


def gold_keys(answers: Iterable[str]) -> frozenset[str]:
    """The constant answers right on an item with these gold answers: each normalised gold
    (an unknown one as ``unknown``), as ``text:<answer>``; an item without golds counts as
    one empty, i.e. unknown, gold (as :mod:`faithprobe.metrics.qa_scores` scores it)."""
    golds = list(answers) or [""]
    return frozenset(f"text:{normalize_answer(UNKNOWN if is_unknown(g) else g)}" for g in golds)


def _asked(results: pd.DataFrame) -> pd.DataFrame:
    """The answered rows, scored (``correct``, ``unk``)."""
    if results.empty:
        return results
    return m.scored_rows(results[results["dropped_reason"].isna()])


def _competence(rows: pd.DataFrame, cluster: str, metric: str, seed: int) -> list[dict]:
    out = []
    for subject, g in rows.groupby("subject", sort=False):
        keys = [gold_keys(a) for a in g["answers"]]
        record = competence(
            g["correct"].astype(float), keys, g[cluster].to_numpy(), seed=seed, metric=metric
        )
        out.append({"subject": subject, **record})
    return out


def _difference(
    effect: str,
    variant: str,
    questions: Sequence[str],
    measured: np.ndarray,
    control: np.ndarray,
    clusters,
    seed: int,
) -> dict:
    """``mean(measured) - mean(control)`` over the same ``questions`` (their ids: the
    effect's ``units``), resampling ``clusters``."""
    return {
        "effect": effect,
        "variant": variant,
        "measured": float(np.mean(measured)) if len(measured) else float("nan"),
        "control": float(np.mean(control)) if len(control) else float("nan"),
        **paired_cluster_difference(measured, control, clusters, seed=seed),
        "units": Units.build("difference", questions, clusters, measured, control).record(),
    }


def _over_constant(
    effect: str,
    variant: str,
    questions: Sequence[str],
    correct: Sequence[float],
    keys: Sequence[frozenset[str]],
    clusters,
    seed: int,
) -> dict:
    """Accuracy (``measured``) minus the best constant answer's on the same items
    (``control``, ``constant_answer``)."""
    answer, constant = best_constant(keys)
    out = _difference(
        effect, variant, questions, np.asarray(correct, dtype=float), constant.astype(float),
        clusters, seed,
    )  # fmt: skip
    return {**out, "constant_answer": None if answer is None else str(answer)}


def _paired(
    rows: pd.DataFrame, variant: str, other: str, columns: list[str], cluster: str
) -> pd.DataFrame:
    """One row per (subject, question) answered in both ``variant`` and ``other``, with
    ``columns`` of each (suffixes ``_org`` for ``variant``, ``_mod`` for ``other``)."""
    keys = ["subject", "original_id", cluster]
    a = rows.loc[rows["variant"] == variant, keys + columns]
    b = rows.loc[rows["variant"] == other, keys + columns]
    return a.merge(b, on=keys, suffixes=("_org", "_mod"), validate="1:1")


def probe_controls(results: pd.DataFrame, seed: int) -> dict:
    """Competence, ``negation_excess`` and ``formatting_flips`` of a predicate–argument
    probe run, all on the original question form."""
    rows = _asked(results)
    if rows.empty:
        return {"competence": [], "controlled": []}
    rows = rows[rows["form"] == "original"].assign(label=lambda r: r["label"].fillna("other"))
    controlled = [
        {"subject": subject, **_over_constant(
            "negation_excess", "negated", g["original_id"], g["correct"],
            [gold_keys(a) for a in g["answers"]], g["story_id"].to_numpy(), seed,
        )}
        for subject, g in rows[rows["variant"] == "negated"].groupby("subject", sort=False)
    ]  # fmt: skip
    for variant in m.FORMATTING_VARIANTS:
        both = _paired(rows, "original", variant, ["label"], "story_id")
        for subject, g in both.groupby("subject", sort=False):
            flips = (g["label_org"] != g["label_mod"]).to_numpy(dtype=float)
            controlled.append({"subject": subject, **_difference(
                "formatting_flips", variant, g["original_id"], flips, np.zeros(len(flips)),
                g["story_id"].to_numpy(), seed,
            )})  # fmt: skip
    originals = rows[rows["variant"] == "original"]
    return {
        "competence": _competence(originals, "story_id", PROBE_COMPETENCE, seed),
        "controlled": controlled,
    }


def deletion_controls(results: pd.DataFrame, seed: int) -> dict:
    """Competence, ``unknown_gain`` per removal variant and, with negation pairs,
    ``comb_acc_excess`` of a deletion run."""
    rows = _asked(results)
    if rows.empty:
        return {"competence": [], "controlled": []}
    controlled = []
    for variant in [v for v in REMOVALS if v in set(rows["variant"])]:
        both = _paired(rows, ORIGINAL, variant, ["unk"], "passage_id")
        for subject, g in both.groupby("subject", sort=False):
            controlled.append({"subject": subject, **_difference(
                "unknown_gain", variant, g["original_id"], g["unk_mod"].to_numpy(dtype=float),
                g["unk_org"].to_numpy(dtype=float), g["passage_id"].to_numpy(), seed,
            )})  # fmt: skip
    base = negated_from(rows[rows["variant"] == NEG])
    both = _paired(rows, base, NEG, ["correct", "answers"], "passage_id")
    for subject, g in both.groupby("subject", sort=False):
        pairs = zip(g["answers_org"], g["answers_mod"], strict=True)
        keys = [gold_keys(a) & gold_keys(b) for a, b in pairs]
        comb = g["correct_org"].astype(bool) & g["correct_mod"].astype(bool)
        controlled.append({"subject": subject, **_over_constant(
            "comb_acc_excess", NEG, g["original_id"], comb, keys, g["passage_id"].to_numpy(),
            seed,
        )})  # fmt: skip
    originals = rows[rows["variant"] == ORIGINAL]
    return {
        "competence": _competence(originals, "passage_id", DELETION_COMPETENCE, seed),
        "controlled": controlled,
    }
