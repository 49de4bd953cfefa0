"""Is this file a whole GGUF model? Checked before anything else reads it.

transformers' GGUF loader trusts the file: a truncated download gives ``struct.error`` or
a numpy error minutes into a run, after the data was read and "dequantising…" printed. So
``gguf:`` models are read here first, as untrusted input, at a cost of a walk over the
metadata (tenths of a second for a tokenizer of 260k tokens): the magic and version, every
metadata entry within the file, and every tensor's data (its offset, shape and type)
within the file's size. The checks follow the GGUF specification (versions 2 and 3;
llama.cpp's ``docs/gguf.md``); the sizes of the tensor types are those of the ``gguf``
package, which transformers' loader uses as well.
"""

from __future__ import annotations

import math
import mmap
import struct
from functools import lru_cache
from pathlib import Path

from faithprobe.errors import ModelError, excerpt

MAGIC = b"GGUF"
VERSIONS = (2, 3)
MAX_DIMS = 4  # GGML_MAX_DIMS
DEFAULT_ALIGNMENT = 32
STRING, ARRAY = 8, 9
# the fixed-size metadata value types: type id -> struct format (little-endian)
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
           12: "d"}  # fmt: skip
MAX_VALUES = 1 << 25  # metadata values walked at most: far above any tokenizer's tokens
MAX_NESTING = 4  # arrays of arrays of ...
# the least a metadata entry and a tensor's description can take, in bytes
ENTRY_BYTES = 8 + 4 + 1
TENSOR_BYTES = 8 + 4 + 8 + 4 + 8
_LENGTH = struct.Struct("<Q")  # a string's length


class _Bad(Exception):
    """What is wrong with the file, in words (becomes a ModelError naming it)."""


class _Reader:
    """Little-endian reads from ``view`` that never go past its end."""

    def __init__(self, view) -> None:
        self.view, self.pos, self.values = view, 0, 0

    @property
    def left(self) -> int:
        return len(self.view) - self.pos

    def skip(self, n: int, what: str) -> int:
        """Step over ``n`` bytes; where they started."""
        if n > self.left:
            raise _Bad(
                f"cut short: {what} needs bytes up to {self.pos + n:,} but the file ends at "
                f"{len(self.view):,}"
            )
        start, self.pos = self.pos, self.pos + n
        return start

    def take(self, n: int, what: str) -> bytes:
        start = self.skip(n, what)
        return self.view[start : self.pos]

    def number(self, fmt: str, what: str):
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt), what))[0]

    def string(self, what: str) -> str:
        raw = self.take(self.number("Q", what), what)
        return raw.decode("utf-8", errors="replace")

    def count(self, n: int, what: str) -> None:
        """Count ``n`` more metadata values walked (a bound on the work a file can ask)."""
        self.values += n
        if self.values > MAX_VALUES:
            raise _Bad(f"{what}: more than {MAX_VALUES:,} metadata values, no model's")

    def skip_strings(self, count: int, what: str) -> None:
        """Step over ``count`` strings (a tokenizer's vocabulary: the bulk of the metadata)."""
        self.count(count, what)
        length, view, pos, end = _LENGTH.unpack_from, self.view, self.pos, len(self.view)
        for _ in range(count):
            if pos + 8 > end:
                break
            pos += 8 + length(view, pos)[0]
        else:
            if pos <= end:
                self.pos = pos
                return
        raise _Bad(f"cut short: {what} runs past the end of the file ({end:,} bytes)")

    def value(self, kind: int, what: str, depth: int = 0):
        """One metadata value of type ``kind``: scalars and strings are returned, arrays
        are walked (their items checked to lie within the file) and give None."""
        self.count(1, what)
        if kind in SCALARS:
            return self.number(SCALARS[kind], what)
        if kind == STRING:
            return self.string(what)
        if kind != ARRAY:
            raise _Bad(f"{what}: unknown value type {kind}")
        if depth >= MAX_NESTING:
            raise _Bad(f"{what}: arrays nested more than {MAX_NESTING} deep")
        item, count = self.number("I", what), self.number("Q", what)
        if item in SCALARS:
            self.skip(count * struct.calcsize(SCALARS[item]), what)
            return None
        if count * 8 > self.left:  # every string or array takes at least 8 bytes
            raise _Bad(f"cut short: {what} claims {count:,} items, more than the file holds")
        if item == STRING:
            self.skip_strings(count, what)
            return None
        for _ in range(count):
            self.value(item, what, depth + 1)
        return None


