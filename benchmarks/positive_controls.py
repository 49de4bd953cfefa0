"""Positive controls (issue 30, item 4): two training contrasts the methods rest on must be
separated by the effect the card reads.

* **Deletion** (faithfulness): a QA model trained by intervention (``train qa --strategy
  ibt``) must react to the rationale's deletion more than the same model trained on the
  original stories (``--strategy ot``). Effect per question: unknown after TS-R minus unknown
  on the original question (OS); per model its mean, paired over questions; the contrast
  IBT - OT on the questions both answered in both variants. Clusters: passages.
* **Context monotonicity** (natural-logic): an NLI model trained with the HELP data must be
  more sensitive to the context's monotonicity than the same recipe without it. Effect per
  model: TCE - DCE (and TCE/DCE) of the context feature, as the suite computes it
  (:func:`~faithprobe.suites.natural_logic.metrics.effect_pair`, bootstrap over base
  examples); the contrast HELP - no-HELP of TCE, of DCE and of TCE - DCE, paired over the
  same intervention pairs, clusters: base examples. TCE and DCE are means over different
  sets of pairs, so the delta contrast is the per-pair mean of ``w * (cp_help - cp_plain)``
  with ``w = N/n_TCE`` on TCE pairs and ``-N/n_DCE`` on DCE pairs (``N = n_TCE + n_DCE``):
  exactly the difference of deltas, its bootstrap that of the ratio estimator linearised at
  the full sample's set sizes.

All differences come from :func:`~faithprobe.metrics.intervals.paired_cluster_difference`
(percentile intervals: with a few dozen bases narrower than the natural-logic suite's own
``subject_differences``, a bootstrap-t never narrower than t's; read both there).
In each run the first subject (``--model`` order) is the reference (OT, no HELP) and the
second the treated model (IBT, HELP). Usage:

    python benchmarks/positive_controls.py --deletion RUN_DIR --natural-logic RUN_DIR
        [--seed 0] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from faithprobe.metrics.intervals import clustered_mean, paired_cluster_difference
from faithprobe.metrics.qa_scores import scored_rows
from faithprobe.records import ENTAILMENT
from faithprobe.suites.natural_logic.metrics import effect_pair

ORIGINAL, REMOVED = "OS", "TS-R"
CONTEXT_TCE, CONTEXT_DCE = "I0", "I2"  # natural-logic's context sets (the method's Table 4)


def _subjects(results: pd.DataFrame) -> list[str]:
    """The run's first two subjects: reference, treated."""
    names = list(dict.fromkeys(results["subject"]))
    if len(names) < 2:
        raise SystemExit(f"need two subjects in the run, found {names}")
    return names[:2]


def deletion_contrast(results: pd.DataFrame, subjects: list[str], seed: int) -> dict:
    """Per model the deletion effect and OS EM/F1; the contrast treated - reference."""
    asked = results[results["dropped_reason"].isna() & results["subject"].isin(subjects)]
    asked = scored_rows(asked[asked["variant"].isin([ORIGINAL, REMOVED])])
    unk = asked.pivot_table(
        index=["original_id", "passage_id"], columns=["subject", "variant"], values="unk",
        aggfunc="mean",
    ).astype(float)  # fmt: skip
    unk = unk.dropna()  # questions both models answered in both variants
    passages = unk.index.get_level_values("passage_id").to_numpy()
    effect = {s: unk[(s, REMOVED)].to_numpy() - unk[(s, ORIGINAL)].to_numpy() for s in subjects}
    models = {}
    for s in subjects:
        own = asked[asked["subject"] == s]
        os_rows = own[own["variant"] == ORIGINAL]
        models[s] = {
            "os_em": clustered_mean(os_rows["em"], os_rows["passage_id"], seed=seed).as_dict(),
            "os_f1": clustered_mean(os_rows["f1"], os_rows["passage_id"], seed=seed).as_dict(),
            "unk_os": float(unk[(s, ORIGINAL)].mean()),
            "unk_ts_r": float(unk[(s, REMOVED)].mean()),
            "effect": paired_cluster_difference(
                unk[(s, REMOVED)], unk[(s, ORIGINAL)], passages, seed=seed
            ),
        }
    reference, treated = subjects
    return {
        "effect": "unknown after TS-R minus unknown on OS, per question (cluster: passage)",
        "reference": reference,
        "treated": treated,
        "models": models,
        "difference": paired_cluster_difference(
            effect[treated], effect[reference], passages, seed=seed
        ),
    }


def _context_pairs(results: pd.DataFrame, subjects: list[str]) -> pd.DataFrame:
    """CP per context pair (rows) and subject (columns), with its set and base."""
    rows = results[results["set"].isin([CONTEXT_TCE, CONTEXT_DCE])]
    rows = rows[rows["subject"].isin(subjects)]
    return rows.pivot_table(
        index=["pair_id", "set", "original_id"], columns="subject", values="cp", aggfunc="first"
    ).dropna()


