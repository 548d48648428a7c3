"""What ``explain(X)`` and ``raw_predict(X)`` accept, and the errors otherwise.

The oracle is each model's own ``predict`` on the same input: where it gives
a number, so do we (the same one); anything else is one ValueError naming
the column.
"""

import datetime
import warnings
from functools import cache

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.tree import DecisionTreeRegressor

from skshapley import ProductKernelExplainer, TreeExplainer
from skshapley.games import product_shapley

FEATURES = ["age", "dose", "weight"]

# raw_predict walks the same trees as the model's predict, in the same
# precision: equal to rounding of the sum over trees (a few ulps).
PREDICT_RTOL = 1e-12
# Shapley values sum to the raw output up to the quadrature's rounding.
EFFICIENCY_ATOL = 1e-9


def data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=FEATURES)
    X["dose"] = rng.integers(0, 5, n).astype(float)
    y = X["age"] + X["dose"] ** 2 - X["weight"]
    return X, y


@cache
def forest():
    X, y = data()
    return RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, y)


@cache
def kernel_ridge():
    X, y = data(n=40)
    return KernelRidge(kernel="rbf", gamma=0.5).fit(X, y)


def explainers():
    return [TreeExplainer(forest()).fit(), ProductKernelExplainer(kernel_ridge()).fit()]


def rows(n=5):
    """A frame to explain, with a non-default index."""
    X, _ = data(n=n, seed=1)
    return X.set_axis([f"r{i}" for i in range(n)])


def assert_same_explanation(explainer, X, reference):
    """``X`` is explained exactly as the float64 frame ``reference``."""
    pd.testing.assert_frame_equal(explainer.explain(X), explainer.explain(reference))
    np.testing.assert_array_equal(
        explainer.raw_predict(X), explainer.raw_predict(reference)
    )


# --- Values that are not real numbers --------------------------------------


@pytest.mark.parametrize("explainer", explainers(), ids=["tree", "kernel"])
@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda X: X.to_numpy().astype(complex), "complex"),
        (lambda X: X.to_numpy().astype(complex) + 1j, "complex"),
        (lambda X: X.astype({"dose": complex}), "Column 'dose' of X holds complex"),
        (
            lambda X: X.to_numpy().astype(complex).astype(object),
            r"real numbers \(as float64\); it holds \(",
        ),
        (
            lambda X: X.assign(weight=pd.Series([1j] * 5, X.index, dtype=object)),
            r"'weight'.*1j \(complex\)",
        ),
        (lambda X: X.to_numpy().astype(str), "strings"),
        (lambda X: X.to_numpy().astype(bytes), "strings"),
        (lambda X: X.astype(str).to_numpy().tolist(), "strings"),
        (lambda X: X.astype({"age": str}), "Column 'age' of X must hold real.*'0."),
        (lambda X: X.astype({"age": "string"}), "Column 'age' of X must hold real"),
        (lambda X: X.assign(dose=["1.5", 2, 3, 4, 5]), "'dose'.*'1.5' \\(str\\)"),
        (lambda X: X.assign(dose=[2, 3, "x", 4, 5]), "'dose'.*'x' \\(str\\)"),
        (lambda X: X.assign(dose=[2, 3, b"1", 4, 5]), "'dose'.*b'1' \\(bytes\\)"),
        (
            lambda X: X.assign(dose=[datetime.date(2020, 1, 1)] * 5),
            "'dose' of X must hold real numbers.*date",
        ),
        (lambda X: X.assign(age=pd.Timestamp("2020-01-01")), "'age'.*dates"),
        (lambda X: X.assign(age=pd.Timedelta("1s")), "'age'.*durations"),
        (
            lambda X: X.assign(age=pd.Timestamp("2020-01-01", tz="UTC")),
            "'age'.*dates",
        ),
        (lambda X: X.to_numpy().astype("M8[s]"), "dates"),
        (lambda X: X.assign(weight=[[1]] * 5), "'weight'.*\\[1\\]"),
        (
            lambda X: X.assign(dose=pd.Series([np.datetime64(1, "D")] * 5, X.index)),
            "'dose'.*datetime64",
        ),
        (
            lambda X: X.assign(dose=pd.Series([10**400] * 5, X.index, dtype=object)),
            r"'dose'.*as float64.*10000+\.\.\.0+ \(int\)",
        ),
        (lambda X: [[1.0, 2.0, 3.0], [1.0, 2.0]], "2-D array-like of numbers"),
    ],
)
def test_values_that_are_not_real_numbers_are_refused(explainer, make, match):
    X = make(rows())
    for method in (explainer.explain, explainer.raw_predict):
        with pytest.raises(ValueError, match=match):
            method(X)


