"""Downloads of the catalogue's files: resumable, checked, moved into place whole.

Each URL of a data set is one download (an archive holding several of its files is fetched
once). Its bytes go to ``<data folder>/<name>.part``, where ``name`` is the file's catalogue
path or, for an archive, the archive's file name in its data set's folder
(``socialiqa/socialiqa-train-dev.zip``). A second run finds the ``.part``, asks for the rest
(``Range: bytes=N-``) and appends on ``206``, or starts again where the server sends the
whole file (``200``). Once the transfer has the announced length the file is checked -- its
SHA-256 where the catalogue has one, else its format -- and only then renamed onto its path
(``os.replace``); an archive is checked against its own SHA-256 where the catalogue has
that, then its members are extracted one by one into temporary files, checked, and renamed
likewise. So a file at its catalogue path is always whole and checked:
a partial download is never read as data.

A mirror (``--mirror URL`` or ``$FAITHPROBE_DATA_MIRROR``) serves each download at
``MIRROR/<name>``: a data folder served over HTTP, with the archives beside their files,
is one.

Every failure is a :class:`FetchError`: one line saying what failed, the URL, and where to
put the file by hand. A transfer cut short keeps its ``.part`` (the next fetch resumes); a
file that fails its checksum or format check is deleted (a resume would not mend it).
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import re
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import requests
import urllib3

from faithprobe.atomic import replacing
from faithprobe.catalog.entries import DataSet, Remote
from faithprobe.errors import FaithprobeError, excerpt

CHUNK = 1 << 16
# More than any file or archive of the catalogue (the largest is MultiNLI's zip, 227 MB):
# a server announcing or sending more is refused rather than allowed to fill the disk.
MAX_BYTES = 2 << 30
ZIP_METHODS = {  # what zipfile reads (bzip2 and lzma where Python was built with them)
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}

# ``start(description, total bytes or None)`` returning ``advance(bytes)``
ByteProgress = Callable[[str, int | None], Callable[[int], None]]


class FetchError(FaithprobeError):
    """A download that failed: what failed, the URL, and where to put the file by hand."""


class BadFile(Exception):
    """A downloaded file that is not the one the catalogue names (checksum or format)."""


@dataclass(frozen=True)
class Download:
    """One URL to download: a file, or an archive holding some of a data set's files."""

    url: str
    name: str  # where its bytes go under a data folder (``name.part``), and under a mirror
    files: tuple[Remote, ...]

    @property
    def archive(self) -> bool:
        return self.files[0].member is not None

    @property
    def archive_sha256(self) -> str | None:
        """The archive's own SHA-256, where the catalogue pins the archive."""
        return self.files[0].archive_sha256


@dataclass(frozen=True)
class Fetched:
    """A file of a data set that is in place: ``how`` is ``fetched`` or ``present``."""

    path: Path
    how: str
    # what it was checked with: ``sha256``, ``format <name>`` or, for a member of an archive
    # pinned by its own SHA-256, ``archive sha256 + format <name>``
    check: str


def downloads(entry: DataSet) -> list[Download]:
    """The data set's files grouped by URL, in catalogue order."""
    groups: dict[str, list[Remote]] = {}
    for remote in entry.files:
        groups.setdefault(remote.url, []).append(remote)
    out = []
    for url, files in groups.items():
        name = files[0].path
        if files[0].member is not None:
            # in the data set's folder, however deep its files lie (anli/anli_v0.1.zip)
            folder = PurePosixPath(name).parts[0]
            name = str(PurePosixPath(folder, PurePosixPath(urlsplit(url).path).name))
        out.append(Download(url, name, tuple(files)))
    return out


def fetch(
    entry: DataSet,
    root: Path,
    *,
    force: bool = False,
    timeout: float = 60.0,
    progress: ByteProgress | None = None,
    mirror: str | None = None,
) -> list[Fetched]:
    """Put every file of ``entry`` under the data folder ``root``; files already there and
    verified are left as they are (unless ``force``). ``timeout``: seconds to wait for a
    connection or for the next bytes."""
    root = Path(root)
    out: list[Fetched] = []
    with requests.Session() as session:
        for download in downloads(entry):
            todo = []
            for remote in download.files:
                target = root / remote.path
                if not force and target.is_file() and _passes(target, remote):
                    out.append(Fetched(target, "present", _check_name(remote)))
                else:
                    todo.append(remote)
            if not todo:
                continue
            job = _Job(download, todo, root, mirror)
            try:
                if force:
                    job.part.unlink(missing_ok=True)
                _transfer(session, job, timeout, progress)
                out += _install(job)
            except requests.RequestException:
                raise  # turned into FetchError where they happen; one escaping is a bug
            except OSError as err:  # the data folder cannot be written
                where = err.filename or job.part
                raise FetchError(f"cannot write {where}: {err.strerror or err}") from None
    return out


