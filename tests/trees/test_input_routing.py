"""Input casts and missing values that depend on how the model reads X.

LightGBM casts NumPy inputs that are not float32/float64 to float32 (and a
DataFrame to the common type of its columns and float32); XGBoost treats its
``missing=`` value as missing, besides NaN. The oracles are the libraries'
own raw predictions and contributions on the same input.
"""

from functools import cache

import numpy as np
import pandas as pd
import pytest

from skshapley import TreeExplainer

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")

# float32 is exact up to 2**24 and has a spacing of 2 above it: integers
# just above 2**24 round (to even) onto their neighbours.
NEAR = 2**24
# LightGBM sums float64 leaves: equal to rounding (a few ulps).
LIGHTGBM_RTOL = 1e-12
# Its pred_contrib is TreeSHAP in float64: ~1e-15 of the scale measured; the
# tolerance leaves room for other summation orders and still fails at any
# routing difference (a leaf of ~0.1 here).
CONTRIBS_RTOL = 1e-9
# XGBoost returns float32 margins and contributions: a float32 rounding per
# tree of the running sum (20 trees of leaves <= the scale).
XGBOOST_RTOL = 1e-5


@cache
def lightgbm_near_two_to_24():
    """A LightGBM model whose thresholds lie between integers near 2**24."""
    rng = np.random.default_rng(0)
    n = 4000
    x = NEAR + rng.integers(-40, 40, n)
    other = rng.normal(size=n)
    y = np.sin(x * 2.1) + 0.1 * other  # a new value at almost every integer
    X = pd.DataFrame({"count": x, "other": other})
    model = lgb.LGBMRegressor(
        n_estimators=20,
        num_leaves=32,
        min_child_samples=2,
        min_data_in_bin=1,
        learning_rate=0.5,
        verbose=-1,
    )
    return model.fit(X, y)


def integer_rows():
    rng = np.random.default_rng(1)
    x = NEAR + np.arange(-40, 40)
    return x, rng.normal(size=len(x))


def assert_matches_lightgbm(explainer, model, X):
    expected = model.predict(X, raw_score=True)
    np.testing.assert_allclose(explainer.raw_predict(X), expected, rtol=LIGHTGBM_RTOL)
    contributions = model.predict(X, pred_contrib=True)
    phi = explainer.explain(X).to_numpy()
    np.testing.assert_allclose(
        phi,
        contributions[:, :-1],
        rtol=0,
        atol=CONTRIBS_RTOL * np.abs(contributions).max(),
    )


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32, np.float64])
def test_lightgbm_casts_numpy_integers_to_float32(dtype):
    model = lightgbm_near_two_to_24()
    explainer = TreeExplainer(model).fit()
    x, other = integer_rows()
    X = np.c_[x, np.round(other)].astype(dtype) if dtype != np.float64 else None
    if X is None:
        X = np.c_[x, other]
    # The cast matters: routed in float64, many rows reach other leaves.
    as_float64 = model.predict(X.astype(np.float64), raw_score=True)
    changed = as_float64 != model.predict(X, raw_score=True)
    assert changed.sum() >= (10 if dtype != np.float64 else 0)
    assert_matches_lightgbm(explainer, model, X)
    assert_matches_lightgbm(explainer, model, X.tolist())


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_lightgbm_boolean_and_small_integer_arrays():
    model = lightgbm_near_two_to_24()
    explainer = TreeExplainer(model).fit()
    flags = np.array([[True, False], [False, True], [True, True]])
    assert_matches_lightgbm(explainer, model, flags)
    assert_matches_lightgbm(explainer, model, flags.astype(np.int16))


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_lightgbm_casts_dataframes_to_their_common_type():
    model = lightgbm_near_two_to_24()
    explainer = TreeExplainer(model).fit()
    x, other = integer_rows()
    integers = pd.DataFrame({"count": x, "other": np.round(other).astype(int)})
    # np.result_type(int64, float32) is float64: integer frames are not
    # rounded, unlike integer arrays.
    frames = {
        "int64": integers,
        "int32": integers.astype(np.int32),
        "float32": integers.astype(np.float32),
        "mixed": integers.assign(other=other.astype(np.float32)),
        "nullable": integers.astype("Int64"),
    }
    float32_rows = model.predict(integers.to_numpy(), raw_score=True)
    for name, frame in frames.items():
        assert_matches_lightgbm(explainer, model, frame)
        routed_as_float32 = name == "float32"
        assert (
            model.predict(frame, raw_score=True) == float32_rows
        ).all() == routed_as_float32, name


