"""Model fingerprints: a short hash that changes when a model's answers could change.

Small files (configs, tokenizer files) are hashed whole. Weight files are hashed by size
plus three 1 MiB samples (head, middle, tail): reading several GB on every run would cost
more than the cache saves, and any retrained or re-quantised checkpoint differs in
those samples. In-memory models (built in tests) are hashed from their tensors.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # file fingerprints are taken without it (runs whose answers are cached)
    import torch

_SAMPLE = 1 << 20
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".msgpack", ".h5")


def _hash_weight_file(path: Path, h: hashlib._Hash) -> None:
    size = path.stat().st_size
    h.update(str(size).encode())
    with path.open("rb") as f:
        for offset in (0, max(0, size // 2 - _SAMPLE // 2), max(0, size - _SAMPLE)):
            f.seek(offset)
            h.update(f.read(_SAMPLE))


def fingerprint_path(path: str | Path, *parts: str) -> str:
    """Fingerprint of a model file or folder, mixed with extra ``parts``."""
    path = Path(path)
    h = hashlib.sha256("\x1f".join(parts).encode())
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        h.update(f.name.encode())
        if f.suffix in _WEIGHT_SUFFIXES:
            _hash_weight_file(f, h)
        else:
            h.update(f.read_bytes())
    return h.hexdigest()[:24]


def fingerprint_module(module: torch.nn.Module, tokenizer, *parts: str) -> str:
    """Fingerprint of an in-memory model and its tokenizer."""
    import torch

    h = hashlib.sha256("\x1f".join(parts).encode())
    h.update(module.config.to_json_string().encode())
    for name, tensor in sorted(module.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    backend = getattr(tokenizer, "backend_tokenizer", None)
    h.update((backend.to_str() if backend is not None else repr(tokenizer.get_vocab())).encode())
    return h.hexdigest()[:24]