@pytest.mark.parametrize("explainer", explainers(), ids=["tree", "kernel"])
def test_the_error_shows_a_value_that_is_no_number(explainer):
    # A CSV column with one word in it is read as text throughout: the message
    # must show the word, not the first (numeric) text in the column.
    X = rows()
    column = X.columns[1]
    X[column] = [str(value) for value in X[column]]
    X.loc[X.index[3], column] = "abc"
    with pytest.raises(ValueError, match=rf"Column '{column}'.*'abc'"):
        explainer.explain(X)


def test_numpy_would_have_parsed_or_truncated_them():
    # Why the refusals above matter: NumPy reads these as numbers silently.
    assert np.array(["1.5"]).astype(float)[0] == 1.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array([1 + 2j]).astype(float)[0] == 1.0


@pytest.mark.parametrize("explainer", explainers(), ids=["tree", "kernel"])
def test_numbers_of_any_real_type_are_accepted(explainer):
    X = rows()
    as_objects = X.astype(object)
    as_objects["dose"] = [int(v) for v in X["dose"]]  # Python ints
    assert_same_explanation(explainer, as_objects, X)
    assert_same_explanation(explainer, X.astype(object).to_numpy(), X.to_numpy())
    assert_same_explanation(explainer, X.astype({"dose": np.int8}), X)
    assert_same_explanation(explainer, X.astype({"dose": "uint16"}), X)
    assert_same_explanation(explainer, X.to_numpy().tolist(), X.to_numpy())
    sparse = sp.csr_matrix(X.to_numpy())
    assert_same_explanation(explainer, sparse, X.to_numpy())
    booleans = X.assign(dose=X["dose"] > 2)
    assert_same_explanation(explainer, booleans, booleans.astype(float))


@pytest.mark.parametrize("explainer", explainers(), ids=["tree", "kernel"])
def test_duplicated_columns_are_named(explainer):
    X = rows()
    twice = pd.concat([X, X[["dose"]]], axis=1)
    for method in (explainer.explain, explainer.raw_predict):
        with pytest.raises(ValueError, match=r"unique; repeated: \['dose'\]"):
            method(twice)
    # Names that differ only in type are the same name once made strings.
    model = DecisionTreeRegressor(max_depth=2).fit(X.to_numpy(), data()[1][:5])
    positional = TreeExplainer(model).fit()
    with pytest.raises(ValueError, match=r"repeated: \['1'\]"):
        positional.explain(pd.DataFrame(X.to_numpy(), columns=[0, 1, "1"]))


# --- Nullable pandas dtypes --------------------------------------------------


def nullable_frames():
    """Frames with pd.NA in nullable columns, and their float64 twins."""
    X = rows(6)
    dose = X["dose"].astype("Int64")
    dose.iloc[[1, 4]] = pd.NA
    age = X["age"].astype("Float64")
    age.iloc[2] = pd.NA
    flag = pd.array([True, pd.NA, False, True, False, pd.NA], dtype="boolean")
    nullable = X.assign(dose=dose, age=age, weight=flag)
    return nullable, nullable.astype(float)


@cache
def nan_model(library):
    """A model of ``library`` that routes NaN, fitted on a frame with NaN.

    Returns the model and the ``predict`` keywords for its raw output.
    """
    X, y = data()
    X.loc[::7, "dose"] = np.nan
    X.loc[::5, "age"] = np.nan
    X["weight"] = X["weight"] > 0
    if library == "tree":
        return DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y), {}
    if library == "hist":
        return HistGradientBoostingRegressor(max_iter=5).fit(X, y), {}
    if library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        model = xgb.XGBRegressor(n_estimators=5, max_depth=3, n_jobs=1)
        return model.fit(X, y), {"output_margin": True}
    lgb = pytest.importorskip("lightgbm")
    model = lgb.LGBMRegressor(n_estimators=5, min_child_samples=5, verbose=-1)
    return model.fit(X, y), {"raw_score": True}


# XGBoost returns its sum of float32 leaves as float32 (a relative rounding of
# 6e-8 per tree, 5 trees); the others sum in float64 (a few ulps).
LIBRARY_RTOL = {"tree": 1e-12, "hist": 1e-12, "xgboost": 1e-6, "lightgbm": 1e-12}


