"""Categories as people pass them: strings, pandas categories, object arrays.

HistGradientBoosting reads categorical features through its own
OrdinalEncoder, by value: the explainer must reproduce ``predict`` on rows
with known, unknown (any type) and missing categories, from DataFrames and
NumPy object arrays, whichever way the categorical features were named.
The Shapley values are checked against the brute-force path-dependent
game on the codes scikit-learn's own encoder gives (an oracle independent
of the explainer's recoding), and XGBoost's and LightGBM's models fitted on
pandas categories of strings against their own ``pred_contrib``.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from naive import path_dependent_shapley
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

from skshapley import TreeExplainer
from skshapley.cli import main
from skshapley.trees._categories import lookup_codes

# The table adds the same leaf values in the same order as scikit-learn; 1e-12
# relative to the output scale leaves room for summation order only, never
# for a leaf reached by a wrong route.
RTOL = 1e-12

SEX = np.array(["f", "m", "x"], dtype=object)
COLOUR = np.array(["red", "green", "blue", "black", "white"], dtype=object)
# Values no training row has: other strings, numbers, a string that looks
# like a known one, and objects of other types.
UNKNOWN = ["q", "F", " m", "", 1, 0, 2.5, True, ("m",)]
MISSING = [None, np.nan, pd.NA]


def training_frame(n=400, seed=0):
    """Two string categories (one with missing values) and two numbers."""
    rng = np.random.default_rng(seed)
    sex = SEX[rng.integers(0, 3, n)]
    colour = COLOUR[rng.integers(0, 5, n)].copy()
    colour[rng.random(n) < 0.1] = None
    x = rng.normal(size=n)
    frame = pd.DataFrame(
        {"x": x, "sex": sex, "z": rng.normal(size=n), "colour": colour}
    ).astype({"sex": object, "colour": object})
    y = x + 2.0 * (sex == "m") - (colour == "blue") + (colour == None)  # noqa: E711
    return frame, y


def fitted(kind, categorical_features):
    frame, y = training_frame()
    X = frame
    if categorical_features == "from_dtype":
        X = frame.astype({"sex": "category", "colour": "category"})
    elif categorical_features == "mask":
        categorical_features = [False, True, False, True]
        X = frame.to_numpy(dtype=object)
    elif categorical_features == "indices":
        categorical_features = [1, 3]
        X = frame.to_numpy(dtype=object)
    params = {
        "max_iter": 10,
        "max_leaf_nodes": 8,
        "random_state": 0,
        "categorical_features": categorical_features,
    }
    if kind == "regressor":
        return HistGradientBoostingRegressor(**params).fit(X, y), X
    if kind == "binary":
        return HistGradientBoostingClassifier(**params).fit(X, y > 0.5), X
    labels = np.digitize(y, [-0.5, 0.5, 1.5])
    return HistGradientBoostingClassifier(**params).fit(X, labels), X


def explained_rows(X):
    """Training rows, then rows with each unknown and missing category."""
    head = X.iloc[:12] if isinstance(X, pd.DataFrame) else X[:12]
    rows = [X]
    for value in UNKNOWN + MISSING:
        for column in (1, 3):
            other = head.copy()
            if isinstance(other, pd.DataFrame):
                name = other.columns[column]
                if isinstance(other[name].dtype, pd.CategoricalDtype):
                    other[name] = other[name].astype(object)
                other[name] = pd.Series([value] * len(other), dtype=object).values
            else:
                other[:, column] = [value] * len(other)
            rows.append(other)
    if isinstance(X, pd.DataFrame):
        return pd.concat(rows, ignore_index=True)
    return np.vstack(rows)


def sklearn_codes(model, X):
    """The rows as scikit-learn's own preprocessor codes them, columns in order."""
    preprocessor = model._preprocessor
    transformed = preprocessor.transform(X)
    codes = np.empty_like(transformed)
    for name, _, columns in preprocessor.transformers_:
        original = np.arange(transformed.shape[1])[columns]
        codes[:, original] = transformed[:, preprocessor.output_indices_[name]]
    return codes


