"""A subject wrapper that sends only cache misses to the model (the lm-eval-harness idea).

Requests are deduplicated by key, looked up in the cache, and the misses are computed in
chunks of whole requests (``Subject.answer_chunks``: in order in process, in parallel under
the Ray executor); every chunk is written to the cache as soon as it is done, so an
interrupted run loses at most the chunks in flight and a re-run is free.

Runs sharing a cache file share the work. Each chunk's requests are claimed in the cache
(:meth:`~faithprobe.subjects.answer_cache.AnswerCache.claim`) just before they are computed, and
requests another run has claimed are passed over. Once every chunk nobody else holds is
done, the wrapper waits for the answers to the passed-over requests, polling the cache, and
computes any whose claim lapses or whose claiming process is gone. Two identical runs
started together therefore compute each answer once, about half each.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from faithprobe import json_values
from faithprobe.errors import DataError
from faithprobe.requests import Answer, Request
from faithprobe.subjects.answer_cache import AnswerCache
from faithprobe.subjects.base import Progress, Subject

DEFAULT_LEASE = 600.0  # seconds a claim lasts unless renewed (it is, as chunks finish)
POLL_FIRST, POLL_MAX = 0.2, 2.0  # seconds between looks for another run's answers


class _Gathered:
    """The answers one ``answer`` call has so far, by key. Each request is reported to
    ``progress`` once, when its answer arrives: from the cache, the model or another run."""

    def __init__(
        self, requests: dict[str, Request], uses: Counter[str], progress: Progress | None
    ) -> None:
        self.requests, self.uses, self.progress = requests, uses, progress
        self.answers: dict[str, Answer] = {}

    def add(self, answers: Mapping[str, Answer]) -> None:
        self.answers.update(answers)
        if self.progress and answers:
            self.progress(sum(self.uses[k] for k in answers))

    def add_json(self, found: Mapping[str, str], cache: Path | None) -> None:
        """``found``: answers as the cache file ``cache`` holds them (key -> JSON). One
        that is no answer of its request's type, or holds a value faithprobe never writes
        there (:func:`faithprobe.requests.read_json`), is refused, never believed."""
        answers = {}
        for key, text in found.items():
            try:
                answers[key] = self.requests[key].answer.from_json(text)
            except json_values.Unfit as err:
                raise err.in_file(cache or "answer cache", f"answer {key}") from None
            except (ValueError, TypeError, KeyError) as err:
                why = f"not a {self.requests[key].answer.__name__} ({type(err).__name__})"
                raise DataError(cache or "answer cache", why, record=f"answer {key}") from None
        self.add(answers)

    def missing(self, keys: Sequence[str]) -> list[str]:
        return [k for k in keys if k not in self.answers]


class CachedSubject(Subject):
    """``lease``: how long a claim lasts without renewal, in seconds; it should cover
    computing one chunk (a chunk that takes longer than 9/10 of it may be computed twice, by
    two runs: claims are renewed as chunks finish, at most ten times a lease, see
    :meth:`~faithprobe.subjects.answer_cache.AnswerCache.renew_claims`)."""

    def __init__(
        self,
        inner: Subject,
        cache: AnswerCache,
        chunk_size: int = 64,
        lease: float = DEFAULT_LEASE,
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.chunk_size = chunk_size
        self.lease = lease
        self.name = inner.name
        self.kind = inner.kind
        self.accepts = inner.accepts
        self.has_chat_template = inner.has_chat_template
        self.request_versions = inner.request_versions
        self.computed = 0  # requests actually sent to the model by this wrapper
        inner.use_cache(cache)

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    def check_accepts(self, requests: Sequence[Request]) -> None:
        self.inner.check_accepts(requests)

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        keys = [r.key(self.inner.cache_fingerprint(r.kind)) for r in requests]
        gathered = _Gathered(dict(zip(keys, requests, strict=True)), Counter(keys), progress)
        try:
            gathered.add_json(self.cache.get_many(gathered.requests), self.cache.path)
            held = self._compute_unclaimed(gathered.missing(list(gathered.requests)), gathered)
            self._wait_for(held, gathered)
        except BaseException:
            self._release_claims()
            raise
        return [gathered.answers[k] for k in keys]

    def _compute_unclaimed(self, keys: list[str], gathered: _Gathered) -> list[str]:
        """Compute those of ``keys`` this run can claim, claiming each chunk as the model
        takes it up; return the ones other runs hold. Answers that other runs wrote
        meanwhile are gathered, not computed."""
        held: list[str] = []
        claimed: list[list[str]] = []  # the keys of each chunk given to the model, in order

        def chunks_to_compute() -> Iterator[list[Request]]:
            for chunk in self._chunks(keys, gathered):
                mine = self.cache.claim(chunk, self.lease)
                if len(mine) < len(chunk):
                    taken = set(mine)
                    others = [k for k in chunk if k not in taken]
                    gathered.add_json(self.cache.get_many(others), self.cache.path)
                    held.extend(gathered.missing(others))
                if mine:
                    claimed.append(mine)
                    yield [gathered.requests[k] for k in mine]

        for index, answers in self.inner.answer_chunks(chunks_to_compute()):
            self._store(claimed[index], answers, gathered)
        return held

    def _chunks(self, keys: list[str], gathered: _Gathered) -> list[list[str]]:
        """``keys`` in chunks of ``chunk_size``, smaller when that keeps every one of the
        model's parallel workers busy; their requests sorted by
        :meth:`~faithprobe.requests._Keyed.reading_order`, so those beginning alike share a
        chunk (a model that reads a shared beginning once, as packed scoring does, finds it
        there)."""
        keys = sorted(keys, key=lambda k: gathered.requests[k].reading_order())
        size = max(1, min(self.chunk_size, -(-len(keys) // self.inner.parallel_chunks)))
        return [keys[i : i + size] for i in range(0, len(keys), size)]

    def _store(self, keys: list[str], answers: list[Answer], gathered: _Gathered) -> None:
        """Write a computed chunk (which drops its claims) and renew the claims on the chunks
        still being computed (if due)."""
        self.cache.put_many({k: a.to_json() for k, a in zip(keys, answers, strict=True)})
        self.cache.renew_claims(self.lease)
        self.computed += len(keys)
        gathered.add(dict(zip(keys, answers, strict=True)))

    def _wait_for(self, held: list[str], gathered: _Gathered) -> None:
        """Gather the answers other runs are computing for ``held``, looking at the cache
        less often (up to every ``POLL_MAX`` seconds) while none arrive; compute the ones
        whose claim lapses or whose claiming process ends."""
        delay = POLL_FIRST
        while held:
            time.sleep(delay)
            before = len(held)
            gathered.add_json(self.cache.get_many(held), self.cache.path)
            held = gathered.missing(held)
            still_held = self.cache.held_elsewhere(held)
            abandoned = [k for k in held if k not in still_held]
            if abandoned:
                held = [k for k in held if k in still_held]
                held += self._compute_unclaimed(abandoned, gathered)
            delay = POLL_FIRST if len(held) < before else min(2 * delay, POLL_MAX)

    def _release_claims(self) -> None:
        """Best effort, while an error or interrupt propagates: other runs may then compute
        what this one will not. A claim left behind lapses with its lease anyway."""
        with contextlib.suppress(sqlite3.Error):
            self.cache.release_claims()
