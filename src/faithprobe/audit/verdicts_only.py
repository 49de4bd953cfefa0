"""The card's verdicts without the card: each step of an audit run for each model on its
own, computing the step records and the card's metrics but no report, figure or paired
difference between models.

What the validity table and the operating curve need is many verdicts (15 reference
models, or 5 planted ones, over budgets and 20 seeds), not many cards. A model's verdict on
a step depends on its own answers only (competence and Holm's correction are per model and
step), so it is the verdict the full audit of all the models together gives; the items are
planned once per step and shared by the models, as the audit plans them. Under ``--budget
auto`` it is not: how many rounds a step gets depends on every model of the audit, so each
model's verdicts there are those of its own audit (:func:`auto_verdicts`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from faithprobe.audit.edges import Edges
    from faithprobe.audit.execute import AuditConfig
    from faithprobe.subjects import Subject


def seed_list(text: str) -> list[int]:
    """The seeds a command line names: ``0-19`` or ``0,1,2``."""
    if "-" in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(s) for s in text.split(",") if s.strip()]


def verdicts(metrics: Mapping) -> dict[tuple[str, str], str]:
    """(step, model) -> the step verdict, off an audit's metrics.json (steps that ran)."""
    return {
        (s["step"], model): v
        for s in metrics["steps"]
        if s["status"] == "ran"
        for model, v in s["verdicts"].items()
    }


def step_verdicts(
    models: Sequence[str],
    budget: str,
    seed: int,
    data_dir: Path | None,
    steps: Sequence[str] | None = None,
) -> dict[tuple[str, str], str]:
    """(step, model name) -> the card's verdict, for every step (of ``steps``, default all)
    whose data is found and every model that answers it, at ``budget`` (``small`` or
    ``default``; ``auto``: :func:`auto_verdicts`) and ``seed``."""
    from dataclasses import replace

    from faithprobe.audit.execute import plan_step, ran

    config, edges, roots = _audit(budget, seed, data_dir, steps)
    subjects = [_load(m) for m in models]
    found: dict[tuple[str, str], str] = {}
    for step in config.steps:
        planned = plan_step(step, config, subjects, roots)  # the items, shared by the models
        if planned.reason:
            continue
        for subject in planned.subjects:
            _, entry = ran(replace(planned, subjects=[subject]))
            found |= _verdicts([entry], [_model_record(subject)], config, edges, looks=1)
    return found


def auto_verdicts(
    model: str,
    seed: int,
    data_dir: Path | None,
    time_limit: float | None,
    steps: Sequence[str] | None = None,
) -> dict[tuple[str, str], str]:
    """(step, model name) -> the card's verdict at ``--budget auto --time time_limit``: the
    audit of ``model`` alone (the rounds a step gets depend on every model of an audit)."""
    from faithprobe.audit.execute import auto_runs, plan_step, ran
    from faithprobe.audit.plan import AUTO
    from faithprobe.metrics.sequential import LOOKS

    config, edges, roots = _audit(AUTO, seed, data_dir, steps, time_limit)
    subject = _load(model)
    planned = [plan_step(step, config, [subject], roots) for step in config.steps]
    models = [_model_record(subject)]
    runs = auto_runs(planned, config, ([subject], roots, models, edges), lambda p: ran(p)[1])
    return _verdicts(runs, models, config, edges, looks=LOOKS)


def _audit(
    budget: str,
    seed: int,
    data_dir: Path | None,
    steps: Sequence[str] | None,
    time_limit: float | None = None,
) -> tuple[AuditConfig, Edges, list[Path]]:
    """The audit config of one model's verdict run (no folder, no answer cache; its steps
    the chosen ones), their edges and the data roots."""
    from faithprobe.audit.edges import Edges
    from faithprobe.audit.execute import AuditConfig
    from faithprobe.audit.plan import declared_steps
    from faithprobe.catalog.locate import data_roots

    chosen = [s for s in declared_steps() if steps is None or s.name in steps]
    config = AuditConfig(models=[], out=Path("unused"), budget=budget, data_dir=data_dir,
                         seed=seed, cache=False, steps=chosen, time_limit=time_limit)  # fmt: skip
    return config, Edges.parse((), [s.suite for s in chosen]), data_roots(data_dir)


def _load(model: str) -> Subject:
    from faithprobe.subjects import load_subject

    return load_subject(model)


def _model_record(subject: Subject) -> dict:
    return {"spec": subject.name, "name": subject.name, "fingerprint": subject.fingerprint}


def _verdicts(
    entries: list[dict], models: list[dict], config: AuditConfig, edges: Edges, looks: int
) -> dict[tuple[str, str], str]:
    """The verdicts of the card made of step records ``entries`` (skipped steps give none)
    for the model records ``models``, at the config's budget."""
    from faithprobe.audit.card_metrics import card_metrics
    from faithprobe.audit.plan import check_budget

    card = card_metrics(entries, models, budget=check_budget(config.budget), seed=config.seed,
                        edges=edges, adjustment=config.adjustment, looks=looks)  # fmt: skip
    return verdicts(card)
