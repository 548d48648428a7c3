"""What an explainer remembers between calls changes no value and no error.

A fitted explainer remembers the plan of each DataFrame column set it read
(names, their types and dtypes) and the indexes of the frames it returns
(``_contract/columns.py``, ``_contract/frames.py``). Each test first makes the explainer
remember something, then gives it input that a wrongly keyed or stale plan
would read wrongly. The oracles are independent of what is remembered: the
values of the same rows as a NumPy array in the model's column order (no
plan is involved), the model's own predictions, the error a newly fitted
explainer gives, and ``pandas.MultiIndex.from_product``.
"""

import copy
import pickle
import re
from functools import partial

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestClassifier
from sklearn.exceptions import NotFittedError
from sklearn.kernel_ridge import KernelRidge
from sklearn.tree import DecisionTreeRegressor

from skshapley import ProductKernelExplainer, TreeExplainer
from skshapley._contract import frames as _frames

FEATURES = ["a", "b", "c", "d"]


def data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=FEATURES)
    y = X["a"] + 2 * X["b"] ** 2 - X["c"] * X["d"]
    return X, y


def tree(columns=FEATURES):
    X, y = data()
    return DecisionTreeRegressor(max_depth=4, random_state=0).fit(X[columns], y)


def rows():
    return data(n=7, seed=1)[0]


def error_of(method, X) -> str:
    """The message of the ValueError ``method(X)`` raises (any message)."""
    try:
        method(X)
    except ValueError as exc:
        return str(exc)
    pytest.fail(f"{method.__name__} raised no ValueError")


def fresh_error(model, X, method="explain") -> str:
    """The error of a newly fitted explainer, which remembers nothing."""
    return error_of(getattr(TreeExplainer(model, n_jobs=1).fit(), method), X)


def test_columns_in_another_order_are_matched_by_name():
    explainer = TreeExplainer(tree(), n_jobs=1).fit()
    X = rows()
    expected = explainer.explain(X[FEATURES].to_numpy())
    for order in (FEATURES, ["d", "c", "b", "a"], ["b", "a", "d", "c"], FEATURES):
        phi = explainer.explain(X[order])
        np.testing.assert_array_equal(phi.to_numpy(), expected.to_numpy())
        assert list(phi.columns) == FEATURES
        np.testing.assert_array_equal(
            explainer.raw_predict(X[order]), tree().predict(X[FEATURES])
        )


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda X: X.assign(e=1.0), r"missing: \[\], unknown: \['e'\]"),
        (lambda X: X.drop(columns="c"), r"missing: \['c'\], unknown: \[\]"),
        (lambda X: X.rename(columns={"b": "B"}), r"missing: \['b'\], unknown: \['B'\]"),
        (lambda X: X.set_axis(["a", "b", "a", "d"], axis=1), r"repeated: \['a'\]"),
        # Same names, another dtype: a plan for numbers would read the text.
        (lambda X: X.assign(c=X["c"].astype(str)), r"'c' of X must hold real"),
        (lambda X: X.assign(c="x").astype({"c": object}), r"'c' of X must hold real"),
    ],
)
@pytest.mark.parametrize("method", ["explain", "raw_predict", "explain_interactions"])
def test_columns_that_no_longer_fit_give_the_error_after_a_good_call(
    change, match, method
):
    explainer = TreeExplainer(tree(), n_jobs=1).fit()
    good, bad = rows(), change(rows())
    for _ in range(2):  # the error is given again: failures are not remembered
        getattr(explainer, method)(good)
        message = error_of(getattr(explainer, method), bad)
        assert message == fresh_error(tree(), bad, method)
        assert re.search(match, message)


def test_object_columns_of_numbers_after_float_columns():
    # Same names, other dtypes that hold the same numbers: the same values.
    explainer = TreeExplainer(tree(), n_jobs=1).fit()
    X = rows()
    expected = explainer.explain(X.to_numpy())
    frames = (X, X.astype({"b": object}), X.astype({"b": "Float64"}), X)
    for frame in (*frames, frames[1][["b", "d", "a", "c"]]):
        np.testing.assert_array_equal(explainer.explain(frame).to_numpy(), expected)


def test_the_names_types_are_part_of_the_key():
    # A model fitted on an array matches columns by position; messages name a
    # column as X names it: 2 and '2' are different names for the same plan.
    X, y = data()
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X.to_numpy(), y)
    explainer = TreeExplainer(model, n_jobs=1).fit()
    numbers = rows().set_axis([0, 1, 2, 3], axis=1).astype({2: object})
    explainer.explain(numbers)
    bad = numbers.astype({2: object})
    bad.iloc[0, 2] = "x"
    assert "Column 2 of X" in error_of(explainer.explain, bad)
    texts = bad.set_axis(["0", "1", "2", "3"], axis=1)
    explainer.explain(numbers.set_axis(["0", "1", "2", "3"], axis=1))
    assert "Column '2' of X" in error_of(explainer.explain, texts)
    assert "Column 2 of X" in error_of(explainer.explain, bad)


