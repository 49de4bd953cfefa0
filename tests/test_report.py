"""The report layer on a small synthetic run folder: no model, no statistics."""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from faithprobe.report import build_report, summary_table

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MALICIOUS = "<script>alert(1)</script>"
SUBJECTS = [("tiny/llama", "fp-llama-0001"), ("tiny/gpt2", "fp-gpt2-0002")]
SETTINGS = ("single", "multi")
TYPES = ("B", "T", "unrelated")
DROP = {"B": 0.05, "T": 0.15, "unrelated": 0.02}


def accuracy(si: int, setting: str, atype: str, n: int) -> float:
    base = 0.93 if si == 0 else 0.81
    if n == 0:
        return base
    return round(base - DROP[atype] * n - (0.03 if setting == "multi" else 0.0), 4)


def _estimate(view, metric, subject, setting, atype, n, value, lo, hi, **kw):
    return {
        "view": view,
        "metric": metric,
        "subject": subject,
        "setting": setting,
        "attractor_type": atype,
        "n_attractors": n,
        "position": kw.get("position", "all"),
        "item_set": kw.get("item_set", "all"),
        "n_filler": kw.get("n_filler", 0),
        "value": value,
        "ci_low": lo,
        "ci_high": hi,
        "n": 40,
        "n_clusters": 6,
        "method": "cluster bootstrap",
    }


def make_metrics(subjects=SUBJECTS, settings=SETTINGS, ns=(0, 1, 2, 3), with_position=True) -> dict:
    est = []
    for si, (subject, _) in enumerate(subjects):
        for setting in settings:
            for atype in TYPES:
                for n in ns:
                    v = accuracy(si, setting, atype, n)
                    lo, hi = round(v - 0.05, 4), round(v + 0.03, 4)
                    if (si, setting, atype, n) == (1, "multi", "unrelated", 3):
                        lo = hi = None  # e.g. one cluster: no interval
                    est.append(_estimate("main", "accuracy", subject, setting, atype, n, v, lo, hi))
                    if n >= 1:
                        rp = round(0.8**n * (1.0 if atype == "unrelated" else 0.5 + si * 0.1), 4)
                        est.append(
                            _estimate(
                                "main",
                                "relative_probability",
                                subject,
                                setting,
                                atype,
                                n,
                                rp,
                                rp * 0.8,
                                rp * 1.25,
                            )
                        )
                    if with_position and n <= 2:
                        positions = ("all",) if n == 0 else ("after", "between", "later")
                        for k, pos in enumerate(positions):
                            v2 = round(max(0.0, v - 0.04 * k), 4)
                            est.append(
                                _estimate(
                                    "by_position",
                                    "accuracy",
                                    subject,
                                    setting,
                                    atype,
                                    n,
                                    v2,
                                    v2 - 0.05,
                                    min(1.0, v2 + 0.05),
                                    position=pos,
                                )
                            )
    return {
        "schema_version": 1,
        "suite": "distractors",
        "seed": 7,
        "subjects": [{"name": n, "fingerprint": f} for n, f in subjects],
        "estimates": est,
        "base_accuracy": [
            {
                "subject": s,
                "item_set": "capitals",
                "n_base": 24,
                "n_competent": 20 - i,
                "n_dropped": 4 + i,
                "value": (20 - i) / 24,
                "ci_low": 0.6,
                "ci_high": 0.95,
                "n": 24,
                "n_clusters": 6,
                "method": "wilson",
            }
            for i, (s, _) in enumerate(subjects)
        ],
        "competence": [
            {
                "subject": s,
                "metric": "cloze accuracy",
                "value": 0.8,
                "ci_low": 0.7,
                "ci_high": 0.9,
                "baseline": 0.18,
                "baseline_answer": "position:0",
                "excess": 0.62,
                "excess_ci_low": 0.5,
                "excess_ci_high": 0.75,
                "margin": 0.05,
                "p_value": 0.0005,
                "competent": True,
                "n": 44,
                "n_clusters": 44,
                "method": "paired cluster bootstrap",
            }
            for s, _ in subjects
        ],
        "one_attractor_drops": [
            {
                "subject": s,
                "setting": setting,
                "effect": effect,
                "comparison": "a − b",
                "n_related": 40,
                "n_unrelated": 38,
                "value": 0.2,
                "ci_low": 0.1,
                "ci_high": 0.3,
                "p_above": 0.0005,
                "p_below": 1.0,
                "n": 37,
                "n_clusters": 37,
                "null": 0.0,
                "method": "paired cluster bootstrap",
                "note": "",
            }
            for s, _ in subjects
            for setting in settings
            for effect in ("related_drop", "related_minus_unrelated")
        ],  # fmt: skip
        "tests": [
            {
                "subject": s,
                "name": "T vs B at n=1",
                "comparison": "T-type − B-type",
                "test": "paired permutation",
                "statistic": -2.31,
                "p_value": 0.0123,
                "q_value": 0.0246,
                "difference": -0.1,
                "ci_low": -0.18,
                "ci_high": -0.02,
                "n": 40,
            }
            for s, _ in subjects
        ],
        "dataset": {
            "n_pairs": 120,
            "n_base": 24,
            "by_condition": [
                {
                    "setting": setting,
                    "attractor_type": atype,
                    "n_attractors": 1,
                    "position": "after",
                    "n_filler": 0,
                    "count": 12,
                }
                for setting in settings
                for atype in TYPES
            ],
        },
    }


