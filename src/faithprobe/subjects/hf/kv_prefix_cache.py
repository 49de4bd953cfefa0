"""Keys and values of token sequences a causal LM has read, kept so that a later prompt
that begins the same way reads only the rest: a radix tree over token ids, bounded in
bytes, least recently used first out.

A causal LM's keys and values at a position depend on the tokens up to it only, so those of
any stored sequence's beginning serve every prompt that begins with it (bar floating-point
rounding, which shapes of computation move anyway). In a faithfulness run the questions
about one passage, and the deletion variants that keep its first sentences, begin alike but
arrive in different batches and in different chunks of the answer cache; kept here, their
common beginning is read once.

Each node holds the positions its edge adds after its parent's, so a beginning shared by
many stored sequences is held once: memory is what the distinct tokens take. Storing may
go over ``max_bytes`` for a while (a batch's prompts are all stored as it runs);
:meth:`PrefixCache.trim` evicts leaves, least recently used first, until it fits again.
``max_bytes=0`` keeps nothing between trims.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import count

import torch

Layers = list[tuple[torch.Tensor, torch.Tensor]]  # per layer: keys, values [heads, n, dim]


class _Node:
    __slots__ = ("children", "layers", "parent", "tokens", "used")

    def __init__(self, tokens: tuple[int, ...], layers: Layers, parent: _Node | None) -> None:
        self.tokens = tokens  # the ids this node adds after its parent's
        self.layers = layers  # their keys and values
        self.parent = parent
        self.children: dict[int, _Node] = {}  # by first token
        self.used = 0

    @property
    def nbytes(self) -> int:
        return sum(
            k.numel() * k.element_size() + v.numel() * v.element_size() for k, v in self.layers
        )


class PrefixCache:
    """Keys and values of stored token sequences, found by their longest shared beginning."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._root = _Node((), [], None)
        self._clock = count(1)

    def __len__(self) -> int:
        """The number of nodes (edges of the tree)."""
        return sum(1 for _ in self._nodes())

    def clear(self) -> None:
        self._root = _Node((), [], None)
        self.nbytes = 0

    def match(self, ids: Sequence[int]) -> int:
        """How many of ``ids``' first tokens are stored (marking them used)."""
        return self._walk(ids)[1]

    def layers(self, ids: Sequence[int], n: int) -> Layers:
        """The keys and values of ``ids``' first ``n`` positions (``n`` <= :meth:`match`),
        per layer ``[1, heads, n, dim]``."""
        path, matched = self._walk(ids[:n])
        if matched < n:
            raise KeyError(f"only {matched} of the {n} positions asked for are stored")
        parts: list[Layers] = []
        left = n
        for node in path:
            take = min(left, len(node.tokens))
            parts.append([(k[:, :take], v[:, :take]) for k, v in node.layers])
            left -= take
        return [
            (
                torch.cat([p[i][0] for p in parts], 1)[None],
                torch.cat([p[i][1] for p in parts], 1)[None],
            )
            for i in range(len(parts[0]))
        ]

    def insert(self, ids: Sequence[int], start: int, layers: Layers) -> None:
        """Store ``ids``, given the keys and values ``layers`` (per layer ``[heads, n, dim]``)
        of its positions from ``start`` on; its first ``start`` positions must be stored
        already. Positions stored already are kept as they are."""
        path, matched = self._walk(ids)
        if matched < start:
            raise KeyError(f"positions {matched} to {start} of the sequence are not stored")
        if matched == len(ids):
            return
        node = path[-1] if path else self._root
        depth = sum(len(p.tokens) for p in path)
        if depth > matched:  # ``ids`` leave the last edge part-way: split it there
            node = self._split(node, len(node.tokens) - (depth - matched))
        tokens = tuple(ids[matched:])
        kept = [
            (k[:, matched - start :].clone(), v[:, matched - start :].clone()) for k, v in layers
        ]
        child = _Node(tokens, kept, node)
        child.used = next(self._clock)
        node.children[tokens[0]] = child
        self.nbytes += child.nbytes

    def trim(self) -> None:
        """Evict leaves, least recently used first, until at most ``max_bytes`` are held."""
        while self.nbytes > self.max_bytes:
            leaf = min(
                (n for n in self._nodes() if not n.children), key=lambda n: n.used, default=None
            )
            if leaf is None:
                break
            del leaf.parent.children[leaf.tokens[0]]
            self.nbytes -= leaf.nbytes

    def _walk(self, ids: Sequence[int]) -> tuple[list[_Node], int]:
        """The nodes on the path ``ids`` follow (the last one perhaps part-way) and how many
        of ``ids`` they match; each is marked used."""
        path, matched, node = [], 0, self._root
        tick = next(self._clock)
        while matched < len(ids) and (child := node.children.get(ids[matched])) is not None:
            same = common_length(child.tokens, ids[matched:])
            child.used = tick
            path.append(child)
            matched += same
            if same < len(child.tokens):
                break
            node = child
        return path, matched

    def _split(self, node: _Node, at: int) -> _Node:
        """Cut ``node``'s edge after ``at`` tokens; return the new node holding the first
        part (its parent now, and the child of its old parent). Both parts are copied, so
        evicting one frees its memory."""
        head = _Node(
            node.tokens[:at],
            [(k[:, :at].clone(), v[:, :at].clone()) for k, v in node.layers],
            node.parent,
        )
        head.used = node.used
        node.parent.children[node.tokens[0]] = head
        node.tokens = node.tokens[at:]
        node.layers = [(k[:, at:].clone(), v[:, at:].clone()) for k, v in node.layers]
        node.parent = head
        head.children[node.tokens[0]] = node
        return head

    def _nodes(self):
        stack = list(self._root.children.values())
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.children.values())


def common_length(a: Sequence[int], b: Sequence[int]) -> int:
    return next(
        (k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
