"""Where the interventional tables of each leaf live, and the batches of trees.

A plan decides, before anything is built, which leaves keep tables (few
players) and which keep masks, where each sits in a batch's arrays, which
trees serve rows from row covers, and how the trees are cut into batches
(within the table budget) and chunks (the schedule of a row's sums). It
depends on the model and the background's size alone.
"""

from dataclasses import dataclass

import numpy as np

from ._schedule import tree_chunks


@dataclass(frozen=True)
class Layout:
    """What a plan is made from: the paths' arrays, the background's size
    and the budgets (see ``_interventional.Background``)."""

    ensemble: object
    bit: np.ndarray
    leaves: np.ndarray
    roots: np.ndarray
    words: int
    n_background: int
    n_players: int
    table_budget: int
    max_bytes: int


@dataclass(frozen=True)
class Plan:
    """Where each leaf's background lives, and the batches of trees.

    ``offset`` (per node) points into a batch's tables (doubles) for the
    ``tabulated`` leaves and into its masks (64-bit words) for the others;
    the tables hold gains if ``gains`` (Shapley values), else counts
    (interactions); ``batches`` are ``(first tree, end tree, first table, end table,
    first mask, end mask)``; ``chunks`` are, per batch, the starts of its
    chunks of trees, then its end tree (see ``Paths.explain``).
    ``row_covers`` are ``Paths.row_covers``'s arrays with each count node's
    offset in the row tables (empty: none), ``row_at`` (per tree, then
    the end) where each tree's row tables start.
    """

    offset: np.ndarray
    tabulated: np.ndarray
    table_bits: int
    batches: list
    chunks: list
    gains: bool
    row_covers: tuple
    row_at: np.ndarray


def planned(
    layout: Layout, paths, table_bits: int, gains: bool, row_cover_bits: int
) -> Plan:
    """Tables for the leaves with at most ``table_bits`` players, in batches.

    The tables hold gains if ``gains``, else counts; ``paths`` is the
    compiled kernels' ``Paths``; trees take row covers with keys of at most
    ``row_cover_bits`` sides (negative: none).
    """
    n_bits = layout.bit[layout.leaves]
    tabulated = n_bits <= table_bits
    shift = np.where(tabulated, n_bits, 0)
    # D gains for each of 2**D masks, or one count.
    per_mask = np.maximum(shift, 1) if gains else 1
    table_size = np.where(tabulated, per_mask << shift, 0)
    # The number of distinct masks, the masks, their counts.
    mask_size = np.where(tabulated, 0, 1 + layout.n_background * (layout.words + 1))
    table_end = np.cumsum(table_size)
    mask_end = np.cumsum(mask_size)
    is_tabulated = np.zeros(len(layout.bit), dtype=np.uint8)
    is_tabulated[layout.leaves] = tabulated
    row_covers, row_at = _row_covers(
        layout,
        paths,
        is_tabulated,
        gains,
        row_cover_bits,
        8 * (table_end[-1] + mask_end[-1]),
    )
    offset = np.zeros(len(layout.bit), dtype=np.intp)
    offset[layout.leaves] = np.where(
        tabulated, table_end - table_size, mask_end - mask_size
    )
    # Each tree's leaves end at these positions of the leaf arrays.
    tree_end = np.searchsorted(layout.leaves, layout.roots[1:])
    table_at = np.concatenate([[0], table_end])[np.concatenate([[0], tree_end])]
    mask_at = np.concatenate([[0], mask_end])[np.concatenate([[0], tree_end])]

    def span(first, end):
        return (first, end, int(table_at[first]), int(table_at[end]),
                int(mask_at[first]), int(mask_at[end]))  # fmt: skip

    per_tree = 8 * (np.diff(table_at) + np.diff(mask_at) + np.diff(row_at))
    _check_tree_bytes(layout, per_tree, tree_end)
    batches, first, size = [], 0, 0
    for tree, tree_bytes in enumerate(per_tree):
        if tree > first and size + tree_bytes > layout.table_budget:
            batches.append(span(first, tree))
            first, size = tree, 0
        size += tree_bytes
    batches.append(span(first, len(table_at) - 1))
    bits = int(n_bits[tabulated].max()) if tabulated.any() else -1
    chunks = _chunks(layout, tree_end, gains, batches)
    return Plan(offset, is_tabulated, bits, batches, chunks, gains, row_covers, row_at)


