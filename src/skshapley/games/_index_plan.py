"""What the compiled index kernels need to know of an index: its weights at
the quadrature points, its columns, and the last steps in Python.

The kernels (``_index_games.pxd``) add each coalition's value to the column
of its colexicographic rank; :meth:`IndexPlan.finish` puts the columns in
the order :class:`~skshapley.games.InteractionIndices` lists them (by size,
then lexicographic) and, for k-SII, combines the SII of the supersets with
Bernoulli numbers.
"""

import functools
import itertools
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.polynomial import polynomial
from scipy import sparse

from ._indices import _WITH_EMPTY, bernoulli_numbers, coalitions_up_to
from ._quadrature import gauss_legendre


def exact_nodes(index: str, n_players: int, order: int) -> int:
    """Gauss–Legendre nodes exact for the index's integrands on games of
    ``n_players`` moving players: degree ``n_players - 1`` for SII, k-SII
    and STII, ``n_players + order - 2`` for FSII; none for the indices of
    point values (BII, FBII, Möbius)."""
    if index in ("BII", "FBII", "Moebius"):
        return 0
    degree = n_players + order - 2 if index == "FSII" else n_players - 1
    return max(degree, 0) // 2 + 1


def rule_of(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The Gauss–Legendre rule of ``n_nodes`` points on [0, 1] (none for 0)."""
    if n_nodes == 0:
        return np.empty(0), np.empty(0)
    return gauss_legendre(n_nodes)


def _faithful_shapley_polynomial(order: int, size: int) -> np.ndarray:
    """FSII's ``c * p(x)`` (coefficients, lowest first) for coalitions of
    ``size >= 1`` players at ``order`` (see _product_indices.py)."""
    k, s, r = order, size, order - size
    density = polynomial.polymul(
        np.eye(k + 1)[k], polynomial.polypow([1.0, -1.0], k - 1)
    )  # x**k (1 - x)**(k - 1)
    p = polynomial.polyder(density, r)[1:]  # its r-th derivative over x
    scale = (
        s / (k + s) * math.comb(k, s)
        * math.factorial(k + s) / (math.factorial(k) * math.factorial(k - 1))
    )  # fmt: skip
    return scale * p


def point_weights(index: str, order: int, size: int, nodes, node_weights):
    """Weights of ``Q_S`` at the points ``(nodes..., 0, 1/2)`` for coalitions
    of ``size`` players. FBII below the top order adds a derivative term
    (see ``needs_derivative``); k-SII is SII here, and its empty coalition
    ``v(∅)``."""
    zero_point, half_point = np.eye(len(nodes) + 2)[-2:]
    at_nodes = np.zeros(len(nodes) + 2)
    if index == "Moebius" or (index in ("STII", "FSII", "k-SII") and size == 0):
        return zero_point
    if index == "STII" and size < order:
        return zero_point
    if index in ("SII", "k-SII"):
        at_nodes[:-2] = node_weights
        return at_nodes
    if index == "BII" or (index == "FBII" and size == order):
        return half_point
    if index == "FBII":
        return zero_point
    if index == "STII":
        at_nodes[:-2] = node_weights * order * (1.0 - nodes) ** (order - 1)
        return at_nodes
    # FSII
    p = _faithful_shapley_polynomial(order, size)
    at_nodes[:-2] = node_weights * polynomial.polyval(nodes, p)
    at_nodes[-2] = 1.0 - polynomial.polyval(1.0, polynomial.polyint(p))
    return at_nodes


def needs_derivative(index: str, order: int, size: int) -> bool:
    """Whether coalitions of ``size`` players add FBII's derivative term."""
    return index == "FBII" and size < order


def combinations(n_players: int, size: int) -> np.ndarray:
    """All coalitions of ``size`` players, lexicographic: (count, size)."""
    combos = list(itertools.combinations(range(n_players), size))
    return np.array(combos, dtype=np.intp).reshape(len(combos), size)


def lexicographic_rank(combos: np.ndarray, n_players: int) -> np.ndarray:
    """The rank of each row of ``combos`` (sorted players) among all
    combinations of its size, in lexicographic order."""
    size = combos.shape[1]
    rank = np.zeros(len(combos), dtype=np.int64)
    previous = np.full(len(combos), -1)
    for i in range(size):
        after = size - 1 - i
        # before[v]: the combinations whose i-th player is below v.
        counts = [math.comb(n_players - 1 - v, after) for v in range(n_players)]
        before = np.concatenate([[0], np.cumsum(counts)])
        rank += before[combos[:, i]] - before[previous + 1]
        previous = combos[:, i]
    return rank


def colexicographic_rank(combos: np.ndarray, n_players: int) -> np.ndarray:
    """``sum_i C(combos[:, i], i + 1)``: the rank in colexicographic order."""
    rank = np.zeros(len(combos), dtype=np.int64)
    for i in range(combos.shape[1]):
        binomial = np.array([math.comb(p, i + 1) for p in range(n_players)])
        rank += binomial[combos[:, i]]
    return rank


@dataclass(frozen=True)
class IndexPlan:
    """An index's plan on ``n_players`` players, for games of at most
    ``max_game_players`` moving players.

    Attributes
    ----------
    index, order, n_players : str, int, int
        The index, its order and the players of the columns.
    n_nodes : int
        The quadrature nodes (exact for the index's integrands).
    """

    index: str
    order: int
    n_players: int
    max_game_players: int

    @cached_property
    def n_nodes(self) -> int:
        return exact_nodes(self.index, self.max_game_players, self.order)

    @cached_property
    def sizes(self) -> range:
        return range(0 if self.index in _WITH_EMPTY else 1, self.order + 1)

    @cached_property
    def coalitions(self) -> tuple[tuple[int, ...], ...]:
        return coalitions_up_to(self.n_players, self.order, self.index)

    first_column = 0
    is_window = False

    @property
    def has_empty(self) -> bool:
        """Whether the empty coalition's column is here (column 0)."""
        return self.sizes.start == 0

    @cached_property
    def offset(self) -> np.ndarray:
        """Each size's first column (0 for sizes not listed)."""
        counts = [
            math.comb(self.n_players, s) if s in self.sizes else 0
            for s in range(self.order + 1)
        ]
        return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.intp)

    @cached_property
    def n_columns(self) -> int:
        return sum(math.comb(self.n_players, s) for s in self.sizes)

    @cached_property
    def kernel_arrays(self) -> dict[str, np.ndarray]:
        """The IndexRule's arrays (``_index_games.pxd``), by field name, made
        once and read-only: the points where ``Q_S`` is evaluated (the nodes,
        then 0 and 1/2 where some size weighs them) and each size's weights
        there."""
        nodes, node_weights = rule_of(self.n_nodes)
        weights = np.stack(
            [
                point_weights(self.index, self.order, s, nodes, node_weights)
                for s in range(self.order + 1)
            ]
        )
        used = np.ones(weights.shape[1], dtype=bool)
        used[-2:] = (weights[:, -2:] != 0).any(axis=0)
        points = np.concatenate([nodes, [0.0, 0.5]])[used]
        binomial = np.array(
            [
                [math.comb(p, i) for i in range(self.order + 1)]
                for p in range(self.n_players)
            ],
            dtype=np.intp,
        ).reshape(self.n_players, self.order + 1)
        derivative = np.array(
            [
                needs_derivative(self.index, self.order, s)
                for s in range(self.order + 1)
            ],
            dtype=np.uint8,
        )
        arrays = {
            "points": np.ascontiguousarray(points),
            "weights": np.ascontiguousarray(weights[:, used]),
            "derivative": derivative,
            "binomial": binomial,
            "offset": self.offset.copy(),
        }
        for array in arrays.values():
            array.flags.writeable = False
        return arrays

    @cached_property
    def _lexicographic_columns(self) -> np.ndarray:
        """For each column in the listed order, its colexicographic column."""
        columns = [
            self.offset[s]
            + colexicographic_rank(combinations(self.n_players, s), self.n_players)
            for s in self.sizes
        ]
        return np.concatenate(columns).astype(np.intp)

    @cached_property
    def _k_additive(self) -> sparse.csr_matrix:
        """k-SII = SII @ this matrix (columns in the listed order): each
        coalition's SII, times ``B_{t - s}``, to each of its non-empty
        subsets; the empty coalition keeps its value, ``v(∅)``."""
        bernoulli = bernoulli_numbers(self.order + 1)
        rows, cols, data = [np.zeros(1, np.intp)], [np.zeros(1, np.intp)], [[1.0]]
        for t in range(1, self.order + 1):
            combos = combinations(self.n_players, t)
            whole = self.offset[t] + np.arange(len(combos))
            for s in range(1, t + 1):
                for positions in itertools.combinations(range(t), s):
                    part = self.offset[s] + lexicographic_rank(
                        combos[:, positions], self.n_players
                    )
                    rows.append(whole)
                    cols.append(part)
                    data.append(np.full(len(combos), float(bernoulli[t - s])))
        return sparse.csr_matrix(
            (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
            shape=(self.n_columns, self.n_columns),
        )

    def finish(self, values: np.ndarray) -> np.ndarray:
        """Values by colexicographic column (last axis) -> the listed order,
        and k-SII from SII."""
        return self.k_additive(values[..., self._lexicographic_columns])

    @cached_property
    def positions(self) -> np.ndarray:
        """Each finished column's position in the listed order: its own."""
        return np.arange(self.n_columns, dtype=np.int64)

    def from_listed(self, values: np.ndarray) -> np.ndarray:
        """Values in the listed order, as :meth:`finish` gives them."""
        return values

    def window(self, first: int, stop: int) -> "ColumnWindow":
        """The colexicographic columns ``first`` to ``stop`` of the plan."""
        return ColumnWindow(self, first, stop)

    def coalitions_at(self, positions: np.ndarray) -> list[tuple[int, ...]]:
        """The coalitions at these positions of the listed order."""
        positions = np.asarray(positions, dtype=np.int64)
        found: list = [None] * len(positions)
        for s in self.sizes:
            here = np.flatnonzero(
                (positions >= self.offset[s])
                & (positions < self.offset[s] + math.comb(self.n_players, s))
            )
            combos = lexicographic_unrank(
                positions[here] - self.offset[s], s, self.n_players
            )
            for place, combo in zip(here, combos.tolist(), strict=True):
                found[place] = tuple(combo)
        return found

    def k_additive(self, values: np.ndarray) -> np.ndarray:
        """k-SII from SII (columns in the listed order); other indices as
        they are."""
        if self.index != "k-SII":
            return values
        flat = values.reshape(-1, values.shape[-1])
        return np.asarray(flat @ self._k_additive).reshape(values.shape)


@dataclass(frozen=True)
class ColumnWindow:
    """The colexicographic columns ``first`` to ``stop`` of a plan: what a
    row's kernels compute when all its columns would not fit in memory.
    The kernels see its ``n_columns`` and ``first_column``; :meth:`finish`
    keeps the window's order, and ``positions`` says where each column
    goes in the listed order. k-SII, which combines every coalition's SII
    with its supersets', has no windows."""

    plan: IndexPlan
    first: int
    stop: int
    is_window = True

    def __post_init__(self):
        if self.plan.index == "k-SII":
            raise ValueError("k-SII needs all of a row's columns at once.")

    def __getattr__(self, name: str):
        if name in ("index", "order", "n_players", "sizes", "offset", "kernel_arrays"):
            return getattr(self.plan, name)
        raise AttributeError(name)

    @property
    def n_columns(self) -> int:
        return self.stop - self.first

    @property
    def first_column(self) -> int:
        return self.first

    @property
    def has_empty(self) -> bool:
        return self.first == 0 and self.plan.has_empty

    @property
    def positions(self) -> np.ndarray:
        """Each column's position in the plan's listed order (made at each
        call: all windows' positions would take a row's memory)."""
        colex = np.arange(self.first, self.stop, dtype=np.int64)
        positions = np.empty(len(colex), dtype=np.int64)
        for s in self.plan.sizes:
            begin = self.plan.offset[s]
            here = (colex >= begin) & (colex < begin + math.comb(self.n_players, s))
            combos = colexicographic_unrank(colex[here] - begin, s, self.n_players)
            positions[here] = begin + lexicographic_rank(combos, self.n_players)
        return positions

    def finish(self, values: np.ndarray) -> np.ndarray:
        """The window's columns, in its own (colexicographic) order."""
        return values

    def from_listed(self, values: np.ndarray) -> np.ndarray:
        """The window's columns of values in the listed order."""
        return values[..., self.positions]


def colexicographic_unrank(rank: np.ndarray, size: int, n_players: int) -> np.ndarray:
    """The coalitions of ``size`` players with these colexicographic ranks
    (the inverse of :func:`colexicographic_rank`): (count, size)."""
    rank = np.array(rank, dtype=np.int64)
    combos = np.empty((len(rank), size), dtype=np.intp)
    for i in range(size, 0, -1):
        # The largest p with C(p, i) <= rank (C(p, i) grows with p >= i - 1).
        binomial = np.array([math.comb(p, i) for p in range(n_players)], np.int64)
        combos[:, i - 1] = np.searchsorted(binomial, rank, side="right") - 1
        rank -= binomial[combos[:, i - 1]]
    return combos


def lexicographic_unrank(rank: np.ndarray, size: int, n_players: int) -> np.ndarray:
    """The coalitions of ``size`` players with these lexicographic ranks
    (the inverse of :func:`lexicographic_rank`): (count, size)."""
    rank = np.array(rank, dtype=np.int64)
    combos = np.empty((len(rank), size), dtype=np.intp)
    previous = np.full(len(rank), -1)
    for i in range(size):
        after = size - 1 - i
        counts = [math.comb(n_players - 1 - v, after) for v in range(n_players)]
        before = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        start = before[previous + 1]
        combos[:, i] = np.searchsorted(before, rank + start, side="right") - 1
        rank -= before[combos[:, i]] - start
        previous = combos[:, i]
    return combos


@functools.lru_cache(maxsize=16)
def index_plan(
    index: str, order: int, n_players: int, max_game_players: int
) -> IndexPlan:
    """The plan of these arguments, made once (its columns, ranks and
    k-SII matrix cost more than explaining a few rows)."""
    return IndexPlan(index, order, n_players, max_game_players)
