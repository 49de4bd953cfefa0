"""``faithprobe data fetch`` against a local HTTP server: a good file (then skipped), a
resumed ``.part``, a wrong checksum, a transfer cut short (then resumed), 404, a slow
server, no server at all, a zip's members, a file of the wrong format, a mirror; and the
real catalogue checked against the copies in ``../shared/data``."""

from __future__ import annotations

import hashlib
import io
import json
import re
import socket
import threading
import time
import zipfile
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from faithprobe.catalog import entries
from faithprobe.catalog import fetch as fetch_module
from faithprobe.catalog.entries import CATALOGUE, DataSet, Remote
from faithprobe.catalog.fetch import FORMATS, BadFile, _check, downloads, fetch, sha256
from faithprobe.cli import app

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
runner = CliRunner()

RECORDS = b"".join(
    json.dumps({"id": i, "text": f"record {i} " + "x" * (i % 50)}).encode() + b"\n"
    for i in range(4000)
)  # about 200 KB: several chunks, so a cut falls inside the body
A_MEMBER = b'{"a": 1}\n{"a": 2}\n'
LABELS = b"1\n3\n2\n"


@dataclass
class Route:
    body: bytes
    cut: int | None = None  # send this many bytes of the body, then close
    delay: float = 0.0  # seconds before answering (or before the rest, with ``pause_at``)
    pause_at: int | None = None  # send this many bytes, wait ``delay``, send the rest
    ranges: bool = True  # False: ignore Range, always send the whole body (200)
    length: str | None = None  # the Content-Length sent instead of the true one ("": none)


class Served:
    """What the test server serves (path -> route) and the requests it saw."""

    def __init__(self, port: int):
        self.url = f"http://127.0.0.1:{port}"
        self.routes: dict[str, Route] = {}
        self.seen: list[tuple[str, str | None]] = []  # (path, Range header)


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.handle_error = lambda *a: None  # a client that gave up is not news
    httpd.served = Served(httpd.server_address[1])
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.served
    httpd.shutdown()
    httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    """Serves ``served.routes``, honouring ``Range: bytes=N-`` (206, or 416 past the end)."""

    def do_GET(self):
        served: Served = self.server.served
        served.seen.append((self.path, self.headers.get("Range")))
        route = served.routes.get(self.path)
        if route is None:
            self.send_error(404)
            return
        if route.pause_at is None:
            time.sleep(route.delay)
        body, start = route.body, 0
        asked = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
        if asked and route.ranges:
            start = int(asked.group(1))
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        length = str(len(body) - start) if route.length is None else route.length
        if length:
            self.send_header("Content-Length", length)
        self.end_headers()
        payload = body[start:] if route.cut is None else body[start:][: route.cut]
        if route.pause_at is not None:
            self.wfile.write(payload[: route.pause_at])
            self.wfile.flush()
            time.sleep(route.delay)
            payload = payload[route.pause_at :]
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def served(server, monkeypatch):
    """The server, emptied, and a tiny catalogue whose files it serves."""
    server.routes.clear()
    server.seen.clear()
    monkeypatch.setattr(entries, "CATALOGUE", _catalogue(server.url))
    return server


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("pack-v1/a.jsonl", A_MEMBER)
        z.writestr("pack-v1/labels.lst", LABELS)
        z.writestr("pack-v1/unused.txt", b"not fetched")
    return buffer.getvalue()


PINNED_ZIP = _zip()  # once: a zip's bytes hold the time it was written


def _refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed on leaving: nothing listens there


