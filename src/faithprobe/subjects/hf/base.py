"""What the Hugging Face backends share: loading under the backend's settings (device,
dtype, sharding, revision: :mod:`faithprobe.subjects.local_settings`), fingerprinting,
batch settings, batches that fit an accelerator's memory
(:mod:`~faithprobe.subjects.hf.memory_fit`) and the bound on input length
(:mod:`faithprobe.subjects.bounds`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from faithprobe.errors import ModelError
from faithprobe.requests import Answer, Request
from faithprobe.subjects.answer_cache import default_cache_dir
from faithprobe.subjects.base import Progress, Subject
from faithprobe.subjects.bounds import position_limit
from faithprobe.subjects.fingerprint import fingerprint_module
from faithprobe.subjects.hf.batching import length_sorted_batches
from faithprobe.subjects.hf.memory_fit import (
    FLOOR,
    PROBE_ROW,
    ROW_HINT,
    FitStore,
    device_key,
    is_out_of_memory,
    largest_fitting,
    release,
)
from faithprobe.subjects.identity import Identity
from faithprobe.subjects.local_settings import HubSettings, LocalSettings, answer_parts

FIT_FILE = "batch_fit.json"  # the token budgets found per model and card, in the cache folder


class HFSubject(Subject):
    """Backends implement ``_encode`` (request -> (encoded input, whether it was cut to fit
    ``max_length``)), ``_cost`` (padded length and rows of an encoded input, for batching)
    and ``_score_batch``; :meth:`answer` marks the answers to cut inputs ``truncated``."""

    identity: Identity  # kind and versions (:mod:`faithprobe.subjects.identity`)
    scoring_version: str
    auto_class: str  # the transformers Auto* class that loads the model

    def __init_subclass__(cls, **kwargs) -> None:
        """A backend that states its ``identity`` gets its kind, scoring version, accepted
        request kinds and request versions from it (they are declared there only)."""
        super().__init_subclass__(**kwargs)
        if identity := cls.__dict__.get("identity"):
            cls.kind, cls.scoring_version = identity.kind, identity.scoring_version
            cls.accepts, cls.request_versions = identity.accepts, dict(identity.request_versions)

    def __init__(
        self,
        model,
        tokenizer,
        *,
        name: str,
        fingerprint: str | None = None,
        batch_size: int = 16,
        max_batch_tokens: int = 32_768,
        settings: LocalSettings | None = None,
        fit_memory: bool | None = None,
        fit_store: FitStore | None = None,
    ) -> None:
        """``settings``: what the model was loaded under (its input bound and attention
        kernel enter the fingerprint); ``fit_memory``: size batches by memory
        (:mod:`~faithprobe.subjects.hf.memory_fit`; None: on an accelerator only), the
        budgets found kept in ``fit_store`` (default: in the cache folder)."""
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.settings = settings
        self.device = input_device(model)
        self._fingerprint = fingerprint
        self.max_length = _bounded(position_limit(model, tokenizer), settings)
        self.fits_memory = self.device.type != "cpu" if fit_memory is None else fit_memory
        self._fit_store = fit_store or FitStore(default_cache_dir() / FIT_FILE)
        self._fitted = False

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        *,
        name: str | None = None,
        settings: LocalSettings | None = None,
        fingerprint: str | None = None,
        **kwargs,
    ):
        """The model in folder (or of Hugging Face id) ``path``, loaded as ``settings`` say
        (default: :class:`~faithprobe.subjects.local_settings.HubSettings`' defaults, the
        first accelerator in its dtype, else the CPU in float32)."""
        import transformers

        settings = settings if settings is not None else HubSettings()
        placed = settings.placement()
        hub = {
            "revision": getattr(settings, "revision", None),
            "trust_remote_code": getattr(settings, "trust_remote_code", False),
        }
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, **hub)
        placing: dict[str, Any] = {"dtype": getattr(torch, placed.dtype)}
        if settings.attn_implementation:
            placing["attn_implementation"] = settings.attn_implementation
        if settings.device_map:
            placing["device_map"] = settings.device_map
        model = getattr(transformers, cls.auto_class).from_pretrained(path, **hub, **placing)
        if not settings.device_map:
            model = model.to(placed.device)
        subject = cls(model, tokenizer, name=name or str(path), fingerprint=fingerprint,
                      settings=settings, **kwargs)  # fmt: skip
        if fingerprint is None and (files := _files_of(path, hub["revision"], subject)):
            subject._fingerprint = cls.identity.fingerprint(files, subject.fingerprint_parts)
        return subject

    @property
    def fingerprint_parts(self) -> tuple[str, ...]:
        """What where and how the model computes adds to its fingerprint, read off the
        model as loaded (:func:`~faithprobe.subjects.local_settings.answer_parts`): none on
        the CPU in float32 at the default settings."""
        dtype = str(self.model.dtype).removeprefix("torch.")
        return answer_parts(self.device.type, dtype, self.settings)

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = fingerprint_module(
                self.model,
                self.tokenizer,
                self.identity.fingerprint_kind,
                self.scoring_version,
                *self.fingerprint_parts,
            )
        return self._fingerprint

    def _encode(self, request: Request) -> tuple[Any, bool]:
        raise NotImplementedError

    def _cost(self, encoded: Any) -> tuple[int, int]:
        raise NotImplementedError

    def _score_batch(self, batch: list[Any]) -> list[Answer]:
        raise NotImplementedError

    def _steps(self, kind: str) -> tuple[Callable, Callable, Callable]:
        """(encode, cost, run a batch) for one request kind, ``encode`` returning (encoded
        input, whether it was cut to fit); a backend answering several kinds overrides this
        (the default serves every kind with ``_encode`` / ``_cost`` / ``_score_batch``)."""
        return self._encode, self._cost, self._score_batch

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        """Answer each request. A batch holds requests of one kind: a mixed list is split by
        kind, and the answers come back in request order."""
        self.check_accepts(requests)
        by_kind: dict[str, list[int]] = {}
        for i, r in enumerate(requests):
            by_kind.setdefault(r.kind, []).append(i)
        out: list[Answer | None] = [None] * len(requests)
        if self.fits_memory and requests:
            self._fit_memory()
        for kind, indices in by_kind.items():
            encode, cost = self._steps(kind)[:2]
            encoded, truncated = zip(*(encode(requests[i]) for i in indices), strict=True)
            costs = [cost(e) for e in encoded]
            for done, answered in self._fitted_batches(kind, list(encoded), costs):
                for j, a in zip(done, answered, strict=True):
                    out[indices[j]] = replace(a, truncated=True) if truncated[j] else a
                if progress:
                    progress(len(done))
        return out  # type: ignore[return-value]

    def _fitted_batches(
        self, kind: str, encoded: list[Any], costs: list[tuple[int, int]]
    ) -> Iterator[tuple[list[int], list[Answer]]]:
        """:meth:`_answer_batches` of ``encoded`` in length-sorted batches within the
        budget; where batches are fitted to memory, an out-of-memory error halves the
        budget and the inputs not yet answered are batched again under it."""
        left = list(range(len(encoded)))
        while left:
            lengths, rows = zip(*(costs[i] for i in left), strict=True)
            batches = length_sorted_batches(
                lengths, max_batch=self.batch_size, max_tokens=self.max_batch_tokens, rows=rows
            )
            answered: set[int] = set()
            try:
                for done, answers in self._answer_batches(
                    kind, [encoded[i] for i in left], batches
                ):
                    answered.update(done)
                    yield [left[j] for j in done], answers
                return
            except Exception as err:  # noqa: BLE001 -- all but running out of memory re-raised
                if not (self.fits_memory and is_out_of_memory(err)):
                    raise
            left = [i for j, i in enumerate(left) if j not in answered]
            self._halve_budget()  # outside the handler: the error's frames are let go first

    def _fit_memory(self) -> None:
        """Size batches by memory, once: the token budget remembered for this model and
        card, else the largest that fits (:func:`~faithprobe.subjects.hf.memory_fit.
        largest_fitting`, remembered); rows as many as such a budget holds of typical
        rows, never fewer than ``batch_size``."""
        if self._fitted:
            return
        self._fitted = True
        key = device_key(self.fingerprint, self.device)
        tokens = self._fit_store.get(key)
        if tokens is None:
            tokens = largest_fitting(self._fits)
            self._fit_store.put(key, tokens)
        self.max_batch_tokens = tokens
        self.batch_size = max(self.batch_size, tokens // ROW_HINT)

    def _fits(self, tokens: int) -> bool:
        """Whether a forward pass over ``tokens`` tokens, in rows as long as the model takes
        (at most :data:`~faithprobe.subjects.hf.memory_fit.PROBE_ROW`), fits in memory."""
        length = min(PROBE_ROW, self.max_length or PROBE_ROW, tokens)
        fits = True
        try:
            with torch.inference_mode():
                self._probe(max(1, tokens // length), length)
        except Exception as err:  # noqa: BLE001 -- all but running out of memory re-raised
            if not is_out_of_memory(err):
                raise
            fits = False
        self._free_memory()
        return fits

    def _probe(self, rows: int, length: int) -> None:
        """One forward pass over ``rows`` rows of ``length`` tokens, as a batch of this
        backend is run (a backend whose inputs have another shape overrides it)."""
        ids = torch.zeros((rows, length), dtype=torch.long, device=self.device)
        self.model(input_ids=ids, attention_mask=torch.ones_like(ids))

    def _halve_budget(self) -> None:
        """After running out of memory: free what can be freed, halve the batch budget and
        remember it; a ModelError when a single request alone did not fit."""
        self._free_memory()
        if self.max_batch_tokens <= FLOOR and self.batch_size == 1:
            raise ModelError(
                f"{self.name}: one request alone does not fit in the memory of "
                f"{self.device}; give it more room (dtype=bfloat16, device_map=auto over "
                "several GPUs) or cut inputs shorter (max_length=N)"
            )
        self.max_batch_tokens = max(FLOOR, self.max_batch_tokens // 2)
        self.batch_size = max(1, self.batch_size // 2)
        self._fit_store.put(device_key(self.fingerprint, self.device), self.max_batch_tokens)

    def _free_memory(self) -> None:
        """Give back the accelerator memory a failed batch held (a backend that keeps
        tensors between batches drops them too)."""
        release(self.device)

    def _answer_batches(
        self, kind: str, encoded: list[Any], batches: list[list[int]]
    ) -> Iterator[tuple[list[int], list[Answer]]]:
        """(Indices into ``encoded``, their answers) as they are done: each of ``batches``
        in turn, run by the kind's batch runner (:meth:`_steps`). A backend may answer them
        otherwise (the causal LM lets the next prompts join a generation batch)."""
        run = self._steps(kind)[2]
        for batch in batches:
            with torch.inference_mode():
                answered = run([encoded[j] for j in batch])
            yield batch, answered


def input_device(model) -> torch.device:
    """Where a model's inputs go: its first layer's device when accelerate spread it over
    several (``hf_device_map``: a GPU's index, a device name, or ``disk``/``cpu`` for
    offloaded layers), else its parameters' device."""
    mapped = getattr(model, "hf_device_map", None)
    if mapped:
        first = next(iter(mapped.values()))
        if isinstance(first, int):
            return torch.device("cuda", first)
        return torch.device("cpu" if first == "disk" else first)
    return next(model.parameters()).device


def _bounded(limit: int | None, settings: LocalSettings | None) -> int | None:
    """The model's position limit, cut to the settings' ``max_length`` where that is set."""
    bound = settings.max_length if settings is not None else None
    if bound is None:
        return limit
    return bound if limit is None else min(bound, limit)


def _files_of(path: str | Path, revision: str | None, subject: HFSubject) -> Path | None:
    """The folder whose files give a loaded model's fingerprint: a local folder; for a
    Hugging Face id, its snapshot in the hub's cache -- but only off the CPU-float32
    defaults. There, models are small and their fingerprint has always hashed their
    tensors, so answers cached under it stay valid; on an accelerator the files are read
    (sampled, :mod:`~faithprobe.subjects.fingerprint`) rather than copying every tensor
    of a model of billions of parameters back to the CPU to hash it. None: hash the
    tensors."""
    if Path(path).exists():
        return Path(path)
    if not subject.fingerprint_parts:
        return None
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(str(path), revision=revision, local_files_only=True))
    except Exception:  # noqa: BLE001 -- not in the hub's cache as such: hash the tensors
        return None