def make_results(subjects=SUBJECTS) -> pd.DataFrame:
    """5 base pairs + 10 intervened pairs, for every subject (30 rows with two subjects)."""
    candidates = ["Paris", "Santiago", "Beijing", "Helsinki", "Jakarta", "Warsaw"]
    rows = []
    for p in range(15):
        base = p >= 10
        target = candidates[p % 6]
        original = f"Name{p} lives in Country{p % 6}. The capital of Name{p}'s country is"
        if p == 3:
            original = f"Sebastian lives in France. {MALICIOUS} The capital of his country is"
        attractors = "" if base else f"Name{p} drives a car & a bike"
        context = original if base else original.replace(". ", f". {attractors}. ", 1)
        for si, (subject, fp) in enumerate(subjects):
            correct = (p + si) % 3 != 0
            rows.append(
                {
                    "subject": subject,
                    "subject_fingerprint": fp,
                    "pair_id": f"pair-{p:02d}",
                    "original_id": f"base-{p % 5}",
                    "intervened_id": f"item-{p:02d}",
                    "intervention": "none"
                    if base
                    else "attractors.unrelated[n=1,position=after,setting=single]",
                    "item_set": "capitals",
                    "setting": "none" if base else "single",
                    "attractor_type": "none" if base else "unrelated",
                    "n_attractors": 0 if base else 1,
                    "position": "none" if base else "after",
                    "n_filler": 0,
                    "attractors": attractors,
                    "original_context": original,
                    "context": context,
                    "suffix": ".",
                    "target": target,
                    "candidates": candidates,
                    "expectation": "target stays on top",
                    "original_prediction": target,
                    "prediction": target if correct else candidates[(p + 1) % 6],
                    "original_target_logprob": -1.0,
                    "target_logprob": -1.5,
                    "original_scores": [-1.0] * 6,
                    "scores": [-1.5] * 6,
                    "competent": True,
                    "correct": correct,
                    "expectation_met": correct,
                    "log_relative_probability": -0.5,
                }
            )
    return pd.DataFrame(rows)


def make_run(subjects=SUBJECTS) -> dict:
    return {
        "command": "faithprobe run distractors --subject tiny/llama --seed 7",
        "suite": "distractors",
        "seed": 7,
        "limit": None,
        "batch_size": 8,
        "versions": {"faithprobe": "0.1.0", "torch": "2.4.0"},
        "subjects": [{"name": n, "fingerprint": f, "kind": "hf_causal"} for n, f in subjects],
        "started": "2025-01-01T10:00:00+00:00",
        "finished": "2025-01-01T10:05:00+00:00",
        "n_pairs": 15,
    }


def write_run(run_dir: Path, metrics: dict, results: pd.DataFrame, run: dict) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    (run_dir / "run.json").write_text(json.dumps(run))
    results.to_parquet(run_dir / "results.parquet")
    return run_dir


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    run_dir = write_run(tmp_path_factory.mktemp("run"), make_metrics(), make_results(), make_run())
    html_path = build_report(run_dir)
    return run_dir, html_path, html_path.read_text(encoding="utf-8")


def test_report_html_is_written(built):
    run_dir, html_path, html = built
    assert html_path == run_dir / "report.html"
    assert html.lstrip().startswith("<!DOCTYPE html>")
    for needle in ("tiny/llama", "fp-gpt2-0002", "hf_causal", "2025-01-01T10:05:00+00:00"):
        assert needle in html
    assert "faithprobe run distractors --subject tiny/llama --seed 7" in html
    assert "0.93 [0.88, 0.96]" in html  # headline cell
    assert "T vs B at n=1" in html and "paired permutation" in html  # tests table
    assert "0.0246" in html  # q-value column
    assert "wilson" in html  # competence table


