"""The columns of a report's example rows, declared as data: each column's heading, whether
it holds free text, and how its values are read from the result rows shown
(:class:`ExampleColumn`); the cells the suites' columns share."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class ExampleColumn:
    """A column of the report's example rows: the key its values are kept under in the
    examples' frame, its heading (the key, by default), whether it holds free text, and its
    values as a function of the result rows shown (by default the result column named
    ``key``, blank where the results have none)."""

    key: str
    heading: str = ""
    text: bool = False
    values: Callable[[pd.DataFrame], Any] | None = None

    def __post_init__(self) -> None:
        if not self.heading:
            object.__setattr__(self, "heading", self.key)

    def read(self, rows: pd.DataFrame) -> Any:
        """This column's values for the result ``rows``."""
        return self.values(rows) if self.values else rows.get(self.key)


def example_frame(columns: Sequence[ExampleColumn], rows: pd.DataFrame) -> pd.DataFrame:
    """The ``columns`` read from the result ``rows``, one example row each."""
    return pd.DataFrame({c.key: c.read(rows) for c in columns})


def answers_text(answers: Iterable[str]) -> str:
    """Gold answers in one cell of the example rows: each once, in their order."""
    return " | ".join(dict.fromkeys(answers))


def expectation_met(rows: pd.DataFrame) -> pd.Series:
    """Whether each result row did what a faithful model does: the example rows' ``correct``
    where the suite judges by its pairs' expectations."""
    return rows["expectation_met"].astype(bool)
