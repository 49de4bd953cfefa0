"""The ``natural-logic`` suite's ``--data`` formats (:mod:`faithprobe.datasets.schema`): the
NLI-XY folder's two files, crossed into the grid the interventions swap within, and the
two-class challenge-set files of option ``challenge``. Every value is checked as the files
are read (:mod:`faithprobe.datasets.nli_xy`, :mod:`faithprobe.datasets.nli`)."""

from __future__ import annotations

from faithprobe.datasets.nli import CHALLENGE_SCHEMAS
from faithprobe.datasets.nli_xy import CONTEXTS_SCHEMA, INSERTIONS_SCHEMA
from faithprobe.datasets.schema import SCHEMAS

SCHEMAS.add(
    "natural-logic",
    (CONTEXTS_SCHEMA, INSERTIONS_SCHEMA, *CHALLENGE_SCHEMAS),
    description="an NLI-XY folder (contexts.tsv x insertions.tsv); two-class challenge sets",
)