def _catalogue(url: str) -> tuple[DataSet, ...]:
    def entry(name, *files):
        return DataSet(
            name, name.title(), "test data", "CC0", "tests", files[0].path, files, "1 KB"
        )

    return (
        entry("tiny", Remote("tiny/records.jsonl", f"{url}/tiny/records.jsonl", _sha(RECORDS))),
        entry("plain", Remote("plain/items.jsonl", f"{url}/plain/items.jsonl", format="jsonl")),
        entry(
            "pack",
            Remote("pack/a.jsonl", f"{url}/pack.zip", _sha(A_MEMBER), member="pack-v1/a.jsonl"),
            Remote(
                "pack/labels.lst", f"{url}/pack.zip", member="pack-v1/labels.lst", format="labels"
            ),
        ),
        entry("gone", Remote("gone/file.json", f"{url}/nowhere/file.json")),
        entry("table", Remote("table/t.tsv", f"{url}/table/t.tsv", format="tsv", columns=("a",))),
        entry("records", Remote("records/r.json", f"{url}/records/r.json", format="json-records")),
        entry(
            "pinned",
            *(
                Remote(
                    f"pinned/{name}",
                    f"{url}/pinned.zip",
                    member=f"pack-v1/{name}",
                    format=fmt,
                    archive_sha256=_sha(PINNED_ZIP),
                )
                for name, fmt in (("a.jsonl", "jsonl"), ("labels.lst", "labels"))
            ),
        ),
        entry(
            "far",
            Remote(
                "far/records.jsonl",
                f"http://127.0.0.1:{_refused_port()}/records.jsonl",
                _sha(RECORDS),
            ),
        ),
    )


def _fetch(*args: str):
    return runner.invoke(app, ["data", "fetch", *args])


def _error_line(res) -> str:
    """The one line a failed fetch prints (and exit status 2)."""
    assert res.exit_code == 2, (res.exit_code, res.stderr, res.exception)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    return lines[0]


def test_a_good_file_is_fetched_then_skipped(served, tmp_path):
    served.routes["/tiny/records.jsonl"] = Route(RECORDS)
    res = _fetch("tiny", "--to", str(tmp_path))
    assert res.exit_code == 0, res.stderr
    target = tmp_path / "tiny" / "records.jsonl"
    assert target.read_bytes() == RECORDS
    assert list(tmp_path.rglob("*.part")) == []
    assert res.stderr == f"tiny: Tiny ready at {target} (1 file fetched; checked by sha256)\n"

    res = _fetch("tiny", "--to", str(tmp_path))
    assert res.exit_code == 0, res.stderr
    assert f"ready at {target} (1 file already present; checked by sha256)" in res.stderr
    assert len(served.seen) == 1  # the second run asked for nothing


def test_a_part_file_is_resumed_with_a_range_request(served, tmp_path):
    served.routes["/tiny/records.jsonl"] = Route(RECORDS)
    part = tmp_path / "tiny" / "records.jsonl.part"
    part.parent.mkdir()
    part.write_bytes(RECORDS[:70_001])
    res = _fetch("tiny", "--to", str(tmp_path))
    assert res.exit_code == 0, res.stderr
    assert served.seen == [("/tiny/records.jsonl", "bytes=70001-")]
    assert (tmp_path / "tiny" / "records.jsonl").read_bytes() == RECORDS
    assert not part.exists()


def test_a_server_without_ranges_restarts_the_part(served, tmp_path):
    served.routes["/tiny/records.jsonl"] = Route(RECORDS, ranges=False)
    part = tmp_path / "tiny" / "records.jsonl.part"
    part.parent.mkdir()
    part.write_bytes(RECORDS[:70_001])
    assert _fetch("tiny", "--to", str(tmp_path)).exit_code == 0
    assert served.seen == [("/tiny/records.jsonl", "bytes=70001-")]
    assert (tmp_path / "tiny" / "records.jsonl").read_bytes() == RECORDS  # not appended


def test_a_whole_part_is_checked_and_moved_into_place(served, tmp_path):
    served.routes["/tiny/records.jsonl"] = Route(RECORDS)
    part = tmp_path / "tiny" / "records.jsonl.part"
    part.parent.mkdir()
    part.write_bytes(RECORDS)  # interrupted after the transfer, before the check
    assert _fetch("tiny", "--to", str(tmp_path)).exit_code == 0
    assert served.seen == [("/tiny/records.jsonl", f"bytes={len(RECORDS)}-")]  # answered 416
    assert (tmp_path / "tiny" / "records.jsonl").read_bytes() == RECORDS
    assert not part.exists()


def test_a_wrong_checksum_is_one_line_and_leaves_no_file(served, tmp_path):
    served.routes["/tiny/records.jsonl"] = Route(RECORDS.replace(b"record 7 ", b"record 8 "))
    line = _error_line(_fetch("tiny", "--to", str(tmp_path)))
    target = tmp_path / "tiny" / "records.jsonl"
    assert "checksum mismatch" in line and "the download was deleted" in line
    assert f"{served.url}/tiny/records.jsonl" in line
    assert f"put it at {target}" in line
    assert not target.exists()
    assert list(tmp_path.rglob("*.part")) == []


