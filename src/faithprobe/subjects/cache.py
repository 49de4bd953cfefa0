"""A persistent content-addressed store of subject answers (SQLite, WAL mode).

Keys are hashes of (model fingerprint, request); values are JSON text. Each write is its
own committed transaction, so a run killed at any point keeps every answer written before
the kill, and WAL mode lets readers and one writer work at the same time. A file that is
not a healthy SQLite database is moved aside (``*.corrupt-<time>``) with a warning and a
fresh cache is started: a cache can always be rebuilt, results never depend on it. A file
that is only locked or unreachable (another run is opening it, a full disk) is not corrupt:
that error is raised and the file left alone.
"""

from __future__ import annotations

import os
import sqlite3
import time
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

import platformdirs

_SCHEMA = "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
_SQL_CHUNK = 500  # stays under SQLite's limit on bound parameters
_LOCK_TIMEOUT = 60.0  # seconds to wait for another connection's lock


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


def default_cache_dir() -> Path:
    """``$FAITHPROBE_CACHE_DIR`` or the platform's user cache directory."""
    env = os.environ.get("FAITHPROBE_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir("faithprobe"))


class AnswerCache:
    """``path=None`` keeps answers in memory only (deduplication within one run)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        if self.path is None:
            self._conn = sqlite3.connect(":memory:")
            self._conn.execute(_SCHEMA)
            return
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
                stacklevel=2,
            )
            self._conn = self._open(self.path)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(path, timeout=_LOCK_TIMEOUT)
        try:
            _enable_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
            status = conn.execute("PRAGMA quick_check").fetchone()[0]
            if status != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {status}")
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        keys = list(keys)
        found: dict[str, str] = {}
        for i in range(0, len(keys), _SQL_CHUNK):
            chunk = keys[i : i + _SQL_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT key, value FROM answers WHERE key IN ({marks})", chunk
            )
            found.update(rows)
        return found

    def put_many(self, items: Mapping[str, str]) -> None:
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)", items.items()
            )

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        self._conn.close()
