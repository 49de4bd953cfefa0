"""The card's differences between models (paired over the same items, adjusted), ``audit
--compare`` between audits (paired when they drew the same items), and ``--budget auto``,
end to end on the reference models (no language model is loaded)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from faithprobe.audit.compare import compare_audits
from faithprobe.audit.execute import AuditConfig, audit
from faithprobe.audit.plan import STEPS
from faithprobe.cli import app

runner = CliRunner()
DISTRACTORS = next(s for s in STEPS if s.name == "distractors")
NEGATION = next(s for s in STEPS if s.name == "faithfulness-negation")
SMALL = (
    replace(DISTRACTORS, limits={"small": 120, "default": 240}),
    replace(NEGATION, limits={"small": 24, "default": 48}),
)


def _audit(out: Path, models: list[str], *, seed: int = 0, **kwargs) -> dict:
    config = AuditConfig(models=models, out=out, seed=seed, cache=False, steps=SMALL, **kwargs)
    folder = audit(config)
    return json.loads((folder / "metrics.json").read_text())


@pytest.fixture(scope="module")
def two_models(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("differences") / "audit"
    return out, _audit(out, ["ref:reader", "ref:nearest"])


def test_every_difference_is_paired_tested_and_adjusted(two_models):
    _, metrics = two_models
    differences = metrics["differences"]
    assert differences and all(d["a"] == "ref:reader" for d in differences)
    for d in differences:
        assert {"difference", "ci_low", "ci_high", "p", "p_adjusted", "method"} <= d.keys()
        if d["p"] is not None:
            assert d["paired"] and "paired cluster bootstrap" in d["method"]
            assert d["p_adjusted"] >= d["p"] and d["supported"] == (d["p_adjusted"] < 0.05)
    drop = next(d for d in differences if d["key"] == "related_drop_single")
    # the nearest-candidate shortcut loses most items to a related attractor; the reader none
    assert drop["supported"] and drop["ci_low"] > 0.3, drop
    said = metrics["comparisons"]
    assert said["adjustment"] == "holm" and said["n"] == sum(
        d["p"] is not None for d in differences
    )
    assert said["supported"] == sum(d["supported"] for d in differences) >= 1


def test_card_shows_the_difference_column(two_models):
    folder, _ = two_models
    page = (folder / "index.html").read_text()
    assert "ref:nearest − ref:reader" in page and "adjusted p =" in page and "Holm" in page


def test_compare_pairs_audits_that_drew_the_same_items(two_models, tmp_path):
    folder, _ = two_models
    again = tmp_path / "again"
    _audit(again, ["ref:reader", "ref:nearest"])
    same = compare_audits(folder, again)
    tested = [c for c in same.changes if c.difference and c.difference["p"] is not None]
    assert tested and all(c.difference["paired"] for c in tested)
    assert {c.status for c in same.changes} == {"unchanged"}
    other_seed = tmp_path / "seed1"
    _audit(other_seed, ["ref:reader", "ref:nearest"], seed=1)
    moved = compare_audits(folder, other_seed)
    assert "unpaired" in moved.pairing()
    assert not any(c.status in ("regressed", "improved") for c in moved.changes)


def test_compare_versions_fails_on_a_supported_regression(two_models, tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    _audit(old, ["ref:reader"])
    _audit(new, ["ref:nearest"])
    comparison = compare_audits(old, new)
    assert comparison.regressed and "all" in comparison.pairing()
    res = runner.invoke(app, ["audit", "--compare", str(old), str(new), "--fail-on", "regressed"])
    assert res.exit_code == 1 and "a supported regression: exit 1" in res.output, res.output


def test_auto_budget_stops_a_decided_step_and_records_its_rounds(tmp_path):
    metrics = _audit(tmp_path / "auto", ["ref:reader", "ref:nearest"], budget="auto",
                     max_items=240)  # fmt: skip
    run = json.loads((tmp_path / "auto" / "run.json").read_text())
    for step in run["steps"]:
        looks = step["looks"]
        assert 1 <= len(looks) <= 4 and all(x["limit"] <= 240 for x in looks), looks
        # a round runs only while the step is undecided, and the last one stops the step
        assert not any(x["decided"] for x in looks[:-1])
    assert metrics["comparisons"]["looks"] == 4 and metrics["comparisons"][
        "alpha"
    ] == pytest.approx(0.0125)
    assert all("alpha spent over 4 looks" in e["reading"] for e in metrics["effects"]
               if e["ci_low"] is not None)  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "auto"], "--budget auto needs --time"),
        (["--budget", "auto", "--time", "twenty"], "--time 'twenty': give a duration"),
        (["--budget", "auto", "--time", "0s"], "must be more than 0"),
        (["--time", "20m"], "add --budget auto"),
        (["--budget", "auto", "--max-items", "0"], "--max-items 0: must be at least 1"),
        (["--adjust", "bonferroni"], "--adjust 'bonferroni': choose from holm, bh"),
        (["--fail-on", "regressed"], "--fail-on and --markdown go with --compare"),
    ],
)
def test_auto_and_comparison_arguments_are_checked_first(tmp_path, args, message):
    res = runner.invoke(app, ["audit", "--model", "ref:reader", "--out", str(tmp_path / "a"),
                              *args])  # fmt: skip
    assert res.exit_code == 2 and message in res.output, res.output
    assert not (tmp_path / "a").exists()


def test_compare_checks_fail_on_and_reads_only_audits(two_models, tmp_path):
    folder, _ = two_models
    res = runner.invoke(app, ["audit", "--compare", str(folder), str(folder), "--fail-on", "x"])
    assert res.exit_code == 2 and "--fail-on 'x': choose from regressed" in res.output
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "metrics.json").write_text(json.dumps({"kind": "audit", "models": []}))
    res = runner.invoke(app, ["audit", "--compare", str(folder), str(broken)])
    assert res.exit_code == 2 and "field 'effects': missing" in res.output, res.output


def _step(index: int, seconds: float, limit: int, following: int | None, needs: list[float]):
    from faithprobe.audit.auto import AutoStep

    step = AutoStep(index, planned=None)
    entry = {"limit": limit, "n_pairs": limit, "seconds": seconds, "cpu_seconds": seconds}
    card = {"steps": [{"verdicts": {"m": "inconclusive" if needs else "faithful"}}],
            "effects": [{"subject": "m", "verdict": "inconclusive",
                         "to_decide": {"times_items": x}} for x in needs],
            "differences": []}  # fmt: skip
    step.add(entry, card, following)
    return step


def test_auto_schedule_runs_the_round_likeliest_to_decide_that_fits():
    from faithprobe.audit.auto import next_round

    hopeless = _step(0, 10, 100, 300, [50.0])  # needs 50x its items: a 3x round won't do
    promising = _step(1, 60, 20, 60, [2.0, 2.5])  # a 3x round likely decides both
    done = _step(2, 5, 10, 30, [])
    assert done.decided and not promising.decided
    assert next_round([hopeless, promising, done], None) is promising
    # promising's next round takes about 180 s: with 100 s left only hopeless's 30 s fits
    assert next_round([hopeless, promising, done], 100) is hopeless
    assert next_round([hopeless, promising, done], 20) is None
    last = _step(3, 1, 240, None, [1.5])  # no round left
    assert next_round([last, done], None) is None
    assert promising.record()["looks"][0] == {"limit": 20, "n_pairs": 20, "seconds": 60,
                                              "cpu_seconds": 60, "decided": False}  # fmt: skip


def test_a_competence_not_yet_shown_keeps_its_step_open():
    from faithprobe.audit.auto import competence_need, open_questions

    def competence(value, low, high, competent=False):
        return {"subject": "m", "competent": competent, "value": value, "ci_low": low,
                "ci_high": high, "baseline": 0.5, "margin": 0.05, "n": 20}  # fmt: skip

    maybe = competence(0.65, 0.52, 0.77)  # not shown at 20 items, but likely at a few times more
    assert 1 < competence_need(maybe) < 10
    assert competence_need(competence(0.40, 0.30, 0.52)) is None  # ruled out: ends below 0.55
    assert competence_need(competence(0.80, 0.70, 0.90, competent=True)) is None
    card = {"steps": [{"verdicts": {"m": "not assessable"}}], "effects": [],
            "competence": [maybe], "differences": []}  # fmt: skip
    assert open_questions(card) == [competence_need(maybe)]


def test_an_auto_card_tests_unpaired_differences_on_the_95_intervals(monkeypatch):
    """The auto budget widens the effects' intervals to 98.75% for the verdicts; an
    unpaired difference reads its standard errors off the 95% intervals and spends its
    alpha in the adjusted p (reading them off the widened ones inflated them by ~1.27)."""
    from faithprobe.audit import card_metrics as card
    from faithprobe.audit.plan import BUDGETS
    from faithprobe.metrics.verdict import Effect, Region

    def hand_made(suite, metrics):  # no per-unit numbers: tested unpaired
        return [Effect("distractors", "drop", "drop", m, v, v - 0.1, v + 0.1, 50,
                       Region("at_most", 0.1)) for m, v in (("a", 0.2), ("b", 0.5))], []  # fmt: skip

    monkeypatch.setattr(card, "headline", hand_made)
    runs = [{"step": "distractors", "suite": "distractors", "question": "q", "status": "ran",
             "report": "r", "limit": 10, "options": {}, "data": None, "n_pairs": 10,
             "seconds": 1.0, "models": ["a", "b"], "skipped_models": [], "metrics": {}}]  # fmt: skip
    models = [{"spec": m, "name": m, "fingerprint": "f"} for m in ("a", "b")]
    once, auto = (card.card_metrics(runs, models, budget=BUDGETS[b], seed=0, looks=k)
                  for b, k in (("small", 1), ("auto", 4)))  # fmt: skip
    (d1,), (d4,) = once["differences"], auto["differences"]
    assert not d4["paired"] and d4["se"] == pytest.approx(d1["se"]) == pytest.approx(
        0.1 / 1.96 * 2**0.5, rel=1e-3
    )
    assert d4["p"] == pytest.approx(d1["p"])
    assert auto["comparisons"]["alpha"] == pytest.approx(0.0125)
    effects = {e["subject"]: e for e in auto["effects"]}
    assert (
        effects["a"]["ci_high"] - effects["a"]["value"] > 0.12
    )  # the verdicts' intervals are widened
