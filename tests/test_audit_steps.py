"""The audit's steps are the ones the registered suites declare (``SuiteEntry.audit``): in
the order they declare, sized for every budget, with the suites' own options."""

from __future__ import annotations

import pytest

from faithprobe.audit import plan
from faithprobe.audit.plan import STEPS
from faithprobe.registry import Registry
from faithprobe.suite_protocol import AuditStep, SuiteEntry, suite_options

SIZES = {"small": 1, "default": 2, "full": None}


def test_the_card_keeps_its_order():
    assert [s.name for s in STEPS] == [
        "distractors", "faithfulness-negation", "faithfulness-deletion", "right-reasons",
        "natural-logic", "confidence-shift", "reasoning"]  # fmt: skip


@pytest.mark.parametrize("budget", ["small", "default", "full", "auto"])
@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.name)
def test_every_step_sets_its_suites_own_options(step, budget):
    """A step's options are read as its suite reads ``-o KEY=VALUE``: a misspelt name or a
    bad value in a suite's declaration fails here, not in an audit."""
    limit, options = step.size(budget)
    assert limit == (step.rounds()[0] if budget == "auto" else step.limits[budget])
    suite_options(step.suite, options)


def _registry(*entries: tuple[str, tuple[AuditStep, ...]]) -> Registry:
    registry: Registry[SuiteEntry] = Registry("suite")
    for name, steps in entries:
        registry.add(name, SuiteEntry(name, "", "", f"{name}:Suite", f"{name}:View", audit=steps))
    return registry


def test_steps_come_in_their_declared_order_whichever_suite_declares_them(monkeypatch):
    late, early = AuditStep("b-late", "?", SIZES, order=30), AuditStep("b-early", "?", SIZES, 10)
    monkeypatch.setattr(plan, "SUITES", _registry(("b", (late, early)),
                                                  ("a", (AuditStep("a", "?", SIZES, 20),))))  # fmt: skip
    found = plan.declared_steps()
    assert [(s.name, s.suite) for s in found] == [("b-early", "b"), ("a", "a"), ("b-late", "b")]
    assert found[0].limits == SIZES and found[0].question == "?"


@pytest.mark.parametrize(
    "steps, message",
    [
        ((AuditStep("c", "?", {"small": 1}),), "suite c: step c is not sized for the budgets"),
        ((AuditStep("c", "?", SIZES, budget_options={"tiny": {}}),), "is not sized"),
        ((AuditStep("c", "?", SIZES), AuditStep("c", "?", SIZES)), "two audit steps share"),
    ],
)
def test_a_step_not_sized_for_the_budgets_or_named_twice_is_told(monkeypatch, steps, message):
    monkeypatch.setattr(plan, "SUITES", _registry(("c", steps)))
    with pytest.raises(ValueError, match=message):
        plan.declared_steps()