def test_columns_by_position_must_be_as_many_as_the_features():
    # A model fitted on an array reads a frame's columns by position: one
    # column too few or too many is the shape error, after a good call too,
    # and the same error a pipeline's or a fresh explainer's check gives.
    X, y = data()
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X.to_numpy(), y)
    explainer = TreeExplainer(model, n_jobs=1).fit()
    explainer.explain(rows())
    for frame in (rows().iloc[:, :3], rows().assign(extra=1.0)):
        message = error_of(explainer.explain, frame)
        assert message == error_of(TreeExplainer(model).fit().raw_predict, frame)
        assert f"got shape {frame.shape}" in message
        assert "(n_samples, 4)" in message


def test_columns_matched_by_name_are_named_as_the_model_names_them():
    # Text names matched by the column labels' text: 2 is the model's '2'.
    X, y = data()
    texts = ["0", "1", "2", "3"]
    model = DecisionTreeRegressor(max_depth=3, random_state=0)
    explainer = TreeExplainer(model.fit(X.set_axis(texts, axis=1), y), n_jobs=1)
    numbers = rows().set_axis([3, 2, 1, 0], axis=1).astype({2: object})
    expected = explainer.fit().explain(numbers[[0, 1, 2, 3]].to_numpy())
    np.testing.assert_array_equal(
        explainer.explain(numbers).to_numpy(), expected.to_numpy()
    )
    numbers.iloc[0, 1] = "x"
    assert "Column '2' of X" in error_of(explainer.explain, numbers)


def hist_gradient_boosting():
    X, y = data()
    X = X.assign(b=pd.Categorical(np.where(X["b"] > 0, "up", "down")))
    model = HistGradientBoostingRegressor(
        max_iter=5, categorical_features="from_dtype", random_state=0
    )
    return model.fit(X, y), X


def test_category_object_and_codes_of_a_lookup_model():
    # HistGradientBoosting looks categories up by value, whatever the dtype.
    model, X = hist_gradient_boosting()
    explainer = TreeExplainer(model, n_jobs=1).fit()
    X = X.iloc[:9]
    as_object = X.astype({"b": object})
    expected = model.predict(X)
    for frame in (X, as_object, X, as_object[["d", "c", "b", "a"]]):
        np.testing.assert_allclose(
            explainer.raw_predict(frame), expected, rtol=1e-12, atol=0
        )
    unknown = as_object.assign(b="sideways")
    np.testing.assert_allclose(
        explainer.raw_predict(unknown), model.predict(unknown), rtol=1e-12
    )


@pytest.mark.parametrize("library", ["lightgbm", "xgboost"])
def test_category_and_numeric_dtypes_of_a_codes_model(library):
    # XGBoost and LightGBM read a pandas category column by value, refuse one
    # for a numeric feature, and refuse numbers for a category feature.
    X, y = data()
    X = X.assign(b=pd.Categorical(np.where(X["b"] > 0, "up", "down")))
    y = y + 5 * (X["b"] == "up")  # so that the trees split on the category
    if library == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        model = lgb.LGBMRegressor(n_estimators=3, min_child_samples=5, verbose=-1)
    else:
        xgb = pytest.importorskip("xgboost")
        model = xgb.XGBRegressor(
            n_estimators=3, max_depth=3, n_jobs=1, enable_categorical=True
        )
    model.fit(X, y)
    explainer = TreeExplainer(model, n_jobs=1).fit()
    X = X.iloc[:9]
    good = explainer.raw_predict(X)
    numeric_b = X.assign(b=X["b"].cat.codes.astype(float))
    category_c = X.assign(c=pd.Categorical(X["c"].round()))
    for _ in range(2):
        for bad in (numeric_b, category_c):
            message = error_of(explainer.raw_predict, bad)
            assert message == fresh_error(model, bad, "raw_predict")
        np.testing.assert_array_equal(explainer.raw_predict(X), good)


