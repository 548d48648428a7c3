"""The background's patterns at each leaf, for interventional interaction
indices of any order.

For a leaf with ``D`` distinct players on its path and a background row
``z``, the interventional game is the product game with ``a_j`` = [the
explained row passes the path's splits on player ``j``] and ``b_j`` = [``z``
passes them], weighted by the leaf's value over the background's size.
Background rows with the same pattern of ``b`` give the same game: each
leaf keeps its distinct patterns (bit ``j`` set where ``z`` passes the
path's ``j``-th player, by first appearance) and their counts, made once
from the background's directions at every node.
"""

from dataclasses import dataclass

import numpy as np

# The most distinct players on a path whose patterns fit a 64-bit mask.
MAX_PATTERN_BITS = 62


@dataclass(frozen=True)
class LeafPatterns:
    """Each leaf's background patterns, and its players in increasing order.

    Attributes
    ----------
    start : ndarray of shape (n_nodes + 1,)
        Leaf ``l``'s patterns are ``masks[start[l]:start[l + 1]]`` (none
        for internal nodes).
    masks : ndarray of int64
        The patterns: bit ``j`` set where the background rows pass the
        path's ``j``-th player.
    shares : ndarray of float64
        Each pattern's background rows over the background's size.
    sorted_bits, sorted_players : ndarray of intp
        Leaf ``l``'s bits in increasing order of their players, and those
        players, from ``players_start[l]`` on (``D`` of them).
    """

    start: np.ndarray
    masks: np.ndarray
    shares: np.ndarray
    sorted_bits: np.ndarray
    sorted_players: np.ndarray


def check_routing_bytes(n_nodes: int, n_background: int, max_bytes: int) -> None:
    """Refuse to route a background through the nodes, one byte a row and
    node, beyond half of ``max_bytes``."""
    needed = n_nodes * n_background
    if 2 * needed > max_bytes:
        raise ValueError(
            "Interaction indices of the interventional value function route "
            f"the {n_background:,} background rows through the {n_nodes:,} "
            f"nodes ({needed:,} bytes), more than half of max_memory "
            f"({max_bytes:,} bytes): use a smaller background or a larger "
            "max_memory."
        )


def leaf_patterns(
    ensemble, bit, players_start, players, directions: np.ndarray, n_background: int
) -> LeafPatterns:
    """The patterns of the background whose rows go left at each node where
    ``directions`` (``Paths.route_background``'s bitsets) say."""
    goes_left = _unpacked(directions, n_background)
    n_nodes = len(goes_left)
    leaves = np.flatnonzero(ensemble.left < 0)
    if int(bit[leaves].max(initial=0)) > MAX_PATTERN_BITS:
        raise ValueError(
            "Interaction indices of the interventional value function take "
            f"paths of at most {MAX_PATTERN_BITS} distinct features; these "
            f"trees have {int(bit[leaves].max())}."
        )
    per_leaf = {}
    for root in ensemble.roots:
        stack = [(int(root), np.zeros(n_background, dtype=np.int64))]
        while stack:
            node, failed = stack.pop()
            left, right = ensemble.left[node], ensemble.right[node]
            if left < 0:
                n_bits = int(bit[node])
                passed = ~failed & ((1 << n_bits) - 1)
                per_leaf[node] = np.unique(passed, return_counts=True)
                continue
            shift = np.int64(bit[node])
            went = goes_left[node].astype(np.int64)
            stack.append((int(left), failed | ((1 - went) << shift)))
            stack.append((int(right), failed | (went << shift)))
    counts = np.zeros(n_nodes, dtype=np.intp)
    for leaf, (masks, _) in per_leaf.items():
        counts[leaf] = len(masks)
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.intp)
    masks = np.zeros(max(1, start[-1]), dtype=np.int64)
    shares = np.zeros(max(1, start[-1]))
    for leaf, (leaf_masks, leaf_counts) in per_leaf.items():
        masks[start[leaf] : start[leaf + 1]] = leaf_masks
        shares[start[leaf] : start[leaf + 1]] = leaf_counts / n_background
    sorted_bits = np.zeros_like(players)
    sorted_players = np.zeros_like(players)
    for leaf in leaves:
        first, n_bits = players_start[leaf], int(bit[leaf])
        path = players[first : first + n_bits]
        order = np.argsort(path, kind="stable")
        sorted_bits[first : first + n_bits] = order
        sorted_players[first : first + n_bits] = path[order]
    return LeafPatterns(start, masks, shares, sorted_bits, sorted_players)


def _unpacked(directions: np.ndarray, n_background: int) -> np.ndarray:
    """The bitsets of ``Paths.route_background`` as (n_nodes, n_background)
    booleans: True where the row goes left."""
    as_bytes = directions.astype("<u8").view(np.uint8).reshape(len(directions), -1)
    unpacked = np.unpackbits(as_bytes, axis=1, bitorder="little")
    return unpacked[:, :n_background].astype(bool)
