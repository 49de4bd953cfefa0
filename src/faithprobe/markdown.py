"""Markdown written from data that must stay text: escaped inline text, fenced blocks no
line can close, GitHub tables. Used by the card for a model card (``audit/card_markdown``)
and by ``audit --compare --markdown`` (a pull-request comment), where a model name such as
``a|b<script>`` must stay inside its table cell and render no HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

# what CommonMark, GitHub's tables and strikethrough or HTML read in inline text, and `$`
# (the Hub renders math); block markers need no escape: no text from data starts a line
_ACTIVE = re.compile(r"([\\`*_\[\]<>|~&$#])")


def text(value: Any) -> str:
    """``value`` as literal inline Markdown: one line, every active character escaped."""
    return _ACTIVE.sub(r"\\\1", " ".join(str(value).splitlines()))


def code_block(value: str, info: str = "") -> list[str]:
    """``value`` verbatim in a fenced block, its fence longer than any run of backticks in
    it (so no line of it closes the block)."""
    longest = max((len(run) for run in re.findall("`+", value)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *value.splitlines(), fence]


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A GitHub table; the cells are Markdown already (escaped where they hold data)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]
