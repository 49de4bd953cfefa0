"""Generation's decoding batch: prompts take finished rows' slots, the cache widens for a
wider prompt and drops the columns no live row uses, and every row still gets what it gets
alone."""

from __future__ import annotations

import torch

from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.hf.decode_batch import CROP_FROM, DecodeBatch

LONG = " ".join(f"word{k}" for k in range(40))  # far more tokens than CROP_FROM


def test_slots_are_taken_widened_and_cropped_and_rows_match_alone(
    tiny_llama, tiny_tokenizer, monkeypatch
):
    """Batch 2: short A decodes on while B ends at once; long C takes B's slot (the cache
    widens), ends after 3 tokens and D takes its slot; with C gone no live row uses the
    left part of the columns, which is cut off. Texts and token counts equal batch 1."""
    one = HFCausal(tiny_llama, tiny_tokenizer, name="t", batch_size=1)
    two = HFCausal(tiny_llama, tiny_tokenizer, name="t", batch_size=2)
    prompts = [("Alice lives in", 40), ("Bob", 1), (LONG, 3), ("The capital of", 20), ("Dave", 5)]
    queue = [(one.prompt_ids(p), n, ()) for p, n in prompts]  # in this order, not by length
    resized: list[tuple[int, int, int]] = []  # (columns before, kept, columns after)
    realigned = DecodeBatch._realigned

    def recording(self, keep, width):
        resized.append((self.mask.shape[1], keep, width))
        realigned(self, keep, width)

    monkeypatch.setattr(DecodeBatch, "_realigned", recording)
    alone = [one._greedy([row])[0] for row in queue]
    assert not resized  # one row at a time never takes a slot
    assert two._merges_caches
    assert two._greedy(queue) == alone
    assert [len(tokens) for tokens in alone] == [40, 1, 3, 20, 5]  # nothing ended them early
    assert any(after > before for before, _, after in resized)  # C widened the cache
    cropped = [(before, after) for before, keep, after in resized if after < before]
    assert cropped and all(before - after >= CROP_FROM for before, after in cropped)


def test_a_placed_row_continues_as_its_prefill_would(tiny_llama, tiny_tokenizer):
    """A prompt written into a free slot of a batch that has decoded for some steps (its
    columns then padded on the left) gets the next-token logits of the prompt run alone."""
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="t", batch_size=4)
    forward = lambda *a: subject._forward(*a, last_only=True)  # noqa: E731
    with torch.inference_mode():
        first = [subject.prompt_ids(p) for p in ("Alice lives in", "Bob and Carol went")]
        order, *prefilled = subject._prefill(first)
        batch = DecodeBatch(order, *prefilled)
        for _ in range(3):
            batch.step(batch.logits.argmax(-1, keepdim=True), forward)
        batch.release(0)
        joining = subject.prompt_ids("The capital of")
        _, logits, mask, cache = subject._prefill([joining])
        from faithprobe.subjects.hf.decode_batch import ready_rows

        (row,) = ready_rows([7], logits, mask, cache)
        batch.place(0, row)
        assert batch.rows[0] == 7 and int(batch.positions[0]) == len(joining)
        token = batch.logits.argmax(-1, keepdim=True)
        batch.step(token, forward)
        alone = subject._forward(
            torch.tensor([[*joining, int(token[0])]]),
            torch.ones((1, len(joining) + 1), dtype=torch.long),
            torch.arange(len(joining) + 1)[None],
        ).logits[0, -1]
    assert torch.allclose(batch.logits[0], alone, atol=1e-5)