class _Job:
    """A download under way: where its bytes go and what to say when it fails."""

    def __init__(self, download: Download, todo: list[Remote], root: Path, mirror: str | None):
        self.download = download
        self.todo = todo
        self.root = root
        self.part = root / f"{download.name}.part"
        self.url = f"{mirror.rstrip('/')}/{download.name}" if mirror else download.url
        if download.archive:
            put = ", ".join(f"{r.member} at {root / r.path}" for r in todo)
            self.hand = f"To place it by hand, download {download.url}, unzip it and put {put}"
        else:
            target = root / todo[0].path
            self.hand = f"To place it by hand, download {download.url} and put it at {target}"

    def error(self, problem: str) -> FetchError:
        return FetchError(
            f"fetching {self.download.name} from {self.url} failed: {problem}. {self.hand}"
        )


def _transfer(
    session: requests.Session, job: _Job, timeout: float, progress: ByteProgress | None
) -> None:
    """The download's bytes into ``job.part``, resumed where a ``.part`` is there; returns
    once the part has the length the server announced."""
    job.part.parent.mkdir(parents=True, exist_ok=True)
    have = job.part.stat().st_size if job.part.exists() else 0
    headers = {"Accept-Encoding": "identity"}  # the length announced is the length on disk
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        response = session.get(job.url, headers=headers, stream=True, timeout=timeout)
    except requests.Timeout:
        raise job.error(f"no answer within --timeout {timeout:g} s") from None
    except requests.ConnectionError as err:
        raise job.error(f"cannot connect ({_reason(err)}; offline?)") from None
    except requests.RequestException as err:  # an URL requests cannot use
        raise job.error(str(err)) from None
    # a body cut short just ends (the length check below tells the cut), so no byte
    # received is lost to urllib3's IncompleteRead
    response.raw.enforce_content_length = False
    with response:
        if response.status_code == 416 and have:  # nothing after byte N: whole, or stale
            if _content_range(response)[1] == have:
                return
            job.part.unlink()
            return _transfer(session, job, timeout, progress)
        if response.status_code >= 400:
            raise job.error(f"HTTP {response.status_code} {response.reason}")
        if response.status_code == 206:
            start, total = _content_range(response)
            if start != have:  # not the range asked for: start again
                job.part.unlink()
                return _transfer(session, job, timeout, progress)
        else:
            have, total = 0, _length(response)
        if total is not None and total > MAX_BYTES:
            raise job.error(
                f"the server announces {total:,} bytes, more than any data set's file "
                f"({MAX_BYTES:,} at most)"
            )
        advance = progress(job.download.name, total) if progress else (lambda k: None)
        advance(have)
        got = have
        try:
            with job.part.open("ab" if have else "wb") as f:
                # one socket read at a time: a stall loses nothing already received
                while chunk := response.raw.read1(CHUNK, decode_content=True):
                    f.write(chunk)
                    got += len(chunk)
                    advance(len(chunk))
                    if got > MAX_BYTES:  # a body without a length that does not end
                        break
        except urllib3.exceptions.ReadTimeoutError:
            raise _cut_short(job, got, total, f"no data within --timeout {timeout:g} s") from None
        except (urllib3.exceptions.HTTPError, ConnectionError):
            raise _cut_short(job, got, total, "the connection broke") from None
    if got > MAX_BYTES:
        job.part.unlink()  # a resume would not mend it
        raise job.error(f"the server sent more than {MAX_BYTES:,} bytes; the download was deleted")
    if total is not None and got < total:
        raise _cut_short(job, got, total, "the connection closed early")
    pinned = job.download.archive_sha256 or all(remote.sha256 for remote in job.todo)
    if total is None and not pinned:
        # nothing says the file is whole (a format check cannot tell a file cut at a line
        # break): kept as a part, whose resume's answer (206) says the length
        raise _cut_short(job, got, total, "the server did not say the file's length")


