"""Length-sorted batching under a memory bound.

Items are sorted longest first (so an out-of-memory error shows up on the first batch,
not after an hour) and packed while ``padded length x rows`` stays within a token budget
and the batch holds at most ``max_batch`` items. Each item may stand for several rows
(a context with its candidates), given by ``rows``.
"""

from __future__ import annotations

from collections.abc import Sequence


def length_sorted_batches(
    lengths: Sequence[int],
    *,
    max_batch: int,
    max_tokens: int,
    rows: Sequence[int] | None = None,
) -> list[list[int]]:
    """Indices of items grouped into batches. An item larger than the budget gets a batch
    of its own rather than being dropped."""
    if max_batch < 1 or max_tokens < 1:
        raise ValueError("max_batch and max_tokens must be positive")
    rows = rows if rows is not None else [1] * len(lengths)
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = n_rows = 0
    for i in order:
        new_longest = max(longest, lengths[i])
        new_rows = n_rows + rows[i]
        if current and (len(current) >= max_batch or new_longest * new_rows > max_tokens):
            batches.append(current)
            current, new_longest, new_rows = [], lengths[i], rows[i]
        current.append(i)
        longest, n_rows = new_longest, new_rows
    if current:
        batches.append(current)
    return batches
