"""Follow-up requests (``Suite.follow_ups``): requests made from a subject's own earlier
answers, asked by the runner in rounds until none is new, cached like every request (a
second run computes nothing), and shown to a reference model with their example."""

from __future__ import annotations

from faithprobe.expectations import ANSWER_UNCHANGED
from faithprobe.interventions import Pair
from faithprobe.records import ClozeExample
from faithprobe.requests import Generation, GenerationRequest
from faithprobe.runner import answer_all
from faithprobe.subjects.answer_cache import AnswerCache
from faithprobe.subjects.base import Subject
from faithprobe.subjects.cached_subject import CachedSubject
from faithprobe.suite_protocol import NoOptions, Suite


class Counter(Subject):
    """Writes the number of words in its prompt; records every prompt it computed."""

    name, kind, accepts = "counter", "test", frozenset({GenerationRequest.kind})

    def __init__(self) -> None:
        self.seen: list[str] = []

    @property
    def fingerprint(self) -> str:
        return "counter-1"

    def answer(self, requests, progress=None):
        self.seen += [r.prompt for r in requests]
        return [Generation(str(len(r.prompt.split())), 1) for r in requests]


class Chain(Suite):
    """Asks a prompt, then the prompt with the answer appended, twice over (a chain of
    three rounds), for the original only."""

    name = "chain"

    def __init__(self) -> None:
        super().__init__(NoOptions())

    def pairs(self, data, seed):
        raise NotImplementedError

    def stratum(self, pair):
        return "all"

    def request(self, example, subject=None):
        return GenerationRequest(example.context)

    def follow_ups(self, pairs, subject, answers):
        out = {}
        for p in pairs:
            prompt = p.original.context
            for step in ("first", "second"):
                key = (p.original.id, step)
                before = answers.get((p.original.id, "first")) if step == "second" else None
                said = answers[p.original.id] if step == "first" else before
                if said is None:
                    break
                prompt = f"{prompt} {said.text} more"
                out[key] = GenerationRequest(prompt)
        return out

    def rows(self, pairs, subject, answers):
        return []

    def metrics(self, results, seed):
        return {}


def _pairs() -> list[Pair]:
    a = ClozeExample("a", "one two three", "x", ("x",))
    b = ClozeExample("b", "one two", "x", ("x",))
    return [Pair(a, b, "none", ANSWER_UNCHANGED), Pair(b, a, "none", ANSWER_UNCHANGED)]


def test_follow_ups_are_asked_in_rounds_and_cached(tmp_path):
    suite, pairs = Chain(), _pairs()
    subject = Counter()
    cache = AnswerCache(tmp_path / "cache.sqlite")
    answers = answer_all(suite, pairs, CachedSubject(subject, cache), None)
    cache.close()
    # round 1: the two prompts; round 2: each + its answer; round 3: that + its answer
    # (within a round in the cache's reading order: sorted by prompt)
    assert answers["a"].text == "3" and answers[("a", "first")].text == "5"
    assert answers[("a", "second")].text == "7"
    assert answers[("b", "second")].text == "6"
    assert subject.seen == [
        "one two", "one two three",
        "one two 2 more", "one two three 3 more",
        "one two 2 more 4 more", "one two three 3 more 5 more",
    ]  # fmt: skip
    again = Counter()
    cache = AnswerCache(tmp_path / "cache.sqlite")
    assert answer_all(suite, pairs, CachedSubject(again, cache), None) == answers
    cache.close()
    assert again.seen == []  # every round came from the cache


class Reading(Counter):
    """A subject that reads the example behind each request (as reference models do)."""

    reads_examples = True

    def read_examples(self, by_request, origins=None):
        self.shown = dict(by_request)

    def answer(self, requests, progress=None):
        self.seen += [self.shown[r].id for r in requests]
        return [Generation(str(len(r.prompt.split())), 1) for r in requests]


def test_a_reading_subject_is_shown_each_follow_ups_example():
    subject = Reading()
    answer_all(Chain(), _pairs(), subject, None)
    assert subject.seen == ["a", "b", "a", "b", "a", "b"]