@pytest.mark.parametrize("library", ["tree", "hist", "xgboost", "lightgbm"])
def test_nullable_dtypes_follow_the_models_predict(library):
    model, raw = nan_model(library)
    nullable, floats = nullable_frames()
    explainer = TreeExplainer(model).fit()
    expected = model.predict(nullable, **raw)
    assert np.isnan(floats.to_numpy()).sum() == 5  # pd.NA became NaN
    np.testing.assert_allclose(
        explainer.raw_predict(nullable), expected, rtol=LIBRARY_RTOL[library]
    )
    phi = explainer.explain(nullable)
    pd.testing.assert_frame_equal(phi, explainer.explain(floats))
    np.testing.assert_allclose(
        phi.sum(axis=1) + explainer.expected_value_,
        explainer.raw_predict(nullable),
        atol=EFFICIENCY_ATOL,
    )


def test_nullable_without_missing_values_and_models_without_nan():
    X, y = data()
    model = GradientBoostingRegressor(n_estimators=3, random_state=0).fit(X, y)
    explainer = TreeExplainer(model).fit()
    ints = rows().astype({"dose": "Int64", "age": "Float64"})
    np.testing.assert_allclose(
        explainer.raw_predict(ints), model.predict(ints), rtol=PREDICT_RTOL
    )
    nullable, _ = nullable_frames()
    with pytest.raises(ValueError, match="Input X contains NaN"):
        model.predict(nullable)
    with pytest.raises(ValueError, match=r"missing value.*column 'age'"):
        explainer.explain(nullable)


# --- Category columns ---------------------------------------------------------


def with_category_dose(X):
    return X.assign(dose=pd.Categorical(X["dose"].astype(int)))


def test_scikit_learn_reads_category_columns_by_value():
    # scikit-learn converts a category column to its values: so do we.
    explainer = TreeExplainer(forest()).fit()
    X = rows(8)
    shifted = X.assign(dose=X["dose"] + 10)  # codes and values differ
    categories = with_category_dose(shifted)
    np.testing.assert_allclose(
        explainer.raw_predict(categories),
        forest().predict(categories),
        rtol=PREDICT_RTOL,
    )
    assert_same_explanation(explainer, categories, shifted)
    words = X.assign(dose=pd.Categorical(["low", "high"] * 4))
    with pytest.raises(ValueError, match=r"'dose' of X must hold real.*'low'"):
        explainer.explain(words)


def boosted(library, categorical):
    X, y = data()
    if categorical:
        X = with_category_dose(X)
    if library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        return xgb.XGBRegressor(
            n_estimators=3, max_depth=3, n_jobs=1, enable_categorical=True
        ).fit(X, y)
    lgb = pytest.importorskip("lightgbm")
    return lgb.LGBMRegressor(n_estimators=3, min_child_samples=5, verbose=-1).fit(X, y)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_category_column_for_a_numeric_feature_is_refused(library):
    model = boosted(library, categorical=False)
    explainer = TreeExplainer(model).fit()
    X = with_category_dose(rows(8).assign(dose=lambda X: X["dose"] + 10))
    if library == "lightgbm":
        with pytest.raises(ValueError, match="categorical_feature do not match"):
            model.predict(X)
    # XGBoost (3.2) silently reads the codes 0, 1, ... instead of 10, 11, ...
    for method in (explainer.explain, explainer.raw_predict):
        with pytest.raises(ValueError, match="'dose' of X is a pandas category"):
            method(X)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_numeric_column_for_a_category_feature_is_refused(library):
    model = boosted(library, categorical=True)
    explainer = TreeExplainer(model).fit()
    X = rows(8)
    with pytest.raises(Exception, match=r"categorical|numeric or categorical"):
        model.predict(X)
    for method in (explainer.explain, explainer.raw_predict):
        with pytest.raises(ValueError, match=r"'dose' of X must be a pandas category"):
            method(X)
    # The category column and the array of its codes are both fine.
    categories = with_category_dose(X)
    codes = categories.assign(dose=categories["dose"].cat.codes).to_numpy(float)
    raw = {"output_margin": True} if library == "xgboost" else {"raw_score": True}
    expected = model.predict(categories, **raw)
    rtol = 1e-6 if library == "xgboost" else 1e-12  # see LIBRARY_RTOL
    np.testing.assert_allclose(explainer.raw_predict(categories), expected, rtol=rtol)
    np.testing.assert_array_equal(
        explainer.raw_predict(codes), explainer.raw_predict(categories)
    )


# --- The caller's data, empty inputs, shapes -----------------------------------