def test_a_transfer_cut_short_keeps_its_part_and_the_next_fetch_resumes(served, tmp_path):
    route = served.routes["/tiny/records.jsonl"] = Route(RECORDS, cut=50_000)
    line = _error_line(_fetch("tiny", "--to", str(tmp_path)))
    target = tmp_path / "tiny" / "records.jsonl"
    part = tmp_path / "tiny" / "records.jsonl.part"
    assert f"stopped after 50,000 of {len(RECORDS):,} bytes" in line
    assert f"{part} is kept and the next `faithprobe data fetch` resumes" in line
    assert f"put it at {target}" in line
    assert not target.exists()
    assert part.read_bytes() == RECORDS[:50_000]

    route.cut = None
    res = _fetch("tiny", "--to", str(tmp_path))
    assert res.exit_code == 0, res.stderr
    assert served.seen[-1] == ("/tiny/records.jsonl", "bytes=50000-")
    assert target.read_bytes() == RECORDS
    assert not part.exists()


def test_404_names_the_url(served, tmp_path):
    line = _error_line(_fetch("gone", "--to", str(tmp_path)))
    assert f"fetching gone/file.json from {served.url}/nowhere/file.json failed: HTTP 404" in line
    assert f"put it at {tmp_path / 'gone' / 'file.json'}" in line
    assert not (tmp_path / "gone" / "file.json").exists()


def test_a_slow_server_times_out(served, tmp_path):
    served.routes["/tiny/records.jsonl"] = Route(RECORDS, delay=1.5)
    started = time.perf_counter()
    line = _error_line(_fetch("tiny", "--to", str(tmp_path), "--timeout", "0.5"))
    assert time.perf_counter() - started < 1.4
    assert "no answer within --timeout 0.5 s" in line
    assert f"{served.url}/tiny/records.jsonl" in line
    assert not (tmp_path / "tiny" / "records.jsonl").exists()


def test_a_server_that_stalls_keeps_what_arrived(served, tmp_path):
    route = served.routes["/tiny/records.jsonl"] = Route(RECORDS, delay=1.5, pause_at=30_000)
    line = _error_line(_fetch("tiny", "--to", str(tmp_path), "--timeout", "0.5"))
    part = tmp_path / "tiny" / "records.jsonl.part"
    assert (
        f"stopped after 30,000 of {len(RECORDS):,} bytes (no data within --timeout 0.5 s)" in line
    )
    assert part.read_bytes() == RECORDS[:30_000]
    route.pause_at = None
    route.delay = 0.0
    assert _fetch("tiny", "--to", str(tmp_path)).exit_code == 0
    assert served.seen[-1] == ("/tiny/records.jsonl", "bytes=30000-")
    assert (tmp_path / "tiny" / "records.jsonl").read_bytes() == RECORDS


def test_no_server_is_one_line_saying_offline(served, tmp_path):
    line = _error_line(_fetch("far", "--to", str(tmp_path)))
    assert "cannot connect (Connection refused; offline?)" in line
    assert "http://127.0.0.1:" in line and "/records.jsonl" in line
    assert f"put it at {tmp_path / 'far' / 'records.jsonl'}" in line


def test_a_mirror_serves_the_file_under_its_data_folder_path(served, tmp_path):
    served.routes["/mirror/far/records.jsonl"] = Route(RECORDS)
    res = _fetch("far", "--to", str(tmp_path), "--mirror", f"{served.url}/mirror/")
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "far" / "records.jsonl").read_bytes() == RECORDS


