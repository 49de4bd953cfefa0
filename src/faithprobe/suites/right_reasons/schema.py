"""The ``right-reasons`` suite's ``--data`` formats (:mod:`faithprobe.datasets.schema`): the
SQuAD-format and HotpotQA-format files it selects comparison or coreference questions from,
each declared beside its reader, and the coreference counterfactual file of option
``counterfactuals``. The suite keeps only the questions its interventions apply to by
design; the rejected ones are counted by reason (the report's table ``selection``), and a
file from which no question is kept is refused."""

from __future__ import annotations

from faithprobe.coreference.counterfactuals import COUNTERFACTUALS_SCHEMA
from faithprobe.datasets.hotpotqa import HOTPOTQA_SCHEMA
from faithprobe.datasets.schema import SCHEMAS
from faithprobe.datasets.squad import SQUAD_SCHEMA

SCHEMAS.add(
    "right-reasons",
    (SQUAD_SCHEMA, HOTPOTQA_SCHEMA, COUNTERFACTUALS_SCHEMA),
    description="SQuAD/Quoref or HotpotQA JSON (comparison or coreference questions); the "
    "coreference counterfactual file (counterfactuals=FILE)",
)