def test_lightgbm_refuses_what_it_cannot_cast():
    explainer = TreeExplainer(lightgbm_near_two_to_24()).fit()
    for X, match in [
        ([[1, 2], [3]], "2-D array-like of numbers"),
        (np.array([[1 + 1j, 2]]), "complex"),
        (pd.DataFrame({"count": ["1"], "other": [2]}), "'count'.*'1' \\(str\\)"),
    ]:
        with pytest.raises(ValueError, match=match):
            explainer.explain(X)


@cache
def xgboost_with_missing(missing):
    """An XGBoost model whose ``missing`` value (and NaN) marks missing data."""
    X = rows_with_missing(missing, n=1000, seed=0)
    is_missing = X.isna() | X.eq(missing)
    known = X.mask(is_missing, 0.0)
    y = known["a"] + 3 * is_missing["a"] + 2 * is_missing["b"] - known["c"]
    model = xgb.XGBRegressor(n_estimators=20, max_depth=4, n_jobs=1, missing=missing)
    return model.fit(X, y)


def rows_with_missing(missing, n, seed):
    """Rows where some values are NaN and some equal ``missing``."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    X = X.mask(rng.random(X.shape) < 0.2, missing)
    X = X.mask(rng.random(X.shape) < 0.1, np.nan)
    return X


def xgboost_contributions(booster, X, missing):
    matrix = xgb.DMatrix(X, missing=missing)
    return booster.predict(matrix, pred_contribs=True)


@pytest.mark.parametrize("missing", [-999.0, 0.0, 0.1])
def test_xgboost_missing_value_is_routed_as_missing(missing):
    model = xgboost_with_missing(missing)
    explainer = TreeExplainer(model).fit()
    X = rows_with_missing(missing, n=60, seed=1)
    X.iloc[0] = [np.nan, missing, 1.0]  # both kinds in one row
    # float32(x) == float32(missing) is missing (0.1 + 1e-12 rounds to 0.1).
    X.iloc[1] = [missing + 1e-12, 1.0, missing]
    expected = model.predict(X, output_margin=True)
    scale = np.abs(expected).max()
    for rows in (X, X.to_numpy()):
        np.testing.assert_allclose(
            explainer.raw_predict(rows), expected, rtol=0, atol=XGBOOST_RTOL * scale
        )
        contributions = xgboost_contributions(model.get_booster(), X, missing)
        np.testing.assert_allclose(
            explainer.explain(rows).to_numpy(),
            contributions[:, :-1],
            rtol=0,
            atol=XGBOOST_RTOL * scale,
        )
    # The missing value matters: read as a number, rows reach other leaves.
    as_numbers = model.get_booster().predict(xgb.DMatrix(X), output_margin=True)
    assert np.abs(as_numbers - expected).max() > 0.1


def test_xgboost_booster_has_only_nan_as_missing():
    # A Booster's missing value is a DMatrix setting, not part of the model.
    booster = xgboost_with_missing(-999.0).get_booster()
    explainer = TreeExplainer(booster).fit()
    X = rows_with_missing(-999.0, n=40, seed=2)
    expected = booster.predict(xgb.DMatrix(X), output_margin=True)
    np.testing.assert_allclose(
        explainer.raw_predict(X),
        expected,
        rtol=0,
        atol=XGBOOST_RTOL * np.abs(expected).max(),
    )


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_inputs_are_not_modified():
    lightgbm = TreeExplainer(lightgbm_near_two_to_24()).fit()
    xgboost = TreeExplainer(xgboost_with_missing(-999.0)).fit()
    x, other = integer_rows()
    integers = np.asfortranarray(np.c_[x, np.round(other)].astype(np.int64))
    with_missing = np.asfortranarray(rows_with_missing(-999.0, 20, 3).to_numpy())
    frame = rows_with_missing(-999.0, 20, 4)
    for explainer, X in [
        (lightgbm, integers),
        (xgboost, with_missing),
        (xgboost, frame),
    ]:
        before = X.copy()
        if isinstance(X, np.ndarray):
            X.setflags(write=False)
        explainer.explain(X)
        explainer.raw_predict(X)
        if isinstance(X, pd.DataFrame):
            pd.testing.assert_frame_equal(X, before)
        else:
            np.testing.assert_array_equal(X, before)
