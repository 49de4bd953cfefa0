"""The rows greedy generation decodes together, in slots that prompts take over as rows finish.

A decoding step reads every weight of the model once whatever the number of rows, so on a
CPU a step of 16 rows costs little more than a step of 4: what generation throughput needs
is full steps. A :class:`DecodeBatch` holds ``len(rows)`` slots over one key/value cache
(:func:`~faithprobe.subjects.hf.kv_growing_cache.growing_cache` buffers, ``[slots, heads,
positions, dim]``), each slot's attention mask, the position of its next token and the
logits its next token is read off. A finished row frees its slot; a prompt prefilled
beforehand (:class:`ReadyRow`, one of a batch of prompts run together) takes a free slot by
having its own keys, values and mask written into it: no forward pass of its own and no
copy of the other rows. Until a slot is taken its row is still fed (a step costs about the
same with it) and its output ignored.

All slots share the cache's columns: a row's positions are the last columns (its mask says
which hold its tokens), a row longer than the columns filled widens the cache for all
(:meth:`DecodeBatch.place`), and once every live row's tokens begin past the first half of
the columns the unused left part is cut off (:meth:`DecodeBatch.crop`), so a batch that
keeps taking prompts does not grow without bound. Rows never see each other's columns
(the mask), and positions count a row's own tokens, so a row's tokens are those it gets
alone, bar rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from faithprobe.subjects.hf.kv_cache_name import returned_cache
from faithprobe.subjects.hf.kv_growing_cache import aligned_cache

CROP_FROM = 32  # the fewest unused left columns worth a copy of the cache to cut off


@dataclass(frozen=True)
class ReadyRow:
    """A prefilled prompt waiting for a slot: its queue index, its last logits ``[1,
    vocab]``, attention mask ``[1, width]`` and keys and values per layer ``([1, heads,
    width, dim], ...)``: views of its prefill batch's row."""

    index: int
    logits: torch.Tensor
    mask: torch.Tensor
    layers: list[tuple[torch.Tensor, torch.Tensor]]


def ready_rows(indices: list[int], logits, mask, cache) -> list[ReadyRow]:
    """The rows of a prefill batch (one per index of ``indices``) as :class:`ReadyRow` s."""
    return [
        ReadyRow(
            g,
            logits[j : j + 1],
            mask[j : j + 1],
            [(la.keys[j : j + 1], la.values[j : j + 1]) for la in cache.layers],
        )
        for j, g in enumerate(indices)
    ]


def stacked_rows(blocks: list[tuple]) -> tuple:
    """(Logits, attention mask, key/value cache) of blocks of rows, each (last logits,
    mask, keys and values per layer), stacked in one batch: masks, keys and values padded
    on the left to the widest block (the padding is masked out), in a cache that grows in
    place."""
    width = max(mask.shape[1] for _, mask, _ in blocks)
    logits = torch.cat([logits for logits, _, _ in blocks])
    mask = torch.cat([torch.nn.functional.pad(m, [width - m.shape[1], 0]) for _, m, _ in blocks])
    return logits, mask, aligned_cache([layers for _, _, layers in blocks], width)


class DecodeBatch:
    """Slots of rows decoding together; ``rows[slot]`` is the queue index of the row in it,
    None once it is free."""

    def __init__(self, rows: list[int], logits: torch.Tensor, mask: torch.Tensor, cache):
        self.rows: list[int | None] = list(rows)
        self.logits, self.mask, self.cache = logits, mask, cache
        self.positions = mask.sum(-1, keepdim=True)  # a row's next token follows its own

    @classmethod
    def stacked(cls, ready: list[ReadyRow]) -> DecodeBatch:
        """A batch of ``ready`` rows, padded on the left to the widest (padding masked)."""
        return cls(
            [r.index for r in ready], *stacked_rows([(r.logits, r.mask, r.layers) for r in ready])
        )

    @property
    def live(self) -> list[int]:
        """The queue indices of the rows in the batch."""
        return [g for g in self.rows if g is not None]

    @property
    def free_slots(self) -> list[int]:
        return [slot for slot, g in enumerate(self.rows) if g is None]

    def release(self, slot: int) -> None:
        self.rows[slot] = None

    def place(self, slot: int, row: ReadyRow) -> None:
        """Put ``row`` in the free ``slot``: its keys, values and mask in the slot's last
        columns (zeros and a masked-out left part before them), its logits and next
        position; the cache is widened first if the row is wider than its columns (or
        copied, if its keys and values are no longer views of its buffers)."""
        width, filled = row.mask.shape[1], self.mask.shape[1]
        if width > filled or not all(la._holds_keys() for la in self.cache.layers):
            self._realigned(filled, max(width, filled))  # buffers of its own, wide enough
        filled = self.mask.shape[1]
        for layer, states in zip(self.cache.layers, row.layers, strict=True):
            for buffer, part in zip(layer._buffers, states, strict=True):
                buffer[slot, :, : filled - width] = 0
                buffer[slot, :, filled - width : filled] = part[0]
        self.mask[slot] = 0
        self.mask[slot, filled - width :] = row.mask[0]
        self.positions[slot] = row.mask.sum()
        self.logits[slot] = row.logits[0]
        self.rows[slot] = row.index

    def compact(self) -> None:
        """Drop the free slots (a copy of the live rows' keys and values)."""
        kept = [slot for slot, g in enumerate(self.rows) if g is not None]
        index = torch.tensor(kept)  # on the CPU: it selects from tensors on any device
        if self.cache is not None:  # a model may keep none (tests' scripted ones)
            self.cache.batch_select_indices(index)
        self.logits, self.mask, self.positions = (
            self.logits[index],
            self.mask[index],
            self.positions[index],
        )
        self.rows = [self.rows[slot] for slot in kept]

    def crop(self) -> None:
        """Cut off the left columns that no live row uses, once they are at least half the
        columns and :data:`CROP_FROM` of them."""
        live = torch.tensor([g is not None for g in self.rows], device=self.mask.device)
        used = self.mask[live].any(0).nonzero()
        unused = int(used[0]) if len(used) else 0
        width = self.mask.shape[1]
        if unused >= max(CROP_FROM, width / 2):
            self._realigned(width - unused, width - unused)

    def step(self, tokens: torch.Tensor, forward) -> None:
        """Feed each slot its token ``[slots, 1]`` by ``forward(ids, mask, positions,
        cache)`` and keep the logits it returns."""
        self.mask = torch.cat([self.mask, self.mask.new_ones((len(self.rows), 1))], dim=1)
        result = forward(tokens, self.mask, self.positions, self.cache)
        self.cache, self.logits = returned_cache(result), result.logits[:, -1]
        self.positions = self.positions + 1

    def _realigned(self, keep: int, width: int) -> None:
        """Copy the last ``keep`` columns of every slot to the right end of a cache of
        ``width`` columns (padding masked out)."""
        layers = [(la.keys[:, :, -keep:], la.values[:, :, -keep:]) for la in self.cache.layers]
        self.cache = aligned_cache([layers], width)
        self.mask = torch.nn.functional.pad(self.mask[:, -keep:], [width - keep, 0])
