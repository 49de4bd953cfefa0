"""The options of the ``faithfulness`` suite (``-o KEY=VALUE``), declared once.

Kept apart from the suite module so that ``faithprobe list`` and the registry read them
without importing the suite and what it needs (data readers, interventions, metrics).
"""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.datasets.coqa import COQA_RULES, DEFAULT_HISTORY_TURNS
from faithprobe.datasets.squad import RATIONALES
from faithprobe.errors import UsageError
from faithprobe.options import option
from faithprobe.qa.prompt import QAPromptOptions
from faithprobe.sentences import DEFAULT_SPLITTER, SPLITTERS

NEGATE_MODES = ("", "rule")
NEGATE_ON = ("os", "ts")  # the story the negation edits are applied to
PROBES = ("", "predicate-argument")


@dataclass(frozen=True)
class FaithfulnessOptions(QAPromptOptions):
    edits: str = option("", "negation edit file (JSON lines): adds NEG pairs")
    negate: str = option(
        "", "'rule': negate yes/no items without an edit by rule", choices=NEGATE_MODES
    )
    negate_on: str = option(
        "os",
        "the story negation edits apply to: 'os' (the whole story) or 'ts' (the truncated "
        "story, as the method edits CoQA; HotpotQA keeps OS)",
        choices=NEGATE_ON,
    )
    probe: str = option(
        "", "'predicate-argument': the generated probe instead of --data", choices=PROBES
    )
    augment: str = option("", "model writing TS-R+Aug/OS-R+Aug sentences (e.g. embedded)")
    augment_file: str = option(
        "", "TS-R+Aug/OS-R+Aug sentences from a file: JSON {question id: sentence} (the method's)"
    )
    splitter: str = option(DEFAULT_SPLITTER, "sentence splitter", choices=SPLITTERS)
    rationale: str = option(
        "sentence", "SQuAD-format rationale: sentence or answer (span)", choices=RATIONALES
    )
    history_turns: int = option(
        DEFAULT_HISTORY_TURNS,
        "CoQA: previous turns (with gold answers) before a question",
        range=(0, 1000),
    )
    coqa_rules: str = option(
        COQA_RULES[0],
        "CoQA: faithprobe's or the method's (more yes/no spellings; history skips unknowns)",
        choices=COQA_RULES,
    )
    heldout_of: str = option("", "model from `train qa`: only its held-out documents of --data")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.augment and self.augment_file:
            raise UsageError("augment (a model) and augment_file (sentences) exclude each other")
