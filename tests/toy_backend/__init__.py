"""A model backend from outside faithprobe, in one module: ``--model toy:ANYTHING`` is a
subject that scores every candidate by its length (shorter is likelier), with one setting,
``bias``, added to every score. Installed as a plug-in in the entry-point group
``faithprobe.backends`` by ``tests/test_toy_backend.py``."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from faithprobe.options import option
from faithprobe.requests import CandidateScoreRequest, CandidateScores
from faithprobe.subjects.backends import Backend
from faithprobe.subjects.base import Subject


@dataclass(frozen=True)
class ToySettings:
    bias: float = option(0.0, "added to every candidate's score")


class ToySubject(Subject):
    kind = "toy"

    def __init__(self, name: str, settings: ToySettings) -> None:
        self.name, self.settings = name, settings

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(f"toy\x1f{self.name}\x1f{self.settings.bias}".encode()).hexdigest()[
            :16
        ]

    def answer(self, requests, progress=None):
        answers = [
            CandidateScores(
                logprobs=tuple(self.settings.bias - len(c) for c in r.candidates),
                n_tokens=tuple(1 for _ in r.candidates),
            )
            for r in requests
        ]
        if progress:
            progress(len(requests))
        return answers


BACKEND = Backend(
    "toy",
    "a toy backend from a plug-in: candidates scored by their length",
    load=lambda spec, loading: ToySubject(spec.text, spec.settings),
    settings=ToySettings,
    answers={CandidateScoreRequest.kind: ""},
)
