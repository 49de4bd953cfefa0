"""A sixth suite in one folder: the worked example of README's "Adding a suite".

``shout`` asks whether a cloze model still picks the right word when the context is in
capitals. It registers itself with the entry-point group ``faithprobe.suites`` (see
``tests/test_toy_suite.py``, which installs it into a temporary folder and runs it through
the command line, alone and in ``faithprobe audit``); a suite inside faithprobe would be
``src/faithprobe/suites/shout/`` with the same four files and no entry point.
"""

from dataclasses import dataclass

from faithprobe.options import option
from faithprobe.suite_protocol import AuditStep, SuiteEntry


@dataclass(frozen=True)
class ShoutOptions:
    items: int = option(8, "how many cloze items to make")


SUITE = SuiteEntry(
    name="shout",
    description="cloze answers kept when the context is in capitals",
    method="toy example of a suite (no publication)",
    suite="toy_suite.suite:ShoutSuite",
    report="toy_suite.report:ShoutReport",
    headline="toy_suite.headline:headline",
    options=ShoutOptions,
    # its step on the faithfulness card, after the built-in ones (theirs are 10 to 60)
    audit=(
        AuditStep(
            "shout",
            "Is a cloze answer kept when the context is in capitals?",
            {"small": 8, "default": 8, "full": None},
            order=80,
            options={"items": "8"},
        ),
    ),
)
