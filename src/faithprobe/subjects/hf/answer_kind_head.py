"""The answer-kind head of an extractive QA model: a linear classifier beside the span head
that tells a span answer from *yes*, *no* and *unknown* (:data:`~faithprobe.requests.
ANSWER_KINDS`), the answer types of CoQA models. An extractive model alone can only point
at a span; with this head it answers yes/no questions, and can abstain on them.

The head reads the final hidden state of a window's first token (``[CLS]``), as BERT's
sequence classifiers do, through dropout (active in training only). ``faithprobe train qa
--answer-kind`` trains it together with the span head and saves it beside the model's
own files, which stay those of an ordinary ``*ForQuestionAnswering`` folder (plain
transformers still loads it as a QA model and ignores the head):

* ``answer_kind_head.safetensors``: the classifier's ``weight`` [kinds, hidden] and ``bias``;
* ``answer_kind_head.json``: the kinds in the classifier's order, the hidden size, the
  dropout and what the head reads.

The extractive QA backend loads the head when both files are there
(:meth:`AnswerKindHead.load`); being files of the model's folder, they count in its
fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch

from faithprobe.errors import ModelError
from faithprobe.requests import ANSWER_KINDS

WEIGHTS_FILE = "answer_kind_head.safetensors"
CONFIG_FILE = "answer_kind_head.json"
READS = "final hidden state of the window's first token ([CLS])"


def cls_states(outputs, cls_index: torch.Tensor) -> torch.Tensor:
    """The final hidden state of each row's first token (``cls_index`` per row) from a
    transformers model's outputs computed with ``output_hidden_states=True``."""
    last = outputs.hidden_states[-1]
    return last[torch.arange(last.shape[0], device=last.device), cls_index.to(last.device)]


class AnswerKindHead(torch.nn.Module):
    """Dropout and a linear layer from a hidden state to one logit per answer kind."""

    def __init__(self, hidden_size: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.hidden_size, self.dropout_p = hidden_size, dropout
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(hidden_size, len(ANSWER_KINDS))

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.dropout(states))

    def save(self, folder: str | Path) -> None:
        from safetensors.torch import save_file

        folder = Path(folder)
        tensors = {
            k: v.detach().cpu().contiguous() for k, v in self.classifier.state_dict().items()
        }
        save_file(tensors, folder / WEIGHTS_FILE, metadata={"format": "pt"})
        config = {
            "kinds": list(ANSWER_KINDS),
            "hidden_size": self.hidden_size,
            "dropout": self.dropout_p,
            "reads": READS,
        }
        (folder / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n")

    @classmethod
    def load(cls, folder: str | Path) -> AnswerKindHead | None:
        """The head saved in ``folder``, or None when it has none."""
        from safetensors.torch import load_file

        folder = Path(folder)
        if not (folder / WEIGHTS_FILE).is_file():
            return None
        config_path = folder / CONFIG_FILE
        try:
            config = json.loads(config_path.read_text())
            kinds, hidden = tuple(config["kinds"]), int(config["hidden_size"])
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ModelError(f"{config_path}: not an answer-kind head config ({err})") from err
        if kinds != ANSWER_KINDS:
            raise ModelError(
                f"{config_path}: the head's kinds are {list(kinds)}, expected {list(ANSWER_KINDS)}"
            )
        head = cls(hidden, float(config.get("dropout", 0.1)))
        try:
            head.classifier.load_state_dict(load_file(folder / WEIGHTS_FILE))
        except RuntimeError as err:  # missing tensors or wrong shapes
            raise ModelError(f"{folder / WEIGHTS_FILE}: does not fit {config_path}: {err}") from err
        return head.eval()

    def digest(self) -> str:
        """A hash of the head's weights (an in-memory model's fingerprint mixes it in)."""
        h = hashlib.sha256()
        for name, tensor in sorted(self.classifier.state_dict().items()):
            h.update(name.encode())
            h.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
        return h.hexdigest()[:16]
