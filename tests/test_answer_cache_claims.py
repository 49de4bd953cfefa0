"""Runs sharing a cache file split the work through claims instead of both computing it."""

from __future__ import annotations

import multiprocessing
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from faithprobe.requests import Answer, CandidateScoreRequest, CandidateScores
from faithprobe.subjects.answer_cache import AnswerCache
from faithprobe.subjects.base import Subject
from faithprobe.subjects.cached_subject import CachedSubject

GENEROUS = 120  # seconds before a test that should take one gives up instead of hanging


def _requests(n: int) -> list[CandidateScoreRequest]:
    return [
        CandidateScoreRequest(f"Item {i} lives in France. The capital is", ("Paris", "Rome"))
        for i in range(n)
    ]


def _echo(request: CandidateScoreRequest) -> CandidateScores:
    """The same answer in every process (``hash`` of a str is not)."""
    checksum = sum(map(ord, request.context)) % 97
    return CandidateScores((-float(len(request.context)), -float(checksum)), (1, 1))


class Echo(Subject):
    """Answers from the prompt alone, records the prompts it computed, and can sleep per chunk
    (so that two runs overlap) or call ``after_chunk(n computed so far)``."""

    name, kind = "echo", "test"

    def __init__(
        self, delay: float = 0.0, after_chunk: Callable[[int], None] | None = None
    ) -> None:
        self.delay, self.after_chunk = delay, after_chunk
        self.seen: list[str] = []

    @property
    def fingerprint(self) -> str:
        return "echo-1"

    def answer(self, requests, progress=None):
        time.sleep(self.delay)
        self.seen += [r.context for r in requests]
        if self.after_chunk:
            self.after_chunk(len(self.seen))
        return [_echo(r) for r in requests]


def _key(request: CandidateScoreRequest) -> str:
    return request.key(Echo().fingerprint)


