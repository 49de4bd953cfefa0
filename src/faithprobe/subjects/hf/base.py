"""What the Hugging Face backends share: loading, fingerprinting, batch settings and the
bound on input length (:mod:`faithprobe.subjects.bounds`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from faithprobe.requests import Answer, Request
from faithprobe.subjects.base import Progress, Subject
from faithprobe.subjects.bounds import position_limit
from faithprobe.subjects.fingerprint import fingerprint_module
from faithprobe.subjects.hf.batching import length_sorted_batches
from faithprobe.subjects.identity import Identity


class HFSubject(Subject):
    """Backends implement ``_encode`` (request -> (encoded input, whether it was cut to fit
    ``max_length``)), ``_cost`` (padded length and rows of an encoded input, for batching)
    and ``_score_batch``; :meth:`answer` marks the answers to cut inputs ``truncated``."""

    identity: Identity  # kind and versions (:mod:`faithprobe.subjects.identity`)
    scoring_version: str
    auto_class: str  # the transformers Auto* class that loads the model

    def __init_subclass__(cls, **kwargs) -> None:
        """A backend that states its ``identity`` gets its kind, scoring version, accepted
        request kinds and request versions from it (they are declared there only)."""
        super().__init_subclass__(**kwargs)
        if identity := cls.__dict__.get("identity"):
            cls.kind, cls.scoring_version = identity.kind, identity.scoring_version
            cls.accepts, cls.request_versions = identity.accepts, dict(identity.request_versions)

    def __init__(
        self,
        model,
        tokenizer,
        *,
        name: str,
        fingerprint: str | None = None,
        batch_size: int = 16,
        max_batch_tokens: int = 32_768,
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.device = next(model.parameters()).device
        self._fingerprint = fingerprint
        self.max_length = position_limit(model, tokenizer)

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        *,
        name: str | None = None,
        trust_remote_code: bool = False,
        fingerprint: str | None = None,
        **kwargs,
    ):
        import transformers

        tokenizer = transformers.AutoTokenizer.from_pretrained(
            path, trust_remote_code=trust_remote_code
        )
        model = getattr(transformers, cls.auto_class).from_pretrained(
            path, dtype=torch.float32, trust_remote_code=trust_remote_code
        )
        if fingerprint is None and Path(path).exists():
            fingerprint = cls.identity.fingerprint(path)
        return cls(model, tokenizer, name=name or str(path), fingerprint=fingerprint, **kwargs)

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = fingerprint_module(
                self.model, self.tokenizer, self.identity.fingerprint_kind, self.scoring_version
            )
        return self._fingerprint

    def _encode(self, request: Request) -> tuple[Any, bool]:
        raise NotImplementedError

    def _cost(self, encoded: Any) -> tuple[int, int]:
        raise NotImplementedError

    def _score_batch(self, batch: list[Any]) -> list[Answer]:
        raise NotImplementedError

    def _steps(self, kind: str) -> tuple[Callable, Callable, Callable]:
        """(encode, cost, run a batch) for one request kind, ``encode`` returning (encoded
        input, whether it was cut to fit); a backend answering several kinds overrides this
        (the default serves every kind with ``_encode`` / ``_cost`` / ``_score_batch``)."""
        return self._encode, self._cost, self._score_batch

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        """Answer each request. A batch holds requests of one kind: a mixed list is split by
        kind, and the answers come back in request order."""
        self.check_accepts(requests)
        by_kind: dict[str, list[int]] = {}
        for i, r in enumerate(requests):
            by_kind.setdefault(r.kind, []).append(i)
        out: list[Answer | None] = [None] * len(requests)
        for kind, indices in by_kind.items():
            encode, cost, run = self._steps(kind)
            encoded, truncated = zip(*(encode(requests[i]) for i in indices), strict=True)
            lengths, rows = zip(*(cost(e) for e in encoded), strict=True)
            batches = length_sorted_batches(
                lengths, max_batch=self.batch_size, max_tokens=self.max_batch_tokens, rows=rows
            )
            for done, answered in self._answer_batches(kind, list(encoded), batches):
                for j, a in zip(done, answered, strict=True):
                    out[indices[j]] = replace(a, truncated=True) if truncated[j] else a
                if progress:
                    progress(len(done))
        return out  # type: ignore[return-value]

    def _answer_batches(
        self, kind: str, encoded: list[Any], batches: list[list[int]]
    ) -> Iterator[tuple[list[int], list[Answer]]]:
        """(Indices into ``encoded``, their answers) as they are done: each of ``batches``
        in turn, run by the kind's batch runner (:meth:`_steps`). A backend may answer them
        otherwise (the causal LM lets the next prompts join a generation batch)."""
        run = self._steps(kind)[2]
        for batch in batches:
            with torch.inference_mode():
                answered = run([encoded[j] for j in batch])
            yield batch, answered
