"""The answer cache as the audit's driver uses it on a cluster: sustained answers/s.

Several model threads (``--threads``) write ``--answers`` answers between them (the same for
every thread count, so that each count meets the same cache) in shards of ``--shard``
answers into one cache file already holding ``--prefill`` answers, as the model threads of
:mod:`faithprobe.audit.cluster` do: each thread holds ``--in-flight`` shards claimed at a
time (a model's actors each computing one), and as a shard is done it claims the next,
writes the done one's answers and renews its claims
(:meth:`~faithprobe.subjects.cached_subject.CachedSubject._store`: a renewal rewrites every
claim in flight, so a thread's renewals cost as many rows as its other shards hold). Two
sides on the same prefilled file (a fresh copy each), in this one run:

* ``per-shard``: the driver before issue 60, rebuilt here with the same SQL: a connection of
  its own per model thread, each opened with ``PRAGMA quick_check``, and the claim, the write
  and the renewal each their own transaction;
* ``answer-cache``: :class:`~faithprobe.subjects.answer_cache.AnswerCache` as it is, an
  instance per model thread.

Each round runs in a process of its own (so the first open of a cache is a process's first),
``--rounds`` times per side and thread count, the sides alternating so that the machine's
load falls on both alike. Answers/s is counted from the moment every thread has opened its
cache until the last one has written its share; beside it, answers per CPU-second of the
process (all its threads), which is what a machine whose cores are busy with other jobs
still shows of the cache's own cost. The median round is reported, with the time to open a
cache (the slowest thread's, and the median). Each round's copy of the prefilled file is
synced to disk before the round, so that the round's checkpoints do not pay for writing the
copy out. Answers are synthetic ``CandidateScores`` of two candidates (about 70 characters
of JSON, near the 82 of a real audit's cache). Usage:

    python benchmarks/answer_cache_throughput.py [--threads 1,8,32] [--shard 64]
        [--prefill 1000000] [--answers 307200] [--in-flight 4] [--rounds 3] [--work DIR]
        [--json benchmarks/results/answer_cache_throughput.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import secrets
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from faithprobe.requests import CandidateScores
from faithprobe.subjects.answer_cache import AnswerCache
from faithprobe.subjects.cache_writer import release_writer, writer_for
from faithprobe.subjects.cached_subject import DEFAULT_LEASE

TARGET = 40_000  # answers/s the driver must take at 128 workers at GPU speed (issue 60)


def answers(n: int, rng: random.Random) -> list[str]:
    """``n`` answer JSON texts like a scoring step's."""
    return [
        CandidateScores(
            (rng.uniform(-12, 0), rng.uniform(-12, 0)), (1, rng.randint(1, 3))
        ).to_json()
        for _ in range(n)
    ]


def prefilled(folder: Path, count: int) -> Path:
    """A cache file in ``folder`` holding ``count`` answers (made once, then reused)."""
    path = folder / f"prefilled-{count}.sqlite"
    if path.is_file():
        return path
    values = answers(1000, random.Random(0))
    cache = AnswerCache(folder / "making.sqlite")
    for start in range(0, count, 50_000):
        n = min(50_000, count - start)
        cache.put_many({secrets.token_hex(32): values[i % 1000] for i in range(n)})
    cache.close()
    (folder / "making.sqlite").rename(path)
    return path


