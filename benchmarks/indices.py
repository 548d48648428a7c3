"""Interaction indices of any order: skshapley against shapiq, side by side.

What is measured
----------------
Trees: an ``XGBRegressor`` and a scikit-learn ``GradientBoostingRegressor``,
each 100 trees of depth 6, fitted on 5,000 rows of ``make_regression`` with
30 features (seeded). For each index shapiq's path-dependent
``TreeExplainer`` (TreeSHAP-IQ) computes (SII and k-SII; BII and the Möbius
transform from shapiq 1.7) at orders 2 and 3: skshapley's
``TreeExplainer(model, n_jobs=1).fit().explain_interactions(X, index=...,
order=...)`` on 50 rows, and shapiq's ``TreeExplainer(model, index=...,
max_order=...).explain(x)`` row by row on the same rows (on the first rows
only once they took ``--budget`` seconds, its time per row over those).

Kernels: a ``KernelRidge(kernel="rbf")`` on 300 points of 10 features, one
row: skshapley's ``ProductKernelExplainer(model).explain_interactions`` for
every index at orders 2 and 3, against shapiq's ``ExactComputer`` given the
model's own value function ``v(S) = sum_i alpha_i exp(-gamma sum_{j in S}
(x_j - X_ij)**2)`` for all 2**10 coalitions (its enumeration's time, the
game's evaluations included).

Columns: milliseconds per row (best of ``--repeat`` runs for skshapley),
``ratio`` = shapiq's time over skshapley's, and ``max|Δ|`` the largest
difference between the two results over the coalitions both list (shapiq
omits coalitions whose value is 0; they are compared with 0).

Run it from the repository root, in an environment where skshapley is
installed::

    python benchmarks/indices.py            # about a minute
    python benchmarks/indices.py --quick    # smoke run, 10 trees
"""

import argparse
import time
from importlib.metadata import version

import numpy as np
from _anchors import machine, skshapley_version
from sklearn.datasets import make_regression
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.kernel_ridge import KernelRidge

from skshapley import ProductKernelExplainer, TreeExplainer
from skshapley.games import INDICES


def shapiq_tree_indices() -> tuple[str, ...]:
    """The indices of shapiq's path-dependent TreeExplainer."""
    major, minor = (int(part) for part in version("shapiq").split(".")[:2])
    return ("SII", "k-SII") + (("BII", "Moebius") if (major, minor) >= (1, 7) else ())


def best_seconds(call, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def largest_difference(frame_row, values, names) -> float:
    """Max |ours - shapiq's| over our coalitions (absent from shapiq: 0)."""
    lookup = values.interaction_lookup
    differences = [
        abs(value - (values.values[lookup[c]] if c in lookup else 0.0))
        for label, value in frame_row.items()
        for c in [tuple(names.index(n) for n in label)]
    ]
    return max(differences)


def tree_models(quick: bool):
    import xgboost

    X, y = make_regression(5000, 30, noise=1.0, random_state=0)
    n_trees = 10 if quick else 100
    yield (
        f"XGBRegressor({n_trees} trees, depth 6)",
        xgboost.XGBRegressor(
            n_estimators=n_trees, max_depth=6, tree_method="hist", n_jobs=1
        ).fit(X, y),
        X,
    )
    yield (
        f"GradientBoostingRegressor({n_trees} trees, depth 6)",
        GradientBoostingRegressor(
            n_estimators=n_trees, max_depth=6, random_state=0
        ).fit(X, y),
        X,
    )


def run_trees(args, shapiq) -> None:
    n_rows = 10 if args.quick else 50
    for title, model, X in tree_models(args.quick):
        rows = X[:n_rows]
        names = [f"x{j}" for j in range(X.shape[1])]
        ours = TreeExplainer(model, n_jobs=1).fit()
        print(f"\n{title} | {X.shape[1]} features | {n_rows} rows, one thread")
        print(f"    {'index':8} order  skshapley ms/row  shapiq ms/row   ratio  max|Δ|")
        for index in shapiq_tree_indices():
            for order in (2, 3):
                seconds = best_seconds(
                    lambda e=ours, X=rows, i=index, o=order: e.explain_interactions(
                        X, index=i, order=o
                    ),
                    args.repeat,
                )
                frame = ours.explain_interactions(rows, index=index, order=order)
                try:
                    theirs = shapiq.TreeExplainer(model, index=index, max_order=order)
                    theirs.explain(rows[0])  # its first call converts the model
                except (TypeError, ValueError) as error:  # older shapiq, newer pandas
                    print(
                        f"    {index:8} {order:5}  {seconds / n_rows * 1e3:16.3f}"
                        f"  shapiq cannot read the model: {str(error)[:60]}"
                    )
                    continue
                spent, timed, difference = 0.0, 0, 0.0
                while timed < n_rows and spent < args.budget:
                    start = time.perf_counter()
                    values = theirs.explain(rows[timed])
                    spent += time.perf_counter() - start
                    difference = max(
                        difference, largest_difference(frame.iloc[timed], values, names)
                    )
                    timed += 1
                theirs_ms = spent / timed * 1e3
                ours_ms = seconds / n_rows * 1e3
                marker = "*" if timed < n_rows else " "
                print(
                    f"    {index:8} {order:5}  {ours_ms:16.3f}  {theirs_ms:12.3f}"
                    f"{marker}  {theirs_ms / ours_ms:6.1f}  {difference:.1e}"
                )
        print("    * timed on its first rows only (--budget)")


def run_kernels(args, shapiq) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 10))
    y = np.sin(X[:, 0]) * X[:, 1] + X[:, 2] * X[:, 3]
    model = KernelRidge(kernel="rbf", gamma=0.1).fit(X, y)
    x = X[:1]
    squared = (x - X) ** 2  # (references, features)

    def game(coalitions):
        return np.exp(-0.1 * coalitions.astype(float) @ squared.T) @ model.dual_coef_

    ours = ProductKernelExplainer(model, n_jobs=1).fit()
    names = list(ours.player_names_)
    print("\nKernelRidge(rbf), 300 points, 10 features | one row, one thread")
    print(
        f"    {'index':8} order  skshapley ms/row  shapiq Exact ms/row  ratio  max|Δ|"
    )
    for index in INDICES:
        for order in (2, 3):
            seconds = best_seconds(
                lambda i=index, o=order: ours.explain_interactions(x, index=i, order=o),
                args.repeat,
            )
            frame = ours.explain_interactions(x, index=index, order=order)
            start = time.perf_counter()
            values = shapiq.ExactComputer(game, n_players=10)(index=index, order=order)
            theirs_ms = (time.perf_counter() - start) * 1e3
            difference = largest_difference(frame.iloc[0], values, names)
            print(
                f"    {index:8} {order:5}  {seconds * 1e3:16.3f}  {theirs_ms:19.3f}"
                f"  {theirs_ms / (seconds * 1e3):5.0f}  {difference:.1e}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small models")
    parser.add_argument("--repeat", type=int, default=3, help="runs of skshapley")
    parser.add_argument("--budget", type=float, default=5.0, help="seconds of shapiq")
    args = parser.parse_args()
    import shapiq
    import xgboost

    print(f"skshapley {skshapley_version()}")
    print(f"shapiq {version('shapiq')} | xgboost {xgboost.__version__} | {machine()}")
    run_trees(args, shapiq)
    run_kernels(args, shapiq)


if __name__ == "__main__":
    main()
