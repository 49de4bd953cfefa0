"""The ``distractors`` suite (Pandia & Ettinger 2021): cloze accuracy under attractors."""

from faithprobe.suite_protocol import AuditStep, SuiteEntry
from faithprobe.suites.distractors.options import DistractorsOptions

SUITE = SuiteEntry.in_package(
    __name__,
    name="distractors",
    description="cloze accuracy under B-type, T-type and unrelated attractors",
    method="Pandia & Ettinger (2021), Sorting through the noise: Testing robustness of "
    "information processing in pre-trained language models",
    options=DistractorsOptions,
    audit=(
        AuditStep(
            "distractors",
            "Is the right word still chosen once related distractors are added?",
            {"small": 300, "default": 900, "full": None},
            order=10,
        ),
    ),
)
