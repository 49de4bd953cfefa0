"""The ``faithfulness`` suite (Chaturvedi et al.): is a QA answer still given once the
sentences that support it are deleted?"""

from faithprobe.suite_protocol import AuditStep, SuiteEntry
from faithprobe.suites.faithfulness.options import FaithfulnessOptions

SUITE = SuiteEntry.in_package(
    __name__,
    name="faithfulness",
    description="QA: is the answer still given once its supporting sentences are deleted?",
    method="Chaturvedi et al., Analyzing semantic faithfulness of language models via input "
    "intervention on question answering",
    options=FaithfulnessOptions,
    audit=(
        AuditStep(
            "faithfulness-negation",
            "Are yes/no answers read off the story, negation and formatting included?",
            {"small": 24, "default": 60, "full": None},
            order=20,
            options={"probe": "predicate-argument"},
        ),
        AuditStep(
            "faithfulness-deletion",
            "Does the model stop answering once the sentence holding the answer is deleted?",
            {"small": 20, "default": 60, "full": None},
            order=30,
            data="squad/dev-v1.1.json",
        ),
    ),
)
