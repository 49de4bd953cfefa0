"""One writer per process and cache file: the writes that wait are committed together, a
failed one fails only its caller, the file is checked once per process, and checkpoints run
beside the writer without letting the WAL grow."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from faithprobe.subjects import answer_cache, cache_writer
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


def test_checkpoints_run_beside_the_writer(tmp_path, monkeypatch):
    """The writer's own checkpoints are off (at a WAL larger than the test writes), so
    pages reach the database file only through the checkpointer's thread."""
    monkeypatch.setattr(cache_writer, "WRITER_CHECKPOINT_PAGES", 1_000_000)
    monkeypatch.setattr(cache_writer, "CHECKPOINT_PAUSE", 0.0)
    path = tmp_path / "answers.sqlite"
    cache = AnswerCache(path)
    for shard in range(20):
        cache.put_many({f"{shard}-{i}": "x" * 200 for i in range(64)})
    deadline = time.monotonic() + 10
    while path.stat().st_size < 20 * 64 * 200 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert path.stat().st_size >= 20 * 64 * 200  # the answers are in the file itself
    assert cache._writer.checkpoints >= 1
    cache.close()


def test_the_wal_starts_again_while_writes_never_pause(tmp_path, monkeypatch):
    """With writes always waiting, the checkpointer never finds the WAL fully copied; the
    writer's checkpoint of the tail lets SQLite write the WAL from its start again, so it
    stays near ``WRITER_CHECKPOINT_PAGES`` however much is written."""
    monkeypatch.setattr(cache_writer, "WRITER_CHECKPOINT_PAGES", 50)
    path = tmp_path / "answers.sqlite"
    first = AnswerCache(path)
    first.put_many({"first": "{}"})  # the file, so that each cache opens it here
    caches = [AnswerCache(path) for _ in range(4)]

    def write(c: int) -> None:
        for shard in range(60):
            caches[c].put_many({f"{c}-{shard}-{i}": "x" * 200 for i in range(64)})

    threads = [threading.Thread(target=write, args=(c,)) for c in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    written = 4 * 60 * 64 * 200  # bytes of answers alone: some 3 MB
    wal = (tmp_path / "answers.sqlite-wal").stat().st_size
    assert wal < written / 3, f"the WAL grew to {wal} bytes"
    assert len(first) == 1 + 4 * 60 * 64
    for c in [first, *caches]:
        c.close()
