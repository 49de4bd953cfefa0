"""Per-example randomness (the HELM idea).

Every random choice an intervention or generator makes comes from a generator seeded by
(run seed, example id, name of the thing drawing), never from a global RNG. Results then do
not depend on the order in which examples are processed, on batch size or on sharding.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported on the first draw, not by what only lists names
    import numpy as np


def rng_for(seed: int, *keys: str) -> np.random.Generator:
    """A generator determined by ``seed`` and the string ``keys`` alone."""
    import numpy as np

    digest = hashlib.sha256("\x1f".join([str(seed), *keys]).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def hash_rank(seed: int, key: str) -> str:
    """A seeded sort key: ordering by it is a random order that does not depend on the
    order the keys arrive in."""
    return hashlib.sha256(f"{seed}\x1f{key}".encode()).hexdigest()
