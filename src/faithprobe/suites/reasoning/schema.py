"""The ``reasoning`` suite's ``--data`` formats: a BIG-Bench Hard folder's task files and
few-shot prompt files, declared beside their reader (:mod:`faithprobe.datasets.bbh`)."""

from __future__ import annotations

from faithprobe.datasets.bbh import PROMPT_SCHEMA, TASK_SCHEMA
from faithprobe.datasets.schema import SCHEMAS

SCHEMAS.add(
    "reasoning",
    (TASK_SCHEMA, PROMPT_SCHEMA),
    description="BIG-Bench Hard task files and chain-of-thought prompt files",
)
