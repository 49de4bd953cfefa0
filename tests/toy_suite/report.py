"""The ``shout`` report: one table, the share of answers kept, with its interval."""

from __future__ import annotations

import pandas as pd

from faithprobe.report.tables import Table
from faithprobe.report.views import ReportView, estimate_text


class ShoutReport(ReportView):
    summary_title = "answers kept in capitals [95% CI]"

    @staticmethod
    def tables(metrics) -> dict[str, Table]:
        data = pd.DataFrame(metrics["kept"])
        display = pd.DataFrame({"subject": data["subject"],
                                "kept": [estimate_text(r, se=False) for r in metrics["kept"]],
                                "n": data["n"]})  # fmt: skip
        return {"summary": Table("summary", "Answers kept in capitals", data, display)}
