"""The explainer protocol: what reports, the command and scripts rely on.

``describe()``, ``base_value_meaning``, ``columns_by_name_``, the quadrature
attributes, ``explain(X, progress=...)`` and ``UnsupportedModelError``, the
same for both explainer families.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_regression
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skshapley import ProductKernelExplainer, TreeExplainer, UnsupportedModelError
from skshapley._contract.results import QuadratureUse

EXPLAINERS = [TreeExplainer, ProductKernelExplainer]


def _data(n_samples=300, n_features=6):
    X, y = make_regression(n_samples, n_features, random_state=0)
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(n_features)]), y


def _fitted(cls, X, y):
    if cls is TreeExplainer:
        model = GradientBoostingRegressor(n_estimators=20, random_state=0)
    else:
        # Many features relative to the exact rule's cost: "auto" stays exact.
        model = KernelRidge(kernel="rbf", gamma=0.1)
    return cls(model.fit(X, y)).fit()


@pytest.mark.parametrize("cls", EXPLAINERS)
def test_progress_sees_every_row_and_changes_no_value(cls):
    X, y = _data()
    explainer = _fitted(cls, X, y)
    calls = []
    chunked = explainer.explain(
        X, progress=lambda done, total: calls.append((done, total))
    )
    whole = explainer.explain(X)
    # Rows are explained independently: chunks give the very same numbers.
    assert np.array_equal(chunked.to_numpy(), whole.to_numpy())
    assert chunked.index.equals(whole.index)
    assert chunked.columns.equals(whole.columns)
    done = [call[0] for call in calls]
    assert len(calls) >= 2  # 300 rows: a first chunk of 64, then more
    assert done == sorted(set(done))
    assert done[-1] == len(X)
    assert all(total == len(X) for _, total in calls)


@pytest.mark.parametrize("cls", EXPLAINERS)
def test_progress_on_no_rows_is_never_called(cls):
    X, y = _data()
    explainer = _fitted(cls, X, y)
    calls = []
    phi = explainer.explain(X.iloc[:0], progress=lambda *call: calls.append(call))
    assert phi.shape == (0, X.shape[1])
    assert calls == []


@pytest.mark.parametrize("cls", EXPLAINERS)
def test_interactions_of_no_rows_are_an_empty_frame(cls):
    # As explain does for no rows: the columns are checked, the frame is
    # empty, progress is never called and the quadrature is recorded.
    X, y = _data()
    explainer = _fitted(cls, X, y)
    explainer.explain(X.iloc[:3])
    empty = explainer.explain(X.iloc[:0])
    calls = []
    frame = explainer.explain_interactions(
        X.iloc[:0], progress=lambda *call: calls.append(call)
    )
    assert frame.shape == (0, X.shape[1])
    assert list(frame.index.names) == ["row", "feature"]
    assert calls == []
    assert frame.attrs == empty.attrs
    with pytest.raises(ValueError, match="missing"):
        explainer.explain_interactions(X.iloc[:0, 1:])


def test_kernel_quadrature_attributes_are_the_last_explanations():
    X, y = _data(n_features=40)
    model = KernelRidge(kernel="rbf", gamma=1e-3).fit(X, y)
    explainer = ProductKernelExplainer(model, n_quadrature_points=3).fit()
    phi = explainer.explain(X.iloc[:5])
    assert explainer.n_quadrature_points_ == 3
    assert explainer.quadrature_error_bound_ > 0.0  # 3 points < exact 20
    assert phi.attrs == {
        "n_quadrature_points": explainer.n_quadrature_points_,
        "quadrature_error_bound": explainer.quadrature_error_bound_,
    }
    exact = ProductKernelExplainer(model).fit()
    exact.explain(X.iloc[:5])
    assert exact.n_quadrature_points_ == 20  # ceil(40 / 2)
    assert exact.quadrature_error_bound_ == 0.0


def test_kernel_quadrature_attributes_merge_over_chunks():
    X, y = _data(n_features=40)
    model = KernelRidge(kernel="rbf", gamma=1e-3).fit(X, y)
    explainer = ProductKernelExplainer(model, n_quadrature_points=3).fit()
    explainer.explain(X)
    whole = (explainer.n_quadrature_points_, explainer.quadrature_error_bound_)
    explainer.explain(X, progress=lambda done, total: None)
    chunked = (explainer.n_quadrature_points_, explainer.quadrature_error_bound_)
    # The bound is the largest over the rows, whichever chunk holds them.
    assert chunked == whole


def test_quadrature_use_merges_by_the_larger_of_each():
    merged = QuadratureUse(3, 0.5).merged(QuadratureUse(5, 0.25))
    assert merged == QuadratureUse(5, 0.5)
    assert QuadratureUse(3, None).merged(QuadratureUse(5, 0.25)).error_bound is None


@pytest.mark.parametrize(("n_points", "bound"), [("auto", 0.0), (2, None), (64, 0.0)])
def test_tree_quadrature_bound_says_whether_every_rule_is_exact(n_points, bound):
    X, y = _data()
    model = GradientBoostingRegressor(n_estimators=5, max_depth=6, random_state=0)
    model.fit(X, y)
    explainer = TreeExplainer(model, n_quadrature_points=n_points).fit()
    # Depth-6 paths on 6 features: the exact rule needs 3 points for some tree.
    assert explainer.n_quadrature_points_.max() >= (3 if n_points == "auto" else 2)
    assert explainer.quadrature_error_bound_ == bound


def test_tree_quadrature_bound_is_zero_at_exactly_the_exact_rule():
    X, y = _data()
    model = GradientBoostingRegressor(n_estimators=5, max_depth=6, random_state=0)
    model.fit(X, y)
    exact = TreeExplainer(model).fit().n_quadrature_points_.max()
    assert TreeExplainer(model, n_quadrature_points=int(exact)).fit()\
        .quadrature_error_bound_ == 0.0  # fmt: skip
    assert TreeExplainer(model, n_quadrature_points=int(exact) - 1).fit()\
        .quadrature_error_bound_ is None  # fmt: skip


@pytest.mark.parametrize("cls", EXPLAINERS)
def test_describe_states_the_facts(cls):
    X, y = _data()
    explainer = _fitted(cls, X, y)
    facts = explainer.describe()
    assert facts["explainer"] == cls.__name__
    assert facts["features"] == str(X.shape[1])
    for key in ("model", "output explained", "value function", "background data",
                "quadrature points"):  # fmt: skip
        assert isinstance(facts[key], str)
        assert facts[key]


@pytest.mark.parametrize("cls", EXPLAINERS)
def test_describe_refuses_an_unfitted_explainer(cls):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        cls(LinearRegression()).describe()


@pytest.mark.parametrize("cls", EXPLAINERS)
def test_base_value_meaning_is_a_sentence(cls):
    assert isinstance(cls.base_value_meaning, str)
    assert len(cls.base_value_meaning.split()) > 10


@pytest.mark.parametrize("cls", EXPLAINERS)
def test_columns_by_name_says_how_columns_are_matched(cls):
    X, y = _data()
    assert _fitted(cls, X, y).columns_by_name_ is True
    assert _fitted(cls, X.to_numpy(), y).columns_by_name_ is False


@pytest.mark.parametrize("frame", [True, False])
def test_columns_by_name_of_a_pipeline_is_the_pipelines(frame):
    X, y = _data()
    X = X if frame else X.to_numpy()
    model = make_pipeline(StandardScaler(), KernelRidge(kernel="rbf")).fit(X, y)
    assert ProductKernelExplainer(model).fit().columns_by_name_ is frame


@pytest.mark.parametrize("cls", EXPLAINERS)
def test_unsupported_models_raise_the_public_error(cls):
    X, y = _data()
    with pytest.raises(UnsupportedModelError, match="LinearRegression"):
        cls(LinearRegression().fit(X, y)).fit()
    assert issubclass(UnsupportedModelError, TypeError)