def _install(job: _Job) -> list[Fetched]:
    """Check the downloaded file (or the archive's members) and move each into place; a
    file that fails its check deletes the download."""
    try:
        if job.download.archive:
            if job.download.archive_sha256 is not None:
                _check_digest(job.part, job.download.archive_sha256, "the archive")
            installed = _extract(job)
        else:
            remote = job.todo[0]
            _check(job.part, remote)
            with job.part.open("rb+") as f:
                os.fsync(f.fileno())
            target = job.root / remote.path
            os.replace(job.part, target)
            installed = [Fetched(target, "fetched", _check_name(remote))]
    except BadFile as bad:
        job.part.unlink(missing_ok=True)
        raise job.error(f"{bad}; the download was deleted") from None
    job.part.unlink(missing_ok=True)  # an archive, once its members are in place
    return installed


def _extract(job: _Job) -> list[Fetched]:
    try:
        archive = zipfile.ZipFile(job.part)
    except zipfile.BadZipFile:
        raise BadFile("not a zip archive") from None
    out = []
    with archive:
        for remote in job.todo:
            member = _member(archive, remote.member)
            target = job.root / remote.path
            target.parent.mkdir(parents=True, exist_ok=True)
            with replacing(target) as tmp:
                _unpack(archive, member, tmp)
                _check(tmp, remote, remote.member)
            out.append(Fetched(target, "fetched", _check_name(remote, fetched=True)))
    return out


def _member(archive: zipfile.ZipFile, name: str) -> zipfile.ZipInfo:
    """The member ``name``, refused where zipfile could not read it: absent, encrypted,
    compressed by a method it lacks, or declaring more bytes than any data set's file."""
    try:
        member = archive.getinfo(name)
    except KeyError:
        raise BadFile(f"the archive holds no {name}") from None
    if member.flag_bits & 0x1:
        raise BadFile(f"{name} in the archive is encrypted")
    if member.compress_type not in ZIP_METHODS:
        raise BadFile(
            f"{name} in the archive is compressed by method {member.compress_type}, which "
            f"cannot be read here ({', '.join(ZIP_METHODS.values())} can)"
        )
    if member.file_size > MAX_BYTES:
        raise BadFile(f"{name} in the archive declares {member.file_size:,} bytes")
    return member


# what reading a damaged, hostile or unreadable member raises (zlib, bz2 and lzma each have
# their own; zipfile itself raises RuntimeError for a password, NotImplementedError for a
# method whose module is missing)
UNREADABLE = (
    zipfile.BadZipFile,
    EOFError,
    OSError,
    ValueError,
    zlib.error,
    lzma.LZMAError,
    RuntimeError,
    NotImplementedError,
)


def _unpack(archive: zipfile.ZipFile, member: zipfile.ZipInfo, to: Path) -> None:
    """The member's bytes into the file ``to``, stopping past :data:`MAX_BYTES` (a header
    that lies about the size, a zip bomb); what cannot be read is :class:`BadFile`, what
    cannot be written stays an OSError (the data folder's)."""
    name, copied = member.filename, 0
    with to.open("wb") as dst:
        try:
            src = archive.open(member)
        except UNREADABLE as err:
            raise BadFile(f"{name} in the archive cannot be read ({err})") from None
        with src:
            while True:
                try:
                    block = src.read(CHUNK)
                except UNREADABLE as err:
                    raise BadFile(f"{name} in the archive is damaged ({err})") from None
                if not block:
                    return
                copied += len(block)
                if copied > MAX_BYTES:
                    raise BadFile(f"{name} in the archive unpacks to more than {MAX_BYTES:,} bytes")
                dst.write(block)


def _check(path: Path, remote: Remote, what: str | None = None) -> None:
    """Raise :class:`BadFile` unless ``path`` is the file ``remote`` names: its SHA-256
    where the catalogue has one, else its format."""
    if remote.sha256 is not None:
        _check_digest(path, remote.sha256, what)
        return
    try:
        FORMATS[remote.format](path, remote)
    except (BadFile, UnicodeDecodeError) as bad:
        detail = "not UTF-8 text" if isinstance(bad, UnicodeDecodeError) else bad
        raise BadFile(f"not the expected file{f' ({what})' if what else ''}: {detail}") from None


def _check_digest(path: Path, expected: str, what: str | None) -> None:
    """Raise :class:`BadFile` unless ``path``'s SHA-256 is ``expected``; ``what`` names the
    file in the message (a member of an archive, the archive)."""
    digest = sha256(path)
    if digest != expected:
        name = f" of {what}" if what else ""
        raise BadFile(
            f"checksum mismatch: the SHA-256{name} is {digest[:16]}…, the "
            f"catalogue's is {expected[:16]}…"
        )


def _passes(path: Path, remote: Remote) -> bool:
    try:
        _check(path, remote)
    except BadFile:
        return False
    return True


