"""The subject interface: a model backend answering typed requests.

A subject has a display ``name``, a ``fingerprint`` that changes whenever its answers could
change (weights, tokenizer, scoring code), and one method per request type. Backends
implement the methods; :class:`~faithprobe.subjects.cached.CachedSubject` adds the
persistent cache in front of any of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from faithprobe.requests import Answer, Request

Progress = Callable[[int], None]


class Subject(ABC):
    name: str
    kind: str
    # the request kinds it answers (``Request.kind``); suites pick the request to fit
    accepts: frozenset[str] = frozenset({"candidate-scores"})

    # a version per request kind whose answering code can change on its own (generation
    # beside scoring): bumping it invalidates that kind's cached answers only
    request_versions: dict[str, str] = {}

    @property
    @abstractmethod
    def fingerprint(self) -> str: ...

    def cache_fingerprint(self, kind: str) -> str:
        """What the cache keys of ``kind`` requests are built from: the fingerprint, plus the
        kind's own version if it has one (so the other kinds' keys stay as they were)."""
        version = self.request_versions.get(kind)
        return f"{self.fingerprint}:{version}" if version else self.fingerprint

    @abstractmethod
    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        """Answer each request; call ``progress(k)`` as k more requests are done."""