def test_zip_members_are_extracted_and_checked(served, tmp_path):
    served.routes["/pack.zip"] = Route(_zip())
    res = _fetch("pack", "--to", str(tmp_path))
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "pack" / "a.jsonl").read_bytes() == A_MEMBER
    assert (tmp_path / "pack" / "labels.lst").read_bytes() == LABELS
    assert sorted(p.name for p in (tmp_path / "pack").iterdir()) == ["a.jsonl", "labels.lst"]
    assert "(2 files fetched; checked by sha256, format labels)" in res.stderr

    (tmp_path / "pack" / "labels.lst").unlink()  # one member missing: the archive again
    res = _fetch("pack", "--to", str(tmp_path))
    assert res.exit_code == 0, res.stderr
    assert (
        "(1 file fetched, 1 file already present; checked by sha256, format labels)" in res.stderr
    )
    assert (tmp_path / "pack" / "labels.lst").read_bytes() == LABELS


def test_an_archive_pinned_by_its_own_checksum_is_checked_before_extraction(served, tmp_path):
    """Where the published checksum is the archive's (ANLI, MultiNLI): the archive is
    checked whole, then each member by its format; another archive is refused in one line
    and leaves nothing behind."""
    served.routes["/pinned.zip"] = Route(PINNED_ZIP)
    res = _fetch("pinned", "--to", str(tmp_path))
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "pinned" / "a.jsonl").read_bytes() == A_MEMBER
    assert "(2 files fetched; checked by archive sha256 + format jsonl, archive sha256 + " in (
        res.stderr
    )
    res = _fetch("pinned", "--to", str(tmp_path))  # at hand: the archive is not there to check
    assert "(2 files already present; checked by format jsonl, format labels)" in res.stderr

    other = PINNED_ZIP + b"\n"  # another archive: one byte more
    served.routes["/pinned.zip"] = Route(other)
    line = _error_line(_fetch("pinned", "--to", str(tmp_path / "again")))
    assert f"checksum mismatch: the SHA-256 of the archive is {_sha(other)[:16]}…, the " in line
    assert f"the catalogue's is {_sha(PINNED_ZIP)[:16]}…; the download was deleted" in line
    assert "unzip it and put pack-v1/a.jsonl at" in line
    assert [f for f in (tmp_path / "again").rglob("*") if f.is_file()] == []


def test_an_archive_pinned_without_a_length_is_whole_when_its_checksum_says_so(served, tmp_path):
    served.routes["/pinned.zip"] = Route(PINNED_ZIP, length="")
    res = _fetch("pinned", "--to", str(tmp_path))
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "pinned" / "labels.lst").read_bytes() == LABELS


def test_a_file_of_the_wrong_format_is_refused_and_deleted(served, tmp_path):
    served.routes["/plain/items.jsonl"] = Route(b"<html><body>Sign in to continue</body></html>\n")
    line = _error_line(_fetch("plain", "--to", str(tmp_path)))
    assert "not the expected file: line 1 is not JSON: '<html>" in line
    assert "the download was deleted" in line
    assert not (tmp_path / "plain" / "items.jsonl").exists()
    assert list(tmp_path.rglob("*.part")) == []


TABLE = b"a\tb\n" + b"".join(b"row %d\tvalue %d\n" % (i, i) for i in range(200))


def _refused_and_nothing_installed(res, tmp_path, *words: str) -> str:
    line = _error_line(res)
    for word in words:
        assert word in line, (word, line)
    assert [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".part"] == []
    return line


@pytest.mark.parametrize("name", ["records", "plain"])
def test_json_nested_without_bound_is_refused_not_a_recursion_error(served, tmp_path, name):
    deep = b"[" * 100_000 + b"]" * 100_000
    served.routes["/records/r.json"] = Route(deep)
    served.routes["/plain/items.jsonl"] = Route(b'{"a": ' + deep + b"}\n")
    line = _refused_and_nothing_installed(
        _fetch(name, "--to", str(tmp_path)), tmp_path, "nested deeper", "deleted"
    )
    assert "RecursionError" not in line


