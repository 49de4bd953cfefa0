"""The metric blocks of the ``faithfulness`` suite's deletion runs (everything but the
predicate–argument probe): sizes and drops per variant, EM/F1/unk% per subject x variant
(also by gold answer kind and by what replaced the deleted support), how often a model did
what a faithful model does, each later model against the first, the negation block
(:func:`~faithprobe.suites.faithfulness.probes.negation_metrics`), competence and the
controlled effects the audit judges (:mod:`~faithprobe.suites.faithfulness.controls`) and
how the replies were read (:func:`reply_kinds`: answers, abstentions, hedges, refusals; the
predicate–argument probe has it too). The scores are :mod:`faithprobe.metrics.qa_scores`'s."""

from __future__ import annotations

import pandas as pd

from faithprobe.interventions.deletion_variants import VARIANTS
from faithprobe.metrics import qa_scores as m
from faithprobe.records import UNKNOWN
from faithprobe.suites.faithfulness import controls, probes

ANSWER_KINDS = {True: "yes/no", False: "other"}


def expected(variant: str) -> str:
    """What a faithful model answers after ``variant``: *unknown* once the support is
    removed, else the answer."""
    return UNKNOWN if "-R" in variant else "answer"


def deletion_metrics(results: pd.DataFrame, seed: int) -> dict:
    asked = results[results["dropped_reason"].isna()] if not results.empty else results
    # NEG rows have their own table (their gold is the new answer)
    answered = asked[asked["variant"] != probes.NEG] if len(asked) else asked
    scores = m.qa_scores(answered, cluster="passage_id", seed=seed) if len(answered) else []
    removals = answered[answered["variant"].str.contains("-R")] if len(answered) else answered
    return {
        "sizes": variant_sizes(results),
        "drops": drop_counts(results),
        "scores": _records(scores),
        "scores_by_answer_kind": _scores_by(
            answered,
            "answer_kind",
            answered["yes_no"].map(ANSWER_KINDS) if len(answered) else None,
            seed,
        ),
        "scores_by_reinsertion": _scores_by(
            removals,
            "reinserted",
            removals.apply(reinserted, axis=1) if len(removals) else None,
            seed,
        ),
        "expectation": _records(m.expectation_rates(answered)) if len(answered) else [],
        "differences": _records(m.subject_differences(answered, seed=seed))
        if len(answered)
        else [],
        "negation": probes.negation_metrics(results),
        **controls.deletion_controls(results, seed),
        "reply_kinds": reply_kinds(
            asked.assign(answer_kind=asked["yes_no"].map(ANSWER_KINDS)) if len(asked) else asked,
            ["variant", "answer_kind"],
            "passage_id",
            seed,
        ),
    }


def reply_kinds(asked: pd.DataFrame, keys: list[str], cluster: str, seed: int) -> list[dict]:
    """How the replies were read (:func:`~faithprobe.metrics.qa_scores.reply_kind_shares`) per
    subject x ``keys`` x the way the model was asked (``answer_mode``), bootstrap over
    ``cluster``; results tables written before ``reply_kind`` existed give none."""
    if asked.empty or "reply_kind" not in asked:
        return []
    return _records(m.reply_kind_shares(asked, [*keys, "answer_mode"], cluster=cluster, seed=seed))


NOT_A_SPAN = "nothing: not a span answer (yes/no, free)"


def reinserted(row: pd.Series) -> str:
    """What a TS-R / OS-R row's text got back in place of the deleted support. Only a span
    answer is re-inserted: a yes/no answer (HotpotQA's comparison questions, CoQA) or a free
    one is not, whether or not its words remain in the text."""
    if row["appended"] is not None and not pd.isna(row["appended"]):
        return "generated sentence" if "+Aug" in row["variant"] else "bare answer"
    if row.get("answer_type", "span") != "span":
        return NOT_A_SPAN
    return "nothing: the answer is still in the text"


def _scores_by(rows: pd.DataFrame, name: str, labels: pd.Series | None, seed: int) -> list[dict]:
    """:func:`~faithprobe.metrics.qa_scores.qa_scores` of ``rows`` per value of ``labels``, which
    become the column ``name``."""
    if labels is None:
        return []
    tables = []
    for label, group in rows.groupby(labels, sort=True):
        table = m.qa_scores(group, cluster="passage_id", seed=seed)
        table.insert(2, name, label)
        tables.append(table)
    return _records(pd.concat(tables) if tables else [])


def _records(frame) -> list[dict]:
    return frame.to_dict("records") if isinstance(frame, pd.DataFrame) else list(frame)


def _per_pair(results: pd.DataFrame) -> pd.DataFrame:
    """One row per pair (drops do not depend on the subject)."""
    return results.drop_duplicates("pair_id") if not results.empty else results


def variant_sizes(results: pd.DataFrame) -> list[dict]:
    """Per variant: items, answered (sent to the models) and dropped."""
    pairs = _per_pair(results)
    out = []
    for variant in [v for v in VARIANTS if not pairs.empty and v in set(pairs["variant"])]:
        rows = pairs[pairs["variant"] == variant]
        n_dropped = int(rows["dropped_reason"].notna().sum())
        out.append(
            {
                "variant": variant,
                "intervention": rows["intervention"].iloc[0],
                "expected": expected(variant),
                "items": len(rows),
                "answered": len(rows) - n_dropped,
                "dropped": n_dropped,
            }
        )
    return out


def drop_counts(results: pd.DataFrame) -> list[dict]:
    """Per variant and reason: how many items the deletion dropped."""
    pairs = _per_pair(results)
    if pairs.empty:
        return []
    dropped = pairs[pairs["dropped_reason"].notna()]
    counts = dropped.groupby(["variant", "dropped_reason"], sort=True).size()
    return [{"variant": v, "reason": r, "count": int(c)} for (v, r), c in counts.items()]
