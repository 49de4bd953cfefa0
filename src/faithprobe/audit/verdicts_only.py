"""The card's verdicts without the card: each step of an audit run for each model on its
own, computing the step records and the card's metrics but no report, figure or paired
difference between models.

What the validity table and the operating curve need is many verdicts (15 reference
models, or 5 planted ones, over budgets and 20 seeds), not many cards. A model's verdict on
a step depends on its own answers only (competence and Holm's correction are per model and
step), so it is the verdict the full audit of all the models together gives; the items are
planned once per step and shared by the models, as the audit plans them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


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
    ``default``: the auto budget's rounds depend on all models of an audit) and ``seed``."""
    from faithprobe.audit.card_metrics import card_metrics
    from faithprobe.audit.edges import Edges
    from faithprobe.audit.plan import check_budget, declared_steps
    from faithprobe.audit.run import AuditConfig, _planned, _ran_record
    from faithprobe.catalog.locate import data_roots
    from faithprobe.runner import run
    from faithprobe.subjects import load_subject

    chosen = [s for s in declared_steps() if steps is None or s.name in steps]
    subjects = [load_subject(m) for m in models]
    config = AuditConfig(models=[], out=Path("unused"), budget=budget, data_dir=data_dir,
                         seed=seed, cache=False)  # fmt: skip
    edges = Edges.parse((), [s.suite for s in chosen])
    roots = data_roots(data_dir)
    found: dict[tuple[str, str], str] = {}
    for step in chosen:
        planned = _planned(step, config, subjects, roots)
        if planned.reason:
            continue
        for subject in planned.subjects:
            finished = run(planned.config, subjects=[subject], prepared=planned.prepared)
            entry = _ran_record(planned, finished, 0.0, 0.0)
            model = {"spec": subject.name, "name": subject.name,
                     "fingerprint": subject.fingerprint}  # fmt: skip
            card = card_metrics([entry], [model], budget=check_budget(budget), seed=seed,
                                edges=edges, adjustment=config.adjustment, looks=1)  # fmt: skip
            found |= verdicts(card)
    return found
