"""GGUF causal LMs run by llama.cpp (through ``llama-cpp-python``, the optional extra
``faithprobe[llamacpp]``) at the cost of their file: the quantised blocks are computed on as
they are, where :mod:`faithprobe.subjects.gguf.models` dequantises them to float32 (a 7B Q4
file of 4.4 GB becomes about 28 GB).

**The same questions as the dequantised model is asked.** Inputs are tokenized by the GGUF's
own tokenizer (:mod:`~faithprobe.subjects.gguf.llamacpp_tokens`) by the convention of
:class:`~faithprobe.subjects.hf.causal.HFCausal` (its module docstring): a candidate's score is
the summed natural-log probability of its tokens -- tokenized on their own with the
separating space -- after the context's tokens (a request's first-token rule and start token
apply as there); a context too long for ``n_ctx`` loses its
first tokens (the candidate and the special tokens around the text are kept), a generation
prompt too long loses its first tokens and ``max_new_tokens`` is capped to fit, and such
answers are marked ``truncated``. Generation is greedy (ties: the lowest token id), stops at
the file's EOS token, ``max_new_tokens`` or a stop string, and is cut and counted as HFCausal
cuts and counts it; a chat request goes through the file's chat template, a reply begun for
the model (``reply_start``) tokenized after its generation prompt and kept whole.

**The context once per request.** A request's context is run once and its keys and values
stay in llama.cpp's cache; each candidate is run after it (the cache rewound to the end of
the context before the next), so k candidates cost the context once and their own tokens.
Every request starts from an empty cache and runs in chunks of :data:`CHUNK` tokens at fixed
positions, with the thread count and batch sizes fixed at load, so an answer is computed
the same way whatever was asked before it or beside it: it depends on neither batch size
nor request order. Across thread counts llama.cpp's CPU kernels give the same numbers too
(each output is summed by one thread). The tests check both to 1e-9.

**Memory.** The file is read into memory rather than mapped: on a CPU llama.cpp repacks
4-bit blocks into an interleaved copy for its matrix kernels, and a mapped file's pages stay
resident beside that copy (a 7B Q4_K file of 3.9 GB: 9.2 GiB resident mapped, 5.7 GiB read,
of which 2 GiB are the keys and values of a 4,096-token context), at the same speed.

**What the answers are keyed by.** :data:`LLAMA_CPP` hashes the GGUF file with the runtime's
kind and scoring version, the ``llama-cpp-python`` version (which pins llama.cpp's code), a
context bound the user set, and GPU offload where layers are offloaded: a dequantised run
(``hf-causal``) and a llama.cpp run of the same file never share cached answers.
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Sequence
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from types import MappingProxyType

import numpy as np

from faithprobe.errors import ModelError, UsageError, excerpt
from faithprobe.requests import (
    Answer,
    CandidateScoreRequest,
    CandidateScores,
    Generation,
    GenerationRequest,
    Request,
)
from faithprobe.subjects import continuation
from faithprobe.subjects.base import Progress, Subject
from faithprobe.subjects.bounds import CHARS_PER_TOKEN, cut_for_tokens, special_frame
from faithprobe.subjects.causal_tokens import CausalTokens
from faithprobe.subjects.gguf.llamacpp_tokens import GGUFTokenizer
from faithprobe.subjects.identity import Identity

LLAMA_CPP = Identity(
    "llama.cpp",
    "llamacpp-v1",
    frozenset({CandidateScoreRequest.kind, GenerationRequest.kind}),
    MappingProxyType({GenerationRequest.kind: "llamacpp-generation-v1"}),
)
PACKAGE = "llama-cpp-python"
INSTALL = "pip install 'faithprobe[llamacpp]'"
# The context bound when none is given: the file's trained context, at most this. llama.cpp
# sets aside keys and values for the whole bound at load (a 7B Llama 2 holds 0.5 MB a token),
# and the card's longest prompts are about 1,500 tokens.
MAX_DEFAULT_CTX = 8192
# Tokens per llama_decode call, at positions that are multiples of it: a request runs in the
# same chunks wherever it comes, so its arithmetic does not depend on what came before.
CHUNK = 512


def runtime_version() -> str:
    """The installed ``llama-cpp-python``'s version (it vendors one llama.cpp commit), read
    without importing it; a ModelError naming the extra where it is not installed."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        raise ModelError(f"the llama.cpp runtime needs {PACKAGE}: {INSTALL}") from None


