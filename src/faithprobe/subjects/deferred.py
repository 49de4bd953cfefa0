"""A local model that is loaded only when a request has to be computed.

Everything a run needs of a subject before it computes anything -- its name, kind, the
request kinds it answers, and the fingerprint its cache keys are built from -- is known
from the model's files and its backend's :mod:`~faithprobe.subjects.identity`. So a run
whose answers are all in the cache never imports torch or reads the weights: re-running a
finished run costs what building its tables costs. The first request that misses the cache
loads the model, and the loaded model must report the fingerprint the files gave (a
mismatch is a bug: answers would be cached under the wrong key).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from faithprobe.requests import Answer, GenerationRequest, Request
from faithprobe.subjects.base import Progress, Subject
from faithprobe.subjects.chat_template import folder_has_chat_template
from faithprobe.subjects.identity import Identity


class DeferredSubject(Subject):
    """``load()`` builds the real subject; it is called at most once, on the first request
    to compute."""

    def __init__(
        self,
        name: str,
        identity: Identity,
        fingerprint: str,
        load: Callable[[], Subject],
        *,
        has_chat_template: bool = False,
    ) -> None:
        self.name = name
        self.kind = identity.kind
        self.accepts = identity.accepts
        self.has_chat_template = has_chat_template
        self.request_versions = dict(identity.request_versions)
        self._fingerprint = fingerprint
        self._load = load
        self._subject: Subject | None = None

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def loaded(self) -> bool:
        return self._subject is not None

    @property
    def subject(self) -> Subject:
        """The loaded model (loading it now if it is not yet)."""
        if self._subject is None:
            subject = self._load()
            loaded = (subject.kind, subject.fingerprint, subject.has_chat_template)
            if loaded != (self.kind, self._fingerprint, self.has_chat_template):
                raise RuntimeError(
                    f"{self.name}: loaded as {subject.kind} {subject.fingerprint} (chat "
                    f"template: {subject.has_chat_template}), but its files say {self.kind} "
                    f"{self._fingerprint} (chat template: {self.has_chat_template})"
                )
            self._subject = subject
        return self._subject

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        self.check_accepts(requests)
        return self.subject.answer(requests, progress) if requests else []

    def answer_chunks(
        self, chunks: Iterable[Sequence[Request]]
    ) -> Iterator[tuple[int, list[Answer]]]:
        """The loaded model's :meth:`~Subject.answer_chunks`; nothing is loaded when there
        is no chunk to compute."""
        chunks = iter(chunks)
        first = next(chunks, None)
        if first is not None:
            yield from self.subject.answer_chunks(itertools.chain([first], chunks))


def deferred(
    name: str,
    identity: Identity,
    folder: Path,
    load: Callable[[], Subject],
    parts: tuple[str, ...] = (),
) -> Subject:
    """The model in ``folder``, known from its files (and the fingerprint ``parts`` of the
    settings it will be loaded under) until ``load`` is needed."""
    generates = GenerationRequest.kind in identity.accepts
    return DeferredSubject(
        name,
        identity,
        identity.fingerprint(folder, parts),
        load,
        has_chat_template=generates and folder_has_chat_template(folder),
    )