def test_report_html_is_self_contained(built):
    _, _, html = built
    links = re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]*)""", html, flags=re.I)
    assert links, "expected some src/href attributes"
    assert not [u for u in links if re.match(r"(https?:)?//", u, flags=re.I)]
    assert not re.search(r"<link\b|<script\b|@import|url\(", html, flags=re.I)
    images = re.findall(r"<img\b[^>]*\bsrc=\"([^\"]*)\"", html)
    assert len(images) >= 3
    for src in images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG_SIGNATURE)


def test_dataset_text_is_escaped(built):
    _, _, html = built
    assert MALICIOUS not in html
    assert "alert(1)" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "drives a car &amp; a bike" in html
    assert "drives a car & a bike" not in html


def test_examples_sample_intervened_pairs_for_every_subject(built):
    _, _, html = built
    section = html.split('<section id="examples">', 1)[1]
    rows = re.findall(r"<tr\b", section.split("<tbody>", 1)[1])
    assert len(rows) == 20  # all 10 intervened pairs × 2 subjects; base rows are not shown
    assert "Name12 lives" not in section  # a base-only pair
    subjects_in_order = re.findall(r"<td>(tiny/\w+)</td>", section)
    assert subjects_in_order[:2] == ["tiny/llama", "tiny/gpt2"]  # the run's subject order


def test_tables_are_written_with_metric_numbers(built):
    run_dir, _, _ = built
    tables = run_dir / "tables"
    for name in (
        "summary",
        "accuracy_main",
        "relative_probability_main",
        "accuracy_by_position",
        "base_accuracy",
        "competence",
        "one_attractor_drops",
        "tests",
        "dataset",
    ):
        assert (tables / f"{name}.csv").is_file(), name
        assert (tables / f"{name}.md").read_text().count("|") > 10, name

    expected = pd.DataFrame(
        [e for e in make_metrics()["estimates"] if (e["view"], e["metric"]) == ("main", "accuracy")]
    )
    got = pd.read_csv(tables / "accuracy_main.csv")
    assert len(got) == len(expected) == 2 * 2 * 3 * 4
    keys = ["subject", "setting", "attractor_type", "n_attractors"]
    merged = expected.merge(got, on=keys, suffixes=("_exp", "_got"), validate="one_to_one")
    assert len(merged) == len(expected)
    for col in ("value", "ci_low", "ci_high"):
        exp = merged[f"{col}_exp"].astype(float).to_numpy()
        np.testing.assert_allclose(merged[f"{col}_got"].to_numpy(), exp, equal_nan=True)

    md = (tables / "accuracy_main.md").read_text()
    assert "0.93 [0.88, 0.96] n=40" in md  # every cell says the pairs it rests on
    assert "0.72 [–, –] n=40" in md  # tiny/gpt2, multi, unrelated, n=3: no interval


def test_plots_are_valid_pngs(built):
    run_dir, _, _ = built
    import matplotlib.image as mpimg

    names = {p.name for p in (run_dir / "plots").glob("*.png")}
    assert {"accuracy.png", "relative_probability.png", "accuracy_by_position.png"} <= names
    for name in names:
        path = run_dir / "plots" / name
        assert path.read_bytes().startswith(PNG_SIGNATURE)
        height, width = mpimg.imread(path).shape[:2]
        assert width >= 600 and height >= 400


def test_summary_table_shape_and_values():
    metrics = json.loads(json.dumps(make_metrics()))  # nulls, as read from disk
    table = summary_table(metrics)
    assert list(table.columns) == [
        "subject",
        "setting",
        "type",
        "0 attractors",
        "1 attractor",
        "2 attractors",
        "3 attractors",
        "rel. prob. (1 attractor)",
    ]
    assert table.shape == (12, 8)
    first = table.iloc[0]
    assert list(first[["subject", "setting", "type"]]) == ["tiny/llama", "single", "B"]
    assert first["0 attractors"] == "0.93 [0.88, 0.96] n=40"
    assert first["1 attractor"] == "0.88 [0.83, 0.91] n=40"
    assert first["rel. prob. (1 attractor)"] == "0.40 n=40"  # 0.8 * 0.5
    assert list(table["subject"].unique()) == ["tiny/llama", "tiny/gpt2"]
    assert list(table["setting"].iloc[:6]) == ["single"] * 3 + ["multi"] * 3
    last = table.iloc[-1]
    assert list(last[["subject", "setting", "type"]]) == ["tiny/gpt2", "multi", "unrelated"]
    assert last["3 attractors"] == "0.72 [–, –] n=40"
    assert (table["0 attractors"].iloc[6:] == "0.81 [0.76, 0.84] n=40").all()
    width = max(len(line) for line in table.to_string(index=False).splitlines())
    assert width <= 160


def test_summary_table_marks_missing_cells():
    metrics = make_metrics(subjects=SUBJECTS[:1], settings=("multi",), ns=(0, 1, 2))
    table = summary_table(metrics)
    assert table.shape == (3, 7)  # no row has 3 attractors: no column for it
    assert "3 attractors" not in table.columns
    assert (table["setting"] == "multi").all()


def test_report_with_one_subject_one_setting_and_missing_cells(tmp_path):
    subjects = SUBJECTS[:1]
    metrics = make_metrics(subjects=subjects, settings=("single",), ns=(0, 1), with_position=False)
    metrics["tests"] = []
    metrics["estimates"][1]["ci_low"] = math.nan  # NaN as Python's json writes it
    run_dir = write_run(tmp_path / "run", metrics, make_results(subjects), make_run(subjects))
    html = build_report(run_dir).read_text(encoding="utf-8")
    assert (run_dir / "plots" / "accuracy.png").read_bytes().startswith(PNG_SIGNATURE)
    assert not (run_dir / "plots" / "accuracy_by_position.png").exists()
    assert not (run_dir / "tables" / "tests.csv").exists()
    assert "No tests recorded." in html
    assert MALICIOUS not in html and "&lt;script&gt;" in html
