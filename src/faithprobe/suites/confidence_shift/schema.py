"""The ``confidence-shift`` suite's ``--data`` formats (:mod:`faithprobe.datasets.schema`):
Social IQA's release (its instances and the labels file beside them), HellaSwag's original
jsonl and prompt/choices/label JSON lines, each declared beside its reader in
:mod:`faithprobe.datasets.multiple_choice` and checked there record by record."""

from __future__ import annotations

from faithprobe.datasets.multiple_choice import (
    CHOICE_JSONL_SCHEMA,
    HELLASWAG_SCHEMA,
    SOCIALIQA_LABELS_SCHEMA,
    SOCIALIQA_SCHEMA,
)
from faithprobe.datasets.schema import SCHEMAS

SCHEMAS.add(
    "confidence-shift",
    (SOCIALIQA_SCHEMA, SOCIALIQA_LABELS_SCHEMA, HELLASWAG_SCHEMA, CHOICE_JSONL_SCHEMA),
    description="Social IQA (instances and labels), HellaSwag, prompt/choices/label JSON lines",
)
