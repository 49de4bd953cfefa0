"""The one writer of an answer cache file in this process: every
:class:`~faithprobe.subjects.answer_cache.AnswerCache` open on the file hands it its writes
(answers, claims, renewals), and it commits the writes that are waiting together, in one
transaction (a group commit).

A transaction's cost is mostly its commit: the pages it changed written to the WAL, and
every few commits a checkpoint copying them back. With content-addressed keys each answer
lands on a random page of the key index, so a shard of 64 answers dirties about as many
pages as it has answers, and committing the shards of many model threads together (the audit
on a cluster: a thread per model) writes each page once per transaction rather than once per
shard. Each caller still waits for the commit that holds its writes, so an answer a call has
written survives a kill, as before. Should a transaction of several callers' writes fail,
each is tried again alone, so a caller sees only its own error.

Checkpoints run beside the writer, on a connection and thread of their own (a *passive*
checkpoint copies committed pages while the next transaction is written): copying the
pages back and syncing the files was a third of the writer's time when it checkpointed
itself, which capped the cache at one core's worth of commits (issue 60). The writer still
checkpoints what the checkpointer has not yet copied once the WAL reaches
``WRITER_CHECKPOINT_PAGES`` -- by then mostly copied, so a short tail -- which also lets
SQLite start the WAL again from its beginning, so it does not grow while writes never pause.

The writer's connection also keeps more of the file's pages in memory (``CACHE_KIB``): a
cache of a million answers is some 230 MB, its key index a fifth of that.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
Work = Callable[[sqlite3.Connection], T]

CACHE_KIB = 64 * 1024  # the writer's page cache
WRITER_CHECKPOINT_PAGES = 40_000  # WAL pages (4 KiB) at which the writer checkpoints the rest
CHECKPOINT_PAUSE = 0.05  # seconds between the checkpointer's rounds: pages written again
# within it are copied once
_STOP = object()


class CacheWriter:
    """Commits the writes handed to :meth:`write` on a thread of its own, over one
    connection to ``path``, and checkpoints on another; :func:`writer_for` gives the one of
    a file."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self._conn = sqlite3.connect(path, timeout=timeout, check_same_thread=False)
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        self._conn.execute(f"PRAGMA wal_autocheckpoint={WRITER_CHECKPOINT_PAGES}")
        self._checkpointing = sqlite3.connect(path, timeout=timeout, check_same_thread=False)
        self._checkpointing.execute("PRAGMA synchronous=NORMAL")  # syncs as the writer would
        self._committed = threading.Event()  # set by each commit, taken by the checkpointer
        self._closing = False
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.writes = self.transactions = 0  # handed over / committed (writes per commit)
        self.checkpoints = 0  # the checkpointer's rounds
        self._thread = threading.Thread(
            target=self._run, name=f"cache-writer:{path.name}", daemon=True
        )
        self._checkpointer = threading.Thread(
            target=self._checkpoint, name=f"cache-checkpointer:{path.name}", daemon=True
        )
        self._thread.start()
        self._checkpointer.start()

    def write(self, work: Work[T]) -> T:
        """``work(connection)`` inside a write transaction (begun immediate, so what it
        reads stays true until the commit); its result once committed."""
        done: Future = Future()
        self._jobs.put((work, done))
        return done.result()

    def close(self) -> None:
        """Commit what is waiting, then stop both threads and close their connections."""
        self._jobs.put(_STOP)
        self._thread.join()
        self._closing = True
        self._committed.set()
        self._checkpointer.join()
        self._checkpointing.close()
        self._conn.close()

    def _checkpoint(self) -> None:
        """Passive checkpoints while commits come, one round per ``CHECKPOINT_PAUSE`` at
        most. One that cannot run (the writer checkpointing its tail, a full disk) is left
        to the next round or the writer's own checkpoint: nothing is lost by skipping it."""
        while True:
            self._committed.wait()
            if self._closing:
                return
            self._committed.clear()
            with contextlib.suppress(sqlite3.OperationalError):
                self._checkpointing.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            self.checkpoints += 1
            time.sleep(CHECKPOINT_PAUSE)

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
        self._committed.set()
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
