"""Wall time and tokens inside a model's forward, for benchmarks that split a path's time
into the model's and everything around it."""

from __future__ import annotations

import time


class ForwardMeter:
    """Counts, from now on, the seconds spent inside ``model.forward`` (which ``model(...)``
    calls) and the tokens it was fed, padding included (``input_ids.numel()``)."""

    def __init__(self, model) -> None:
        self.seconds = 0.0
        self.tokens = 0
        inner = model.forward

        def forward(*args, **kwargs):
            ids = kwargs.get("input_ids", args[0] if args else None)
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.tokens += ids.numel() if ids is not None else 0

        model.forward = forward