def _claims(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT key, owner FROM claims"))


def _leave_claims(path: Path, keys: list[str], owner: str, expires: float) -> None:
    """Claims as another run leaves them, written straight into the file."""
    AnswerCache(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(  # as AnswerCache makes it (spelled out: tests run against older code)
            "CREATE TABLE IF NOT EXISTS claims "
            "(key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)"
        )
        conn.executemany(
            "INSERT INTO claims (key, owner, expires) VALUES (?, ?, ?)",
            [(k, owner, expires) for k in keys],
        )


def _answer_within(
    seconds: float, path: Path, requests: list, subject: Subject, progress=None
) -> list[Answer]:
    """``requests`` answered through the cache at ``path``; fails the test instead of hanging
    when that takes more than ``seconds``."""
    out: dict[str, object] = {}

    def work() -> None:
        cache = AnswerCache(path)
        try:
            out["answers"] = CachedSubject(subject, cache, chunk_size=10).answer(requests, progress)
        except BaseException as err:  # re-raised in the test's thread
            out["error"] = err
        finally:
            cache.close()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still not answered after {seconds} s"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["answers"]  # type: ignore[return-value]


def _run_in_process(path: Path, n: int, start, results) -> None:
    """One of two identical runs (a spawned process): answers ``n`` requests via the cache."""
    start.wait(GENEROUS)
    subject, progress = Echo(delay=0.02), []
    cache = AnswerCache(path)
    answers = CachedSubject(subject, cache, chunk_size=10).answer(_requests(n), progress.append)
    cache.close()
    results.put(
        {"seen": subject.seen, "progress": sum(progress), "answers": [a.to_json() for a in answers]}
    )


def test_two_identical_runs_compute_each_answer_once(tmp_path):
    path, n = tmp_path / "answers.sqlite", 200
    spawn = multiprocessing.get_context("spawn")
    start, results = spawn.Barrier(2), spawn.Queue()
    runs = [spawn.Process(target=_run_in_process, args=(path, n, start, results)) for _ in "ab"]
    for run in runs:
        run.start()
    a, b = (results.get(timeout=GENEROUS) for _ in runs)
    for run in runs:
        run.join(GENEROUS)
        assert run.exitcode == 0
    assert len(a["seen"]) + len(b["seen"]) == n  # not 2 * n
    assert sorted(a["seen"] + b["seen"]) == sorted(r.context for r in _requests(n))
    assert a["answers"] == b["answers"] == [_echo(r).to_json() for r in _requests(n)]
    assert a["progress"] == b["progress"] == n
    assert _claims(path) == {}


def test_requests_another_run_holds_are_waited_for_after_the_rest(tmp_path):
    path = tmp_path / "answers.sqlite"
    requests = _requests(50)
    theirs = requests[:10]  # the first chunk: a run that waited for it first would wait 30 s
    owner = f"{socket.gethostname()}:{os.getpid()}:other"  # a live run (this process)
    _leave_claims(path, [_key(r) for r in theirs], owner, time.time() + 30)

    def the_other_run_finishes(computed: int) -> None:
        if computed == 40:  # only once all of ours are computed
            assert list(_claims(path).values()).count(owner) == 10  # still theirs
            other = AnswerCache(path)
            other.put_many({_key(r): _echo(r).to_json() for r in theirs})
            other.close()

    subject, progress = Echo(after_chunk=the_other_run_finishes), []
    answers = _answer_within(GENEROUS, path, requests + requests[:5], subject, progress.append)
    assert subject.seen == [r.context for r in requests[10:]]
    assert answers == [_echo(r) for r in requests + requests[:5]]
    assert sum(progress) == 55  # every request once, those answered elsewhere included
    assert _claims(path) == {}


def _dead_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(child.stdout)


@pytest.mark.parametrize(
    "left_behind",
    ["by a process that ended", "with a lapsed lease", "on another host, lease lapsed"],
)
def test_a_claim_nobody_will_honour_is_taken_over(tmp_path, left_behind):
    path = tmp_path / "answers.sqlite"
    host, now = socket.gethostname(), time.time()
    owner, expires = {
        "by a process that ended": (f"{host}:{_dead_pid()}:gone", now + 3600),
        "with a lapsed lease": (f"{host}:{os.getpid()}:stuck", now - 1),
        "on another host, lease lapsed": (f"elsewhere:{os.getpid()}:stuck", now - 1),
    }[left_behind]
    requests = _requests(20)
    _leave_claims(path, [_key(r) for r in requests], owner, expires)
    subject = Echo()
    assert _answer_within(GENEROUS, path, requests, subject) == [_echo(r) for r in requests]
    assert len(subject.seen) == 20 and _claims(path) == {}


def test_claims_are_exclusive_and_dropped_with_their_answers_and_on_close(tmp_path):
    path = tmp_path / "answers.sqlite"
    first, second = AnswerCache(path), AnswerCache(path)
    assert first.claim(["a", "b", "c"], lease=60) == ["a", "b", "c"]
    assert second.claim(["b", "c", "d"], lease=60) == ["d"]
    assert second.claim(["d", "e", "d", "b"], lease=60) == ["d", "e", "d"]  # its own stay its
    assert _claims(path)["d"] == second.owner
    assert second.held_elsewhere(["a", "b", "c", "d"]) == {"a", "b", "c"}
    first.put_many({"a": "{}"})
    assert _claims(path) == {"b": first.owner, "c": first.owner, "d": second.owner,
                             "e": second.owner}  # fmt: skip
    assert second.claim(["a"], lease=60) == []  # answered: nothing to compute
    first.close()
    assert _claims(path) == {"d": second.owner, "e": second.owner}
    assert second.claim(["b", "c"], lease=60) == ["b", "c"]
    second.close()
    assert _claims(path) == {}


def test_claims_in_flight_are_renewed_as_chunks_finish_at_most_ten_times_a_lease(
    tmp_path, monkeypatch
):
    """A pool of actors takes up every chunk (claiming it) before the first finishes; the
    chunks then finish 2 s apart on the clock the claims' leases run on. The last chunk's
    claims are renewed at the first chunk to finish, and again only once a tenth of the
    lease (6 s) has passed."""
    clock = [1000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    path = tmp_path / "answers.sqlite"
    requests = _requests(50)
    last = _key(sorted(requests, key=lambda r: r.reading_order())[-1])  # in the last chunk
    expiries = []

    class Pool(Echo):
        parallel_chunks = 5

        def answer_chunks(self, chunks):
            taken = list(chunks)  # claimed at 1000 s: they expire at 1060 s
            for index, chunk in enumerate(taken):
                with sqlite3.connect(path) as conn:
                    expiries.append(
                        conn.execute("SELECT expires FROM claims WHERE key = ?", (last,)).fetchone()
                    )
                clock[0] += 2.0
                yield index, self.answer(chunk)

    cache = AnswerCache(path)
    answers = CachedSubject(Pool(), cache, chunk_size=10, lease=60).answer(requests)
    assert answers == [_echo(r) for r in requests]
    # finished at 1002 (renewed: 1062), 1004, 1006 (not), 1008 (renewed: 1068)
    assert expiries == [(1060.0,), (1062.0,), (1062.0,), (1062.0,), (1068.0,)]
    assert _claims(path) == {}
    cache.close()


def test_an_interrupted_run_releases_its_claims_and_keeps_its_answers(tmp_path):
    path = tmp_path / "answers.sqlite"

    def interrupt_on_the_second_chunk(computed: int) -> None:
        if computed > 10:
            assert len(_claims(path)) == 10
            raise KeyboardInterrupt("simulated Ctrl-C")

    cache = AnswerCache(path)
    cached = CachedSubject(Echo(after_chunk=interrupt_on_the_second_chunk), cache, chunk_size=10)
    with pytest.raises(KeyboardInterrupt):
        cached.answer(_requests(30))
    assert _claims(path) == {}  # before close: others need not wait for this run
    assert len(cache) == 10 and cached.computed == 10
    cache.close()


def test_a_cache_file_from_before_claims_keeps_its_answers(tmp_path):
    path = tmp_path / "answers.sqlite"
    (request,) = _requests(1)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO answers VALUES (?, ?)", (_key(request), _echo(request).to_json()))
    subject = Echo()
    assert _answer_within(GENEROUS, path, _requests(2), subject) == [_echo(r) for r in _requests(2)]
    assert subject.seen == [_requests(2)[1].context]


def test_a_cache_file_whose_claims_were_indexed_by_owner_loses_the_index_not_its_claims(tmp_path):
    """Caches made before issue 60 indexed claims by owner; every claim paid for it."""
    path = tmp_path / "answers.sqlite"
    _leave_claims(path, ["a"], "elsewhere:1:x", expires=time.time() + 600)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE INDEX claims_by_owner ON claims (owner)")
    cache = AnswerCache(path)
    with sqlite3.connect(path) as conn:
        indexes = [name for (name,) in conn.execute("SELECT name FROM sqlite_master")]
    assert "claims_by_owner" not in indexes
    assert cache.held_elsewhere(["a", "b"]) == {"a"}
    assert cache.claim(["a", "b"], lease=60) == ["b"]
    cache.close()
    assert _claims(path) == {"a": "elsewhere:1:x"}
