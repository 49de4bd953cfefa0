"""The requests the audit's steps ask a model at a budget, without answering them: what
benchmarks that compare models or runtimes on "the card's items" feed both sides.

Each step is planned as ``faithprobe audit`` plans it (its data found in the data folders,
or the shipped sample at the small budget; its size and options at the budget), and its
requests are the ones the runner would send the model (:func:`faithprobe.runner.
requests_of`), in the runner's order, each once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from faithprobe.audit.plan import declared_steps, step_data
from faithprobe.catalog.locate import data_roots
from faithprobe.runner import RunConfig, cannot_answer, prepare, requests_of


def step_requests(
    subject,
    budget: str = "small",
    data_dir: Path | None = None,
    seed: int = 0,
    steps: Sequence[str] | None = None,
) -> dict[str, list]:
    """Step name -> the distinct requests it asks ``subject`` at ``budget`` (steps whose
    data is missing, or that the subject cannot answer, are left out)."""
    roots = data_roots(data_dir)
    found: dict[str, list] = {}
    for step in declared_steps():
        if steps is not None and step.name not in steps:
            continue
        data = step_data(step, roots, budget)
        if data.reason:
            continue
        limit, options = step.size(budget)
        config = RunConfig(suite=step.suite, models=[], data=data.path, limit=limit,
                           seed=seed, cache=False, options=options)  # fmt: skip
        prepared = prepare(config, check_models=False)
        if cannot_answer(prepared.suite, prepared.pairs, subject) is not None:
            continue
        requests = requests_of(prepared.suite, prepared.pairs, subject)[1]
        found[step.name] = list(dict.fromkeys(requests))
    return found