@pytest.mark.parametrize("kind", ["regressor", "binary", "multiclass"])
@pytest.mark.parametrize(
    "categorical_features", ["from_dtype", ["sex", "colour"], "mask", "indices"]
)
def test_hist_gradient_boosting_reproduces_predict(kind, categorical_features):
    model, X = fitted(kind, categorical_features)
    rows = explained_rows(X)
    explainer = TreeExplainer(model).fit()
    expected = model._raw_predict(rows)
    raw = np.reshape(explainer.raw_predict(rows), expected.shape)
    np.testing.assert_allclose(
        raw, expected, rtol=0, atol=RTOL * np.abs(expected).max()
    )
    # Efficiency: the values sum to the model's own raw output.
    phi = explainer.explain(rows).to_numpy().reshape(len(rows), expected.shape[1], -1)
    total = phi.sum(axis=2) + np.atleast_1d(explainer.expected_value_)
    np.testing.assert_allclose(
        total, expected, rtol=0, atol=RTOL * np.abs(expected).max()
    )


@pytest.mark.parametrize("categorical_features", ["from_dtype", "mask"])
def test_hist_gradient_boosting_values_equal_brute_force(categorical_features):
    # The oracle routes scikit-learn's own codes through the recursive
    # definition of the path-dependent game, enumerating coalitions.
    model, X = fitted("regressor", categorical_features)
    rows = explained_rows(X)
    picked = np.r_[0:3, len(X) : len(rows) : 7]
    rows = rows.iloc[picked] if isinstance(rows, pd.DataFrame) else rows[picked]
    explainer = TreeExplainer(model).fit()
    phi = explainer.explain(rows).to_numpy()
    for values, codes in zip(phi, sklearn_codes(model, rows), strict=True):
        expected = path_dependent_shapley(explainer.ensemble_, codes)[:, 0]
        # Both sum the same few products of cover ratios and leaf values in
        # other orders.
        np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)


def test_hist_gradient_boosting_numbers_as_categories():
    # Categories that are not the integers 0..255 (negative, fractional,
    # large) are looked up by value, as the model's encoder does.
    rng = np.random.default_rng(1)
    levels = np.array([-3.0, 0.5, 7.0, 1e6])
    values = levels[rng.integers(0, 4, 300)]
    X = np.column_stack([rng.normal(size=300), values])
    y = X[:, 0] + (values == 0.5) - 2 * (values == 1e6)
    model = HistGradientBoostingRegressor(
        max_iter=5, categorical_features=[1], random_state=0
    ).fit(X, y)
    rows = np.vstack([X, [[0.1, 0.0], [0.1, 0.5000001], [0.1, np.nan], [0.1, 7]]])
    explainer = TreeExplainer(model).fit()
    np.testing.assert_allclose(
        explainer.raw_predict(rows), model._raw_predict(rows)[:, 0], rtol=0, atol=1e-12
    )


def test_hist_gradient_boosting_string_dtype_columns():
    # pandas' own string dtype (the default for text in pandas 3), with pd.NA.
    frame, y = training_frame()
    model = HistGradientBoostingRegressor(
        max_iter=5, categorical_features=["sex", "colour"], random_state=0
    ).fit(frame, y)
    rows = frame.iloc[:30].astype({"sex": "string", "colour": "string"})
    rows.loc[rows.index[:3], "sex"] = "unseen"
    rows.loc[rows.index[3:6], "colour"] = pd.NA
    explainer = TreeExplainer(model).fit()
    # scikit-learn's encoder reads None, not pd.NA, as missing.
    as_objects = rows.astype(object).where(rows.notna(), None)
    np.testing.assert_allclose(
        explainer.raw_predict(rows),
        model._raw_predict(as_objects)[:, 0],
        rtol=0,
        atol=1e-12,
    )


def test_hist_gradient_boosting_text_in_a_numeric_column_is_refused():
    model, X = fitted("regressor", "mask")
    rows = X[:3].copy()
    rows[1, 2] = "abc"
    with pytest.raises(ValueError, match=r"X must hold real numbers.*'abc'"):
        TreeExplainer(model).fit().explain(rows)


def test_lookup_codes():
    # Positions by equality; unknown and missing values are NaN, or refused.
    levels = ("a", "b", 3)
    values = np.array(["b", "a", 3.0, "c", None, np.nan, 4], dtype=object)
    expected = [1, 0, 2, np.nan, np.nan, np.nan, np.nan]
    np.testing.assert_array_equal(
        lookup_codes(values, levels, "Column 'c' of X", "missing"), expected
    )
    category = pd.Series(values).astype("category")
    np.testing.assert_array_equal(
        lookup_codes(category, levels, "Column 'c' of X", "missing"), expected
    )
    with pytest.raises(ValueError, match=r"Column 'c' of X has categories .*'c', 4"):
        lookup_codes(values, levels, "Column 'c' of X", "error")
    with pytest.raises(ValueError, match="repeat a value"):
        lookup_codes(values, ("a", "a"), "Column 'c' of X", "missing")


