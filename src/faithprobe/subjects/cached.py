"""A subject wrapper that sends only cache misses to the model (the lm-eval-harness idea).

Requests are deduplicated by key, looked up in the cache, and the misses are computed in
chunks of whole requests (``Subject.answer_chunks``: in order in process, in parallel under
the Ray executor); every chunk is written to the cache as soon as it is done, so an
interrupted run loses at most the chunks in flight and a re-run is free.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from faithprobe.requests import Answer, Request
from faithprobe.subjects.base import Progress, Subject
from faithprobe.subjects.cache import AnswerCache


class CachedSubject(Subject):
    def __init__(self, inner: Subject, cache: AnswerCache, chunk_size: int = 64) -> None:
        self.inner = inner
        self.cache = cache
        self.chunk_size = chunk_size
        self.name = inner.name
        self.kind = inner.kind
        self.accepts = inner.accepts
        self.request_versions = inner.request_versions
        self.computed = 0  # requests actually sent to the model by this wrapper

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    def check_accepts(self, requests: Sequence[Request]) -> None:
        self.inner.check_accepts(requests)

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        keys = [r.key(self.inner.cache_fingerprint(r.kind)) for r in requests]
        unique = dict(zip(keys, requests, strict=True))
        uses = Counter(keys)
        answers = {k: unique[k].answer.from_json(v) for k, v in self.cache.get_many(unique).items()}
        if progress:
            progress(sum(uses[k] for k in answers))
        chunks = self._chunks([k for k in unique if k not in answers])
        for index, scored in self.inner.answer_chunks([unique[k] for k in c] for c in chunks):
            chunk = chunks[index]
            self.cache.put_many({k: s.to_json() for k, s in zip(chunk, scored, strict=True)})
            answers.update(zip(chunk, scored, strict=True))
            self.computed += len(chunk)
            if progress:
                progress(sum(uses[k] for k in chunk))
        return [answers[k] for k in keys]

    def _chunks(self, keys: list[str]) -> list[list[str]]:
        """``keys`` in chunks of ``chunk_size``, smaller when that keeps every one of the
        model's parallel workers busy."""
        size = max(1, min(self.chunk_size, -(-len(keys) // self.inner.parallel_chunks)))
        return [keys[i : i + size] for i in range(0, len(keys), size)]
