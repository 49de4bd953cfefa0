"""The ``shout`` report: one table, the share of answers kept, with its interval."""

from __future__ import annotations

import pandas as pd

from faithprobe.report.tables import Table
from faithprobe.report.views import ReportView, estimate_text


def kept_table(metrics) -> Table:
    data = pd.DataFrame(metrics["kept"])
    display = pd.DataFrame({"subject": data["subject"],
                            "kept": [estimate_text(r, se=False) for r in metrics["kept"]],
                            "n": data["n"]})  # fmt: skip
    return Table("summary", "Answers kept in capitals", data, display)


class ShoutReport(ReportView):
    summary_title = "answers kept in capitals [95% CI]"
    table_makers = (kept_table,)
