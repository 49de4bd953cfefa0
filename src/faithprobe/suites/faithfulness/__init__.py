"""The ``faithfulness`` suite (Chaturvedi et al.): is a QA answer still given once the
sentences that support it are deleted?"""

from faithprobe.suite import SuiteEntry
from faithprobe.suites.faithfulness.options import FaithfulnessOptions

SUITE = SuiteEntry(
    name="faithfulness",
    description="QA: is the answer still given once its supporting sentences are deleted?",
    method="Chaturvedi et al., Analyzing semantic faithfulness of language models via input "
    "intervention on question answering",
    suite="faithprobe.suites.faithfulness.suite:FaithfulnessSuite",
    report="faithprobe.suites.faithfulness.report:FaithfulnessReport",
    headline="faithprobe.suites.faithfulness.headline:headline",
    options=FaithfulnessOptions,
)