def _check_name(remote: Remote, fetched: bool = False) -> str:
    """How ``remote`` was checked: a file at hand by itself; a member just extracted from an
    archive the catalogue pins, also by the archive's SHA-256."""
    if remote.sha256:
        return "sha256"
    if fetched and remote.archive_sha256:
        return f"archive sha256 + format {remote.format}"
    return f"format {remote.format}"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _parse_json(text: str):
    """``text`` as JSON (JSONDecodeError where it is not), or :class:`BadFile` where it
    nests deeper than the reader goes: json stops at Python's recursion limit (about 1,000
    levels) with RecursionError, and no data set nests more than a dozen."""
    try:
        return json.loads(text)
    except RecursionError:
        raise BadFile("JSON nested deeper than any data set's") from None


def _load_json(path: Path):
    try:
        return _parse_json(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise BadFile(f"not JSON ({err.msg} at line {err.lineno})") from None


def _json(path: Path, remote: Remote) -> None:
    data = _load_json(path)
    if not (isinstance(data, dict) and isinstance(data.get("data"), list)):
        raise BadFile('not a JSON object with a "data" list')


def _json_records(path: Path, remote: Remote) -> None:
    data = _load_json(path)
    if not (isinstance(data, list) and data and all(isinstance(r, dict) for r in data)):
        raise BadFile("not a JSON list of records")


def _jsonl(path: Path, remote: Remote) -> None:
    records = 0
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = _parse_json(line)
            except json.JSONDecodeError:
                raise BadFile(f"line {number} is not JSON: {excerpt(line.strip())}") from None
            if not isinstance(record, dict):
                raise BadFile(f"line {number} is not a JSON object")
            records += 1
    if not records:
        raise BadFile("no JSON lines")


def _tsv(path: Path, remote: Remote) -> None:
    """A header naming ``remote.columns``, then every line with as many fields, the last
    ending in a line break (a file cut inside a line is refused)."""
    with path.open(encoding="utf-8", newline="") as f:
        line = f.readline()
        first = line.rstrip("\r\n")
        header = first.split("\t")
        if len(header) < 2 or any(c not in header for c in remote.columns):
            names = f" naming {', '.join(remote.columns)}" if remote.columns else ""
            raise BadFile(f"the first line is not a TSV header{names}: {excerpt(first)}")
        for number, line in enumerate(f, 2):
            fields = line.rstrip("\r\n").count("\t") + 1
            if line.strip() and fields != len(header):
                raise BadFile(
                    f"line {number} has {fields} fields, the header {len(header)} (cut short?)"
                )
        if not line.endswith("\n"):
            raise BadFile("the last line has no line break (cut short?)")


def _labels(path: Path, remote: Remote) -> None:
    lines = path.read_text(encoding="utf-8").split()
    bad = next((line for line in lines if not line.isdigit()), None)
    if not lines or bad is not None:
        raise BadFile(f"not one integer label a line: {excerpt(bad or '')}")


FORMATS: dict[str, Callable[[Path, Remote], None]] = {
    "json": _json,
    "json-records": _json_records,
    "jsonl": _jsonl,
    "tsv": _tsv,
    "labels": _labels,
}


def _length(response: requests.Response) -> int | None:
    """The body's length on disk, where the server says it (and does not encode it): None
    where it is missing, negative or no number (-5, 1e3, two values)."""
    encoded = response.headers.get("Content-Encoding", "identity") != "identity"
    length = response.headers.get("Content-Length", "").strip()
    return int(length) if length.isascii() and length.isdigit() and not encoded else None


def _content_range(response: requests.Response) -> tuple[int | None, int | None]:
    """``(first byte, total)`` of ``Content-Range: bytes A-B/T`` (or ``bytes */T``)."""
    header = response.headers.get("Content-Range", "").strip()
    m = re.fullmatch(r"bytes (?:(\d+)-\d+|\*)/(\d+)", header)
    return (int(m.group(1)) if m.group(1) else None, int(m.group(2))) if m else (None, None)


def _reason(err: requests.ConnectionError) -> str:
    """The system's words for a failed connection (``Connection refused``, ``Name or
    service not known``), out of urllib3's wrapping."""
    m = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", str(err))
    return m.group(1).strip() if m else "no connection"


def _cut_short(job: _Job, got: int, total: int | None, why: str) -> FetchError:
    of = f" of {total:,}" if total is not None else ""
    return job.error(
        f"the transfer stopped after {got:,}{of} bytes ({why}); {job.part} is "
        "kept and the next `faithprobe data fetch` resumes from there"
    )
