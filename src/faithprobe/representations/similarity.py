"""Final-layer hidden states of an extractive QA encoder, and cosine similarities of them.

**Encoding** is the extractive QA backend's
(:class:`~faithprobe.subjects.hf.extractive_qa.HFQA`): the tokenizer text pair
(question, context) -- ``[CLS] question [SEP] context [SEP]`` for BERT -- with the question
cut from the left to half of ``max_length`` tokens, only the context truncated
(``truncation="only_second"``), token type ids whenever the model has segment embeddings,
and ``max_length`` (default 384) capped by the model. Unlike the backend, which reads a
long context through overlapping windows, this analysis keeps **only the first window**:
a context longer than the window is cut, and the encoding says so (``truncated``).

**Hidden states** come from the model's encoder (``AutoModelForQuestionAnswering``'s
``base_model``, so a QA checkpoint and a bare encoder both load), in eval mode and float32
without gradients; inputs are right-padded under an attention mask, so the batch size
changes nothing but rounding.

**The summary token** (``pooling``): the token whose final state stands for the whole
input, the method's "CLS embedding". A BERT-like encoder puts its summary token first
(``[CLS]``, RoBERTa's ``<s>``); XLNet puts it last (``<sep> <cls>`` end its inputs). With
``pooling="auto"`` the model's own convention decides: its config's ``summary_type``
(transformers' sequence summary: ``last`` for XLNet, ``cls_index`` for GPT-2, whose
classification token is appended last) picks the last token, ``first`` or no such setting
the first; ``first`` and ``last`` force one.

**Cosines** are computed in float64 from the float32 states.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from faithprobe.errors import ModelError
from faithprobe.options import check_among
from faithprobe.representations.config import POOLINGS
from faithprobe.requests import Offset
from faithprobe.subjects.bounds import model_max_length
from faithprobe.subjects.hf.encoder import pad_rows, uses_token_types
from faithprobe.subjects.hf.qa_windows import DEFAULT_MAX_LENGTH, cut_question


@dataclass(frozen=True)
class Encoding:
    """One encoded (question, context): token ids, token type ids (None if the model takes
    none), per token its offset (see :mod:`~faithprobe.representations.alignment`), and
    whether the context was cut to fit the window."""

    ids: tuple[int, ...]
    types: tuple[int, ...] | None
    offsets: tuple[Offset, ...]
    truncated: bool

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_context(self) -> int:
        return sum(1 for o in self.offsets if o is not None and o[0] == 1)


def encode(
    tokenizer, question: str, context: str, *, max_length: int, token_types: bool
) -> Encoding:
    """The first window of (question, context), encoded as the extractive QA backend does."""
    question = cut_question(tokenizer, question, max_length // 2)
    enc = tokenizer(
        question,
        context,
        truncation="only_second",
        max_length=max_length,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        return_token_type_ids=token_types,
    )
    offsets = tuple(
        None if seq is None else (seq, int(start), int(end))
        for seq, (start, end) in zip(enc.sequence_ids(0), enc["offset_mapping"][0], strict=True)
    )
    types = tuple(enc["token_type_ids"][0]) if token_types else None
    return Encoding(tuple(enc["input_ids"][0]), types, offsets, len(enc["input_ids"]) > 1)


# a config's summary_type (transformers' SequenceSummary) -> where its summary token is
SUMMARY_TYPES = {"last": "last", "cls_index": "last", "first": "first"}


def summary_position(config, pooling: str = "auto") -> str:
    """``first`` or ``last``: where the summary token of a model with ``config`` is, under
    ``pooling`` (module docstring)."""
    check_among(pooling, POOLINGS, f"--pooling {pooling!r}")
    if pooling != "auto":
        return pooling
    return SUMMARY_TYPES.get(getattr(config, "summary_type", None), "first")


@dataclass
class Encoder:
    """A loaded encoder with its tokenizer, window settings and summary token (``first`` or
    ``last``)."""

    name: str
    path: str
    model: torch.nn.Module
    tokenizer: object
    max_length: int
    token_types: bool
    summary: str = "first"

    @classmethod
    def build(
        cls, name: str, path: str, model, tokenizer, max_length: int, pooling: str = "auto"
    ) -> Encoder:
        if not getattr(tokenizer, "is_fast", False):
            raise ModelError(
                f"model {name} ({path}): the analysis needs a fast (Rust) tokenizer for "
                f"character offsets, but {type(tokenizer).__name__} is a slow one"
            )
        if max_length < 8:
            raise ValueError(f"max_length must be at least 8, got {max_length}")
        model = model.float().eval()
        return cls(
            name,
            path,
            model,
            tokenizer,
            model_max_length(model, tokenizer, max_length),
            uses_token_types(model),
            summary_position(model.config, pooling),
        )

    @classmethod
    def load(
        cls,
        name: str,
        path: str | Path,
        max_length: int = DEFAULT_MAX_LENGTH,
        pooling: str = "auto",
    ) -> Encoder:
        """Load a QA model folder or Hugging Face id (weights in float32, no remote code)."""
        import transformers

        verbosity = transformers.logging.get_verbosity()
        # a bare encoder has no QA head: its load report would be noise, only the encoder runs
        transformers.logging.set_verbosity_error()
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(path))
            model = transformers.AutoModelForQuestionAnswering.from_pretrained(
                str(path), dtype=torch.float32
            )
        except (OSError, ValueError, KeyError) as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise ModelError(
                f"model {name}: cannot load {path} (not a model folder, or a Hugging Face id "
                f"not available offline): {first}"
            ) from None
        finally:
            transformers.logging.set_verbosity(verbosity)
        return cls.build(name, str(path), model.base_model, tokenizer, max_length, pooling)

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return pad if pad is not None else 0

    def encode(self, question: str, context: str) -> Encoding:
        return encode(
            self.tokenizer,
            question,
            context,
            max_length=self.max_length,
            token_types=self.token_types,
        )

    def hidden_states(self, encodings: Sequence[Encoding]) -> list[torch.Tensor]:
        """The final-layer hidden states of each encoding ([tokens, hidden], float32, on
        the CPU), from one padded forward."""
        if not encodings:
            return []
        inputs = pad_rows([(e.ids, e.types) for e in encodings], self.pad_id)
        device = next(self.model.parameters()).device
        with torch.inference_mode():
            out = self.model(**{k: v.to(device) for k, v in inputs.items()})
        states = out.last_hidden_state.float().cpu()
        return [states[i, : len(e)].clone() for i, e in enumerate(encodings)]


def cosines(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Row-wise cosine similarity of two [n, d] tensors (float64; a zero row gives 0)."""
    a, b = a.double(), b.double()
    norms = (a.norm(dim=-1) * b.norm(dim=-1)).clamp_min(1e-12)
    return (a * b).sum(-1) / norms


def summary_cosine(a: torch.Tensor, b: torch.Tensor, summary: str = "first") -> float:
    """Cosine similarity of the summary token's states of two inputs (``[tokens, hidden]``
    each, padding dropped): their ``first`` or their ``last`` token's."""
    at = 0 if summary == "first" else -1
    return float(cosines(a[at][None], b[at][None])[0])


def token_cosines(a: torch.Tensor, b: torch.Tensor, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """Cosine similarity of ``a[i]`` and ``b[j]`` for every ``(i, j)`` in ``pairs``."""
    if not pairs:
        return np.zeros(0)
    i, j = (torch.tensor(x, dtype=torch.long) for x in zip(*pairs, strict=True))
    return cosines(a[i], b[j]).numpy()


def mean_or_nan(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else float("nan")
