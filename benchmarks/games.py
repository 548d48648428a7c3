"""Throughput of the product-game core against a plain NumPy implementation.

What is measured
----------------
A product game ``v(S) = w * prod_{j in S} a_j * prod_{j not in S} b_j`` has the
Shapley values

    phi[g, i] = w_g (a_gi - b_gi) sum_k omega_k prod_{j != i} F_gkj,
    F_gkj = b_gj + t_k (a_gj - b_gj),

for a Gauss–Legendre rule ``(t_k, omega_k)`` on [0, 1]. The script times
``skshapley.games.product_shapley`` (the compiled, OpenMP-parallel core) and a
*NumPy twin*: the same formula written the obvious vectorized way, in one
thread, on the same inputs and with the same rule (``gauss_legendre``):
build ``F`` of shape (games, nodes, players) for a chunk of games, take
``full = F.prod(-1)``, divide the factor out (``full[..., None] / F``), weight
by ``omega`` and sum over the nodes.

The cases (sizes shrink with ``--quick``):

* 1000 games of 100 players, ``a`` and ``b`` uniform in (0, 1), exact rule;
* 200 games of 5000 players from a product (RBF) kernel: ``b = 1`` and
  ``a = exp(-gamma (x - X)**2)`` with ``gamma = 1 / 5000`` and standard-normal
  ``x`` (one explained sample) and ``X`` (200 reference points), so every
  factor is close to 1; exact rule and ``n_quadrature_points="auto"``;
* 200 games of 5000 players, ``b = 1`` and ``a`` uniform in (0, 1): ``v(N)``
  and the products at the larger nodes underflow; exact rule and ``"auto"``.

``product_shapley`` runs with ``reduce=False`` (one row per game, like the
twin) and ``reduce=True`` (their weighted sum), each with ``n_jobs=1`` and
``n_jobs=-1`` (all CPUs). Every time is the best of ``--repeat`` runs
(``time.perf_counter``), or of fewer where the runs so far took more than
``TIME_BUDGET`` seconds (column ``runs``). Where the twin would take long
(the exact rule on 5000 players), it runs on the first games only and its
time is scaled linearly to all games; the table marks those times with ``*``.

Columns: throughput is game-player-node evaluations per second (``n_games *
n_players * n_nodes / time``); ``numpy/sk`` is the twin's time over
skshapley's; ``max|Δ|/max|φ|`` compares the values with the twin's on the
games it ran; ``efficiency`` is the largest relative residual

    |sum_i phi_gi - (v_g(N) - v_g(∅))| / max(sum_i |phi_gi|, |v_g(N) - v_g(∅)|)

over the games, with ``v(N) = w prod_j a_j`` and ``v(∅) = w prod_j b_j``
computed in log space (for ``reduce=True``: the residual of the sum over the
games, relative to the larger of ``sum_i |phi_i|`` and ``sum_g |v_g(N) -
v_g(∅)|``). It is relative to the size of the terms summed, not to ``|v(N) -
v(∅)|`` alone: for generalized games the values of opposite signs can cancel
to a difference many orders of magnitude below them, and no floating-point sum
resolves that difference better than ``eps * sum_i |phi_i|``.

With ``"auto"``, skshapley's times include choosing the rule; the twin is
handed the chosen rule (the notes give the cost of that choice). The twin is
single-threaded (it makes no BLAS calls), so the rows with ``n_jobs=1`` are
the like-for-like ones; ``n_jobs=-1`` shows the thread scaling.

Run it from the repository root, in an environment where skshapley is
installed::

    python benchmarks/games.py            # full run, a few minutes at most
    python benchmarks/games.py --quick    # smoke run, a few seconds
"""

import argparse
import datetime
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import skshapley
from skshapley._runtime.threads import effective_n_threads
from skshapley.games import exact_n_points, gauss_legendre, product_shapley
from skshapley.games._quadrature import auto_n_points

SEED = 0

# A measurement stops repeating once its runs took this many seconds in all.
TIME_BUDGET = 10.0

# The twin builds F for as many games at a time as keep it below this many
# float64 elements (32 MiB); at least one game.
CHUNK_ELEMENTS = 2**22

# The twin runs on the first games whose game-player-node evaluations add up
# to at most this (about a second per run); its time is scaled to all games.
NUMPY_BUDGET = 250_000_000


