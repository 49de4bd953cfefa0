"""Whether a model folder carries a chat template, read off its tokenizer files.

``-o chat=auto`` (the QA suites' default) asks a model through its chat template when it has
one: an instruction-tuned model prompted plainly often stops at once (the embedded
SmolLM2-Instruct gave an empty reply to a third of SQuAD questions and to nearly every
comparison question), while a base model has no template to use. A deferred subject has to
know this before its model is loaded, so it is read here from the files transformers reads
it from: ``chat_template.jinja``, ``chat_template.json``, or ``tokenizer_config.json``'s
``chat_template`` field. Light: no transformers import.
"""

from __future__ import annotations

import json
from pathlib import Path

TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")


def folder_has_chat_template(folder: str | Path) -> bool:
    folder = Path(folder)
    if any((folder / name).is_file() for name in TEMPLATE_FILES):
        return True
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return bool(isinstance(config, dict) and config.get("chat_template"))