def _zip_with(data: bytes, *, flags: int = 0, method: int = 0) -> bytes:
    """The pack archive whose member a.jsonl has the general-purpose ``flags`` (bit 0:
    encrypted) and the compression ``method`` written into its local header and its
    central record (zipfile writes neither by itself)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("pack-v1/a.jsonl", data)
        z.writestr("pack-v1/labels.lst", LABELS)
    body = buffer.getvalue()
    for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # its first of each
        i = body.index(signature) + at
        body = body[:i] + flags.to_bytes(2, "little") + method.to_bytes(2, "little") + body[i + 4 :]
    return body


@pytest.mark.parametrize(
    ("archive", "words"),
    [
        (lambda: _zip_with(A_MEMBER, flags=0x1), "is encrypted"),
        (lambda: _zip_with(A_MEMBER, method=98), "compressed by method 98"),
    ],
)
def test_a_zip_member_that_cannot_be_read_is_one_line(served, tmp_path, archive, words):
    served.routes["/pack.zip"] = Route(archive())
    _refused_and_nothing_installed(
        _fetch("pack", "--to", str(tmp_path)), tmp_path, "pack-v1/a.jsonl", words, "deleted"
    )
    assert list(tmp_path.rglob("*.part")) == []


@pytest.mark.parametrize("length", ["-5", "", "1e3", "12, 12"])
def test_a_length_not_given_keeps_a_format_checked_file_as_a_part(served, tmp_path, length):
    """MED's first 1,000 bytes with a Content-Length of -5 (or none): nothing says the
    file is whole, so it is kept to resume, never installed."""
    served.routes["/table/t.tsv"] = Route(TABLE[:1000], length=length)
    _refused_and_nothing_installed(
        _fetch("table", "--to", str(tmp_path)), tmp_path, "did not say the file's length"
    )
    assert (tmp_path / "table" / "t.tsv.part").read_bytes() == TABLE[:1000]
    served.routes["/table/t.tsv"] = Route(TABLE)  # the resume's 206 says the length
    res = _fetch("table", "--to", str(tmp_path))
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "table" / "t.tsv").read_bytes() == TABLE


def test_a_length_not_given_is_enough_for_a_file_with_a_checksum(served, tmp_path):
    served.routes["/tiny/records.jsonl"] = Route(RECORDS, length="")
    assert _fetch("tiny", "--to", str(tmp_path)).exit_code == 0
    assert (tmp_path / "tiny" / "records.jsonl").read_bytes() == RECORDS
    served.routes["/tiny/records.jsonl"] = Route(RECORDS[:-10], length="")
    _refused_and_nothing_installed(
        _fetch("tiny", "--to", str(tmp_path / "again")), tmp_path / "again", "checksum mismatch"
    )


def test_an_absurd_length_is_refused_before_the_transfer(served, tmp_path):
    served.routes["/table/t.tsv"] = Route(TABLE, length=str(10**15))
    _refused_and_nothing_installed(
        _fetch("table", "--to", str(tmp_path)), tmp_path, "announces 1,000,000,000,000,000 bytes"
    )
    assert list(tmp_path.rglob("*.part")) == []


def test_a_stream_without_length_stops_past_the_largest_file(served, tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_module, "MAX_BYTES", 1000)
    served.routes["/table/t.tsv"] = Route(TABLE, length="")
    _refused_and_nothing_installed(
        _fetch("table", "--to", str(tmp_path)), tmp_path, "the server sent more than 1,000"
    )
    assert list(tmp_path.rglob("*.part")) == []


@pytest.mark.parametrize("cut", [7, 500, len(TABLE) - 3])
def test_the_tsv_check_reads_every_line(tmp_path, cut):
    path = tmp_path / "t.tsv"
    path.write_bytes(TABLE[:cut])
    with pytest.raises(BadFile, match="fields, the header 2|no line break"):
        _check(path, Remote("t.tsv", "https://example.org/t.tsv", format="tsv", columns=("a",)))


def test_an_unknown_name_fetches_nothing(served, tmp_path):
    served.routes["/tiny/records.jsonl"] = Route(RECORDS)
    line = _error_line(_fetch("tiny", "tinny", "--to", str(tmp_path)))
    assert "no data set called 'tinny': choose from tiny, plain, pack, gone, table" in line
    assert served.seen == [] and list(tmp_path.iterdir()) == []


def test_fetch_returns_what_it_did(served, tmp_path):
    """The library call, as the CLI uses it: files fetched, then present."""
    served.routes["/pack.zip"] = Route(_zip())
    pack = entries.dataset("pack")
    first = fetch(pack, tmp_path)
    assert [(f.path.name, f.how, f.check) for f in first] == [
        ("a.jsonl", "fetched", "sha256"),
        ("labels.lst", "fetched", "format labels"),
    ]
    assert [f.how for f in fetch(pack, tmp_path)] == ["present", "present"]
    assert [f.how for f in fetch(pack, tmp_path, force=True)] == ["fetched", "fetched"]


# the real catalogue


def test_every_catalogue_file_is_well_formed():
    for entry in CATALOGUE:
        paths = [f.path for f in entry.files]
        assert len(set(paths)) == len(paths), entry.name
        assert all(p == entry.path or p.startswith(f"{entry.path.split('/')[0]}/") for p in paths)
        names = [d.name for d in downloads(entry)]
        assert len(set(names)) == len(names), entry.name
        for download in downloads(entry):  # an archive's pin is the same for all its files
            assert len({f.archive_sha256 for f in download.files}) == 1, download.name
        for remote in entry.files:
            assert remote.format in FORMATS, remote
            assert remote.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", remote.sha256)
            pin = remote.archive_sha256
            assert pin is None or (remote.member and re.fullmatch(r"[0-9a-f]{64}", pin)), remote
            assert (remote.member is not None) == remote.url.endswith(".zip"), remote
            assert remote.url.startswith(("https://", "http://")), remote


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data not present")
def test_the_checksums_are_those_of_the_copies_at_hand():
    checked = 0
    for entry in CATALOGUE:
        for remote in entry.files:
            copy = SHARED / remote.path
            if remote.sha256 is not None:
                assert sha256(copy) == remote.sha256, remote.path
                checked += 1
    assert checked == 85  # all but MED (and the HotpotQA, SNLI, HellaSwag, CoQA files)


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data not present")
@pytest.mark.parametrize(
    ("copy", "fmt", "columns"),
    [
        ("squad/dev-v1.1.json", "json", ()),
        ("quoref/quoref-dev-v0.1.json", "json", ()),
        ("hotpotqa/hotpot_dev_distractor_v1_first103.json", "json-records", ()),
        ("snli/snli_1.0_dev_first1289.jsonl", "jsonl", ()),
        ("med/MED.tsv", "tsv", ("sentence1", "sentence2", "gold_label")),
        ("socialiqa/dev-labels.lst", "labels", ()),
    ],
)
def test_the_format_checks_pass_the_real_files(copy, fmt, columns):
    _check(SHARED / copy, Remote(copy, "https://example.org/x", format=fmt, columns=columns))


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data not present")
@pytest.mark.parametrize(
    ("copy", "fmt"),
    [
        ("squad/dev-v1.1.json", "json-records"),
        ("hotpotqa/hotpot_dev_distractor_v1_first103.json", "json"),
        ("hotpotqa/hotpot_dev_distractor_v1_first103.json", "jsonl"),
        ("socialiqa/dev.jsonl", "labels"),
        ("socialiqa/dev.jsonl", "tsv"),
    ],
)
def test_the_format_checks_refuse_the_wrong_file(copy, fmt):
    with pytest.raises(BadFile, match="not the expected file"):
        _check(SHARED / copy, Remote(copy, "https://example.org/x", format=fmt))


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data not present")
def test_the_real_catalogue_fetches_from_a_mirror_of_the_copies_at_hand(server, tmp_path):
    """Every path, archive member and checksum of the data sets at hand, end to end: a
    mirror laid out as ``--mirror`` expects, built from ../shared/data."""
    server.routes.clear()
    names = ["squad", "socialiqa", "nli-xy", "quoref", "help", "med", "bbh"]
    for name in names:
        for download in downloads(entries.dataset(name)):
            if download.archive:
                buffer = io.BytesIO()
                with zipfile.ZipFile(buffer, "w") as z:
                    for remote in download.files:
                        z.write(SHARED / remote.path, remote.member)
                body = buffer.getvalue()
            else:
                body = (SHARED / download.name).read_bytes()
            server.routes[f"/mirror/{download.name}"] = Route(body)
    res = _fetch(*names, "--to", str(tmp_path), "--mirror", f"{server.url}/mirror")
    assert res.exit_code == 0, res.stderr
    for name in names:
        for remote in entries.dataset(name).files:
            assert (tmp_path / remote.path).read_bytes() == (SHARED / remote.path).read_bytes()
    assert list(tmp_path.rglob("*.part")) == []


def _release_archives(name: str) -> dict[str, bytes]:
    """Archives laid out as the real catalogue's ``name`` expects (its members' paths),
    each member a few lines in the data set's format written here: mirror path -> bytes."""
    from test_nli_releases import anli_line, mnli_line

    out = {}
    for download in downloads(entries.dataset(name)):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            for k, remote in enumerate(download.files):
                line = (
                    anli_line(f"u{k}", "A dog ran.", "An animal ran.", "e")
                    if name == "anli"
                    else mnli_line(f"{k}e", "A dog ran.", "An animal ran.", "entailment", "fiction")
                )
                z.writestr(remote.member, line + "\n")
        out[f"/mirror/{download.name}"] = buffer.getvalue()
    return out


