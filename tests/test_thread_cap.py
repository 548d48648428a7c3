"""Little work runs on fewer threads: a team is started only for work worth it.

On busy cores a thread may wait a whole time slice to be scheduled, and the
call waits for it (a row of a small model took 15 ms at two threads against
0.08 ms at one, with both cores busy): each thread gets at least
``MIN_THREAD_WORK_NS`` of estimated work. The values never depend on it.
"""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.kernel_ridge import KernelRidge

from skshapley import ProductKernelExplainer, TreeExplainer
from skshapley._runtime import threads
from skshapley._runtime.threads import threads_for
from skshapley.trees import _interventional

pytestmark = pytest.mark.real_thread_cap


@pytest.mark.parametrize(
    ("n_threads", "n_rows", "cost", "expected"),
    [
        (2, 1, 10_000.0, 1),  # 10 µs: one thread
        (2, 199, 10_000.0, 1),  # 1.99 ms: not two threads' worth
        (2, 200, 10_000.0, 2),  # 2 ms: a millisecond each
        (8, 300, 10_000.0, 3),
        (2, 10**6, 10_000.0, 2),  # never more than asked for
        (4, 0, 10_000.0, 1),
        (4, 1, None, 4),  # unknown cost: as asked
    ],
)
def test_threads_for(n_threads, n_rows, cost, expected):
    assert threads.MIN_THREAD_WORK_NS == 1_000_000
    assert threads_for(n_threads, n_rows, cost) == expected


def _threads_used(explainer, rows, monkeypatch):
    """The threads ``explain(rows)`` hands the value function, and the values."""
    used = []
    explain_rows = explainer._explain_rows

    def recorded(X, values, n_threads):
        used.append(n_threads)
        return explain_rows(X, values, n_threads)

    monkeypatch.setattr(explainer, "_explain_rows", recorded)
    return used, explainer.explain(rows)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 6))
    return X, X[:, 0] + X[:, 1] * X[:, 2]


@pytest.mark.parametrize(
    "make",
    [
        lambda X, y: TreeExplainer(
            GradientBoostingRegressor(n_estimators=20, max_depth=3).fit(X, y),
            n_jobs=2,
        ).fit(),
        lambda X, y: TreeExplainer(
            RandomForestRegressor(n_estimators=5, max_depth=6).fit(X, y),
            feature_perturbation="interventional",
            n_jobs=2,
        ).fit(X[:100]),
        lambda X, y: ProductKernelExplainer(
            KernelRidge(kernel="rbf").fit(X[:50], y[:50]), n_jobs=2
        ).fit(),
    ],
    ids=["path-dependent", "interventional", "kernel"],
)
def test_one_row_runs_on_one_thread_and_many_on_two(make, data, monkeypatch):
    X, y = data
    explainer = make(X, y)
    one, phi_one = _threads_used(explainer, X[:1], monkeypatch)
    assert explainer._row_cost_ns() < threads.MIN_THREAD_WORK_NS
    assert one == [1]
    # Enough rows for two threads' worth: both threads, the same values.
    n_rows = int(2 * threads.MIN_THREAD_WORK_NS // explainer._row_cost_ns()) + 1
    rows = np.resize(X, (n_rows, X.shape[1]))  # the data's rows, again if need be
    many, phi_many = _threads_used(explainer, rows, monkeypatch)
    assert many == [2]
    np.testing.assert_array_equal(phi_many.to_numpy()[:1], phi_one.to_numpy())


def test_interventional_builds_start_threads_only_for_work_worth_them(monkeypatch):
    # The background's counts at fit: one thread per millisecond of
    # estimated work (nodes times background rows), whatever n_jobs.
    threads_asked = []
    scratch = _interventional.Background._build_scratch

    def recorded(self, n_threads):
        threads_asked.append(n_threads)
        return scratch(self, n_threads)

    monkeypatch.setattr(_interventional.Background, "_build_scratch", recorded)
    X = np.random.default_rng(0).normal(size=(400, 5))
    model = GradientBoostingRegressor(n_estimators=15, max_depth=3, random_state=0)
    model.fit(X, X[:, 0] * X[:, 1])
    explainer = TreeExplainer(model, feature_perturbation="interventional", n_jobs=2)
    explainer.fit(X[:20])
    assert threads_asked == [1]
    threads_asked.clear()
    explainer.fit(np.repeat(X, 100, axis=0))  # 40,000 rows x 225 nodes: 4.5 ms
    assert threads_asked == [2]