# ---- XGBoost and LightGBM fitted on pandas categories of strings -----------


def string_category_frame():
    frame, y = training_frame()
    return frame.astype({"sex": "category", "colour": "category"}), y


def rows_with_unknown_and_missing(frame, unknown: bool):
    rows = frame.iloc[:40].copy()
    for name in ("sex", "colour"):
        rows[name] = rows[name].cat.add_categories(["unseen"])
        rows.loc[rows.index[:5], name] = None
        if unknown:
            rows.loc[rows.index[5:10], name] = "unseen"
    # Another category order than the training frame's.
    rows["sex"] = rows["sex"].cat.reorder_categories(rows["sex"].cat.categories[::-1])
    return rows


def test_lightgbm_string_categories():
    lgb = pytest.importorskip("lightgbm")
    frame, y = string_category_frame()
    model = lgb.LGBMRegressor(
        n_estimators=10, num_leaves=8, min_child_samples=5, verbose=-1
    ).fit(frame, y)
    rows = rows_with_unknown_and_missing(frame, unknown=True)
    explainer = TreeExplainer(model).fit()
    phi = explainer.explain(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        contribs = model.predict(rows, pred_contrib=True)
        predicted = model.predict(rows, raw_score=True)
    # LightGBM accumulates its outputs in float64, as we do.
    np.testing.assert_allclose(explainer.raw_predict(rows), predicted, atol=1e-10)
    np.testing.assert_allclose(phi.to_numpy(), contribs[:, :-1], atol=1e-10)


def test_xgboost_string_categories():
    xgb = pytest.importorskip("xgboost")
    frame, y = string_category_frame()
    model = xgb.XGBRegressor(
        n_estimators=10, max_depth=3, enable_categorical=True, max_cat_to_onehot=1
    ).fit(frame, y)
    rows = rows_with_unknown_and_missing(frame, unknown=False)
    explainer = TreeExplainer(model).fit()
    phi = explainer.explain(rows)
    booster = model.get_booster()
    # XGBoost >= 3.3 refuses a frame whose dtype lists a category training
    # did not see, even one no row holds; skshapley looks up the values, so
    # the same rows without that unused category are XGBoost's oracle.
    used = rows.apply(
        lambda column: (
            column.cat.remove_unused_categories()
            if isinstance(column.dtype, pd.CategoricalDtype)
            else column
        )
    )
    matrix = xgb.DMatrix(used, enable_categorical=True)
    contribs = booster.predict(matrix, pred_contribs=True)
    predicted = booster.predict(matrix, output_margin=True)
    # XGBoost sums in float32: about 1e-7 relative to the output's scale.
    scale = np.abs(predicted).max()
    np.testing.assert_allclose(
        explainer.raw_predict(rows), predicted, rtol=0, atol=1e-6 * scale
    )
    np.testing.assert_allclose(phi.to_numpy(), contribs[:, :-1], atol=1e-6 * scale)
    # XGBoost has no rule for categories it did not see: refused, named.
    unknown = rows_with_unknown_and_missing(frame, unknown=True)
    with pytest.raises(ValueError, match=r"'sex'.*did not see in training.*unseen"):
        explainer.explain(unknown)


def test_command_explains_a_skops_model_with_string_categories(tmp_path, capfd):
    # The command reads text columns from CSV as strings: a skops file of a
    # HistGradientBoosting model with string categories is explained from
    # them, unknown categories included.
    sio = pytest.importorskip("skops.io")
    model, X = fitted("regressor", ["sex", "colour"])
    sio.dump(model, tmp_path / "model.skops")
    rows = X.iloc[:10].copy()
    rows.loc[rows.index[0], "sex"] = "unseen"
    rows.to_csv(tmp_path / "rows.csv", index=False)
    out = tmp_path / "values.csv"
    status = main(
        ["explain", "--model", str(tmp_path / "model.skops"), "--data",
         str(tmp_path / "rows.csv"), "--out", str(out), "--quiet"]
    )  # fmt: skip
    assert status == 0, capfd.readouterr().err
    written = pd.read_csv(out, index_col=0)
    total = written.drop(columns="base_value").sum(axis=1) + written["base_value"]
    np.testing.assert_allclose(total, model.predict(rows), rtol=0, atol=1e-12)