def supports_gpu() -> bool:
    """Whether the installed llama.cpp was built to offload layers to a GPU."""
    runtime_version()
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())


def fingerprint_parts(n_ctx: int | None = None, offloaded: bool = False) -> tuple[str, ...]:
    """What a run's settings add to :data:`LLAMA_CPP`'s fingerprint of the file: the runtime's
    version, the context bound where one was given (the default follows from the file),
    and ``gpu`` where layers are offloaded (other kernels, other rounding)."""
    parts = [f"{PACKAGE}={runtime_version()}"]
    if n_ctx is not None:
        parts.append(f"n_ctx={n_ctx}")
    if offloaded:
        parts.append("gpu")
    return tuple(parts)


def load_llamacpp(
    path: Path,
    *,
    name: str,
    n_ctx: int | None = None,
    n_threads: int | None = None,
    n_gpu_layers: int = 0,
) -> LlamaCppCausal:
    """The GGUF causal LM in file ``path`` under llama.cpp. ``n_ctx``: the most tokens it is
    fed (None: its trained context, at most :data:`MAX_DEFAULT_CTX`; never more than it was
    trained on); ``n_threads``: CPU threads (None: the cores this process may use);
    ``n_gpu_layers``: layers offloaded to a GPU (-1: all) by a llama.cpp built with GPU
    support (a CPU build computes them on the CPU, as llama.cpp does)."""
    runtime_version()
    import llama_cpp

    if n_ctx is not None and n_ctx < 8:
        raise UsageError(f"n_ctx={n_ctx}: must be at least 8")
    logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)  # llama.cpp's load log
    trained = _trained_context(path)
    bound = min(n_ctx or MAX_DEFAULT_CTX, trained) if trained else n_ctx or MAX_DEFAULT_CTX
    threads = n_threads or len(os.sched_getaffinity(0))
    try:
        llama = llama_cpp.Llama(
            str(path),
            n_ctx=bound,
            n_batch=CHUNK,
            n_ubatch=CHUNK,
            n_threads=threads,
            n_threads_batch=threads,
            n_gpu_layers=n_gpu_layers,
            flash_attn=False,
            swa_full=True,  # a sliding-window cache keeps every position, so it can rewind
            use_mmap=False,  # read, not mapped: see the module docstring
            verbose=False,
        )
    except ValueError as err:  # llama-cpp-python's word for a file llama.cpp cannot load
        raise ModelError(f"llama.cpp cannot load GGUF model {path}: {err}") from None
    offloaded = n_gpu_layers != 0 and llama_cpp.llama_supports_gpu_offload()
    return LlamaCppCausal(
        llama,
        name=name,
        fingerprint=LLAMA_CPP.fingerprint(path, fingerprint_parts(n_ctx, offloaded)),
        max_length=bound,
    )


def _trained_context(path: Path) -> int | None:
    """The context length the file says its model was trained on (its metadata, read by a
    vocabulary-only load); None when it says none."""
    import llama_cpp

    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    if not model:
        raise ModelError(f"llama.cpp cannot read GGUF model {path}")
    try:
        architecture = _metadata_value(model, "general.architecture")
        value = _metadata_value(model, f"{architecture}.context_length")
    finally:
        llama_cpp.llama_model_free(model)
    return int(value) if value.isdigit() and int(value) > 0 else None


def _metadata_value(model, key: str) -> str:
    """A metadata value of a loaded llama.cpp model, as text ("" where there is none)."""
    import ctypes

    import llama_cpp

    buffer = ctypes.create_string_buffer(256)
    found = llama_cpp.llama_model_meta_val_str(model, key.encode(), buffer, len(buffer))
    return buffer.value.decode() if found >= 0 else ""


