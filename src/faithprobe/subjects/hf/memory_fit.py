"""Batches that fit an accelerator's memory, found once and remembered.

On a CPU a batch is bounded by ``--batch-size`` rows and a fixed token budget, which were
measured for throughput (more does not run faster there, and running out of RAM is not an
error a process survives). On a GPU the bound that matters is memory, and it depends on
the model, the dtype, the card and what else runs on it. So, as lm-evaluation-harness's
``batch_size=auto`` does, the largest token budget that fits is found by trying: a forward
pass over ``rows x length`` tokens, from a generous start, halved after each out-of-memory
error (:func:`largest_fitting`). The budget found is remembered per model, device and card
in the cache folder (:class:`FitStore`), so later runs start from it without trying again.

During a run an out-of-memory error is not fatal either: the budget is halved (and
remembered), the memory freed, and the requests not yet answered are batched again under
the new budget (:meth:`~faithprobe.subjects.hf.base.HFSubject.answer`). Answers do not
depend on how requests are batched (bar rounding), so a retried batch gives the answers it
would have given. Only a single request that does not fit alone fails the run, in one line
saying so.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from pathlib import Path

from faithprobe.atomic import write_json

FIRST_TRY = 1 << 20  # tokens tried first: far above what a 24 GB card holds for a 7B model
FLOOR = 256  # the smallest budget worth trying: one short row
PROBE_ROW = 2048  # the row length tried (capped by the model's input bound)
ROW_HINT = 256  # tokens of a typical row: a found budget allows this many rows per batch


def is_out_of_memory(err: BaseException) -> bool:
    """Whether ``err`` says an accelerator ran out of memory (CUDA's own error; MPS and
    ROCm, and cuBLAS failing to allocate a workspace, raise a RuntimeError saying so)."""
    import torch

    if isinstance(err, torch.OutOfMemoryError):
        return True
    text = str(err).lower()
    return isinstance(err, RuntimeError) and (
        "out of memory" in text or "cublas_status_alloc_failed" in text
    )


def release(device) -> None:
    """Give back what a failed batch left allocated on ``device`` (a torch device)."""
    import torch

    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    elif device.type == "mps":
        torch.mps.empty_cache()


def largest_fitting(fits: Callable[[int], bool], start: int = FIRST_TRY, floor: int = FLOOR) -> int:
    """The largest of ``start``, ``start / 2``, ... down to ``floor`` for which ``fits``
    (a trial that returns False when it ran out of memory) succeeds; ``floor`` if none
    does (the run then finds out, on a real batch, whether even that is too much)."""
    tokens = start
    while tokens > floor and not fits(tokens):
        tokens //= 2
    return max(tokens, floor)


class FitStore:
    """Token budgets found for (model fingerprint, device, card), in one JSON file of the
    cache folder; a missing or unreadable file is an empty store (it is only a head start)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, int]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, int) and v > 0} if isinstance(
            data, dict
        ) else {}  # fmt: skip

    def get(self, key: str) -> int | None:
        return self._read().get(key)

    def put(self, key: str, tokens: int) -> None:
        data = self._read()
        data[key] = tokens
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.path, data)


def device_key(fingerprint: str, device) -> str:
    """What a budget is remembered under: the model, and the card it was found on (its
    name and total memory), so another card or a model in another dtype tries afresh."""
    import torch

    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        card = f"{props.name}/{props.total_memory}"
    else:
        card = device.type
    return f"{fingerprint}/{card}"