def check_gguf_file(path: Path) -> None:
    """Raise a ModelError naming ``path`` and what is wrong unless it is a regular file
    holding a whole GGUF model (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"GGUF model {path} is not a regular file")
    stat = path.stat()
    try:
        _checked(path.resolve(), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    except _Bad as bad:
        raise ModelError(f"cannot read GGUF model {path}: {bad}") from None
    except OSError as err:
        raise ModelError(f"cannot read GGUF model {path}: {err.strerror or err}") from None


@lru_cache(maxsize=16)
def _checked(path: Path, size: int, mtime_ns: int, inode: int) -> None:
    """The check, once per version of the file (a run looks at its model more than once)."""
    del mtime_ns, inode  # the cache key: a file rewritten in place is checked again
    if size < len(MAGIC):
        raise _Bad(f"not a GGUF file: it holds {size} bytes")
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as view:
        _check_layout(_Reader(view))


def _check_layout(r: _Reader) -> None:
    magic = r.take(len(MAGIC), "the magic")
    if magic != MAGIC:
        raise _Bad(f"not a GGUF file: it starts with {excerpt(magic)}, not {MAGIC!r}")
    version = r.number("I", "the header")
    if version not in VERSIONS:
        raise _Bad(f"GGUF version {version}; faithprobe reads versions 2 and 3")
    n_tensors, n_entries = r.number("Q", "the header"), r.number("Q", "the header")
    if n_entries * ENTRY_BYTES > r.left:
        raise _Bad(f"cut short: the header claims {n_entries:,} metadata entries")
    alignment = DEFAULT_ALIGNMENT
    for i in range(n_entries):
        key = r.string(f"metadata entry {i}")
        what = f"metadata entry {i} ({excerpt(key)})"
        value = r.value(r.number("I", what), what)
        if key == "general.alignment":
            if not isinstance(value, int) or value <= 0 or value & (value - 1):
                raise _Bad(f"{what}: {excerpt(value)} is not a power of two")
            alignment = value
    if n_tensors == 0:
        raise _Bad("it holds no tensors")
    if n_tensors * TENSOR_BYTES > r.left:
        raise _Bad(f"cut short: the header claims {n_tensors:,} tensors")
    tensors = [_tensor(r, i) for i in range(n_tensors)]
    data_start = -(-r.pos // alignment) * alignment
    for what, offset, nbytes in tensors:
        if offset % alignment:
            raise _Bad(f"{what}: its data offset {offset:,} is not a multiple of {alignment}")
        end = data_start + offset + nbytes
        if end > len(r.view):
            raise _Bad(
                f"cut short: {what}'s data ends at byte {end:,} but the file ends at "
                f"{len(r.view):,}"
            )


def _tensor(r: _Reader, i: int) -> tuple[str, int, int]:
    """One tensor's description: (its name for messages, data offset, data size)."""
    from gguf.constants import GGML_QUANT_SIZES  # the gguf package: only for gguf: models

    what = f"tensor {i} ({excerpt(r.string(f'tensor {i}'))})"
    n_dims = r.number("I", what)
    if not 1 <= n_dims <= MAX_DIMS:
        raise _Bad(f"{what}: {n_dims} dimensions (1 to {MAX_DIMS})")
    dims = [r.number("Q", what) for _ in range(n_dims)]
    kind, offset = r.number("I", what), r.number("Q", what)
    if kind not in GGML_QUANT_SIZES:
        raise _Bad(f"{what}: unknown tensor type {kind}")
    block, block_bytes = GGML_QUANT_SIZES[kind]
    if dims[0] % block:
        raise _Bad(f"{what}: its first dimension {dims[0]} is not a multiple of {block}")
    return what, offset, math.prod(dims) // block * block_bytes