class LlamaCppCausal(CausalTokens, Subject):
    """A GGUF causal LM answering candidate-score and generation requests through llama.cpp
    (module docstring). ``llama``: a ``llama_cpp.Llama`` loaded with this module's fixed
    batch settings (:func:`load_llamacpp`); ``max_length``: the most tokens it is fed (at most
    its context, which llama.cpp may round up)."""

    kind = LLAMA_CPP.kind
    accepts = LLAMA_CPP.accepts
    request_versions = dict(LLAMA_CPP.request_versions)

    def __init__(self, llama, *, name: str, fingerprint: str, max_length: int) -> None:
        import llama_cpp

        self.name = name
        self.llama = llama
        self.tokenizer = GGUFTokenizer(llama)
        self.max_length = min(max_length, llama.n_ctx())
        self._fingerprint = fingerprint
        self._frame = special_frame(self.tokenizer)
        start = self.tokenizer.bos_token_id
        self._start_id = start if start is not None else self.tokenizer.eos_token_id
        self._eos_ids = frozenset({self.tokenizer.eos_token_id} - {None})
        self._n_vocab = llama.n_vocab()
        self._memory = llama_cpp.llama_get_memory(llama.ctx)
        self._chunk: int = llama.n_batch  # CHUNK, or n_ctx where that is less
        self._batch = llama_cpp.llama_batch_init(self._chunk, 0, 1)
        weakref.finalize(self, llama_cpp.llama_batch_free, self._batch)

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def has_chat_template(self) -> bool:
        return bool(self.tokenizer.chat_template)

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        """Answer each request, one at a time in the given order (which changes nothing:
        module docstring); all are encoded first, so a request that cannot be asked fails
        before any is computed."""
        self.check_accepts(requests)
        encoded = [self._encode(r) for r in requests]
        answers: list[Answer] = []
        for request, (inputs, truncated) in zip(requests, encoded, strict=True):
            if request.kind == CandidateScoreRequest.kind:
                answer = self._score(*inputs)
            else:
                answer = self._generate(*inputs)
            answers.append(replace(answer, truncated=True) if truncated else answer)
            if progress:
                progress(1)
        return answers

    # -- tokenization (HFCausal's convention) ------------------------------------------

    def _encode(self, request: Request) -> tuple[tuple, bool]:
        if isinstance(request, GenerationRequest):
            return self._encode_generation(request)
        return self.scoring_ids(request)

    def _chat_ids(self, message: str) -> list[int]:
        """The token ids of ``message`` as the user's in the file's chat template, ready
        for the assistant's reply."""
        if not self.has_chat_template:
            raise UsageError(
                f"{self.name} has no chat template, so it cannot answer chat requests; "
                "use an instruction-tuned model or turn chat off"
            )
        text = self.tokenizer.apply_chat_template([{"role": "user", "content": message}])
        return self._text_ids(text)

    def _bounded_chat_ids(self, prompt: str, room: int) -> tuple[list[int], bool]:
        """:meth:`_chat_ids` of ``prompt`` if they are at most ``room`` tokens, else of the
        message's last tokens (decoded back to text) -- as many as fit -- and whether the
        message was cut."""
        if len(prompt) <= room * CHARS_PER_TOKEN:
            ids = self._chat_ids(prompt)
            if len(ids) <= room:
                return ids, False
        tokens = self._text_ids(cut_for_tokens(self.tokenizer, prompt, room, keep_end=True))
        keep = room - len(self._chat_ids(""))
        while keep > 0:  # re-encoding at the template's seams may add a token or two
            ids = self._chat_ids(self.tokenizer.decode(tokens[-keep:]))
            if len(ids) <= room:
                return ids, True
            keep -= len(ids) - room
        return self._chat_ids(""), True

    def _encode_generation(self, request: GenerationRequest) -> tuple[tuple, bool]:
        if request.max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {request.max_new_tokens}")
        reply = self._text_ids(request.reply_start)  # a reply begun for the model: kept whole
        fixed = len(self._chat_ids("")) + len(reply) if request.chat else sum(map(len, self._frame))
        if fixed >= self.max_length:
            raise UsageError(
                f"model {self.name} takes at most {self.max_length} tokens, but the tokens "
                f"around a prompt alone are {fixed}: cannot answer {excerpt(request.prompt)}"
            )
        max_new = min(request.max_new_tokens, self.max_length - fixed)
        room = self.max_length + 1 - max(max_new, 1)
        if request.chat:
            ids, cut = self._bounded_chat_ids(request.prompt, room - len(reply))
            ids = ids + reply
        else:
            ids, cut = self.bounded_prompt_ids(request.prompt, room)
        return (ids, max_new, request.stop), cut or max_new < request.max_new_tokens

    # -- computing ---------------------------------------------------------------------

    def _score(self, context: list[int], candidates: list[list[int]]) -> CandidateScores:
        """Each candidate's summed log-probability after ``context``, run once."""
        first = _log_softmax(self._run(context, 0, every=False)[-1])
        scores = []
        for tokens in candidates:
            score = first[tokens[0]]
            if len(tokens) > 1:
                rows = self._run(tokens[:-1], len(context), every=True)
                score += sum(_log_softmax(row)[t] for row, t in zip(rows, tokens[1:], strict=True))
            scores.append(float(score))
        return CandidateScores(tuple(scores), tuple(len(t) for t in candidates))

    def _generate(self, prompt: list[int], max_new: int, stop: tuple[str, ...]) -> Generation:
        """The greedy continuation of ``prompt``, cut (:meth:`_cut`)."""
        tokens: list[int] = []
        if max_new <= 0:
            return self._cut(tokens, stop)
        logits = self._run(prompt, 0, every=False)[-1]
        while True:
            tokens.append(int(np.argmax(logits)))  # ties: the lowest id
            if self._finished(tokens, max_new, stop):
                return self._cut(tokens, stop)
            logits = self._run(tokens[-1:], len(prompt) + len(tokens) - 1, every=False)[-1]

    def _run(self, tokens: list[int], start: int, *, every: bool) -> np.ndarray:
        """The logits after each of ``tokens`` (``every``) or after the last, run at
        positions ``start`` on, after the cache's positions before ``start``: whatever it
        holds from ``start`` on is dropped first. Chunks end at multiples of :data:`CHUNK` (a
        context bound below it is one chunk)."""
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(self._memory, 0, start, -1)
        batch, rows = self._batch, []
        end = start + len(tokens)
        at = start
        while at < end:
            stop = min(end, (at // self._chunk + 1) * self._chunk)
            for j, position in enumerate(range(at, stop)):
                batch.token[j] = tokens[position - start]
                batch.pos[j] = position
                batch.n_seq_id[j] = 1
                batch.seq_id[j][0] = 0
                batch.logits[j] = every or position == end - 1
            batch.n_tokens = stop - at
            status = llama_cpp.llama_decode(self.llama.ctx, batch)
            if status != 0:
                raise RuntimeError(f"{self.name}: llama_decode returned {status}")
            for j, position in enumerate(range(at, stop)):
                if every or position == end - 1:
                    pointer = llama_cpp.llama_get_logits_ith(self.llama.ctx, j)
                    rows.append(np.ctypeslib.as_array(pointer, shape=(self._n_vocab,)).copy())
            at = stop
        return np.stack(rows)

    # -- generated text (every backend's cut) -----------------------------------------------

    def _decode(self, tokens: list[int]) -> str:
        return self.tokenizer.decode(tokens, skip_special_tokens=True)

    def _finished(self, tokens: list[int], max_new: int, stop: tuple[str, ...]) -> bool:
        return continuation.finished(tokens, max_new, stop, self._eos_ids, self._decode)

    def _cut(self, tokens: list[int], stop: tuple[str, ...]) -> Generation:
        return continuation.cut(tokens, stop, self._eos_ids, self._decode)


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    """Natural-log probabilities of a row of logits, in float64."""
    row = logits.astype(np.float64)
    top = row.max()
    return row - (top + np.log(np.exp(row - top).sum()))
