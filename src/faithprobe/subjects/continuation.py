"""How a greedy continuation, made token by token, becomes an answer: when it is finished
and where it is cut. One rule for every backend that generates so (the transformers causal
LM, :mod:`~faithprobe.subjects.hf.causal`, and llama.cpp, :mod:`~faithprobe.subjects.gguf.
llamacpp`), so the same tokens give the same answer whichever made them; ``decode`` turns
token ids into text as the backend's tokenizer does (special tokens skipped)."""

from __future__ import annotations

from collections.abc import Callable, Collection

from faithprobe.requests import Generation, stop_index

Decode = Callable[[list[int]], str]


def finished(
    tokens: list[int], max_new: int, stop: tuple[str, ...], eos: Collection[int], decode: Decode
) -> bool:
    """Whether a continuation is done: ``max_new`` tokens made, an EOS token made, or a stop
    string written (once the answer has begun)."""
    if len(tokens) >= max_new or (tokens and tokens[-1] in eos):
        return True
    return stop_index(decode(tokens), stop) is not None


def cut(
    tokens: list[int], stop: tuple[str, ...], eos: Collection[int], decode: Decode
) -> Generation:
    """The text before the first stop string (once the answer has begun), trailing white
    space stripped, and the tokens needed to write it (an EOS token and the stop string's
    own tokens not counted)."""
    if tokens and tokens[-1] in eos:
        tokens = tokens[:-1]
    text = decode(tokens)
    at = stop_index(text, stop)
    kept = text if at is None else text[:at]
    n_tokens = next(
        (k for k in range(len(tokens)) if decode(tokens[:k]).startswith(kept)), len(tokens)
    )
    answer = kept.rstrip()
    return Generation(answer, n_tokens if answer else 0)
