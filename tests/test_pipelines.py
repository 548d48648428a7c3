"""Pipelines and searches in every explainer, and per-input groups.

The oracles are independent of the explainers' pipeline code: scikit-learn's
own ``transform`` feeds the final model, whose games are enumerated by
``tests/naive.py`` (the path-dependent recursive definition for trees, the
kernel expansion with scikit-learn's kernel functions for kernel models),
with players the input columns as written out by hand here.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from naive import kernel_value_table, path_dependent_shapley, shapley_of_tables
from sklearn.compose import make_column_transformer
from sklearn.datasets import load_diabetes
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVR

from skshapley import ProductKernelExplainer, TreeExplainer, UnsupportedModelError

# The raw input columns, in X's order, and the preprocessed features each
# one becomes (written out by hand from the ColumnTransformer below); s1 is
# dropped by it.
INPUTS = {
    "age": ["standardscaler__age"],
    "sex": ["onehotencoder__sex_f", "onehotencoder__sex_m"],
    "bmi": ["standardscaler__bmi"],
    "bp": ["simpleimputer__bp", "simpleimputer__missingindicator_bp"],
    "s1": [],
}


@pytest.fixture(scope="module")
def data():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X = X[list(INPUTS)].iloc[:150].copy()
    X["sex"] = np.where(X["sex"] > 0, "m", "f")
    X.loc[X.index[::7], "bp"] = np.nan
    return X, y.iloc[:150]


def preprocessing(sparse_output=True):
    return make_column_transformer(
        (OneHotEncoder(sparse_output=sparse_output), ["sex"]),
        (StandardScaler(), ["age", "bmi"]),
        (SimpleImputer(add_indicator=True), ["bp"]),
    )


def xgboost_model():
    xgb = pytest.importorskip("xgboost")
    return xgb.XGBRegressor(n_estimators=8, max_depth=3)


def lightgbm_model():
    lgb = pytest.importorskip("lightgbm")
    return lgb.LGBMRegressor(n_estimators=8, num_leaves=6, verbose=-1)


TREE_MODELS = {
    "random_forest": lambda: RandomForestRegressor(
        n_estimators=5, max_depth=4, random_state=0
    ),
    "gradient_boosting": lambda: GradientBoostingRegressor(
        n_estimators=8, max_depth=3, random_state=0
    ),
    "hist_gradient_boosting": lambda: HistGradientBoostingRegressor(
        max_iter=8, max_leaf_nodes=6
    ),
    "xgboost": xgboost_model,
    "lightgbm": lightgbm_model,
}

KERNEL_MODELS = {
    "kernel_ridge": lambda: KernelRidge(kernel="rbf", gamma=0.2, alpha=0.1),
    "svr": lambda: SVR(C=50.0, gamma=0.3),
}


def rows(X):
    """Rows with both sexes, a missing bp, shuffled index labels."""
    return X.iloc[[0, 3, 7, 12]].set_axis([40, 10, 30, 20])


def hand_groups(names):
    """The positions of each input's features among ``names``."""
    position = {name: j for j, name in enumerate(names)}
    return [[position[member] for member in members] for members in INPUTS.values()]


@pytest.fixture(scope="module", params=list(TREE_MODELS))
def tree_pipeline(request, data):
    X, y = data
    return make_pipeline(preprocessing(), TREE_MODELS[request.param]()).fit(X, y)


@pytest.fixture(scope="module", params=list(KERNEL_MODELS))
def kernel_pipeline(request, data):
    X, y = data
    return make_pipeline(preprocessing(), KERNEL_MODELS[request.param]()).fit(X, y)


def test_tree_pipeline_explains_its_final_model(tree_pipeline, data):
    X, _ = data
    explainer = TreeExplainer(tree_pipeline).fit()
    phi = explainer.explain(rows(X))
    transformed = tree_pipeline[:-1].transform(rows(X))
    alone = TreeExplainer(tree_pipeline[-1]).fit().explain(transformed)

    assert list(phi.columns) == list(tree_pipeline[:-1].get_feature_names_out())
    assert phi.index.equals(rows(X).index)
    np.testing.assert_array_equal(phi.to_numpy(), alone.to_numpy())
    total = phi.sum(axis=1) + explainer.expected_value_
    # Efficiency: the same sums in another order (about 1e-13 of y's scale).
    np.testing.assert_allclose(total, explainer.raw_predict(rows(X)), rtol=1e-10)
    assert explainer.n_features_in_ == X.shape[1]
    assert list(explainer.feature_names_in_) == list(X.columns)


