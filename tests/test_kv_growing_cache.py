"""The cache greedy generation decodes over holds what transformers' own would."""

from __future__ import annotations

import torch
from transformers.cache_utils import DynamicLayer

from faithprobe.subjects.hf.kv_growing_cache import ROOM, GrowingLayer, aligned_cache


def test_growing_layer_holds_what_a_dynamic_layer_holds():
    torch.manual_seed(0)
    grown, plain = GrowingLayer(), DynamicLayer()

    def both(step):
        a, b = step(grown), step(plain)
        for x, y in zip((grown.keys, grown.values), (plain.keys, plain.values), strict=True):
            assert torch.equal(x, y)
        if a is not None:
            assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))

    def update(rows: int, n: int):
        k, v = torch.randn(rows, 2, n, 3), torch.randn(rows, 2, n, 3)
        return lambda layer: layer.update(k, v)

    both(update(4, 5))  # a prefill
    for _ in range(ROOM + 3):  # decoding steps, past the room the first buffers had
        both(update(4, 1))
    keep = torch.tensor([0, 2, 3])
    both(lambda layer: layer.batch_select_indices(keep))  # a finished row leaves
    both(update(3, 1))
    merged = torch.randn(5, 2, 50, 3)  # rows replaced from outside, as merging does

    def replace(layer):
        layer.keys, layer.values = merged.clone(), merged.clone() + 1

    both(replace)
    both(update(5, 1))
    both(lambda layer: layer.batch_select_indices(torch.tensor([4, 1])))
    both(update(2, 2))
    assert grown.get_seq_length() == plain.get_seq_length() == 53


def test_aligned_cache_is_padding_and_stacking_written_once():
    torch.manual_seed(0)
    a = [(torch.randn(2, 2, 5, 3), torch.randn(2, 2, 5, 3)) for _ in range(2)]  # 2 layers
    b = [(torch.randn(1, 2, 8, 3), torch.randn(1, 2, 8, 3)) for _ in range(2)]
    cache = aligned_cache([a, b], 8, room=4)

    def padded(t):
        return torch.nn.functional.pad(t, (0, 0, 8 - t.shape[2], 0))

    for k, layer in enumerate(cache.layers):
        assert isinstance(layer, GrowingLayer)
        for got, part in ((layer.keys, 0), (layer.values, 1)):
            assert torch.equal(got, torch.cat([padded(a[k][part]), padded(b[k][part])]))
    new = torch.randn(3, 2, 4, 3)
    keys, _ = cache.layers[0].update(new, new)  # fits in the room: written in place
    assert keys.data_ptr() == cache.layers[0]._buffers[0].data_ptr()
    assert torch.equal(keys[:, :, 8:], new) and keys.shape[2] == 12
