"""One writer per process and cache file: the writes that wait are committed together, a
failed one fails only its caller, and the file is checked once per process."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from faithprobe.subjects import answer_cache
from faithprobe.subjects.answer_cache import AnswerCache
from faithprobe.subjects.cache_writer import release_writer, writer_for


def _answers(path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT key, value FROM answers"))


def test_the_writes_that_wait_are_committed_in_one_transaction(tmp_path):
    path = tmp_path / "answers.sqlite"
    first = AnswerCache(path)
    first.put_many({"first": "{}"})  # makes the file
    caches = [first, *(AnswerCache(path) for _ in range(3))]  # opened here, written by threads
    writer = writer_for(path, 60.0)
    assert caches[0]._writer is writer
    held, release = threading.Event(), threading.Event()

    def hold(conn):  # keeps the writer busy while the others queue up
        held.set()
        release.wait(10)

    holder = threading.Thread(target=writer.write, args=(hold,))
    holder.start()
    held.wait(10)
    before = writer.transactions
    threads = [
        threading.Thread(target=c.put_many, args=({f"k{i}": f'"{i}"'},))
        for i, c in enumerate(caches)
    ]
    for t in threads:
        t.start()
    while writer._jobs.qsize() < len(caches):  # all four waiting behind the held one
        threading.Event().wait(0.01)
    release.set()
    for t in [holder, *threads]:
        t.join(10)
    assert writer.transactions == before + 2  # the held write, then the four together
    assert _answers(path) == {"first": "{}", **{f"k{i}": f'"{i}"' for i in range(4)}}
    release_writer(writer)
    for c in caches:
        c.close()


def test_a_write_that_fails_fails_only_its_caller(tmp_path):
    path = tmp_path / "answers.sqlite"
    cache = AnswerCache(path)
    cache.put_many({"first": "{}"})
    writer = writer_for(path, 60.0)
    held, release = threading.Event(), threading.Event()

    def hold(conn):
        held.set()
        release.wait(10)

    def broken(conn):
        conn.execute("INSERT INTO answers (key, value) VALUES ('x', '{}')")
        conn.execute("INSERT INTO no_such_table VALUES (1)")

    outcome: dict[str, BaseException] = {}

    def try_broken():
        try:
            writer.write(broken)
        except sqlite3.Error as err:
            outcome["broken"] = err

    holder = threading.Thread(target=writer.write, args=(hold,))
    holder.start()
    held.wait(10)
    others = [threading.Thread(target=try_broken),
              threading.Thread(target=cache.put_many, args=({"kept": "{}"},))]  # fmt: skip
    for t in others:
        t.start()
    while writer._jobs.qsize() < 2:
        threading.Event().wait(0.01)
    release.set()
    for t in [holder, *others]:
        t.join(10)
    assert "no such table" in str(outcome["broken"])
    assert _answers(path) == {"first": "{}", "kept": "{}"}  # not 'x': its write rolled back
    release_writer(writer)
    cache.close()


def test_a_file_is_checked_once_per_process(tmp_path, monkeypatch):
    checks = []
    real = answer_cache._quick_check
    monkeypatch.setattr(answer_cache, "_checked", set())  # an earlier test's file: same inode
    monkeypatch.setattr(answer_cache, "_quick_check", lambda conn: checks.append(1) or real(conn))
    path = tmp_path / "answers.sqlite"
    first = AnswerCache(path)
    first.put_many({"k": "{}"})  # made here: checked when made
    opened = [AnswerCache(path) for _ in range(3)]
    assert len(checks) == 1
    other = AnswerCache(tmp_path / "other.sqlite")
    other.put_many({"k": "{}"})
    assert len(checks) == 2  # another file is checked on its own
    for cache in [first, *opened, other]:
        cache.close()


def test_the_last_cache_closes_the_writer(tmp_path):
    path = tmp_path / "answers.sqlite"
    a, b = AnswerCache(path), AnswerCache(path)
    a.put_many({"a": "{}"})
    b.put_many({"b": "{}"})
    assert a._writer is b._writer
    writer = a._writer
    a.close()
    assert writer._thread.is_alive()
    b.close()
    assert not writer._thread.is_alive()
    assert not (tmp_path / "answers.sqlite-wal").exists()  # the last connection checkpointed
    with pytest.raises(KeyError):
        release_writer(writer)  # no longer registered
