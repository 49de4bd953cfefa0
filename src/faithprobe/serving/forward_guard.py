"""Stopping a model's forward passes inside, once a deadline has passed.

One forward over a long prompt can take longer than a request's whole time budget (a
generation's prefill of 8,000 tokens, say), so checking the clock between passes is not
enough. :func:`interrupted_after` hooks every module of the model for the duration of a
``with`` block: in the thread that opened the block, a forward reading more than one
position per row stops before its next module once the deadline has passed, raising
:class:`Overdue`. A forward of one position per row (a decoding step) is never stopped
inside: it is short, and the decoding loop checks its deadline between steps, so the
tokens it has made are kept."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Overdue(Exception):
    """A forward pass stopped because its deadline had passed."""


@contextmanager
def interrupted_after(model, deadline: float) -> Iterator[None]:
    """Within the block, stop ``model`` 's forwards over more than one position per row
    in this thread once ``time.monotonic()`` passes ``deadline`` (:class:`Overdue`)."""
    owner = threading.get_ident()
    long_pass = [False]  # whether the forward under way in this thread reads many positions

    def on_model(_module, args, kwargs) -> None:
        if threading.get_ident() == owner:
            ids = kwargs.get("input_ids", args[0] if args else None)
            long_pass[0] = ids is not None and ids.shape[-1] > 1
            on_module(_module, args)

    def on_module(_module, _args) -> None:
        if long_pass[0] and threading.get_ident() == owner and time.monotonic() >= deadline:
            raise Overdue

    handles = [model.register_forward_pre_hook(on_model, with_kwargs=True)]
    handles += [m.register_forward_pre_hook(on_module) for m in model.modules() if m is not model]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
