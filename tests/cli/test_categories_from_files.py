"""Categorical XGBoost, LightGBM and HistGradientBoosting models explained from files.

A CSV file has no categories, and a Parquet file has them only sometimes:
the command reads each column that the model learned as a pandas category
as a category of its values, typed as the training categories (text
``"3"`` matches the category ``3``). The attributions written must equal
the Python API's on the same DataFrame with its category columns, as rows
and as ``--background``; an unknown category follows the model's rule.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from skshapley import TreeExplainer
from skshapley.cli import main

# The command and the API run the same float64 code on the same values.
ATOL = 1e-12


def frame(n, seed):
    """String, integer and string-of-digit categories, and one never split on."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
            "size": pd.Categorical(rng.choice([3, 5, 8], n)),
            "code": pd.Categorical(rng.choice(["1", "2", "10"], n)),
            "unused": pd.Categorical(rng.choice(["p", "q"], n)),
        }
    )


def target(X):
    return (
        X["x"]
        + 2.0 * (X["colour"] == "red")
        + (X["size"] == 5).astype(float)
        - (X["code"] == "10").astype(float)
    )


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Each library's model on the training frame, saved as the command reads it."""
    folder = tmp_path_factory.mktemp("categories")
    X = frame(400, 0)
    y = target(X)
    fitted = {}
    xgb = pytest.importorskip("xgboost")
    booster = xgb.XGBRegressor(
        n_estimators=6, max_depth=3, enable_categorical=True, max_cat_to_onehot=1
    ).fit(X, y)
    for suffix in (".json", ".ubj"):
        booster.get_booster().save_model(folder / f"xgboost{suffix}")
        fitted[f"xgboost{suffix}"] = booster
    lgb = pytest.importorskip("lightgbm")
    light = lgb.LGBMRegressor(
        n_estimators=6, num_leaves=8, min_child_samples=5, verbose=-1
    ).fit(X, y)
    light.booster_.save_model(folder / "lightgbm.txt")
    fitted["lightgbm.txt"] = light
    sio = pytest.importorskip("skops.io")
    hist = HistGradientBoostingRegressor(
        max_iter=6, categorical_features="from_dtype"
    ).fit(X, y)
    sio.dump(hist, folder / "hist.skops")
    fitted["hist.skops"] = hist
    return folder, fitted


def _write(rows, path):
    if path.suffix == ".csv":
        rows.to_csv(path, index=False)
    else:
        rows.to_parquet(path, index=False)


def _explained(folder, model_file, rows, suffix, *options):
    data = folder / f"rows{suffix}"
    _write(rows, data)
    out = folder / "values.csv"
    status = main(
        ["explain", "--model", str(folder / model_file), "--data", str(data),
         "--out", str(out), "--force", "-q", *map(str, options)]
    )  # fmt: skip
    assert status == 0
    return pd.read_csv(out, index_col=0)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize(
    "model_file", ["xgboost.json", "xgboost.ubj", "lightgbm.txt", "hist.skops"]
)
def test_a_file_is_explained_as_the_frame(models, model_file, suffix):
    folder, fitted = models
    rows = frame(30, 1)
    rows.loc[[2, 7], "size"] = np.nan  # integers with NaN: read as floats
    rows.loc[[3], "code"] = np.nan
    written = _explained(folder, model_file, rows, suffix)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LightGBM's about category orders
        explainer = TreeExplainer(fitted[model_file]).fit()
        expected = explainer.explain(rows)
    values = written.drop(columns="base_value")
    np.testing.assert_allclose(values.to_numpy(), expected.to_numpy(), atol=ATOL)
    assert list(values.columns) == list(expected.columns)
    unused = list(expected.columns).index("unused")
    if unused not in explainer.ensemble_.feature:  # a category never split on
        assert np.all(values["unused"] == 0)
    else:  # HistGradientBoosting splits on the noise
        assert model_file == "hist.skops"


@pytest.mark.parametrize("model_file", ["xgboost.json", "lightgbm.txt", "hist.skops"])
def test_a_background_file_is_read_as_the_frame(models, model_file):
    folder, fitted = models
    rows, background = frame(10, 2), frame(40, 3)
    path = folder / "background.csv"
    background.to_csv(path, index=False)
    written = _explained(folder, model_file, rows, ".csv", "--background", path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explainer = TreeExplainer(
            fitted[model_file], feature_perturbation="interventional"
        ).fit(background)
        expected = explainer.explain(rows)
    np.testing.assert_allclose(
        written.drop(columns="base_value").to_numpy(), expected.to_numpy(), atol=ATOL
    )
    np.testing.assert_allclose(written["base_value"], explainer.expected_value_)


def test_unknown_categories_follow_each_models_rule(models, capfd):
    folder, fitted = models
    rows = frame(6, 4).astype({"colour": object})
    rows.loc[[1], "colour"] = "purple"
    # LightGBM and HistGradientBoosting: an unknown category is missing.
    for model_file in ("lightgbm.txt", "hist.skops"):
        written = _explained(folder, model_file, rows, ".csv")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = (
                TreeExplainer(fitted[model_file])
                .fit()
                .explain(rows.astype({"colour": "category"}))
            )
        np.testing.assert_allclose(
            written.drop(columns="base_value").to_numpy(),
            expected.to_numpy(),
            atol=ATOL,
        )
    # XGBoost refuses it (as XGBoost >= 3.3 does), naming it.
    data = folder / "unknown.csv"
    rows.to_csv(data, index=False)
    capfd.readouterr()
    model = folder / "xgboost.json"
    status = main(["explain", "--model", str(model), "--data", str(data),
                   "--out", str(folder / "u.csv"), "--force", "-q"])  # fmt: skip
    err = capfd.readouterr().err
    assert status == 1
    assert "Column 'colour' of X has categories the model did not see" in err
    assert "'purple'" in err