def numpy_shapley(a, b, w, n_points):
    """Shapley values of product games, the straightforward NumPy way.

    Parameters
    ----------
    a, b : ndarray of shape (n_games, n_players)
    w : ndarray of shape (n_games,)
    n_points : ndarray of shape (n_games,)
        Gauss–Legendre points of each game's rule.

    Returns
    -------
    phi : ndarray of shape (n_games, n_players)
    n_underflow : int
        How many (game, node) products ``F.prod(-1)`` fell below the smallest
        normal float64 (to zero or into the subnormals, losing precision).
    """
    phi = np.empty_like(a)
    n_underflow = 0
    tiny = np.finfo(np.float64).tiny
    for m in np.unique(n_points):
        t, omega = gauss_legendre(int(m))
        games = np.flatnonzero(n_points == m)
        chunk = max(1, CHUNK_ELEMENTS // (int(m) * a.shape[1]))
        for start in range(0, len(games), chunk):
            g = games[start : start + chunk]
            delta = a[g] - b[g]
            F = b[g, None, :] + t[None, :, None] * delta[:, None, :]
            full = F.prod(axis=-1)
            n_underflow += int(np.count_nonzero(np.abs(full) < tiny))
            np.divide(full[..., None], F, out=F)  # prod_{j != i}, in place
            phi[g] = w[g, None] * delta * np.einsum("k,gki->gi", omega, F)
    return phi, n_underflow


def efficiency_residual(phi, a, b, w):
    """Largest relative efficiency residual (see the module docstring).

    ``phi`` of shape (n_games, n_players) gives one residual per game and
    returns the largest; ``phi`` of shape (n_players,) is the weighted sum
    over the games and gives the residual of the sums.
    """

    def log_product(x):
        with np.errstate(divide="ignore"):
            return np.prod(np.sign(x), axis=1), np.log(np.abs(x)).sum(axis=1)

    sign_n, log_n = log_product(a)
    sign_0, log_0 = log_product(b)
    difference = w * (sign_n * np.exp(log_n) - sign_0 * np.exp(log_0))
    if phi.ndim == 1:
        size = max(np.abs(phi).sum(), np.abs(difference).sum())
        return abs(phi.sum() - difference.sum()) / size
    size = np.maximum(np.abs(phi).sum(axis=1), np.abs(difference))
    return float(np.max(np.abs(phi.sum(axis=1) - difference) / size))


def best_time(func: Callable[[], object], repeat: int):
    """Best wall time of up to ``repeat`` calls, the calls made, the last result.

    Stops early once the calls took ``TIME_BUDGET`` seconds in all.
    """
    times = []
    while len(times) < repeat and sum(times) < TIME_BUDGET:
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), len(times), result


def relative_difference(x, reference):
    """``max |x - reference| / max |reference|`` over the finite entries."""
    finite = np.isfinite(x)
    return np.abs(x - reference)[finite].max() / np.abs(reference).max()


@dataclass
class Row:
    case: str
    rule: str
    implementation: str
    seconds: float
    runs: int
    evaluations: float
    ratio: float | None = None
    difference: float | None = None
    nonfinite: int | None = None
    efficiency: float | None = None
    scaled: bool = False


def rule_label(kind: str, n_points: np.ndarray) -> str:
    low, high = int(n_points.min()), int(n_points.max())
    return f"{kind} {low}" if low == high else f"{kind} {low}-{high}"


def run_case(name, a, b, w, kind, repeat):
    """Time the twin and skshapley on one batch of games with one rule."""
    n_games, n_players = a.shape
    if kind == "exact":
        n_points = np.full(n_games, exact_n_points(n_players))
        quadrature = exact_n_points(n_players)
    else:
        choice_seconds, _, n_points = best_time(lambda: auto_n_points(a - b, b), repeat)
        quadrature = "auto"
    rule = rule_label(kind, n_points)
    per_game = n_points * n_players
    evaluations = float(per_game.sum())

    # The twin, on the first games if all of them would take too long.
    n_sub = max(1, int(np.searchsorted(np.cumsum(per_game), NUMPY_BUDGET, "right")))
    sub = slice(0, n_sub)
    seconds, runs, (phi_numpy, n_underflow) = best_time(
        lambda: numpy_shapley(a[sub], b[sub], w[sub], n_points[sub]), repeat
    )
    numpy_seconds = seconds * evaluations / per_game[sub].sum()
    finite = np.isfinite(phi_numpy).all(axis=1)
    rows = [
        Row(
            name, rule, "numpy", numpy_seconds, runs, evaluations,
            nonfinite=int(np.count_nonzero(~np.isfinite(phi_numpy))),
            efficiency=efficiency_residual(
                phi_numpy[finite], a[sub][finite], b[sub][finite], w[sub][finite]
            ) if finite.any() else np.nan,
            scaled=n_sub < n_games,
        )
    ]  # fmt: skip

    for reduce in (False, True):
        for n_jobs in (1, -1):
            seconds, runs, phi = best_time(
                lambda reduce=reduce, n_jobs=n_jobs: product_shapley(
                    a, b, w, n_quadrature_points=quadrature, reduce=reduce,
                    n_jobs=n_jobs,
                ),
                repeat,
            )  # fmt: skip
            if not reduce:
                difference = relative_difference(phi_numpy, phi[sub])
            elif n_sub == n_games:
                difference = relative_difference(phi_numpy.sum(axis=0), phi)
            else:
                difference = None  # the twin's sum over all games is unknown
            rows.append(
                Row(
                    name, rule, f"skshapley reduce={reduce!s:<5} n_jobs={n_jobs}",
                    seconds, runs, evaluations, ratio=numpy_seconds / seconds,
                    difference=difference,
                    nonfinite=int(np.count_nonzero(~np.isfinite(phi))),
                    efficiency=efficiency_residual(phi, a, b, w),
                )
            )  # fmt: skip
    notes = []
    if kind == "auto":
        notes.append(
            f"choosing the rule (auto_n_points) takes {fmt_time(choice_seconds)} "
            "of skshapley's times"
        )
    if n_sub < n_games:
        notes.append(
            f"numpy timed on the first {n_sub} of {n_games} games, "
            f"scaled by {evaluations / per_game[sub].sum():.1f}"
        )
    if n_underflow:
        total = int(n_points[sub].sum())
        notes.append(
            f"numpy: {n_underflow} of {total} node products F.prod(-1) "
            "underflowed below the smallest normal float64"
        )
    return rows, notes