def natural_logic_contrast(results: pd.DataFrame, subjects: list[str], seed: int) -> dict:
    """Per model the context feature's TCE, DCE, ratio and delta (the suite's estimates) and
    base accuracy; the contrasts treated - reference of TCE, DCE and delta."""
    cp = _context_pairs(results, subjects)
    sets = cp.index.get_level_values("set").to_numpy()
    bases = cp.index.get_level_values("original_id").to_numpy()
    models = {}
    for s in subjects:
        frame = cp[s].rename("cp").reset_index()
        own = results[(results["subject"] == s) & results["set"].isin([CONTEXT_TCE, CONTEXT_DCE])]
        originals = own.drop_duplicates("original_id")
        models[s] = {
            **effect_pair(
                frame[frame["set"] == CONTEXT_TCE], frame[frame["set"] == CONTEXT_DCE], seed
            ),
            "base_accuracy": float(originals["original_correct"].mean()),
            "base_share_entailment": float((originals["original_prediction"] == ENTAILMENT).mean()),
        }
    reference, treated = subjects
    diff = cp[treated].to_numpy(float) - cp[reference].to_numpy(float)
    is_tce = sets == CONTEXT_TCE
    n_tce, n_dce = int(is_tce.sum()), int((~is_tce).sum())
    weight = np.where(is_tce, len(sets) / n_tce, -len(sets) / n_dce)
    zeros = np.zeros(len(sets))
    return {
        "effect": "context feature: TCE (I0) - DCE (I2), change of prediction (cluster: base)",
        "reference": reference,
        "treated": treated,
        "models": models,
        "difference": {
            "tce": paired_cluster_difference(diff[is_tce], zeros[is_tce], bases[is_tce], seed=seed),
            "dce": paired_cluster_difference(
                diff[~is_tce], zeros[~is_tce], bases[~is_tce], seed=seed
            ),
            "delta": paired_cluster_difference(weight * diff, zeros, bases, seed=seed),
        },
    }


def _interval(est: dict) -> str:
    return f"{est['value']:+.3f} [{est['ci_low']:+.3f}, {est['ci_high']:+.3f}]"


def _separated(diff: dict) -> str:
    if diff["ci_low"] > 0:
        return f"separated (treated higher; one-sided p = {diff['p_above']:.4f})"
    return f"NOT separated (one-sided p = {diff['p_above']:.4f})"


def _print_models(title: str, c: dict, describe: Callable[[dict], str]) -> None:
    """The contrast ``c``'s heading, then a line per model: ``describe`` of its numbers."""
    print(f"\n{title}: {c['effect']}")
    for name, m in c["models"].items():
        print(f"  {name}: {describe(m)}")


def print_deletion(c: dict) -> None:
    _print_models(
        "Deletion",
        c,
        lambda m: (
            f"OS EM {m['os_em']['value']:.3f}, OS F1 {m['os_f1']['value']:.3f}, "
            f"unk OS {m['unk_os']:.3f}, unk TS-R {m['unk_ts_r']:.3f}; effect "
            f"{_interval(m['effect'])} (n {m['effect']['n']}, {m['effect']['n_clusters']} "
            "passages)"
        ),
    )
    d = c["difference"]
    print(f"  {c['treated']} - {c['reference']}: {_interval(d)}: {_separated(d)}")


def print_natural_logic(c: dict) -> None:
    _print_models(
        "Context monotonicity",
        c,
        lambda m: (
            f"base accuracy {m['base_accuracy']:.3f} (predicts entailment "
            f"{m['base_share_entailment']:.3f}); TCE {_interval(m['tce'])}, DCE "
            f"{_interval(m['dce'])}, TCE-DCE {_interval(m['delta'])}, TCE/DCE "
            f"{_interval(m['ratio'])} ({m['n_bases']} bases, {m['n_tce_pairs']} + "
            f"{m['n_dce_pairs']} pairs)"
        ),
    )
    for quantity, d in c["difference"].items():
        print(
            f"  {c['treated']} - {c['reference']}, {quantity.upper()}: {_interval(d)}"
            f"{': ' + _separated(d) if quantity == 'delta' else ''}"
        )


def print_competence(run: Path, subjects: list[str]) -> list[dict]:
    """The suite's own competence records (``metrics.json``'s ``competence`` block), where
    the run has one: is each model better than the best constant answer on the originals?"""
    metrics = json.loads((run / "metrics.json").read_text())
    records = [r for r in metrics.get("competence", []) if r["subject"] in subjects]
    for r in records:
        print(
            f"  competence of {r['subject']}: {r['metric']} {r['value']:.3f} vs best constant "
            f"{r['baseline']:.3f} ({r['baseline_answer']}), excess {r['excess']:+.3f} "
            f"[{r['excess_ci_low']:+.3f}, {r['excess_ci_high']:+.3f}]: "
            f"{'competent' if r['competent'] else 'NOT competent'} (p = {r['p_value']:.3f})"
        )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deletion", type=Path, help="faithfulness run folder (OT, IBT)")
    parser.add_argument("--natural-logic", type=Path, help="natural-logic run (no-HELP, HELP)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    out = {}
    for key, run, contrast, show in (
        ("deletion", args.deletion, deletion_contrast, print_deletion),
        ("natural_logic", args.natural_logic, natural_logic_contrast, print_natural_logic),
    ):
        if run is None:
            continue
        results = pd.read_parquet(run / "results.parquet")
        subjects = _subjects(results)
        out[key] = contrast(results, subjects, args.seed)
        out[key]["run"] = str(run)
        show(out[key])
        out[key]["competence"] = print_competence(run, subjects)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=float) + "\n")


if __name__ == "__main__":
    main()
