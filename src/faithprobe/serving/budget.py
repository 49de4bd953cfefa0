"""One request's time budget: a single deadline, counted from the request's first byte,
that reading its body, waiting for the model, scoring and generating all share."""

from __future__ import annotations

import time
from dataclasses import dataclass

from faithprobe.serving.refusals import Refused


@dataclass(frozen=True)
class Budget:
    """``seconds`` from ``start`` (a ``time.monotonic()`` value: when the request's first
    byte arrived)."""

    seconds: float
    start: float

    @property
    def deadline(self) -> float:
        return self.start + self.seconds

    def left(self) -> float:
        """Seconds until the deadline (negative once it has passed)."""
        return self.deadline - time.monotonic()

    def halfway(self) -> float:
        """The moment halfway between now and the deadline."""
        return time.monotonic() + max(self.left(), 0.0) / 2

    def check(self, doing: str, advice: str) -> None:
        """Refuse the request (:meth:`spent`) if the deadline has passed."""
        if self.left() <= 0:
            raise self.spent(doing, advice)

    def spent(self, doing: str, advice: str) -> Refused:
        """The 503 (with ``Retry-After``) of a request whose budget ran out ``doing``."""
        return Refused(
            503, f"this request's time budget ({self.seconds:g} s) ran out {doing}; {advice}"
        )
