"""The distractors suite's results table for a planted answerer (a function of the item
giving its choice), built through the runner's rows without a model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace

import pandas as pd

from faithprobe.interventions import Pair
from faithprobe.records import ClozeExample
from faithprobe.requests import CandidateScores
from faithprobe.runner import result_rows


def planted_results(
    suite, pairs: Sequence[Pair], answerer: Callable[[ClozeExample], str]
) -> pd.DataFrame:
    """Every item of ``pairs`` answered with ``answerer``'s choice (scored 0, the others
    -1); the subject is named after the answerer."""
    items = {i.id: i for p in pairs for i in (p.original, p.intervened)}
    answers = {}
    for item_id, item in items.items():
        choice = answerer(item)
        scores = tuple(0.0 if c == choice else -1.0 for c in item.candidates)
        answers[item_id] = CandidateScores(scores, (1,) * len(scores))
    subject = SimpleNamespace(name=answerer.__name__, fingerprint="planted")
    return pd.DataFrame(result_rows(suite, pairs, subject, answers))