def test_tree_pipeline_raw_output_is_the_pipelines(tree_pipeline, data):
    X, _ = data
    raw = TreeExplainer(tree_pipeline).fit().raw_predict(rows(X))
    # XGBoost and LightGBM add leaves in float32 (relative 1e-7); scikit-learn
    # in float64, in another order than the parsed trees.
    library = type(tree_pipeline[-1]).__module__.partition(".")[0]
    rtol = 1e-10 if library == "sklearn" else 1e-6
    np.testing.assert_allclose(raw, tree_pipeline.predict(rows(X)), rtol=rtol)


def test_tree_input_groups_are_the_game_of_input_columns(tree_pipeline, data):
    X, _ = data
    explainer = TreeExplainer(tree_pipeline, groups="input").fit()
    phi = explainer.explain(rows(X))
    assert list(phi.columns) == list(INPUTS)

    names = tree_pipeline[:-1].get_feature_names_out()
    transformed = tree_pipeline[:-1].transform(rows(X))
    ensemble = TreeExplainer(tree_pipeline[-1]).fit().ensemble_
    for i, x in enumerate(np.asarray(transformed, dtype=float)):
        expected = path_dependent_shapley(ensemble, x, hand_groups(names))[:, 0]
        # Quadrature against enumeration: rounding of values of size ~y (1e2).
        np.testing.assert_allclose(phi.iloc[i], expected, rtol=0, atol=1e-12 * 300)
    assert (phi["s1"] == 0).all()  # dropped by the pipeline: a dummy
    total = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(total, explainer.raw_predict(rows(X)), rtol=1e-10)


def test_kernel_input_groups_are_the_game_of_input_columns(kernel_pipeline, data):
    X, _ = data
    explainer = ProductKernelExplainer(kernel_pipeline, groups="input").fit()
    phi = explainer.explain(rows(X))
    assert list(phi.columns) == list(INPUTS)

    names = kernel_pipeline[:-1].get_feature_names_out()
    transformed = kernel_pipeline[:-1].transform(rows(X))
    for i, x in enumerate(transformed):
        tables = kernel_value_table(kernel_pipeline[-1], x)
        expected = shapley_of_tables(tables, hand_groups(names))[:, 0]
        # Values of size ~y (1e2), summed over ~100 reference points.
        np.testing.assert_allclose(phi.iloc[i], expected, rtol=0, atol=1e-12 * 300)
    assert (phi["s1"] == 0).all()
    total = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(total, kernel_pipeline.predict(rows(X)), rtol=1e-10)


def test_columns_in_any_order_and_input_left_alone(tree_pipeline, data):
    X, _ = data
    explainer = TreeExplainer(tree_pipeline, groups="input").fit()
    shuffled = rows(X)[["bp", "s1", "sex", "age", "bmi"]]
    before = shuffled.copy()
    phi = explainer.explain(shuffled)
    pd.testing.assert_frame_equal(phi, explainer.explain(rows(X)))
    pd.testing.assert_frame_equal(shuffled, before)


def test_no_rows_through_a_pipeline(tree_pipeline, data):
    # The preprocessing may refuse no rows (StandardScaler does): the
    # columns are still checked, and the result is empty, as the lazy path
    # needs for its checks.
    X, _ = data
    explainer = TreeExplainer(tree_pipeline).fit()
    none = rows(X).iloc[:0]
    expected = explainer.explain(rows(X))
    phi = explainer.explain(none)
    assert phi.shape == (0, expected.shape[1])
    assert list(phi.columns) == list(expected.columns)
    assert explainer.raw_predict(none).shape[0] == 0
    with pytest.raises(ValueError, match=r"missing: \['bmi'\]"):
        explainer.explain(none.drop(columns="bmi"))


def test_missing_input_column_is_named(data):
    X, y = data
    model = make_pipeline(preprocessing(), RandomForestRegressor(n_estimators=2))
    explainer = TreeExplainer(model.fit(X, y)).fit()
    with pytest.raises(ValueError, match=r"missing: \['bmi'\]") as info:
        explainer.explain(rows(X).drop(columns="bmi"))
    assert "\n" not in str(info.value)


def test_numpy_pipeline_by_position():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] * X[:, 1] + X[:, 2]
    pipeline = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=3))
    explainer = TreeExplainer(pipeline.fit(X, y)).fit()
    assert explainer.columns_by_name_ is False
    phi = explainer.explain(X[:5])
    assert list(phi.columns) == ["x0", "x1", "x2"]
    np.testing.assert_allclose(
        phi.sum(axis=1) + explainer.expected_value_, pipeline.predict(X[:5]), rtol=1e-10
    )
    frame = pd.DataFrame(X[:5], columns=["a", "b", "c"])  # by position: any names
    np.testing.assert_array_equal(explainer.explain(frame).to_numpy(), phi.to_numpy())
    with pytest.raises(ValueError, match=r"shape \(n_samples, 3\)"):
        explainer.explain(frame.iloc[:, :2])


