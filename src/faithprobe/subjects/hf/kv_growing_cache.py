"""A key/value cache that grows in place: what greedy generation decodes over.

transformers' ``DynamicLayer`` appends a step's keys and values by concatenation, copying
the whole cache of every layer at every step; with many rows of long prompts that copying
is a good part of a decoding step on a CPU. :class:`GrowingLayer` keeps its keys and values
at the start of buffers with room for :data:`ROOM` more positions, writes a step's into the
room and hands out views of the filled part; only when the room runs out (or the rows were
replaced from outside, as :func:`~faithprobe.subjects.hf.causal._merged` does) does it copy,
into new buffers with room again. The arithmetic is the same as ``DynamicLayer``'s.
"""

from __future__ import annotations

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

ROOM = 32  # positions a new buffer has beyond those it is given


class GrowingLayer(DynamicLayer):
    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        super().lazy_initialization(key_states, value_states)
        self._buffers: tuple[torch.Tensor, torch.Tensor] | None = None

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        filled, new = self.get_seq_length(), key_states.shape[-2]
        if not self._fits(key_states, filled + new):
            keys, values = (
                s.new_empty((*s.shape[:2], filled + new + ROOM, s.shape[3]))
                for s in (key_states, value_states)
            )
            if filled:
                keys[:, :, :filled], values[:, :, :filled] = self.keys, self.values
            self._buffers = keys, values
        keys, values = self._buffers
        keys[:, :, filled : filled + new] = key_states
        values[:, :, filled : filled + new] = value_states
        self.keys, self.values = keys[:, :, : filled + new], values[:, :, : filled + new]
        return self.keys, self.values

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        if self.get_seq_length() > 0 and self._holds_keys():
            filled = self.get_seq_length()
            self._buffers = tuple(b[indices] for b in self._buffers)
            self.keys, self.values = (b[:, :, :filled] for b in self._buffers)
        else:
            super().batch_select_indices(indices)

    def _holds_keys(self) -> bool:
        """Whether :attr:`keys` and :attr:`values` are still views of the buffers (nothing
        replaced them from outside)."""
        return (
            self._buffers is not None
            and self.keys.data_ptr() == self._buffers[0].data_ptr()
            and self.values.data_ptr() == self._buffers[1].data_ptr()
            and self.keys.shape[0] == self._buffers[0].shape[0]
        )

    def _fits(self, states: torch.Tensor, length: int) -> bool:
        if self._buffers is None or (self.get_seq_length() and not self._holds_keys()):
            return False
        keys = self._buffers[0]
        return keys.shape[0] == states.shape[0] and keys.shape[2] >= length


def growing_cache() -> DynamicCache:
    """An empty ``DynamicCache`` whose layers are :class:`GrowingLayer` s."""
    cache = DynamicCache()
    cache.layer_class_to_replicate = GrowingLayer
    return cache


def aligned_cache(
    blocks: list[list[tuple[torch.Tensor, torch.Tensor]]], width: int, room: int = ROOM
) -> DynamicCache:
    """A :func:`growing_cache` holding ``blocks`` of rows one after another, each block's
    keys and values (per layer, ``[rows, heads, positions, dim]``) at the right end of
    ``width`` positions, zeros before them (left padding, for the mask to hide): what
    padding each block and stacking them gives, written once into buffers with ``room``
    positions to spare."""
    cache = growing_cache()
    for k in range(len(blocks[0])):
        layer = GrowingLayer()
        first = blocks[0][k][0]
        layer.lazy_initialization(first, first)
        rows = sum(block[k][0].shape[0] for block in blocks)
        buffers = []
        for part in (0, 1):
            buffer = first.new_empty((rows, first.shape[1], width + room, first.shape[3]))
            at = 0
            for block in blocks:
                states = block[k][part]
                n, filled = states.shape[0], states.shape[2]
                buffer[at : at + n, :, : width - filled] = 0
                buffer[at : at + n, :, width - filled : width] = states
                at += n
            buffers.append(buffer)
        layer._buffers = tuple(buffers)
        layer.keys, layer.values = (b[:, :, :width] for b in buffers)
        cache.layers.append(layer)
    return cache