def test_lightgbm_reads_spaces_as_underscores():
    lgb = pytest.importorskip("lightgbm")
    X, y = data()
    spaced = X.set_axis(["a a", "b", "c c", "d"], axis=1)
    model = lgb.LGBMRegressor(n_estimators=3, min_child_samples=5, verbose=-1)
    model.fit(spaced, y)
    explainer = TreeExplainer(model, n_jobs=1).fit()
    expected = model.predict(spaced.iloc[:9], raw_score=True)
    for frame in (spaced, spaced[["d", "c c", "b", "a a"]], spaced):
        np.testing.assert_allclose(
            explainer.raw_predict(frame.iloc[:9]), expected, rtol=1e-12
        )
    extra = spaced.assign(**{"e e": 1.0})
    assert "unknown: ['e_e']" in error_of(explainer.explain, extra)


def test_fitting_again_forgets_the_plans():
    # The same column names in another order in the second model: a plan of
    # the first would read every column as the wrong feature.
    explainer = TreeExplainer(tree(), n_jobs=1).fit()
    X = rows()
    explainer.explain(X)
    reversed_features = FEATURES[::-1]
    explainer.set_params(model=tree(reversed_features)).fit()
    phi = explainer.explain(X)
    expected = explainer.explain(X[reversed_features].to_numpy())
    np.testing.assert_array_equal(phi.to_numpy(), expected.to_numpy())
    assert list(phi.columns) == reversed_features
    np.testing.assert_array_equal(
        explainer.raw_predict(X), tree(reversed_features).predict(X[reversed_features])
    )


def test_clone_pickle_and_copies_explain_as_the_original():
    explainer = TreeExplainer(tree(), n_jobs=1).fit()
    X = rows()
    expected = explainer.explain(X)
    bad = X.assign(e=1.0)
    message = error_of(explainer.explain, bad)
    cloned = clone(explainer)
    with pytest.raises(NotFittedError):
        cloned.explain(X)
    copies = [
        cloned.fit(),
        pickle.loads(pickle.dumps(explainer)),
        copy.deepcopy(explainer),
        copy.copy(explainer),
    ]
    for other in copies:
        for frame in (X, X[FEATURES[::-1]]):
            pd.testing.assert_frame_equal(other.explain(frame), expected)
        assert error_of(other.explain, bad) == message
    pd.testing.assert_frame_equal(explainer.explain(X), expected)


@pytest.fixture(params=["blocks", "DataFrame"])
def constructor(request, monkeypatch):
    """Frames built by pandas 3's block constructor, or by ``pandas.DataFrame``
    (the older pandas' path, taken when the first is missing)."""
    if request.param == "blocks" and _frames.create_dataframe_from_blocks is None:
        pytest.skip("pandas < 3 has no create_dataframe_from_blocks")
    if request.param == "DataFrame":
        monkeypatch.setattr(_frames, "create_dataframe_from_blocks", None)
    return request.param


def test_pandas_3_takes_the_block_constructor():
    # Else the "blocks" cases below would be skipped where they matter.
    major = int(pd.__version__.split(".")[0])
    assert (_frames.create_dataframe_from_blocks is not None) == (major >= 3)


def classifier():
    X, y = data()
    model = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
    return model.fit(X, np.digitize(y, [-1, 1]))


@pytest.mark.parametrize(
    "index",
    [
        pd.RangeIndex(7),
        pd.Index(["q", "p", "q", None, "r", "a", "b"], name="id"),
        pd.date_range("2024-01-01", periods=7, tz="UTC", name="when"),
    ],
)
def test_block_frames_are_those_of_the_dataframe_constructor(monkeypatch, index):
    # The oracle: pandas.DataFrame on the same values, the older pandas' path.
    X = rows().set_axis(index)
    explainers = [
        TreeExplainer(tree(), n_jobs=1).fit(),
        TreeExplainer(classifier(), n_jobs=1).fit(),
        ProductKernelExplainer(KernelRidge(kernel="rbf").fit(*data())).fit(),
    ]
    for explainer in explainers:
        outputs = explainer.output_names_
        columns = (
            pd.Index(FEATURES)
            if len(outputs) == 1
            else pd.MultiIndex.from_product(
                [outputs, FEATURES], names=["output", "feature"]
            )
        )
        for frame in (X, X.iloc[:0], X.iloc[2:3]):
            calls = [
                partial(explainer.explain, frame, output=output)
                for output in (None, outputs[-1])
            ]
            if explainer.supports_interactions:
                calls.append(partial(explainer.explain_interactions, frame))
            for call in calls:
                phi = call()
                with monkeypatch.context() as patch:
                    patch.setattr(_frames, "create_dataframe_from_blocks", None)
                    expected = call()
                pd.testing.assert_frame_equal(phi, expected, check_exact=True)
                assert phi.attrs == expected.attrs
            phi = explainer.explain(frame)
            pd.testing.assert_index_equal(phi.index, frame.index, exact=True)
            pd.testing.assert_index_equal(phi.columns, columns)


