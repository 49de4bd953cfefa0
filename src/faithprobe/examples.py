"""Record types: small frozen examples, one type per task shape.

Every example has a stable ``id``. Structured facts about an example (its condition in a
designed experiment, the story it was rendered from) live in ``features`` so that the
results table can carry them as columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ClozeExample:
    """Fill a blank: ``context`` ___ ``suffix``; the answer is ``target``.

    ``candidates`` is the closed set the target competes in (it contains ``target``).
    A causal LM sees only ``context``; a masked LM also sees ``suffix``.
    """

    id: str
    context: str
    target: str
    candidates: tuple[str, ...]
    suffix: str = ""
    features: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.target not in self.candidates:
            raise ValueError(f"example {self.id}: target {self.target!r} not among candidates")