def synced(path: Path) -> None:
    """``path``'s data written to disk (``fsync``)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class PerShard:
    """The driver's cache before issue 60, for the baseline: its SQL, a connection per
    thread opened with ``quick_check``, three transactions per shard."""

    def __init__(self, path: Path) -> None:
        self.owner = f"{os.getpid()}:{secrets.token_hex(4)}"
        self.conn = sqlite3.connect(path, timeout=60)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        assert self.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"

    def claim(self, keys: list[str], lease: float) -> None:
        now = time.time()
        marks = ",".join("?" * len(keys))
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(
                f"SELECT key, owner, expires FROM claims WHERE key IN ({marks}) AND owner != ?",
                [*keys, self.owner],
            ).fetchall()
            self.conn.executemany(
                "INSERT OR IGNORE INTO claims (key, owner, expires) SELECT ?, ?, ? "
                "WHERE NOT EXISTS (SELECT 1 FROM answers WHERE key = ?)",
                ((k, self.owner, now + lease, k) for k in keys),
            )
            self.conn.execute(
                f"SELECT key FROM claims WHERE key IN ({marks}) AND owner = ?",
                [*keys, self.owner],
            ).fetchall()

    def put_many(self, items: dict[str, str]) -> None:
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)", items.items()
            )
            self.conn.executemany("DELETE FROM claims WHERE key = ?", ((k,) for k in items))

    def renew_claims(self, lease: float) -> None:
        with self.conn:
            self.conn.execute(
                "UPDATE claims SET expires = ? WHERE owner = ?", (time.time() + lease, self.owner)
            )

    def close(self) -> None:
        self.conn.close()


SIDES: dict[str, Callable[[Path], object]] = {"per-shard": PerShard, "answer-cache": AnswerCache}


def one_round(
    make, path: Path, threads: int, shards: int, shard: int, in_flight: int, seed: int
) -> dict:
    """``threads`` threads writing ``shards`` shards each into ``path``, each holding the
    claims of ``in_flight`` shards at a time; answers/s and the seconds each thread took to
    open its cache."""
    ready = threading.Barrier(threads + 1)
    opened: list[float] = [0.0] * threads
    done: list[float] = []
    errors: list[BaseException] = []

    def work(t: int) -> None:
        rng = random.Random(seed * 1000 + t)
        values = answers(shard, rng)
        try:
            start = time.perf_counter()
            cache = make(path)
            opened[t] = time.perf_counter() - start
        finally:
            ready.wait()
        try:
            computing: deque[dict[str, str]] = deque()  # claimed, not yet written
            for written in range(shards):
                while len(computing) < min(in_flight, shards - written):
                    items = {secrets.token_hex(32): v for v in values}
                    cache.claim(list(items), DEFAULT_LEASE)
                    computing.append(items)
                cache.put_many(computing.popleft())
                cache.renew_claims(DEFAULT_LEASE)
            done.append(time.perf_counter())
            cache.close()
        except BaseException as err:  # noqa: BLE001 - reported after the round
            errors.append(err)

    # the answer cache's writer, to count its writes per commit (per-shard: one each)
    writer = writer_for(path, 60.0) if make is AnswerCache else None
    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    ready.wait()
    start, cpu = time.perf_counter(), time.process_time()
    for w in workers:
        w.join()
    if errors:
        raise errors[0]
    seconds, cpu = max(done) - start, time.process_time() - cpu
    written = threads * shards * shard
    per_commit = 1.0
    if writer is not None:
        per_commit = writer.writes / writer.transactions
        release_writer(writer)
    return {
        "writes_per_commit": per_commit,
        "answers_per_s": written / seconds,
        "answers_per_cpu_s": written / cpu,
        "seconds": seconds,
        "open_slowest_s": max(opened),
        "open_median_s": statistics.median(opened),
    }


def in_a_process(side: str, path: Path, *numbers: int) -> dict:
    """:func:`one_round` in a fresh Python process (this file, ``--round``)."""
    args = [sys.executable, __file__, "--round", side, str(path), *map(str, numbers)]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def main() -> None:
    if sys.argv[1:2] == ["--round"]:  # one round, in its own process (in_a_process)
        side, path, *numbers = sys.argv[2:]
        print(json.dumps(one_round(SIDES[side], Path(path), *map(int, numbers))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,8,32", help="model threads writing at once")
    parser.add_argument("--shard", type=int, default=64, help="answers per shard")
    parser.add_argument("--prefill", type=int, default=1_000_000, help="answers already cached")
    parser.add_argument("--answers", type=int, default=307_200, help="written per round")
    parser.add_argument(
        "--in-flight", type=int, default=4, help="shards each thread holds claimed (its actors)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, help="folder for the prefilled cache (kept)")
    parser.add_argument("--sides", default=",".join(SIDES), help="comma-separated")
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args()

    load_at_start = os.getloadavg()
    work = args.work or Path(tempfile.mkdtemp(prefix="cache-throughput-"))
    work.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()
    source = prefilled(work, args.prefill)
    prefill_s = time.perf_counter() - clock
    sides = args.sides.split(",")
    counts = [int(t) for t in args.threads.split(",")]
    rounds: dict[tuple[int, str], list[dict]] = {(t, side): [] for t in counts for side in sides}
    for r in range(args.rounds):
        for threads in counts:
            for side in sides:
                path = work / "round.sqlite"
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
                shutil.copyfile(source, path)
                synced(path)
                shards = -(-args.answers // (args.shard * threads))  # per thread
                measured = in_a_process(side, path, threads, shards, args.shard,
                                        args.in_flight, r)  # fmt: skip
                rounds[threads, side].append(measured)
                print(f"round {r}, {threads} threads, {side}: "
                      f"{measured['answers_per_s']:,.0f} answers/s, "
                      f"{measured['answers_per_cpu_s']:,.0f} per CPU-s "
                      f"(open {measured['open_slowest_s']:.3f} s)", flush=True)  # fmt: skip
    if not args.work:
        shutil.rmtree(work)

    def median(threads: int, side: str, key: str) -> float:
        return statistics.median(m[key] for m in rounds[threads, side])

    table = []
    for threads in counts:
        for side in sides:
            table.append({
                "threads": threads,
                "side": side,
                **{key: round(median(threads, side, key), 4 if key.startswith("open") else 0)
                   for key in ("answers_per_s", "answers_per_cpu_s", "open_slowest_s",
                               "open_median_s")},
                "writes_per_commit": median(threads, side, "writes_per_commit"),
                "rounds": rounds[threads, side],
            })  # fmt: skip
    result = {
        "command": shlex.join(["python", *sys.argv]),
        "shard": args.shard,
        "prefilled_answers": args.prefill,
        "prefill_seconds": round(prefill_s, 1),
        "answers_per_round": args.answers,
        "shards_in_flight_per_thread": args.in_flight,
        "target_answers_per_s": TARGET,
        "table": table,
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_at_start": load_at_start,
            "load_average_at_end": os.getloadavg(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
        },
    }
    print(
        "| threads | side | answers/s | answers per CPU-s | open (slowest thread) s | "
        "writes per commit |"
    )
    print("|---|---|---|---|---|---|")
    for row in table:
        print(f"| {row['threads']} | {row['side']} | {row['answers_per_s']:,.0f} | "
              f"{row['answers_per_cpu_s']:,.0f} | {row['open_slowest_s']} | "
              f"{row['writes_per_commit']} |")  # fmt: skip
    print(
        f"load average {load_at_start} at the start, {result['machine']['load_average_at_end']} "
        "at the end"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