def _row_covers(
    layout: Layout,
    paths,
    tabulated: np.ndarray,
    gains: bool,
    key_bits: int,
    kept_bytes: int,
) -> tuple:
    """The row covers (Shapley values only) with their tables' offsets.

    Only where all the tables are kept from fit, with the row covers'
    (``kept_bytes`` of tables and masks besides): rows then save more
    than the tables cost to build. Returns ``Paths.row_covers``'s arrays
    with each count node's offset in place of its size (empty if none),
    and where each tree's row tables start (per tree, then the end).
    """
    none = (), np.zeros(len(layout.roots), dtype=np.intp)
    if not gains or key_bits < 0:
        return none
    *plan, sizes = paths.row_covers(key_bits, tabulated)
    end = np.cumsum(sizes)
    if kept_bytes + 8 * (end[-1] if len(end) else 0) > layout.table_budget:
        return none
    row_at = np.concatenate([[0], end])[plan[1]].astype(np.intp)
    return (*plan, end - sizes), row_at


def _check_tree_bytes(
    layout: Layout, per_tree: np.ndarray, tree_end: np.ndarray
) -> None:
    """Refuse a tree whose tables and masks need more than the budget.

    A batch holds at least one tree; a leaf too deep to tabulate keeps a
    mask per background row, so one fully grown tree against a large
    background can need gigabytes.
    """
    tree = int(np.argmax(per_tree))
    needed = int(per_tree[tree])
    if 2 * needed <= layout.max_bytes:
        return
    first = 0 if tree == 0 else int(tree_end[tree - 1])
    n_leaves = int(tree_end[tree]) - first
    fitting = layout.n_background * (layout.max_bytes // 2) // needed
    raise ValueError(
        f"Interventional values of this model against {layout.n_background:,} "
        f"background rows need {needed:,} bytes at once for tree {tree} "
        f"({n_leaves:,} leaves; each leaf whose path is too deep to tabulate "
        "keeps one mask per background row), and max_memory allows "
        f"{layout.max_bytes // 2:,} (half of it). Raise max_memory to at least "
        f"{2 * needed:,} bytes, or pass a sample of the background (the "
        f"masks grow with its rows: about {fitting:,} rows fit), or limit the "
        "trees' depth."
    )


def _chunks(layout: Layout, tree_end: np.ndarray, gains: bool, batches: list) -> list:
    """Each batch's chunks of trees: their starts, then the batch's end.

    The ensemble's chunks (:func:`tree_chunks`), cut where batches end.
    At each leaf a row costs about D (Shapley values) or D**2
    (interactions) for the path's D players, so a tree's work is its
    nodes times its paths' largest D, or D**2; a chunk's sums are one
    row of values, or of interaction matrices. They depend on the model
    and the background alone, not on the rows or threads.
    """
    n_bits = layout.bit[layout.leaves]
    tree_start = np.concatenate([[0], tree_end[:-1]])
    work = np.maximum(np.maximum.reduceat(n_bits, tree_start), 1)
    row_values = layout.ensemble.n_outputs * layout.n_players
    if not gains:
        work, row_values = work**2, row_values * layout.n_players
    starts = tree_chunks(layout.ensemble, work, row_values)
    return [
        np.concatenate(
            [[first], starts[(starts > first) & (starts < end)], [end]]
        ).astype(np.intp)
        for first, end, *_ in batches
    ]
