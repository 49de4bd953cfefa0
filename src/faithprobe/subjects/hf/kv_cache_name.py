"""The name a causal LM's forward takes and returns its key/value cache by.

transformers 5 renamed ``past_key_values`` to ``cache``, in the forward's arguments and in
its output; the old name still works there, but warns (a ``FutureWarning`` per call, and a
log line) in the middle of faithprobe's output. Earlier versions, and models with code of
their own, know ``past_key_values`` only.
"""

from __future__ import annotations

import inspect

NAMES = ("cache", "past_key_values")  # the current name first


def cache_argument(model) -> str:
    """The name ``model``'s forward takes the key/value cache by: the first forward that
    names one, of the model itself and then of its classes in order (a subclass's forward
    taking ``**kwargs`` hands them on to its base class's)."""
    forwards = [model.forward, *(c.forward for c in type(model).__mro__ if "forward" in vars(c))]
    for forward in forwards:
        parameters = inspect.signature(forward).parameters
        if found := next((name for name in NAMES if name in parameters), None):
            return found
    return NAMES[-1]


def returned_cache(output):
    """The key/value cache a forward returned in ``output``."""
    return output.cache if hasattr(output, "cache") else output.past_key_values
