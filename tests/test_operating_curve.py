"""The card's operating curve (faithprobe.audit.operating_curve): ``ref:mix:P`` is called
faithful more often the larger P, always at P = 1 and never at P = 0. The full curves (20
seeds, every step, small and default budgets) are in docs/audit.md; here three seeds of the
two generated steps at the small budget."""

from __future__ import annotations

from faithprobe.audit.operating_curve import markdown, problems, seed_verdicts, table
from faithprobe.metrics.verdict import FAITHFUL, INCONCLUSIVE, UNFAITHFUL

STEPS = ("distractors", "faithfulness-negation")


def test_the_curve_rises_with_the_share_read_faithfully():
    records = []
    for seed in range(3):
        records += seed_verdicts("small", (0.0, 0.5, 1.0), seed, None, steps=STEPS)
    rows = table(records)
    assert {r["step"] for r in rows} == set(STEPS) and all(r["seeds"] == 3 for r in rows)
    assert problems(rows, top=1.0) == []
    at = {(r["step"], r["share"]): r for r in rows}
    for step in STEPS:
        assert at[step, 1.0][FAITHFUL] == 1 and at[step, 0.0][UNFAITHFUL] == 1
    assert markdown(rows).count("\n| small |") == len(rows)


def test_the_rules_catch_a_curve_that_breaks_them():
    def row(share, faithful, unfaithful):
        return {"budget": "small", "step": "s", "share": share, "seeds": 20,
                FAITHFUL: faithful, UNFAITHFUL: unfaithful, INCONCLUSIVE: 0.0}  # fmt: skip

    good = [row(0, 0, 1), row(0.5, 0.2, 0.3), row(1, 1, 0)]
    assert problems(good) == []
    bad = [row(0, 0.1, 0.9), row(0.5, 0.5, 0.2), row(0.9, 0.3, 0.1), row(1, 0.9, 0)]
    assert len(problems(bad)) == 3  # faithful at P = 0, a dip, too rarely faithful at P = 1


def test_the_auto_budget_audits_each_planted_model_alone():
    """Under --budget auto each model gets its own audit (its rounds depend on every model
    of an audit); the ends of the curve hold there too."""
    records = seed_verdicts("auto", (0.0, 1.0), 0, None, steps=STEPS[1:], time_limit=600.0)
    at = {r["share"]: r["verdict"] for r in records}
    assert at == {0.0: UNFAITHFUL, 1.0: FAITHFUL} and {r["budget"] for r in records} == {"auto"}
