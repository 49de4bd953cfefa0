"""``faithprobe audit``: every step present or skipped with its reason, with tiny models end
to end; the card's metrics.json and page; resuming from the cache; ``--compare`` on
hand-made audits."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import torch
from markupsafe import escape
from typer.testing import CliRunner

from conftest import tiny_bert_config
from faithprobe.audit.card_metrics import card_metrics
from faithprobe.audit.card_page import write_card
from faithprobe.audit.compare import compare_audits, compare_markdown
from faithprobe.audit.execute import AuditConfig, audit
from faithprobe.audit.plan import BUDGETS, STEPS
from faithprobe.cli import app
from faithprobe.metrics.verdict import (
    NOT_ASSESSABLE,
    VERDICTS,
    Competence,
    Effect,
    Region,
    combined,
)
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.hf.extractive_qa import HFQA
from test_confidence_shift_suite import ACTS, PEOPLE
from test_faithfulness_suite import squad_doc
from test_natural_logic import write_grid

runner = CliRunner()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """A data folder laid out as the shared data: SQuAD, NLI-XY and Social IQA, tiny."""
    root = tmp_path_factory.mktemp("data")
    (root / "squad").mkdir()
    (root / "squad" / "dev-v1.1.json").write_text(json.dumps(squad_doc()))
    write_grid(root / "nli-xy")
    siqa = root / "socialiqa"
    siqa.mkdir()
    records = [
        {"context": f"{PEOPLE[i % 8]} {ACTS[i % 6]}.", "question": "What next?",
         "answerA": f"eat {i}", "answerB": f"sleep {i}", "answerC": f"run {i}"}
        for i in range(10)
    ]  # fmt: skip
    (siqa / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (siqa / "dev-labels.lst").write_text("".join(f"{1 + i % 3}\n" for i in range(10)))
    return root


@pytest.fixture(scope="module")
def subjects(tiny_llama, tiny_tokenizer, tiny_pair_tokenizer):
    """A causal LM and an extractive QA model: between them every step has a model that
    answers it and one that does not."""
    from transformers import BertForQuestionAnswering

    torch.manual_seed(0)
    qa = BertForQuestionAnswering(tiny_bert_config(len(tiny_pair_tokenizer))).eval()
    return [
        HFCausal(tiny_llama, tiny_tokenizer, name="lm"),
        HFQA(qa, tiny_pair_tokenizer, name="qa"),
    ]


# the audit's steps at a few items each (and few IG steps): the machinery, not the numbers
TINY_LIMITS = {"distractors": 40, "faithfulness-negation": 4, "faithfulness-deletion": 3,
               "right-reasons": 6, "natural-logic": 3, "confidence-shift": 6,
               "reasoning": 3}  # fmt: skip
TINY_OPTIONS = {"right-reasons": {"ig_steps": "4"},
                "reasoning": {"max_new_tokens": "12", "answer_tokens": "4"}}  # fmt: skip
TINY_STEPS = tuple(
    replace(s, limits={"small": TINY_LIMITS[s.name]},
            budget_options={"small": {**s.budget_options.get("small", {}),
                                      **TINY_OPTIONS.get(s.suite, {})}})
    for s in STEPS
)  # fmt: skip


def tiny_audit(out: Path, data_dir: Path, cache: Path, subjects, command: str) -> Path:
    config = AuditConfig(models=[], out=out, data_dir=data_dir, cache_dir=cache,
                         steps=TINY_STEPS, command=command)  # fmt: skip
    return audit(config, subjects=subjects)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, data_dir, subjects):
    """A small audit of both models with a fresh cache: (folder, cache folder)."""
    tmp = tmp_path_factory.mktemp("audit")
    return tiny_audit(tmp / "audit", data_dir, tmp / "cache", subjects, "test"), tmp / "cache"


def test_every_step_is_run_or_skipped_with_its_reason(finished):
    folder, _ = finished
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["kind"] == "audit" and metrics["budget"]["name"] == "small"
    steps = {s["step"]: s for s in metrics["steps"]}
    assert list(steps) == [s.name for s in STEPS]
    assert all(s["status"] == "ran" for s in steps.values())
    # each model answers some steps and is skipped, with the reason, from the others
    ran = {name: s["models"] for name, s in steps.items()}
    assert ran["distractors"] == ["lm"] and ran["natural-logic"] == ["lm"]
    assert ran["faithfulness-deletion"] == ran["right-reasons"] == ["lm", "qa"]
    skipped = {name: [m["reason"] for m in s["skipped_models"]] for name, s in steps.items()}
    assert "model qa" in skipped["distractors"][0]
    assert "candidate-scores" in skipped["distractors"][0]
    for name, s in steps.items():  # a full run folder and report per step
        assert (folder / s["report"]).is_file(), name
        assert (folder / "suites" / name / "results.parquet").is_file()
    assert (folder / "index.html").is_file() and (folder / "run.json").is_file()


def test_effects_carry_intervals_regions_and_the_rule(finished):
    folder, _ = finished
    metrics = json.loads((folder / "metrics.json").read_text())
    effects = metrics["effects"]
    assert {e["step"] for e in effects} >= {"distractors", "faithfulness-negation",
                                            "natural-logic", "confidence-shift"}  # fmt: skip
    for e in effects:
        assert e["verdict"] in VERDICTS and e["region"]["side"] in ("at_most", "at_least")
        if e["verdict"] != NOT_ASSESSABLE:  # else the model lacks the step's competence
            assert Effect.from_record(e).verdict == e["verdict"]
        if e["value"] is not None and e["ci_low"] is not None:
            assert e["ci_low"] - 1e-9 <= e["value"] <= e["ci_high"] + 1e-9
    able = {(c["step"], c["subject"]): Competence.from_record(c) for c in metrics["competence"]}
    for s in metrics["steps"]:  # a step's verdict per model follows from its records
        for model, verdict in s["verdicts"].items():
            mine = [
                Effect.from_record(e)
                for e in effects
                if e["step"] == s["step"] and e["subject"] == model
            ]
            assert verdict == combined(mine, able.get((s["step"], model)))
            if verdict == NOT_ASSESSABLE:
                assert s["not_assessable"][model]
    for model in ("lm", "qa"):  # the summary counts the steps each model ran
        assert sum(metrics["summary"][model].values()) == sum(
            model in s["verdicts"] for s in metrics["steps"]
        )


def test_card_page_is_escaped_and_links_every_report(finished):
    folder, _ = finished
    page = (folder / "index.html").read_text()
    metrics = json.loads((folder / "metrics.json").read_text())
    for s in metrics["steps"]:
        assert f'href="{s["report"]}"' in page
    assert str(escape(metrics["rule"])) in page
    assert "<script" not in page
    verdicts = page.split('<section id="card">')[1].split("</section>")[0]
    for s in metrics["steps"]:  # the verdict table says why a model was left out
        for skip in s["skipped_models"]:
            assert str(escape(skip["reason"])) in verdicts


def test_a_rerun_answers_everything_from_the_cache(finished, data_dir, subjects, tmp_path):
    folder, cache = finished
    tiny_audit(folder, data_dir, cache, subjects, "test again")  # the same folder, replaced whole
    for step in STEPS:
        record = json.loads((folder / "suites" / step.name / "run.json").read_text())
        assert all(s["computed_requests"] == 0 for s in record["subjects"]), step.name
    assert json.loads((folder / "run.json").read_text())["command"] == "test again"


def test_cli_audit_runs_every_step_on_the_shipped_samples(tmp_path, tiny_llama_dir):
    """A fresh machine (no data folder, nothing fetched): the small budget runs all six
    steps, the data steps on the samples shipped with faithprobe, and says so."""
    out = tmp_path / "audit"
    res = runner.invoke(
        app,
        ["audit", "--model", str(tiny_llama_dir), "--out", str(out), "--no-cache"],
        env={"FAITHPROBE_DATA": str(tmp_path / "nothing-fetched")},
    )
    assert res.exit_code == 0, res.output
    record = json.loads((out / "run.json").read_text())
    steps = {s["step"]: s for s in record["steps"]}
    assert all(s["status"] == "ran" for s in steps.values()), steps
    for name, title in (("faithfulness-deletion", "SQuAD 1.1 dev"), ("natural-logic", "NLI-XY"),
                        ("confidence-shift", "Social IQA dev")):  # fmt: skip
        assert steps[name]["data_source"] == "sample" and title in steps[name]["data_set"]
        assert f"(shipped sample: {steps[name]['data_set']})" in res.output
    assert steps["distractors"]["data_source"] == "generated"
    page, card = (out / "index.html").read_text(), (out / "card.md").read_text()
    for said in (page, card):  # the page and the card for a model card say it too
        assert "sample shipped with faithprobe: 327 questions of SQuAD 1.1 dev" in said


def test_cli_audit_skips_data_steps_beyond_the_samples(tmp_path, tiny_llama_dir):
    """Larger budgets need the full files: the data steps are skipped with how to fetch
    them, the others run (auto, capped at 4 items, to keep the test short)."""
    out = tmp_path / "audit"
    args = ["audit", "--model", str(tiny_llama_dir), "--out", str(out), "--no-cache",
            "--budget", "auto", "--max-items", "4"]  # fmt: skip
    res = runner.invoke(app, args, env={"FAITHPROBE_DATA": str(tmp_path / "nothing-fetched")})
    assert res.exit_code == 0, res.output
    steps = {s["step"]: s for s in json.loads((out / "metrics.json").read_text())["steps"]}
    for name, fetch in (("faithfulness-deletion", "squad"), ("natural-logic", "nli-xy"),
                        ("confidence-shift", "socialiqa")):  # fmt: skip
        assert steps[name]["status"] == "skipped"
        assert f"faithprobe data fetch {fetch}" in steps[name]["reason"]
    assert steps["distractors"]["status"] == steps["right-reasons"]["status"] == "ran"
    assert "skipped: needs SQuAD 1.1 dev" in res.output
    verdicts = (out / "index.html").read_text().split('<section id="card">')[1]
    assert str(escape(steps["natural-logic"]["reason"])) in verdicts.split("</section>")[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "huge", "--model", "embedded"], "--budget 'huge': choose from"),
        (["--model", "embedded", "--data-dir", "/nonexistent"], "no such folder"),
        ([], "give --model"),
        (["--model", "embedded", "--edge", "no.such_edge=0.1"], "no step has this edge"),
        (["--model", "embedded", "--edge", "distractors.related_drop"], "give NAME=VALUE"),
        (["--model", "embedded", "--edge", "distractors.related_drop=nan"], "is not a number"),
        (["--model", "ref:nobody"], "ref:"),
    ],
)
def test_cli_audit_argument_errors_are_one_line(tmp_path, args, message):
    res = runner.invoke(app, ["audit", "--out", str(tmp_path / "a"), *args])
    assert res.exit_code == 2 and message in res.output, res.output
    assert not (tmp_path / "a").exists()


# -- compare ------------------------------------------------------------------------------


def _effect(subject: str, key: str, value: float, lo: float, hi: float) -> Effect:
    return Effect("distractors", key, key.replace("_", " "), subject, value, lo, hi, 50,
                  Region("at_most", 0.1))  # fmt: skip


def _hand_made(folder: Path, model: str, effects: list[Effect], skipped: bool = False) -> Path:
    """An audit folder written from hand-made effects (through the card's own code)."""
    runs = [{"step": "distractors", "suite": "distractors", "question": "q", "status": "ran",
             "report": "suites/distractors/report.html", "limit": 10, "options": {},
             "data": None, "n_pairs": 10, "seconds": 1.0, "models": [model],
             "skipped_models": [], "metrics": {}}]  # fmt: skip
    metrics = card_metrics(runs, [{"spec": model, "name": model, "fingerprint": "f"}],
                           budget=BUDGETS["small"], seed=0)  # fmt: skip
    metrics["effects"] = [{"step": "distractors", **e.record()} for e in effects]
    folder.mkdir()
    (folder / "metrics.json").write_text(json.dumps(metrics))
    (folder / "run.json").write_text(json.dumps({"kind": "audit", "versions": {"faithprobe": "x"}}))
    write_card(folder)
    return folder


def test_compare_names_regressions_improvements_and_what_one_side_lacks(tmp_path):
    old = _hand_made(tmp_path / "old", "m-v1", [
        _effect("m-v1", "steady", 0.05, 0.0, 0.08),  # faithful, stays
        _effect("m-v1", "worse", 0.02, 0.0, 0.06),  # faithful -> unfaithful
        _effect("m-v1", "better", 0.4, 0.3, 0.5),  # unfaithful -> faithful
        _effect("m-v1", "drifted", 0.3, 0.25, 0.35),  # unfaithful both, intervals apart
        _effect("m-v1", "gone", 0.3, 0.25, 0.35),
        _effect("m-v1", "wobbled", 0.08, 0.06, 0.1),  # faithful -> inconclusive, overlapping
    ])  # fmt: skip
    new = _hand_made(tmp_path / "new", "m-v2", [
        _effect("m-v2", "steady", 0.06, 0.01, 0.09),
        _effect("m-v2", "worse", 0.3, 0.2, 0.4),
        _effect("m-v2", "better", 0.01, 0.0, 0.05),
        _effect("m-v2", "drifted", 0.6, 0.55, 0.65),
        _effect("m-v2", "added", 0.3, 0.25, 0.35),
        _effect("m-v2", "wobbled", 0.09, 0.07, 0.12),
    ])  # fmt: skip
    comparison = compare_audits(old, new)
    status = {c.key: c.status for c in comparison.changes}
    assert status == {"steady": "unchanged", "worse": "regressed", "better": "improved",
                      "drifted": "regressed", "gone": "only in old", "added": "only in new",
                      "wobbled": "verdict changed, difference not supported"}  # fmt: skip
    # hand-made effects keep no per-unit numbers: tested unpaired, from their intervals
    assert not any(c.difference["paired"] for c in comparison.changes if c.difference)
    res = runner.invoke(app, ["audit", "--compare", str(old), str(new)])
    assert res.exit_code == 0, res.output
    assert res.output.index("regressed") < res.output.index("unchanged")
    assert "m-v1 → m-v2" in res.output
    md = tmp_path / "pr" / "comment.md"
    md.parent.mkdir()
    res = runner.invoke(app, ["audit", "--compare", str(old), str(new), "--fail-on", "regressed",
                              "--markdown", str(md)])  # fmt: skip
    assert res.exit_code == 1, res.output
    text = md.read_text()
    assert text.startswith("### faithprobe:") and "| regressed | distractors |" in text
    assert "2 regressed, 1 improved" in text and "Holm" in text
    res = runner.invoke(app, ["audit", "--compare", str(old), str(old), "--fail-on", "regressed"])
    assert res.exit_code == 0, res.output


def test_the_comparison_comment_keeps_hostile_names_as_text(tmp_path):
    """A model name or folder that reads as Markdown or HTML stays literal text in its
    table cell: the pull-request comment renders no tag and keeps its columns."""
    from markdown_it import MarkdownIt

    hostile = "m|v<script>alert(1)</script>*x*"
    old = _hand_made(tmp_path / "old`<b>", hostile, [_effect(hostile, "worse", 0.02, 0.0, 0.06)])
    new = _hand_made(tmp_path / "new", hostile, [_effect(hostile, "worse", 0.3, 0.2, 0.4)])
    page = (
        MarkdownIt("commonmark").enable("table").render(compare_markdown(compare_audits(old, new)))
    )
    assert "<script" not in page and "<b>" not in page and "<em>" not in page
    rows = page.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    assert (
        len(rows) == 1 and rows[0].count("<td>") == 8 and hostile.replace("<", "&lt;")[:8] in page
    )


def test_compare_refuses_what_is_not_an_audit(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.json").write_text(json.dumps({"suite": "distractors"}))
    res = runner.invoke(app, ["audit", "--compare", str(tmp_path / "run"), str(tmp_path / "run")])
    assert res.exit_code == 2 and "not an audit folder" in res.output


def test_results_of_a_step_load_into_pandas(finished):
    folder, _ = finished
    frame = pd.read_parquet(folder / "suites" / "distractors" / "results.parquet")
    assert set(frame["subject"]) == {"lm"}


# -- the page in a real browser -----------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]  # fmt: skip


def page_width(page: Path, tmp_path: Path, width: int = 1280) -> int:
    """The page's scroll width in headless Chromium at ``width`` px: a copy of the page with
    a script that writes it into the DOM, which Chromium dumps."""
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace(
        "</body>",
        "<script>document.body.setAttribute('data-width', "
        "document.documentElement.scrollWidth)</script></body>",
    ))  # fmt: skip
    out = subprocess.run(
        [CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
         f"--window-size={width},900", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return int(re.search(r'data-width="(\d+)"', out.stdout).group(1))


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_card_reads_without_scrolling_sideways_at_1280px(tmp_path):
    models = [f"a-model-with-a-rather-long-name-{i}/checkpoint-000{i}" for i in range(3)]
    effects = [
        Effect("distractors", f"effect_{k}", "an effect whose title is long " * 4, m,
               0.123456, 0.01234, 0.98765, 1000, Region("at_most", 0.1), "reading " * 30)
        for k in range(3) for m in models
    ]  # fmt: skip
    folder = _hand_made(tmp_path / "card", models[0], effects)
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics["models"] = [{"spec": m, "name": m, "fingerprint": "f" * 64} for m in models]
    metrics["summary"] = {m: dict.fromkeys(VERDICTS, 1) for m in models}
    (folder / "metrics.json").write_text(json.dumps(metrics))
    page = write_card(folder)
    assert page_width(page, tmp_path) <= 1280


def test_every_budget_gives_natural_logic_the_bases_its_intervals_need():
    from faithprobe.suites.natural_logic.intervals import MIN_BASES

    step = next(s for s in STEPS if s.suite == "natural-logic")
    for budget in ("small", "default"):
        assert int(step.options_for(budget)["bases"]) >= MIN_BASES, budget


def test_edge_moves_a_bound_and_is_recorded():
    from faithprobe.audit.card_metrics import moved
    from faithprobe.audit.edges import Edges

    edges = Edges.parse(["distractors.related_drop=0.2"], [s.suite for s in STEPS])
    records = edges.records()
    assert records["distractors.related_drop"] == {
        "bound": 0.2, "default": 0.1, "source": records["distractors.related_drop"]["source"],
        "overridden": True,
    }  # fmt: skip
    assert all(r["source"] for r in records.values())  # every default says where it is from
    e = Effect("distractors", "k", "t", "m", 0.15, 0.12, 0.18, 50, Region("at_most", 0.1),
               edge="distractors.related_drop")  # fmt: skip
    assert e.verdict == "unfaithful"
    assert moved([e], edges)[0].verdict == "faithful"
    other = Effect("distractors", "k", "t", "m", 0.15, 0.12, 0.18, 50, Region("at_most", 0.1))
    assert moved([other], edges)[0].region.bound == 0.1  # only effects on that edge move
