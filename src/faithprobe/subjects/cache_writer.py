"""The one writer of an answer cache file in this process: every
:class:`~faithprobe.subjects.answer_cache.AnswerCache` open on the file hands it its writes
(answers, claims, renewals), and it commits the writes that are waiting together, in one
transaction (a group commit).

A transaction's cost is mostly its commit: the pages it changed written to the WAL, and
every few commits a checkpoint copying them back. With content-addressed keys each answer
lands on a random page of the key index, so a shard of 64 answers dirties about as many
pages as it has answers, and committing the shards of many model threads together (the audit
on a cluster: a thread per model) writes each page once per transaction rather than once per
shard, and checkpoints less often. Each caller still waits for the commit that holds its
writes, so an answer a call has written survives a kill, as before. Should a transaction of
several callers' writes fail, each is tried again alone, so a caller sees only its own
error.

The writer's connection also keeps more of the file's pages in memory (``CACHE_KIB``) and
checkpoints less often (``CHECKPOINT_PAGES``) than SQLite's defaults: a cache of a million
answers is some 230 MB, its key index a fifth of that.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
Work = Callable[[sqlite3.Connection], T]

CACHE_KIB = 64 * 1024  # the writer's page cache
CHECKPOINT_PAGES = 10_000  # WAL pages (4 KiB) between automatic checkpoints; SQLite's: 1000
_STOP = object()


class CacheWriter:
    """Commits the writes handed to :meth:`write` on a thread of its own, over one
    connection to ``path``; :func:`writer_for` gives the one of a file."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self._conn = sqlite3.connect(path, timeout=timeout, check_same_thread=False)
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        self._conn.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.writes = self.transactions = 0  # handed over / committed (writes per commit)
        self._thread = threading.Thread(
            target=self._run, name=f"cache-writer:{path.name}", daemon=True
        )
        self._thread.start()

    def write(self, work: Work[T]) -> T:
        """``work(connection)`` inside a write transaction (begun immediate, so what it
        reads stays true until the commit); its result once committed."""
        done: Future = Future()
        self._jobs.put((work, done))
        return done.result()

    def close(self) -> None:
        """Commit what is waiting, then stop and close the connection."""
        self._jobs.put(_STOP)
        self._thread.join()
        self._conn.close()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is _STOP:
                return
            jobs = [job]
            stop = False
            while not self._jobs.empty():  # everything waiting goes into this transaction
                job = self._jobs.get()
                if job is _STOP:
                    stop = True
                    break
                jobs.append(job)
            self._commit(jobs)
            if stop:
                return

    def _commit(self, jobs: list[tuple[Work, Future]]) -> None:
        try:
            with self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                results = [work(self._conn) for work, _ in jobs]
        except BaseException as err:
            if len(jobs) > 1:  # each alone, so that each caller gets its own outcome
                for job in jobs:
                    self._commit([job])
            else:
                jobs[0][1].set_exception(err)
            return
        self.writes += len(jobs)
        self.transactions += 1
        for (_, done), result in zip(jobs, results, strict=True):
            done.set_result(result)


_lock = threading.Lock()
_writers: dict[tuple[int, str], tuple[CacheWriter, int]] = {}  # (pid, file) -> writer, users


def writer_for(path: Path, timeout: float) -> CacheWriter:
    """The writer of the cache file at ``path`` in this process (made on first use); each
    call is matched by a :func:`release_writer`."""
    key = (os.getpid(), os.path.realpath(path))  # a forked child makes its own
    with _lock:
        writer, users = _writers.get(key, (None, 0))
        if writer is None:
            writer = CacheWriter(path, timeout)
        _writers[key] = (writer, users + 1)
    return writer


def release_writer(writer: CacheWriter) -> None:
    """One user of ``writer`` is done with it; the last one closes it."""
    key = (os.getpid(), os.path.realpath(writer.path))
    with _lock:
        _, users = _writers[key]
        if users > 1:
            _writers[key] = (writer, users - 1)
            return
        del _writers[key]
    writer.close()
