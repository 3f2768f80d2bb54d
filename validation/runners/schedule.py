"""Scheduling pairwise tests in rounds so no node is in two tests at once.

The circle method of a round-robin tournament: fix the first node, rotate the others one place per
round, pair position i with position n-1-i. With n nodes (a bye added when n is odd) that is n-1
rounds of n/2 pairs, and every pair meets exactly once. Pure Python, deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def round_robin_rounds(nodes: Sequence[T]) -> list[list[tuple[T, T]]]:
    """Every unordered pair of `nodes` exactly once, grouped in rounds of disjoint pairs."""
    if len(set(nodes)) != len(nodes):
        raise ValueError("round_robin_rounds: node names must be unique")
    slots: list[T | None] = list(nodes)
    if len(slots) < 2:
        return []
    if len(slots) % 2:
        slots.append(None)  # the bye: whoever meets it sits the round out
    half = len(slots) // 2
    rounds = []
    for _ in range(len(slots) - 1):
        pairs = [(slots[i], slots[-1 - i]) for i in range(half)]
        rounds.append([(a, b) for a, b in pairs if a is not None and b is not None])
        slots = [slots[0], slots[-1], *slots[1:-1]]  # rotate everyone but the first
    return rounds


def cover_pairs(nodes: Sequence[T]) -> list[list[tuple[T, T]]]:
    """Rounds of disjoint pairs in which every node takes part at least once: one round for an even
    count; for an odd count a second round pairs the node left out with a node of the first round."""
    rounds = round_robin_rounds(nodes)
    if not rounds:
        return []
    first = rounds[0]
    paired = {n for pair in first for n in pair}
    left_out = [n for n in nodes if n not in paired]
    return [first, [(left_out[0], first[0][0])]] if left_out else [first]
