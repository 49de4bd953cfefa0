"""Local GGUF models: ``--model gguf:PATH`` (a ``.gguf`` file, or a folder holding one).

transformers reads a GGUF of any architecture its GGUF loader knows (llama, mistral, qwen2,
gemma3...) and dequantises it to float32, which takes from seconds to minutes. So it is done
once: the model, its tokenizer and chat template are saved as a safetensors folder in the
cache directory, named by the GGUF's fingerprint, and every later load reads that folder
like any local causal LM -- so its fingerprint is known from the folder's files without
loading it (:class:`~faithprobe.subjects.deferred.DeferredSubject`). The embedded models
(:mod:`faithprobe.subjects.gguf.embedded`) are GGUF files converted the same way. Two
processes meeting a model's first use at once (two runs, two test workers) convert it once:
the second waits for the first (:func:`made_once`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

from faithprobe.console import log as console_log
from faithprobe.errors import ModelError
from faithprobe.subjects.answer_cache import default_cache_dir
from faithprobe.subjects.fingerprint import fingerprint_path
from faithprobe.subjects.gguf.file import check_gguf_file

MARKER = "faithprobe.json"  # written last: a folder without it is an unfinished conversion


def find_gguf(target: str | Path) -> Path:
    """The GGUF file ``target`` names: the file itself, or the only ``.gguf`` file in a
    folder; checked to be a whole GGUF model (:mod:`~faithprobe.subjects.gguf.file`) before
    anything reads it."""
    path = Path(target).expanduser()
    if not path.exists():
        raise ModelError(f"GGUF model {path} does not exist")
    if path.is_dir():
        found = sorted(p for p in path.glob("*.gguf") if p.is_file())
        if len(found) != 1:
            names = ", ".join(f.name for f in found) or "none"
            raise ModelError(
                f"folder {path} must hold exactly one .gguf file (found: {names}); "
                "give the file's path"
            )
        path = found[0]
    elif path.suffix.lower() != ".gguf":
        raise ModelError(f"model file {path} is not a .gguf file")
    check_gguf_file(path)
    return path


def converted_dir(source: Path, stem: str | None = None, cache_dir: Path | None = None) -> Path:
    """Where the safetensors copy of ``source`` lives: ``<cache>/models/<stem>-<fingerprint
    of the GGUF>`` (``stem``: the file's name by default)."""
    stem = stem or source.stem.lower()
    return (cache_dir or default_cache_dir()) / "models" / f"{stem}-{fingerprint_path(source)}"


def made_once(target: Path, ready: Callable[[], bool], make: Callable[[], None]) -> Path:
    """``target``, made by ``make()`` unless ``ready()``; under a lock file beside it
    (``.NAME.lock``, left there), so that of two processes making it at once one makes it and
    the other then finds it ready."""
    if ready():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(target.with_name(f".{target.name}.lock")):
        if not ready():
            make()
    return target


def ensure_converted(
    source: Path, *, stem: str | None = None, cache_dir: Path | None = None, log=None
) -> Path:
    """Dequantise the GGUF ``source`` once to a float32 safetensors folder; return it."""
    target = converted_dir(source, stem, cache_dir)
    return made_once(
        target, (target / MARKER).is_file, lambda: _convert(source, target, log or console_log)
    )


def _convert(source: Path, target: Path, say: Callable[[str], None]) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    # say: a line of faithprobe's own, even while progress bars are drawn
    say(f"First use of {source.name}: dequantising it to safetensors in {target} (once)...")
    folder, name = source.parent, source.name
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
        config = AutoConfig.from_pretrained(folder, gguf_file=name)
    except (ValueError, KeyError, NotImplementedError) as err:  # unreadable or unsupported
        raise ModelError(f"cannot read GGUF model {source}: {err}") from err
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    # a fresh model of the same config, so nothing of the GGUF loading is saved with it
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=False)
    model.tie_weights()
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial, safe_serialization=True)
    tokenizer.save_pretrained(partial)
    (partial / MARKER).write_text(
        json.dumps({"source": source.name, "source_fingerprint": fingerprint_path(source)})
    )
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    say(f"{source.name} ready.")


def load_gguf(target: str | Path, *, name: str | None = None, **kwargs):
    """The causal LM in the GGUF ``target`` names (converted on first use)."""
    from faithprobe.subjects.hf.causal import HFCausal  # torch: only once a model loads

    folder = ensure_converted(find_gguf(target))
    return HFCausal.from_pretrained(folder, name=name or f"gguf:{target}", **kwargs)