def test_rows_by_position_for_a_pipeline_fitted_on_names(data):
    # An array (or a list with strings) is read by position, as documented:
    # the same values as the DataFrame, and no scikit-learn feature-name
    # warning about it.
    X, y = data
    model = make_pipeline(preprocessing(), RandomForestRegressor(n_estimators=2))
    explainer = TreeExplainer(model.fit(X, y), groups="input").fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        by_position = explainer.explain(rows(X).to_numpy())
        as_lists = explainer.explain(rows(X).to_numpy().tolist())
    expected = explainer.explain(rows(X)).to_numpy()
    np.testing.assert_array_equal(by_position.to_numpy(), expected)
    np.testing.assert_array_equal(as_lists.to_numpy(), expected)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 5\)"):
        explainer.explain(rows(X).to_numpy()[:, :4])


def test_pandas_output_of_the_preprocessing(data):
    # set_output(transform="pandas"): the final model reads a DataFrame by name.
    X, y = data
    pipeline = make_pipeline(
        preprocessing(sparse_output=False), RandomForestRegressor(n_estimators=3)
    )
    pipeline.set_output(transform="pandas").fit(X, y)
    explainer = TreeExplainer(pipeline).fit()
    phi = explainer.explain(rows(X))
    transformed = pipeline[:-1].transform(rows(X))
    alone = TreeExplainer(pipeline[-1]).fit().explain(transformed)
    pd.testing.assert_frame_equal(phi, alone)


def test_searches_and_nested_pipelines_explain_their_model(data):
    X, y = data
    search = GridSearchCV(
        make_pipeline(preprocessing(), RandomForestRegressor(random_state=0)),
        {"randomforestregressor__n_estimators": [2, 3]},
        cv=2,
    ).fit(X, y)
    best = search.best_estimator_
    expected = TreeExplainer(best).fit().explain(rows(X))
    pd.testing.assert_frame_equal(
        TreeExplainer(search).fit().explain(rows(X)), expected
    )

    nested = Pipeline(
        [
            ("pre", best[:-1]),
            ("skip", "passthrough"),
            ("inner", make_pipeline(best[-1])),
        ]
    )
    pd.testing.assert_frame_equal(
        TreeExplainer(nested).fit().explain(rows(X)), expected
    )


def test_input_groups_without_a_pipeline_are_the_features(data):
    X, y = data
    numeric = X.drop(columns="sex").fillna(0.0)
    model = RandomForestRegressor(n_estimators=2, random_state=0).fit(numeric, y)
    pd.testing.assert_frame_equal(
        TreeExplainer(model, groups="input").fit().explain(numeric.iloc[:4]),
        TreeExplainer(model).fit().explain(numeric.iloc[:4]),
    )


def test_preprocessing_errors_say_where(data):
    X, y = data
    numeric = X.drop(columns="sex")
    model = make_pipeline(StandardScaler(), SVR()).fit(numeric.fillna(0.0), y)
    explainer = ProductKernelExplainer(model).fit()
    with pytest.raises(
        ValueError, match=r"After the pipeline's preprocessing: X contains NaN.*'bp'"
    ):
        explainer.explain(numeric.iloc[:8])


def test_groups_string_other_than_input(data):
    X, y = data
    model = make_pipeline(preprocessing(), RandomForestRegressor(n_estimators=2))
    with pytest.raises(ValueError, match=r'"input" or None; got \'inputs\''):
        TreeExplainer(model.fit(X, y), groups="inputs").fit()


def test_features_traced_to_no_input_are_refused(data, monkeypatch):
    # The contract input_groups keeps: every preprocessed feature has an input.
    X, y = data
    model = make_pipeline(preprocessing(), RandomForestRegressor(n_estimators=2))
    partial = dict(INPUTS, bp=["simpleimputer__bp"])
    monkeypatch.setattr(
        "skshapley._contract.features.input_groups", lambda *args: partial
    )
    with pytest.raises(ValueError, match=r"\['simpleimputer__missingindicator_bp'\]"):
        TreeExplainer(model.fit(X, y), groups="input").fit()


def test_unsupported_final_step_is_named(data):
    X, y = data
    model = make_pipeline(preprocessing(), SVR(kernel="linear")).fit(X, y)
    with pytest.raises(UnsupportedModelError, match=r"SVR.*in the Pipeline\.$"):
        TreeExplainer(model).fit()
