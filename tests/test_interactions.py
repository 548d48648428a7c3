"""explain_interactions' protocol (BaseExplainer): the frame, output=, progress,
the memory budget, the MemoryError and explainers without interactions."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import GradientBoostingClassifier, RandomForestRegressor

import skshapley._base
from skshapley import TreeExplainer
from skshapley._base import BaseExplainer


def iris_explainer():
    iris = load_iris(as_frame=True)
    model = GradientBoostingClassifier(n_estimators=3, random_state=0)
    model.fit(iris.data, iris.target)
    return TreeExplainer(model).fit(), iris.data.iloc[::15]


class NoInteractions(BaseExplainer):
    """A minimal explainer: Shapley values only."""

    _fitted_attribute = "fitted_"

    def __init__(self, model=None):
        self.model = model

    def fit(self):
        self.fitted_ = True
        return self


def test_an_explainer_without_interactions_says_so():
    explainer = NoInteractions().fit()
    assert not explainer.supports_interactions
    with pytest.raises(NotImplementedError, match="NoInteractions"):
        explainer.explain_interactions(np.zeros((2, 3)))


def test_frame_layout_follows_explain():
    explainer, X = iris_explainer()
    X = X.rename_axis("flower")
    frame = explainer.explain_interactions(X)
    phi = explainer.explain(X)
    players = list(explainer.player_names_)
    assert frame.index.names == ["flower", "feature"]
    assert frame.index.tolist() == [(r, p) for r in X.index for p in players]
    pd.testing.assert_index_equal(frame.columns, phi.columns)
    # NumPy rows: a RangeIndex named "row".
    from_array = explainer.explain_interactions(X.to_numpy())
    assert from_array.index.names == ["row", "feature"]
    np.testing.assert_array_equal(from_array.to_numpy(), frame.to_numpy())
    for output in explainer.output_names_:
        one = explainer.explain_interactions(X, output=output)
        pd.testing.assert_frame_equal(one, frame[output].rename_axis(columns=None))
    empty = explainer.explain_interactions(X.iloc[:0])
    assert empty.shape == (0, phi.shape[1])


def test_progress_reports_every_row():
    explainer, X = iris_explainer()
    calls = []
    frame = explainer.explain_interactions(X, progress=lambda *c: calls.append(c))
    assert calls[-1] == (len(X), len(X))
    pd.testing.assert_frame_equal(frame, explainer.explain_interactions(X))


def test_chunks_fit_max_memory(monkeypatch):
    explainer, X = iris_explainer()
    expected = explainer.explain_interactions(X)
    chunks = []
    compute = explainer._interaction_rows

    def spy(rows, out, n_threads):
        chunks.append(len(rows))
        return compute(rows, out, n_threads)

    monkeypatch.setattr(explainer, "_interaction_rows", spy)
    # Per row: 3 outputs' 4 x 4 matrices, and the input; half of max_memory.
    row_bytes = 8 * 3 * 4 * 4 + explainer._row_bytes()
    explainer.set_params(max_memory=2 * 3 * row_bytes)
    pd.testing.assert_frame_equal(explainer.explain_interactions(X), expected)
    assert chunks == [3, 3, 3, 1]
    # Chunks sized by time for a progress callback stay within the budget.
    chunks.clear()
    explainer.explain_interactions(X, progress=lambda done, total: None)
    assert sum(chunks) == len(X)
    assert max(chunks) <= 3
    # Less than one row needs: an error that says how much.
    explainer.set_params(max_memory=2 * row_bytes - 1)
    with pytest.raises(ValueError, match=f"one row needs {2 * row_bytes:,} bytes"):
        explainer.explain_interactions(X)


def test_a_result_too_large_to_allocate_fails_before_any_work(monkeypatch):
    explainer, X = iris_explainer()
    empty = np.empty

    def no_room(shape, *args, **kwargs):
        if np.prod(shape) == len(X) * 4 * 3 * 4:  # the result's shape
            raise MemoryError("Unable to allocate")
        return empty(shape, *args, **kwargs)

    def never(*args):
        raise AssertionError("computed before the result was allocated")

    monkeypatch.setattr(skshapley._base.np, "empty", no_room)
    monkeypatch.setattr(explainer, "_interaction_rows", never)
    with pytest.raises(MemoryError, match=f"{len(X)} rows, 4 players and 3 outputs"):
        explainer.explain_interactions(X)


def test_interactions_of_an_additive_model_are_zero():
    # A forest of stumps is additive: no feature interacts with another, and
    # the diagonal holds the whole Shapley value.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + np.sin(X[:, 1]) + (X[:, 2] > 0)
    model = RandomForestRegressor(n_estimators=5, max_depth=1, random_state=0)
    explainer = TreeExplainer(model.fit(X, y)).fit()
    values = explainer.explain_interactions(X[:10]).to_numpy().reshape(10, 4, 4)
    diagonal = np.einsum("rjj->rj", values)
    np.testing.assert_array_equal(values - np.apply_along_axis(np.diag, 1, diagonal), 0)
    np.testing.assert_allclose(diagonal, explainer.explain(X[:10]), atol=1e-14)