def test_anli_and_mnli_fetch_from_a_mirror_as_natural_logic_finds_them(
    server, tmp_path, monkeypatch
):
    """The real ANLI and MultiNLI entries end to end: their archives' names under a mirror,
    their members' paths, where each lands, and natural-logic's ``-o challenge=auto``
    finding the method's splits there. The archives are written here, so the entries are
    re-pinned to them (the next test shows the published digests are enforced)."""
    from dataclasses import replace

    from faithprobe.datasets.nli_xy import challenge_files
    from test_snli_challenge import write_grid

    server.routes.clear()
    pins = {}
    for name in ("anli", "mnli"):
        for path, body in _release_archives(name).items():
            server.routes[path] = Route(body)
            pins[name] = _sha(body)
    catalogue = tuple(
        replace(e, files=tuple(replace(f, archive_sha256=pins[e.name]) for f in e.files))
        if e.name in pins
        else e
        for e in CATALOGUE
    )
    monkeypatch.setattr(entries, "CATALOGUE", catalogue)
    assert sorted(server.routes) == ["/mirror/anli/anli_v0.1.zip", "/mirror/mnli/multinli_1.0.zip"]
    res = _fetch("anli", "mnli", "--to", str(tmp_path), "--mirror", f"{server.url}/mirror")
    assert res.exit_code == 0, res.stderr
    assert "(6 files fetched; checked by archive sha256 + format jsonl)" in res.stderr
    assert "(2 files fetched; checked by archive sha256 + format jsonl)" in res.stderr
    found = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.jsonl"))
    assert found == [
        *(f"anli/R{r}/{split}.jsonl" for r in (1, 2, 3) for split in ("dev", "test")),
        "mnli/multinli_1.0_dev_matched.jsonl",
        "mnli/multinli_1.0_dev_mismatched.jsonl",
    ]
    write_grid(tmp_path / "nli-xy")
    assert [p.relative_to(tmp_path).as_posix() for p in challenge_files(tmp_path / "nli-xy")] == [
        "mnli/multinli_1.0_dev_matched.jsonl",
        "mnli/multinli_1.0_dev_mismatched.jsonl",
        "anli/R1/test.jsonl",
        "anli/R2/test.jsonl",
        "anli/R3/test.jsonl",
    ]


@pytest.mark.parametrize(
    ("name", "digest"),
    [
        ("anli", "16ac929a7e90ecf9093deaec89cc81fe86a379265a5320a150028efe50c5cde8"),
        ("mnli", "049f507b9e36b1fcb756cfd5aeb3b7a0cfcb84bf023793652987f7e7e0957822"),
    ],
)
def test_anli_and_mnli_are_pinned_to_the_published_archives(server, tmp_path, name, digest):
    """The digests Hugging Face datasets published (dataset_infos.json) pin the archives: any
    other archive at the mirror is refused in one line, and nothing is kept."""
    server.routes.clear()
    assert {f.archive_sha256 for f in entries.dataset(name).files} == {digest}
    ((path, body),) = _release_archives(name).items()
    server.routes[path] = Route(body)
    line = _error_line(_fetch(name, "--to", str(tmp_path), "--mirror", f"{server.url}/mirror"))
    assert (
        f"the SHA-256 of the archive is {_sha(body)[:16]}…, the catalogue's is {digest[:16]}…"
        in line
    )
    assert [f for f in tmp_path.rglob("*") if f.is_file()] == []
