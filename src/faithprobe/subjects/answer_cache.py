"""A persistent content-addressed store of subject answers (SQLite, WAL mode).

Keys are hashes of (model fingerprint, request); values are JSON text. Each write is its
own committed transaction, so a run killed at any point keeps every answer written before
the kill, and WAL mode lets readers and one writer work at the same time. A file that is
not a healthy SQLite database is moved aside (``*.corrupt-<time>``) with a warning and a
fresh cache is started: a cache can always be rebuilt, results never depend on it. A file
that is only locked or unreachable (another run is opening it, a full disk) is not corrupt:
that error is raised and the file left alone. The integrity check (``PRAGMA quick_check``,
0.2-0.4 s at half a million answers) runs once per process and file: the audit on a cluster
opens a cache per model thread.

Writes go through the file's one writer in this process
(:mod:`~faithprobe.subjects.cache_writer`), which commits the writes of every cache open on
the file that wait together in one transaction; reads go through each cache's own
connection.

Runs sharing a cache file split the work through *claims* (a second table, ``claims``): a
run claims the keys it is about to compute, and other runs leave claimed keys alone and wait
for their answers. A claim is a lease: it lapses unless its owner renews it, it is dropped
as soon as the answer is written, and a claim whose owner process is gone (same host, pid no
longer running) or whose lease has lapsed is taken over, so a crashed run never leaves
another waiting for good. Answers never depend on who computed them.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import socket
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import platformdirs

from faithprobe.errors import UsageError
from faithprobe.paths import Kind, checked
from faithprobe.subjects.cache_writer import CacheWriter, release_writer, writer_for

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS claims "
    "(key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)",
    # Caches made before issue 60 indexed claims by owner, for renewing and releasing a run's
    # claims; every claim made and dropped then wrote that index too (some 7% of the writer's
    # throughput), while renewals, now ten a lease, and releases read the few claims in flight
    "DROP INDEX IF EXISTS claims_by_owner",
)
_COLUMNS = {"answers": {"key", "value"}, "claims": {"key", "owner", "expires"}}
_SQL_CHUNK = 500  # stays under SQLite's limit on bound parameters
_LOCK_TIMEOUT = 60.0  # seconds to wait for another connection's lock
RENEWALS_PER_LEASE = 10  # renew_claims renews at most this often per lease


def _enable_wal(conn: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode=WAL``, waiting while another connection writes to the file.
    SQLite reports that case as "database is locked" at once, without its busy timeout (two
    runs opening a new cache together meet it)."""
    deadline = time.monotonic() + _LOCK_TIMEOUT
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            busy = err.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _check_tables(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse, before anything is written to it, a SQLite file that is not an answer cache
    (another program's database): a table of another name, or ours without its columns."""
    tables = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )
    for (name,) in tables.fetchall():
        if name in _COLUMNS:
            found = {row[1] for row in conn.execute(f'PRAGMA table_info("{name}")')}
            if _COLUMNS[name] <= found:
                continue
            why = f"its table {name!r} has no column {min(_COLUMNS[name] - found)!r}"
        else:
            why = f"it holds a table {name!r}"
        raise UsageError(f"answer cache {path}: not a faithprobe cache ({why}); choose another one")


_checked: set[tuple[int, int]] = set()  # (device, inode) of files quick_check passed here
_checking = threading.Lock()  # threads opening one file at once: one checks, the others wait


def _check_integrity(conn: sqlite3.Connection, path: Path) -> None:
    """``PRAGMA quick_check``, once per process and file."""
    stat = path.stat()
    with _checking:
        if (stat.st_dev, stat.st_ino) in _checked:
            return
        if (status := _quick_check(conn)) != "ok":
            raise sqlite3.DatabaseError(f"integrity check failed: {status}")
        _checked.add((stat.st_dev, stat.st_ino))


def _quick_check(conn: sqlite3.Connection) -> str:
    return conn.execute("PRAGMA quick_check").fetchone()[0]


def _check_creatable(path: Path) -> None:
    """A cache file that does not exist must be one that can be made: below folders."""
    existing = next(p for p in path.parents if p.exists())
    if not existing.is_dir():
        raise UsageError(f"answer cache {path}: {existing} is a file, not a folder")


def _batches(keys: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
    """``keys`` in batches small enough to bind, each with its ``?,?,...`` placeholders."""
    for i in range(0, len(keys), _SQL_CHUNK):
        batch = list(keys[i : i + _SQL_CHUNK])
        yield ",".join("?" * len(batch)), batch


def new_owner_id() -> str:
    """``host:pid:random``: the pid lets a run on the same host see that the owner is gone."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def owner_may_be_running(owner: str) -> bool:
    """False only when ``owner`` certainly ended: its host is this one and its pid is not
    running. Other hosts (and platforms without a harmless ``os.kill(pid, 0)``) can only be
    told apart by their lease lapsing. A pid reused since stays "running" until then."""
    host, pid, _token = owner.rsplit(":", 2)
    if host != socket.gethostname() or os.name != "posix":
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # running, under another user
        return True
    return True


def _is_live(owner: str, expires: float, now: float) -> bool:
    """Whether a claim still binds others: within its lease, its owner not known to be gone."""
    return expires >= now and owner_may_be_running(owner)


CACHE_ENV = "FAITHPROBE_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$FAITHPROBE_CACHE_DIR`` or the platform's user cache directory."""
    if env := os.environ.get(CACHE_ENV):
        return checked(env, f"${CACHE_ENV}", Kind.WRITE_FOLDER)
    return Path(platformdirs.user_cache_dir("faithprobe"))


def answers_file(cache_dir: Path | None = None) -> Path:
    """The answer cache's file in ``cache_dir`` (default: :func:`default_cache_dir`)."""
    return (cache_dir or default_cache_dir()) / "answers.sqlite"


class AnswerCache:
    """``path=None`` keeps answers in memory only (deduplication within one run; claims are
    then always granted, nobody else can see them).

    A cache file that does not exist yet is made (with its folders) only when the first
    claim or answer is written, and one this cache made is removed again on :meth:`close`
    if nothing was answered into it and no other run has it open: a run that fails before
    its first answer leaves no empty cache behind."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.owner = new_owner_id()  # who this cache's claims belong to
        self._conn: sqlite3.Connection | None = None
        self._writer: CacheWriter | None = None
        self._renewed = -math.inf  # when renew_claims last renewed
        self._made: list[Path] = []  # the file and folders this cache made, deepest first
        if self.path is None:
            self._conn = sqlite3.connect(":memory:")
            self._create_tables(self._conn)
        elif self.path.exists():  # read (or set aside, if damaged) at once
            self._connection()
        else:
            _check_creatable(self.path)

    def _connection(self, *, create: bool = False) -> sqlite3.Connection | None:
        """The open cache; None while its file does not exist and ``create`` is false."""
        if self._conn is not None or self.path is None:
            return self._conn
        if self.path.exists() and not self.path.is_file():
            raise UsageError(f"answer cache {self.path}: is not a file")
        if not self.path.exists():
            if not create:
                return None
            self._made = [p for p in (self.path, *self.path.parents) if not p.exists()]
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = self._open(self.path)
        except sqlite3.OperationalError:
            raise  # locked, unreadable disk: nothing says the file itself is damaged
        except sqlite3.DatabaseError as err:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            for suffix in ("", "-wal", "-shm"):
                src = Path(f"{self.path}{suffix}")
                if src.exists():
                    src.rename(f"{aside}{suffix}")
            warnings.warn(
                f"cache {self.path} was unreadable ({err}); moved it to {aside} and "
                "started an empty cache",
                RuntimeWarning,
                stacklevel=3,
            )
            self._conn = self._open(self.path)
        return self._conn

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(path, timeout=_LOCK_TIMEOUT)
        try:
            _check_tables(conn, path)
            _enable_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            AnswerCache._create_tables(conn)
            _check_integrity(conn, path)
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _create_tables(conn: sqlite3.Connection) -> None:
        """The tables a cache needs; files made before a table existed get it added."""
        for statement in _SCHEMA:
            conn.execute(statement)

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        if (conn := self._connection()) is None:
            return found
        for marks, batch in _batches(list(keys)):
            rows = conn.execute(f"SELECT key, value FROM answers WHERE key IN ({marks})", batch)
            found.update(rows)
        return found

    def _write(self, work):
        """``work(connection)`` in a write transaction, committed: through the file's writer
        (a file cache), or on the one connection (in memory). Makes the file if need be."""
        conn = self._connection(create=True)
        if self.path is None:
            with conn:
                conn.execute("BEGIN IMMEDIATE")
                return work(conn)
        if self._writer is None:
            self._writer = writer_for(self.path, _LOCK_TIMEOUT)
        return self._writer.write(work)

    def put_many(self, items: Mapping[str, str]) -> None:
        """Write answers and drop any claims on them, in one transaction."""
        rows = list(items.items())

        def put(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)", rows)
            conn.executemany("DELETE FROM claims WHERE key = ?", ((k,) for k, _ in rows))

        self._write(put)

    def claim(self, keys: Sequence[str], lease: float) -> list[str]:
        """Claim for ``lease`` seconds the ``keys`` nobody has answered and nobody else holds
        (claims of owners gone or past their lease are taken over); return the ones now
        claimed by this cache, in order. One transaction, so two runs never claim one key.

        What is claimed is known from what the transaction read (the others' claims and the
        answers among ``keys``), so the claims are inserted without looking for an answer
        per key and not read back: one look-up per key in the cache's writer, not two."""

        def claim(conn: sqlite3.Connection) -> set[str]:
            now = time.time()
            others = self._others_claims(conn, keys)
            stale = [key for key, owner, expires in others if not _is_live(owner, expires, now)]
            conn.executemany("DELETE FROM claims WHERE key = ?", ((k,) for k in stale))
            taken = {key for key, _, _ in others}.difference(stale) | self._answered(conn, keys)
            free = [k for k in keys if k not in taken]
            # a key this cache already holds is ignored here, and stays its claim
            conn.executemany(
                "INSERT OR IGNORE INTO claims (key, owner, expires) VALUES (?, ?, ?)",
                ((k, self.owner, now + lease) for k in free),
            )
            return set(free)

        mine = self._write(claim)
        return [k for k in keys if k in mine]

    def held_elsewhere(self, keys: Sequence[str]) -> set[str]:
        """Those of ``keys`` another owner holds a live claim on (read only)."""
        if self._connection() is None:
            return set()
        now = time.time()
        return {
            key
            for key, owner, expires in self._others_claims(self._conn, keys)
            if _is_live(owner, expires, now)
        }

    def renew_claims(self, lease: float) -> None:
        """Extend every claim of this cache to ``lease`` seconds from now, unless that was
        done less than ``lease / RENEWALS_PER_LEASE`` seconds ago (a claim made since expires
        later than that renewal's anyway). A renewal rewrites every claim the cache holds:
        a model on a pool of actors holds a chunk per actor, and renewing them as each chunk
        is written cost the cache's writer more than the answers did (issue 60)."""
        if self._conn is None or (now := time.time()) < self._renewed + lease / RENEWALS_PER_LEASE:
            return
        self._renewed = now
        self._write(
            lambda conn: conn.execute(
                "UPDATE claims SET expires = ? WHERE owner = ?", (now + lease, self.owner)
            )
        )

    def release_claims(self) -> None:
        """Drop every claim of this cache (its answers will not come: others may compute)."""
        if self._conn is None:
            return
        self._write(lambda conn: conn.execute("DELETE FROM claims WHERE owner = ?", (self.owner,)))

    def _others_claims(
        self, conn: sqlite3.Connection, keys: Sequence[str]
    ) -> list[tuple[str, str, float]]:
        rows: list[tuple[str, str, float]] = []
        for marks, batch in _batches(keys):
            rows += conn.execute(
                f"SELECT key, owner, expires FROM claims WHERE key IN ({marks}) AND owner != ?",
                [*batch, self.owner],
            )
        return rows

    @staticmethod
    def _answered(conn: sqlite3.Connection, keys: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for marks, batch in _batches(keys):
            rows = conn.execute(f"SELECT key FROM answers WHERE key IN ({marks})", batch)
            found.update(key for (key,) in rows)
        return found

    def __len__(self) -> int:
        if (conn := self._connection()) is None:
            return 0
        return conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        """Release this cache's claims and close the file; remove the file (and folders)
        this cache made if nothing was answered into it (see the class docstring)."""
        if self._conn is None:
            return
        self.release_claims()
        unused = bool(self._made) and len(self) == 0
        if self._writer is not None:
            release_writer(self._writer)
            self._writer = None
        self._conn.close()
        self._conn = None
        if unused and not Path(f"{self.path}-wal").exists():  # no other run has it open
            for made in self._made:  # deepest first: the file, then its folders
                with contextlib.suppress(OSError):
                    if made == self.path:
                        made.unlink()
                    else:
                        made.rmdir()  # only if empty
        self._made = []
