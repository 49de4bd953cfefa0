"""The bound on input length that every local backend keeps, and the cheap cuts that keep
it (no torch: the QA windows and the command line use these without loading a model).

``max_length`` is the most tokens a model takes (:func:`position_limit`); each backend cuts
a longer input to fit by a rule stated in its module docstring, and the answer to a cut input
has ``truncated=True``. A model stating no limit is never cut. A text far longer than the
model takes is cut to ``max_length * CHARS_PER_TOKEN`` characters on the side that will be
truncated before it is tokenised (:func:`cut_for_tokens`), so a 5 MB context costs what a
few kilobytes do.
"""

from __future__ import annotations

# Real text averages about 4 characters a token; this many characters per token kept
# leaves several times more tokens than are kept, so the cut is far from them.
CHARS_PER_TOKEN = 32

# tokenizers say "no limit" with a huge model_max_length (int(1e30))
_NO_LIMIT = 1_000_000


def position_limit(model, tokenizer) -> int | None:
    """The most tokens the model takes: its position embeddings (``max_position_embeddings``
    or ``n_positions``; RoBERTa-style models count positions from ``pad_token_id + 1``, so
    two fewer) and the tokenizer's ``model_max_length`` unless that is the "no limit"
    sentinel; None when neither states a limit."""
    config = model.config
    limits = []
    positions = getattr(config, "max_position_embeddings", None) or getattr(
        config, "n_positions", None
    )
    if positions:
        offset = 2 if getattr(config, "model_type", "") in ("roberta", "xlm-roberta") else 0
        limits.append(positions - offset)
    tok_max = getattr(tokenizer, "model_max_length", None)
    if tok_max and tok_max < _NO_LIMIT:
        limits.append(tok_max)
    return min(limits) if limits else None


def model_max_length(model, tokenizer, cap: int) -> int:
    """The longest input the model and tokenizer accept (:func:`position_limit`), at most
    ``cap``."""
    limit = position_limit(model, tokenizer)
    return cap if limit is None else min(cap, limit)


def cut_for_tokens(tokenizer, text: str, keep: int, *, keep_end: bool) -> str:
    """``text`` cut to characters that hold the ``keep`` tokens at its end (``keep_end``) or
    start that a truncating caller keeps: its last (first) ``keep * CHARS_PER_TOKEN``
    characters when those hold at least twice ``keep`` tokens -- the kept tokens then lie far
    from the cut, so they are those of the whole text -- else the whole text."""
    reach = keep * CHARS_PER_TOKEN
    if len(text) <= reach:
        return text
    cut = text[-reach:] if keep_end else text[:reach]
    n_tokens = len(tokenizer(cut, add_special_tokens=False)["input_ids"])
    return cut if n_tokens >= 2 * keep else text


def special_frame(tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after the tokens of one text (BERT:
    ``[CLS]`` and ``[SEP]``; Llama: ``<s>`` and none; GPT-2: none), which a cut input keeps."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    framed = tokenizer("a")["input_ids"]
    n = len(plain)
    lead = next((i for i in range(len(framed) - n + 1) if framed[i : i + n] == plain), 0)
    return list(framed[:lead]), list(framed[lead + n :])
