"""Pipelines and searches saved with skops, explained by the command.

The trust list holds exactly the transformer and wrapper types that the
explainers read through: every one of them loads without
``--trust-pickle``, and a pipeline of string and numeric columns with
missing values round-trips through ``skshapley explain``.
"""

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.datasets import load_diabetes
from sklearn.ensemble import IsolationForest, RandomForestRegressor
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.impute import SimpleImputer
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import (
    GridSearchCV,
    HalvingGridSearchCV,
    HalvingRandomSearchCV,
    RandomizedSearchCV,
)
from sklearn.pipeline import make_pipeline, make_union
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    OneHotEncoder,
    OrdinalEncoder,
    SplineTransformer,
    StandardScaler,
    TargetEncoder,
)
from sklearn.svm import OneClassSVM

from skshapley.cli import main
from skshapley.cli._explaining import make_explainer
from skshapley.cli._trust import schema_types, untrusted

sio = pytest.importorskip("skops.io")


def diabetes():
    """scikit-learn's diabetes data with ``sex`` as strings and missing BMIs."""
    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    X = X.assign(sex=np.where(X["sex"] == 1, "f", "m"))
    X.loc[[3, 10, 200], "bmi"] = np.nan
    return X, y


def preprocessing():
    """One-hot ``sex``; impute (with an indicator) and scale the numbers."""
    return make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["sex"]),
        (
            make_pipeline(SimpleImputer(add_indicator=True), StandardScaler()),
            make_column_selector(dtype_include="number"),
        ),
    )


def search(cls, **params):
    grid = {"randomforestregressor__max_depth": [2, 3]}
    pipeline = make_pipeline(preprocessing(), RandomForestRegressor(n_estimators=3))
    return cls(pipeline, grid, cv=2, **params)


def saved_types(model) -> set[str]:
    """The type names of ``model``'s skops file."""
    with zipfile.ZipFile(io.BytesIO(sio.dumps(model))) as archive:
        return schema_types(json.loads(archive.read("schema.json")))


@pytest.mark.parametrize(
    "make",
    [
        lambda: make_pipeline(preprocessing(), KernelRidge()),
        lambda: make_column_transformer(
            (OrdinalEncoder(), ["sex"]),
            (TargetEncoder(target_type="continuous"), ["sex"]),
            (KBinsDiscretizer(n_bins=3), ["age"]),
            (SplineTransformer(n_knots=3), ["bp"]),
            (FunctionTransformer(feature_names_out="one-to-one"), ["s1"]),
            (make_union(StandardScaler(), SimpleImputer()), ["bmi"]),
            remainder="drop",
        ),
        lambda: search(GridSearchCV),
        lambda: search(RandomizedSearchCV, n_iter=2, random_state=0),
        lambda: search(HalvingGridSearchCV, random_state=0),
        lambda: search(HalvingRandomSearchCV, n_candidates=2, random_state=0),
    ],
    ids=["pipeline", "transformers", "grid", "randomized", "halving", "halving_rand"],
)
def test_the_issues_transformers_and_searches_are_trusted(make):
    X, y = diabetes()
    assert untrusted(saved_types(make().fit(X, y))) == []


@pytest.mark.parametrize(
    "make",
    [
        lambda: IsolationForest(n_estimators=5, random_state=0),
        lambda: OneClassSVM(gamma=0.01),
        lambda: GaussianProcessClassifier(random_state=0),
    ],
    ids=["isolation_forest", "one_class_svm", "gpc_one_vs_rest"],
)
def test_the_issues_models_are_trusted(make):
    X, y = diabetes()
    X = X.drop(columns="sex").fillna(0.0).iloc[:60]
    classes = np.digitize(y[:60], np.quantile(y[:60], [1 / 3, 2 / 3]))
    model = make().fit(X, classes)
    assert untrusted(saved_types(model)) == []


def test_a_function_in_a_function_transformer_is_not_trusted():
    # A FunctionTransformer calls what it stores: only the trusted types.
    X, _ = diabetes()
    model = FunctionTransformer(np.log1p, feature_names_out="one-to-one")
    assert untrusted(saved_types(model.fit(X[["age"]]))) == ["numpy.log1p"]


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(
            lambda: make_pipeline(
                preprocessing(), KernelRidge(kernel="rbf", gamma=0.05)
            ),
            id="kernel_ridge",
        ),
        pytest.param(
            lambda: make_pipeline(
                preprocessing(), RandomForestRegressor(n_estimators=3)
            ),
            id="random_forest",
        ),
        pytest.param(lambda: search(GridSearchCV), id="grid_search"),
    ],
)
def test_a_pipeline_file_round_trips_through_explain(make, tmp_path, capsys):
    X, y = diabetes()
    model = make().fit(X, y)
    path, data, out = (tmp_path / name for name in ("m.skops", "d.csv", "phi.csv"))
    sio.dump(model, path)
    X.assign(target=y).to_csv(data, index=False)
    status = main(["explain", "--model", str(path), "--data", str(data),
                   "--target", "target", "--rows", "8", "--out", str(out),
                   "-q"])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    table = pd.read_csv(out, index_col="row")
    assert len(table) == 8
    assert table.index.isin([3, 10, 200]).sum() <= 3  # rows with NaN may be drawn
    # The values and the base value sum to the pipeline's prediction; to
    # rounding of sums of ~15 terms of size ~100 (and of the CSV's 17 digits).
    np.testing.assert_allclose(
        table.sum(axis=1), model.predict(X.loc[table.index]), rtol=1e-12, atol=1e-9
    )
    explainer = make_explainer(model, None)
    assert list(table.columns[:-1]) == list(explainer.player_names_)


def test_rows_with_missing_values_are_explained(tmp_path, capsys):
    X, y = diabetes()
    model = make_pipeline(preprocessing(), KernelRidge(kernel="rbf", gamma=0.05))
    model.fit(X, y)
    path, data, out = (tmp_path / name for name in ("m.skops", "d.csv", "phi.csv"))
    sio.dump(model, path)
    X.loc[[3, 10, 200]].to_csv(data, index=False)
    status = main(["explain", "--model", str(path), "--data", str(data),
                   "--out", str(out), "-q"])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    table = pd.read_csv(out, index_col="row")
    np.testing.assert_allclose(
        table.sum(axis=1), model.predict(X.loc[[3, 10, 200]]), rtol=1e-12, atol=1e-9
    )
    # One column per input (the command's default for pipelines): bmi's value
    # holds its missing indicator's part, which is set for these rows.
    assert list(table.columns[:-1]) == list(X.columns)
    assert (table["bmi"] != 0).all()


def test_a_pipeline_is_explained_per_input_column_by_default():
    X, y = diabetes()
    model = make_pipeline(preprocessing(), KernelRidge(kernel="rbf", gamma=0.05))
    explainer = make_explainer(model.fit(X, y), None)
    assert explainer.groups == "input"
    assert list(explainer.player_names_) == list(X.columns)


def test_without_groups_only_pipelines_get_the_default(monkeypatch):
    X, y = diabetes()
    numbers = X.drop(columns="sex").fillna(0.0)
    default = {"body": ["bmi", "bp"]}  # names both models' features have
    monkeypatch.setattr("skshapley.cli._explaining.PIPELINE_GROUPS", default)
    pipeline = make_pipeline(StandardScaler(), KernelRidge(kernel="rbf"))
    assert make_explainer(pipeline.fit(numbers, y), None).groups == default
    model = KernelRidge(kernel="rbf").fit(numbers, y)
    assert make_explainer(model, None).groups is None
    asked = {"blood": ["s1", "s2"]}
    assert make_explainer(pipeline, asked).groups == asked
