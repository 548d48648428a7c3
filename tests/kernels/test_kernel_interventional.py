"""ProductKernelExplainer(feature_perturbation="interventional"): values,
interactions and indices against a background, by brute force.

Oracle: ``v(S) = mean_z f(x_S, z_rest)`` from the model's own
``decision_function`` or ``predict`` on every hybrid row, then Shapley values
and interaction matrices by enumeration (tests/naive.py).
"""

import numpy as np
import pandas as pd
import pytest
from naive import (
    interaction_index_by_definition,
    interactions_by_enumeration,
    shapley_by_enumeration,
)
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC

import skshapley
from skshapley import ProductKernelExplainer
from skshapley.games import INDICES


def data(n_features=4, n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    return X, X[:, 0] * X[:, 1] + np.sin(X[:, 2])


def models():
    X, y = data()
    return [
        KernelRidge(kernel="rbf", gamma=0.3).fit(X, y),
        KernelRidge(kernel="laplacian", gamma=0.4).fit(X, y),
        GaussianProcessRegressor(RBF([0.8, 1.0, 1.2, 1.5]), optimizer=None).fit(X, y),
        SVC(kernel="rbf", gamma=0.5, decision_function_shape="ovo").fit(
            X, np.digitize(y, [-0.5, 0.5])
        ),
    ], X


def raw_output(model, X):
    if hasattr(model, "feature_names_in_"):
        X = pd.DataFrame(X, columns=model.feature_names_in_)
    if isinstance(model, SVC):
        return model.decision_function(X).reshape(len(X), -1)
    return model.predict(X).reshape(len(X), -1)


def hybrid_table(model, x, background, players):
    """v(S) of every coalition of ``players`` (lists of features), by bitmask."""
    n_features = len(x)
    table = []
    for mask in range(2 ** len(players)):
        inside = np.zeros(n_features, dtype=bool)
        for p, members in enumerate(players):
            if mask >> p & 1:
                inside[members] = True
        table.append(raw_output(model, np.where(inside, x, background)).mean(axis=0))
    return np.array(table)


def test_values_interactions_and_base_equal_brute_force():
    all_models, X = models()
    # Repeated rows (kept once, weighted by their count) among distinct ones.
    background, rows = X[[0, 1, 1, 2, 3, 3, 3, 4, 5, 0, 6]], X[30:33]
    players = [[j] for j in range(X.shape[1])]
    for model in all_models:
        explainer = ProductKernelExplainer(
            model, feature_perturbation="interventional"
        ).fit(background)
        n_outputs = len(explainer.output_names_)
        phi = explainer.explain(rows).to_numpy().reshape(len(rows), n_outputs, -1)
        inter = explainer.explain_interactions(rows).to_numpy()
        inter = inter.reshape(len(rows), 4, n_outputs, 4).transpose(0, 2, 1, 3)
        base = np.atleast_1d(np.asarray(explainer.expected_value_, dtype=float))
        for r, x in enumerate(rows):
            table = hybrid_table(model, x, background, players)
            scale = np.abs(table).max()
            np.testing.assert_allclose(base, table[0], rtol=0, atol=1e-12 * scale)
            for o in range(n_outputs):
                np.testing.assert_allclose(
                    phi[r, o], shapley_by_enumeration(table[:, o], 4),
                    rtol=0, atol=1e-12 * scale,
                )  # fmt: skip
                np.testing.assert_allclose(
                    inter[r, o], interactions_by_enumeration(table[:, o], 4),
                    rtol=0, atol=1e-12 * scale,
                )  # fmt: skip
        assert explainer.quadrature_error_bound_ == 0.0


def test_indices_equal_their_definitions():
    all_models, X = models()
    background, rows = X[[0, 1, 1, 2, 2, 2, 3, 4, 5]], X[40:42]
    players = [[j] for j in range(4)]
    for model in all_models[:2]:
        explainer = ProductKernelExplainer(
            model, feature_perturbation="interventional"
        ).fit(background)
        for index in INDICES:
            frame = explainer.explain_interactions(rows, index=index, order=3)
            for r, x in enumerate(rows):
                table = hybrid_table(model, x, background, players)[:, 0]
                expected = interaction_index_by_definition(table, 4, index, 3)
                row = frame.iloc[r]
                for label, coalition in zip(row.index, expected, strict=True):
                    assert row[label] == pytest.approx(
                        expected[coalition], abs=2e-11
                    ), (index, coalition)


def test_groups_are_the_players():
    _all_models, X = models()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = KernelRidge(kernel="rbf", gamma=0.3).fit(frame, X[:, 0] * X[:, 2])
    background, rows = frame.iloc[:7], frame.iloc[20:22]
    explainer = ProductKernelExplainer(
        model, feature_perturbation="interventional", groups={"ac": ["a", "c"]}
    ).fit(background)
    assert list(explainer.player_names_) == ["ac", "b", "d"]
    phi = explainer.explain(rows).to_numpy()
    for r, x in enumerate(rows.to_numpy()):
        table = hybrid_table(model, x, background.to_numpy(), [[0, 2], [1], [3]])
        np.testing.assert_allclose(
            phi[r], shapley_by_enumeration(table[:, 0], 3), rtol=0, atol=1e-12
        )


def test_efficiency_with_three_hundred_features():
    X, _ = data(n_features=300, n=40, seed=3)
    y = X[:, :5].sum(axis=1)
    model = KernelRidge(kernel="rbf", gamma=1.0 / 300).fit(X, y)
    explainer = ProductKernelExplainer(model, feature_perturbation="interventional")
    explainer.fit(X[:4])
    rows = X[30:33]
    phi = explainer.explain(rows)
    raw = model.predict(rows)
    np.testing.assert_allclose(
        phi.sum(axis=1) + explainer.expected_value_, raw, rtol=0,
        atol=1e-12 * np.abs(raw).max(),
    )  # fmt: skip


def test_explain_with_a_background_dispatches_to_it():
    all_models, X = models()
    model = all_models[0]
    phi = skshapley.explain(model, X[30:32], background=X[:9])
    explainer = ProductKernelExplainer(model, feature_perturbation="interventional")
    expected = explainer.fit(X[:9]).explain(X[30:32])
    pd.testing.assert_frame_equal(phi, expected)
    with pytest.raises(
        ValueError, match='is for feature_perturbation="interventional"'
    ):
        skshapley.explain(
            model, X[30:32], background=X[:9], feature_perturbation="kernel"
        )


@pytest.mark.parametrize(
    ("params", "background", "message"),
    [
        ({"feature_perturbation": "interventional"}, None, "pass it as fit"),
        ({"feature_perturbation": "shapley"}, None, 'must be "kernel" or'),
    ],
)
def test_bad_settings(params, background, message):
    all_models, _X = models()
    with pytest.raises(ValueError, match=message):
        ProductKernelExplainer(all_models[0], **params).fit(background)


def test_a_background_with_missing_values_is_refused():
    all_models, X = models()
    background = X[:5].copy()
    background[1, 2] = np.nan
    explainer = ProductKernelExplainer(
        all_models[0], feature_perturbation="interventional"
    )
    with pytest.raises(ValueError, match="The background data"):
        explainer.fit(background)