def test_results_are_independent_of_each_other(constructor):
    explainer = TreeExplainer(tree(), n_jobs=1).fit()
    X = rows()
    first, second = explainer.explain(X), explainer.explain(X)
    # Axes first: writing a value may give the frame axes of its own.
    first.columns.name = "renamed"
    first.index.name = "renamed"
    first.iloc[0, 0] = 1e9
    assert second.iloc[0, 0] != 1e9
    assert second.columns.name is None
    third = explainer.explain(X.to_numpy())
    assert third.columns.name is None
    assert third.index.name is None
    assert X.index.name is None
    np.testing.assert_array_equal(third.to_numpy(), second.to_numpy())


def test_results_of_several_outputs_are_independent(constructor):
    model = classifier()
    explainer = TreeExplainer(model, n_jobs=1).fit()
    first = explainer.explain(rows())
    first.columns.names = ["x", "y"]
    second = explainer.explain(rows())
    assert list(second.columns.names) == ["output", "feature"]
    assert list(second.columns) == [(k, f) for k in model.classes_ for f in FEATURES]
    interactions = explainer.explain_interactions(rows())
    interactions.index.names = ["x", "y"]
    again = explainer.explain_interactions(rows())
    assert list(again.index.names) == ["row", "feature"]


@pytest.mark.parametrize(
    "index",
    [
        pd.RangeIndex(7),
        pd.RangeIndex(3, 10),
        pd.RangeIndex(0, 14, 2),
        pd.RangeIndex(7, 0, -1),
        pd.Index(["q", "p", "q", None, "r", "a", "b"], name="id"),
        pd.Index([3.0, np.nan, 1.0, 2.0, 9.0, 8.0, 7.0]),
        pd.date_range("2024-01-01", periods=7, tz="UTC", name="when"),
    ],
)
def test_interaction_rows_are_those_of_from_product(index):
    # Players whose names do not sort in their order: the level is sorted.
    columns = ["d", "b", "c", "a"]
    explainer = TreeExplainer(tree(columns), n_jobs=1).fit()
    X = rows()[columns].set_axis(index)
    name = index.name
    for frame in (X, X.iloc[2:5], X):
        rows_index = explainer.explain_interactions(frame).index
        expected = pd.MultiIndex.from_product(
            [frame.index, columns], names=[frame.index.name or "row", "feature"]
        )
        pd.testing.assert_index_equal(rows_index, expected, exact=True)
        for level, expected_level in zip(
            rows_index.levels, expected.levels, strict=True
        ):
            pd.testing.assert_index_equal(level, expected_level, exact=True)
        for codes, expected_codes in zip(rows_index.codes, expected.codes, strict=True):
            np.testing.assert_array_equal(codes, expected_codes)
    assert X.index.name == name


def test_many_column_sets_each_read_right():
    # More column sets than are remembered: the oldest are forgotten, none
    # is confused with another.
    explainer = TreeExplainer(tree(), n_jobs=1).fit()
    X = rows()
    expected = explainer.explain(X.to_numpy()).to_numpy()
    rng = np.random.default_rng(0)
    orders = [list(rng.permutation(FEATURES)) for _ in range(12)]
    for order in orders + orders[::-1]:
        np.testing.assert_array_equal(explainer.explain(X[order]).to_numpy(), expected)


def test_chunks_of_a_frame_give_the_values_of_one_call():
    X = data(n=40, seed=2)[0]
    expected = TreeExplainer(tree(), n_jobs=1).fit().explain(X.to_numpy())
    chunked = TreeExplainer(tree(), n_jobs=1).fit()
    chunked.set_params(max_memory=2 * 3 * chunked._row_bytes())  # 3 rows a chunk
    phi = chunked.explain(X[FEATURES[::-1]])
    np.testing.assert_array_equal(phi.to_numpy(), expected.to_numpy())
    pd.testing.assert_index_equal(phi.index, X.index)


def test_kernel_explainer_matches_columns_by_name_after_a_first_call():
    X, y = data(n=30)
    model = KernelRidge(kernel="rbf", gamma=0.5).fit(X, y)
    explainer = ProductKernelExplainer(model, n_jobs=1).fit()
    expected = explainer.explain(X[FEATURES].to_numpy())
    for order in (FEATURES, FEATURES[::-1], FEATURES):
        phi = explainer.explain(X[order])
        np.testing.assert_array_equal(phi.to_numpy(), expected.to_numpy())
        assert phi.attrs == expected.attrs
    assert "'b' of X must hold real numbers" in error_of(
        explainer.explain, X.assign(b=X["b"].astype(str))
    )
