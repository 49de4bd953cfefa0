import sqlite3
import threading
import warnings

import pandas as pd
import pytest

from faithprobe.report import run_to_folder as run
from faithprobe.requests import CandidateScoreRequest, CandidateScores
from faithprobe.runner import RunConfig
from faithprobe.subjects.answer_cache import AnswerCache
from faithprobe.subjects.base import Subject
from faithprobe.subjects.cached_subject import CachedSubject
from faithprobe.subjects.hf.causal import HFCausal


class Counting(Subject):
    """Wraps a subject; counts requests and can fail after a number of calls."""

    def __init__(self, inner: Subject, fail_after: int | None = None) -> None:
        self.inner, self.fail_after = inner, fail_after
        self.name, self.kind = inner.name, inner.kind
        self.calls = self.requests = 0

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    def answer(self, requests, progress=None):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt("simulated kill")
        self.calls += 1
        self.requests += len(requests)
        return self.inner.answer(requests, progress)


@pytest.fixture
def subject(tiny_llama, tiny_tokenizer):
    return HFCausal(tiny_llama, tiny_tokenizer, name="tiny", batch_size=8)


def _run(tmp_path, subject, name, cache=True):
    config = RunConfig(
        suite="distractors",
        limit=60,
        seed=1,
        out=tmp_path / name,
        cache=cache,
        cache_dir=tmp_path / "cache",
    )
    return run(config, subjects=[subject])


def test_identical_requests_are_computed_once(tmp_path, subject):
    counting = Counting(subject)
    cached = CachedSubject(counting, AnswerCache(None), chunk_size=4)
    r = CandidateScoreRequest("Sebastian lives in France. The capital is", ("Paris", "Rome"))
    s = CandidateScoreRequest("Emma lives in Chile. The capital is", ("Santiago", "Lima"))
    out = cached.answer([r, s, r, r, s])
    assert counting.requests == 2
    assert out[0] == out[2] == out[3] and out[1] == out[4]


def test_requests_beginning_alike_reach_the_model_in_one_chunk(subject):
    """Chunks are cut from the requests sorted by their text, so a model that reads a shared
    beginning once (packed scoring) finds requests beginning alike side by side."""
    chunks = []

    class Recording(Counting):
        def answer(self, requests, progress=None):
            chunks.append([r.context for r in requests])
            return super().answer(requests, progress)

    cached = CachedSubject(Recording(subject), AnswerCache(None), chunk_size=2)
    asked = [
        CandidateScoreRequest("Emma lives in Chile. The capital is", ("Santiago", "Lima")),
        CandidateScoreRequest("Anna lives in France. The capital is", ("Paris", "Rome")),
        CandidateScoreRequest("Emma lives in Chile. Its largest city is", ("Santiago",)),
        CandidateScoreRequest("Anna lives in France. Its largest city is", ("Paris",)),
    ]
    out = cached.answer(asked)
    assert chunks == [[asked[3].context, asked[1].context], [asked[2].context, asked[0].context]]
    alone = subject.answer(asked)  # in other batches: equal up to rounding
    assert [a.logprobs for a in out] == [pytest.approx(a.logprobs, abs=1e-5) for a in alone]


def test_second_run_is_served_from_cache(tmp_path, subject):
    first = Counting(subject)
    a = _run(tmp_path, first, "a")
    second = Counting(subject)
    b = _run(tmp_path, second, "b")
    assert first.requests > 0 and second.requests == 0
    pd.testing.assert_frame_equal(
        pd.read_parquet(a / "results.parquet"), pd.read_parquet(b / "results.parquet")
    )


def test_interrupted_run_resumes_with_identical_results(tmp_path, subject):
    reference = _run(tmp_path, subject, "reference", cache=False)
    killed = Counting(subject, fail_after=1)
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, killed, "resumed")
    assert not (tmp_path / "resumed" / "results.parquet").exists()
    done_before = killed.requests
    assert done_before > 0
    resumed = Counting(subject)
    out = _run(tmp_path, resumed, "resumed")
    total = len(AnswerCache(tmp_path / "cache" / "answers.sqlite"))
    assert resumed.requests == total - done_before  # only what was missing
    pd.testing.assert_frame_equal(
        pd.read_parquet(reference / "results.parquet"), pd.read_parquet(out / "results.parquet")
    )


def test_corrupt_cache_is_set_aside_and_rebuilt(tmp_path):
    path = tmp_path / "answers.sqlite"
    good = AnswerCache(path)
    good.put_many({"k": CandidateScores((-1.0,), (1,)).to_json()})
    good.close()
    path.write_bytes(b"this is not a database" * 100)
    with pytest.warns(RuntimeWarning, match="unreadable"):
        rebuilt = AnswerCache(path)
    assert len(rebuilt) == 0
    rebuilt.put_many({"k2": "{}"})
    assert rebuilt.get_many(["k2"]) == {"k2": "{}"}
    assert list(tmp_path.glob("answers.sqlite.corrupt-*"))
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_cache_another_connection_is_writing_is_waited_for_not_set_aside(tmp_path):
    # what two runs opening a new cache together meet: SQLite says "locked" without waiting
    path = tmp_path / "answers.sqlite"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO answers VALUES ('k', '{}')")
    commit = threading.Timer(0.5, writer.execute, ["COMMIT"])
    commit.start()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning here means the file was moved aside
        cache = AnswerCache(path)
    commit.join()
    writer.close()
    assert cache.get_many(["k"]) == {"k": "{}"}
    assert not list(tmp_path.glob("answers.sqlite.corrupt-*"))
    cache.close()


def test_a_request_kind_version_changes_only_that_kinds_keys(tmp_path, tiny_llama, tiny_tokenizer):
    from faithprobe.requests import GenerationRequest

    subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny")
    score, gen = CandidateScoreRequest("a b", ("c",)), GenerationRequest("a b", 3)
    assert subject.cache_fingerprint(score.kind) == subject.fingerprint
    before = subject.cache_fingerprint(gen.kind)
    assert before.startswith(subject.fingerprint) and before != subject.fingerprint
    subject.request_versions = {"generation": "a-later-version"}
    assert subject.cache_fingerprint(gen.kind) != before
    assert subject.cache_fingerprint(score.kind) == subject.fingerprint
    cached = CachedSubject(subject, AnswerCache(tmp_path / "c.sqlite"))
    first = cached.answer([score, gen])
    assert cached.computed == 2 and first == cached.answer([score, gen]) and cached.computed == 2