def test_the_callers_data_is_never_modified():
    nullable, _ = nullable_frames()
    model, _ = nan_model("tree")
    explainer = TreeExplainer(model).fit()
    read_only = np.asfortranarray(rows().to_numpy())
    read_only.setflags(write=False)
    objects = rows().astype(object).to_numpy()
    inputs = [nullable, read_only, objects, with_category_dose(rows())]
    before = [X.copy() for X in inputs]
    for X in inputs:
        explainer.explain(X)
        explainer.raw_predict(X)
    for X, copy in zip(inputs, before, strict=True):
        if isinstance(X, pd.DataFrame):
            pd.testing.assert_frame_equal(X, copy)
        else:
            np.testing.assert_array_equal(X, copy)
    assert not read_only.flags.writeable


@pytest.mark.parametrize("explainer", explainers(), ids=["tree", "kernel"])
def test_empty_inputs_give_empty_results(explainer):
    nullable, _ = nullable_frames()
    for X in (
        rows().iloc[:0],
        nullable.iloc[:0],
        np.empty((0, 3)),
        np.empty((0, 3), object),
    ):
        phi = explainer.explain(X)
        assert phi.shape == (0, 3)
        assert list(phi.columns) == FEATURES
        assert explainer.raw_predict(X).shape == (0,)


@pytest.mark.parametrize("explainer", explainers(), ids=["tree", "kernel"])
def test_wrong_number_of_columns(explainer):
    X = rows().to_numpy()
    for bad in (X[:, :2], X.astype(object)[:, :2], np.c_[X, X[:, 0]]):
        with pytest.raises(ValueError, match=r"shape \(n_samples, 3\)"):
            explainer.explain(bad)
    with pytest.raises(ValueError, match=r"missing: \['weight'\]"):
        explainer.explain(rows().drop(columns="weight"))


def test_pipeline_output_and_game_arrays_must_be_real():
    # The same refusal where arrays reach the core other than as X.
    X, y = data(n=40)
    model = make_pipeline(FunctionTransformer(), KernelRidge(kernel="rbf")).fit(X, y)
    # A step that turns complex after fitting (KernelRidge refuses complex).
    model.set_params(functiontransformer__func=lambda X: np.asarray(X) + 0j)
    with pytest.raises(ValueError, match=r"preprocessing: X holds complex.*complex128"):
        ProductKernelExplainer(model).fit().explain(rows())
    with pytest.raises(TypeError, match=r"a must be .*real numbers.*\(1\+1j\)"):
        product_shapley(np.array([1 + 1j, 2.0], dtype=object))
    with pytest.raises(TypeError, match=r"weights must be .*real numbers.*complex"):
        product_shapley([[1.0, 2.0]], weights=[1j])


# --- One row as a Series, lazy frames ---------------------------------------


@pytest.mark.parametrize("explainer", explainers(), ids=["tree", "kernel"])
def test_a_series_is_one_row_named_by_its_label(explainer):
    X = rows()
    for label in X.index[[0, 3]]:
        # X.loc[label] is what people pass to explain one prediction.
        assert_same_explanation(explainer, X.loc[label], X.loc[[label]])
        assert explainer.explain(X.loc[label]).index.tolist() == [label]
    # Its index names the columns: another order is matched by name.
    row = X.iloc[2]
    assert_same_explanation(explainer, row[::-1], X.iloc[[2]])


def test_a_series_of_a_mixed_row_keeps_its_columns_types():
    # A row of a frame with a category column is an object Series; each
    # value is read by the model's rule for its column, as in the frame.
    X, y = data()
    X["colour"] = pd.Categorical(np.where(X["age"] > 0, "red", "blue"))
    model = HistGradientBoostingRegressor(
        max_iter=5, categorical_features="from_dtype"
    ).fit(X, y)
    explainer = TreeExplainer(model).fit()
    frame = X.iloc[[4]]
    pd.testing.assert_frame_equal(
        explainer.explain(X.iloc[4]), explainer.explain(frame), check_dtype=False
    )
    np.testing.assert_allclose(explainer.raw_predict(X.iloc[4]), model.predict(frame))


def test_a_lazy_polars_frame_is_refused_with_what_to_do():
    pl = pytest.importorskip("polars")
    lazy = pl.from_pandas(rows()).lazy()
    with pytest.raises(TypeError, match=r"lazy LazyFrame.*Pass X\.collect\(\)"):
        explainers()[0].explain(lazy)
    explainers()[0].explain(lazy.collect())  # what the message says works
