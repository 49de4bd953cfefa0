"""The sentence-encoder selector: the sentence whose embedding is nearest the question's.

Embeddings come from the embedded all-MiniLM-L6-v2
(:func:`~faithprobe.subjects.hf.minilm.minilm_path`) pooled as sentence-transformers pools
this model (its ``modules.json``: Transformer, mean Pooling, Normalize): the last hidden
state averaged over the tokens the attention mask keeps, then L2-normalised, inputs cut at
256 tokens (its ``max_seq_length``). Cosine similarity is then a dot product.

Texts are encoded in batches sorted by length (little padding). Many questions share a
context, so each context's sentence matrix is cached (by the tuple of its sentences, the
least recently used dropped first); :meth:`EncoderSelector.select_many` encodes all the
missing contexts and all the questions in one batched pass.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from faithprobe.heuristics.selection import Selector, best_index

MAX_LENGTH = 256


class MiniLMEncoder:
    """Sentence embeddings from a BERT folder (default: the embedded MiniLM), lazily loaded."""

    def __init__(self, path: Path | None = None, batch_size: int = 64) -> None:
        self.path = path
        self.batch_size = batch_size

    @cached_property
    def _model(self):
        from transformers import AutoModel, AutoTokenizer

        from faithprobe.subjects.hf.minilm import minilm_path

        path = self.path or minilm_path()
        return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per text (``len(texts) x hidden``)."""
        import torch

        tokenizer, model = self._model
        out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for at in range(0, len(order), self.batch_size):
            chunk = order[at : at + self.batch_size]
            batch = tokenizer(
                [texts[i] for i in chunk],
                padding=True,
                truncation=True,
                max_length=MAX_LENGTH,
                return_tensors="pt",
            )
            with torch.inference_mode():
                states = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out[chunk] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
        return out


class EncoderSelector(Selector):
    """The sentence with the highest cosine similarity to the question."""

    name = "encoder"

    def __init__(self, encoder: MiniLMEncoder | None = None, cache_size: int = 4096) -> None:
        self.encoder = encoder or MiniLMEncoder()
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple[str, ...], np.ndarray] = OrderedDict()

    def _encode_contexts(self, contexts: Sequence[Sequence[str]]) -> None:
        """Encode the sentences of the contexts not yet cached, in one batched pass."""
        todo = [c for c in dict.fromkeys(map(tuple, contexts)) if c not in self._cache]
        flat = [s for c in todo for s in c]
        vectors = self.encoder.encode(flat) if flat else None
        at = 0
        for context in todo:
            self._cache[context] = vectors[at : at + len(context)]
            at += len(context)
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def _matrix(self, sentences: Sequence[str]) -> np.ndarray:
        key = tuple(sentences)
        if key not in self._cache:
            self._encode_contexts([key])
        self._cache.move_to_end(key)
        return self._cache[key]

    def select(self, question: str, sentences: Sequence[str]) -> int:
        return self.select_many([question], [sentences])[0]

    def select_many(
        self, questions: Sequence[str], sentences: Sequence[Sequence[str]]
    ) -> list[int]:
        self._encode_contexts(sentences)
        asked = self.encoder.encode(questions)
        return [
            best_index(list(self._matrix(s) @ q)) for q, s in zip(asked, sentences, strict=True)
        ]
