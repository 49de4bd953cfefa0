"""The ``faithfulness`` suite's ``--data`` formats (:mod:`faithprobe.datasets.schema`): the
three QA formats :func:`~faithprobe.datasets.qa_formats.read_qa` tells apart by their shape, each
declared beside its reader, the negation edit file of option ``edits`` and the +Aug
sentences of option ``augment_file``. Every question
of a file is an item and gives every deletion variant (one a deletion cannot make is
counted as dropped, by reason), so no question leaves the report in silence."""

from __future__ import annotations

from faithprobe.datasets.augment_sentences import AUGMENT_SCHEMA
from faithprobe.datasets.coqa import COQA_SCHEMA
from faithprobe.datasets.hotpotqa import HOTPOTQA_SCHEMA
from faithprobe.datasets.schema import SCHEMAS
from faithprobe.datasets.squad import SQUAD_SCHEMA
from faithprobe.interventions.negation import EDITS_SCHEMA

SCHEMAS.add(
    "faithfulness",
    (SQUAD_SCHEMA, COQA_SCHEMA, HOTPOTQA_SCHEMA, EDITS_SCHEMA, AUGMENT_SCHEMA),
    description="SQuAD/Quoref, CoQA or HotpotQA JSON; the negation edit file (edits=FILE); "
    "+Aug sentences (augment_file=FILE)",
)