def make_cases(quick: bool, rng: np.random.Generator):
    """The batches of games: (name, a, b, w, rules)."""
    small_games, small_players = (100, 50) if quick else (1000, 100)
    large_games, large_players = (20, 500) if quick else (200, 5000)

    shape = (small_games, small_players)
    a, b = rng.uniform(size=shape), rng.uniform(size=shape)
    w = rng.standard_normal(small_games)
    yield f"{shape} a, b ~ U(0, 1)", a, b, w, ("exact",)

    shape = (large_games, large_players)
    gamma = 1.0 / large_players
    x = rng.standard_normal(large_players)  # the explained sample
    reference = rng.standard_normal(shape)  # the kernel's reference points
    a = np.exp(-gamma * (x - reference) ** 2)
    w = rng.standard_normal(large_games)  # the dual coefficients
    yield f"{shape} RBF kernel, b = 1", a, np.ones(shape), w, ("exact", "auto")

    a = rng.uniform(size=shape)
    w = rng.standard_normal(large_games)
    yield f"{shape} a ~ U(0, 1), b = 1", a, np.ones(shape), w, ("exact", "auto")


def fmt_time(seconds):
    """A time with three significant digits in s, ms or µs."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale or unit == "µs":
            return f"{seconds / scale:.3g} {unit}"


def fmt(value, spec):
    return "—" if value is None else format(value, spec)


def print_table(rows, notes):
    header = (
        f"{'case':<30} {'rule':<12} {'implementation':<33} {'time':>10} {'runs':>4} "
        f"{'evals/s':>9} {'numpy/sk':>8} {'max|Δ|/max|φ|':>13} "
        f"{'nonfinite':>9} {'efficiency':>10}"
    )
    print(header)
    print("-" * len(header))
    previous = None
    for row in rows:
        block = (row.case, row.rule)
        case, rule = block if block != previous else ("", "")
        if block != previous and previous is not None:
            print()
        previous = block
        seconds = fmt_time(row.seconds) + ("*" if row.scaled else " ")
        print(
            f"{case:<30} {rule:<12} {row.implementation:<33} {seconds:>10} "
            f"{row.runs:>4} {row.evaluations / row.seconds:>9.2e} "
            f"{fmt(row.ratio, '.2f'):>8} "
            f"{fmt(row.difference, '.1e'):>13} {fmt(row.nonfinite, 'd'):>9} "
            f"{fmt(row.efficiency, '.1e'):>10}"
        )
    print()
    for note in notes:
        print(note)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, for a smoke run"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs per measurement (best of)"
    )
    args = parser.parse_args()

    print(
        f"skshapley {skshapley.__version__} | numpy {np.__version__} | "
        f"Python {platform.python_version()} | {os.cpu_count()} CPUs "
        f"(n_jobs=-1: {effective_n_threads(-1)} threads) | "
        f"load {os.getloadavg()[0]:.2f} | "
        f"{datetime.datetime.now().isoformat(timespec='seconds')} | "
        f"best of {args.repeat} runs{' | quick' if args.quick else ''}"
    )
    print()
    rows, notes = [], []
    rng = np.random.default_rng(SEED)
    for name, a, b, w, kinds in make_cases(args.quick, rng):
        for kind in kinds:
            case_rows, case_notes = run_case(name, a, b, w, kind, args.repeat)
            rows += case_rows
            notes += [f"{name}, {case_rows[0].rule}: {note}" for note in case_notes]
    print_table(rows, notes)
    print(
        "* scaled time (see the notes); evals = game-player-node evaluations; "
        "efficiency = max_g |Σφ - (v(N) - v(∅))| / max(Σ|φ|, |v(N) - v(∅)|)"
    )


if __name__ == "__main__":
    main()
