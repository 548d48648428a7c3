"""The report's ``model`` section: scikit-learn's metrics of the model, given y."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from skshapley import ProductKernelExplainer, TreeExplainer
from skshapley.report import report

from .test_report import Page

pytest.importorskip("matplotlib")

WINES = np.array(["barolo", "grignolino", "barbera"])


def reported_metrics(path) -> dict:
    """``{metric: value}`` from the ``data-metric`` cells of a report."""
    source = path.read_text(encoding="utf-8")
    found = re.findall(r'data-metric="(\w+)" data-value="([^"]+)"', source)
    return {key: float(value) for key, value in found}


def model_text(path) -> str:
    """The text of the ``model`` section."""
    source = path.read_text(encoding="utf-8")
    start = source.index('id="model"')
    return " ".join(Page(source[start : source.index("<section", start)]).text)


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True, as_frame=True)
    X = X.iloc[::3, :5]  # every class, few rows: a quick report
    labels = WINES[y.iloc[::3]]
    model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0)
    return model.fit(X, labels), X, labels


def test_regression_metrics_are_sklearns(tmp_path):
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:80], y.iloc[:80]
    model = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    path = report(TreeExplainer(model).fit(), X, tmp_path / "r.html", y=y, top_k=0)
    prediction = model.predict(X)
    assert reported_metrics(path) == {
        "r2": metrics.r2_score(y, prediction),
        "mae": metrics.mean_absolute_error(y, prediction),
        "rmse": metrics.root_mean_squared_error(y, prediction),
    }
    text = model_text(path)
    assert "the 80 explained rows" in text
    assert "overstate" in text
    assert "predict of the model" in text


def test_binary_metrics_use_predict_proba_not_the_log_odds(tmp_path):
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, y = X.iloc[:120, :6], y.iloc[:120]
    model = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    explainer = TreeExplainer(model).fit()
    assert explainer.raw_output_ == "log-odds"
    path = report(explainer, X, tmp_path / "b.html", y=y, top_k=0)
    proba = model.predict_proba(X)
    assert reported_metrics(path) == {
        "accuracy": metrics.accuracy_score(y, model.predict(X)),
        "balanced_accuracy": metrics.balanced_accuracy_score(y, model.predict(X)),
        "log_loss": metrics.log_loss(y, proba),
        "roc_auc": metrics.roc_auc_score(y, proba[:, 1]),
    }
    assert "predict_proba" in model_text(path)


def test_multiclass_string_labels(wine, tmp_path):
    model, X, labels = wine
    path = report(TreeExplainer(model).fit(), X, tmp_path / "m.html", y=labels)
    proba = model.predict_proba(X)
    expected = {
        "accuracy": metrics.accuracy_score(labels, model.predict(X)),
        "balanced_accuracy": metrics.balanced_accuracy_score(labels, model.predict(X)),
        "log_loss": metrics.log_loss(labels, proba, labels=model.classes_),
        "roc_auc": metrics.roc_auc_score(
            labels, proba, multi_class="ovr", labels=model.classes_
        ),
    }
    found = reported_metrics(path)
    assert found.keys() == expected.keys()
    for key, value in expected.items():
        # The macro mean of per-class AUCs, summed in another order than
        # sklearn's: equal up to a few roundings of numbers below 1.
        assert found[key] == pytest.approx(value, rel=0, abs=1e-15), key


def test_kernel_pipeline_without_probabilities_uses_decision_function(tmp_path):
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, y = X.iloc[:100, :4], y.iloc[:100]
    model = make_pipeline(StandardScaler(), SVC(kernel="rbf")).fit(X, y)
    explainer = ProductKernelExplainer(model).fit()
    path = report(explainer, X, tmp_path / "k.html", y=y, top_k=0)
    assert reported_metrics(path) == {
        "accuracy": metrics.accuracy_score(y, model.predict(X)),
        "balanced_accuracy": metrics.balanced_accuracy_score(y, model.predict(X)),
        "roc_auc": metrics.roc_auc_score(y, model.decision_function(X)),
    }
    assert "decision_function" in model_text(path)


def test_no_y_no_model_section(wine, tmp_path):
    model, X, _ = wine
    path = report(TreeExplainer(model).fit(), X, tmp_path / "m.html", top_k=0)
    assert 'id="model"' not in path.read_text(encoding="utf-8")
    assert reported_metrics(path) == {}


def test_xgboost_booster_uses_the_raw_log_odds(tmp_path):
    xgboost = pytest.importorskip("xgboost")
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, y = X.iloc[:150, :5], y.iloc[:150]
    booster = xgboost.train(
        {"objective": "binary:logistic", "max_depth": 2},
        xgboost.DMatrix(X, label=y),
        num_boost_round=5,
    )
    explainer = TreeExplainer(booster).fit()
    path = report(explainer, X, tmp_path / "x.html", y=y, top_k=0)
    proba = booster.predict(xgboost.DMatrix(X))  # binary:logistic: probabilities
    found = reported_metrics(path)
    assert found["accuracy"] == metrics.accuracy_score(y, proba > 0.5)
    # The sigmoid of skshapley's log-odds against xgboost's own probability:
    # float32 leaves summed in another order.
    assert found["log_loss"] == pytest.approx(metrics.log_loss(y, proba), rel=1e-6)
    assert found["roc_auc"] == pytest.approx(metrics.roc_auc_score(y, proba), rel=1e-6)
    assert "raw_predict" in model_text(path)


@pytest.mark.parametrize(
    ("make_y", "match"),
    [
        (lambda y: y[:-1], r"y must have shape \(40,\)"),
        (lambda y: np.where(y == "barolo", "nebbiolo", y), "does not know: nebbiolo"),
        (lambda y: pd.Series(y).set_axis(range(1, 41)), "index differs from X's"),
        (lambda y: np.stack([y, y], axis=1), r"y must have shape \(40,\)"),
        (
            lambda y: np.where(np.arange(len(y)) == 7, None, y),
            r"1 missing or infinite targets \(the first at position 7\)",
        ),
        (
            lambda y: np.where(np.arange(len(y)) >= 38, np.inf, 1.0),
            r"2 missing or infinite targets \(the first at position 38\)",
        ),
    ],
)
def test_bad_y(wine, tmp_path, make_y, match):
    model, X, labels = wine
    X = X.iloc[:40].reset_index(drop=True)
    explainer = TreeExplainer(model).fit()
    with pytest.raises(ValueError, match=match):
        report(explainer, X, tmp_path / "bad.html", y=make_y(labels[:40]))
    assert not (tmp_path / "bad.html").exists()


def test_xgboost_booster_labels_and_margins(tmp_path):
    xgboost = pytest.importorskip("xgboost")
    X, y = load_wine(return_X_y=True, as_frame=True)
    X, y = X.iloc[:, :4], y
    binary = xgboost.train(
        {"objective": "binary:logistic", "max_depth": 2},
        xgboost.DMatrix(X, label=y == 0),
        num_boost_round=3,
    )
    with pytest.raises(ValueError, match=r"labels 0 and 1.*got barbera, barolo"):
        report(TreeExplainer(binary).fit(), X, tmp_path / "b.html",
               y=np.where(y == 0, "barolo", "barbera"))  # fmt: skip
    multiclass = xgboost.train(
        {"objective": "multi:softprob", "num_class": 3, "max_depth": 2},
        xgboost.DMatrix(X, label=y),
        num_boost_round=3,
    )
    explainer = TreeExplainer(multiclass).fit()
    path = report(explainer, X, tmp_path / "m.html", y=y, top_k=0)
    # The class of largest margin is xgboost's own prediction; its margins'
    # link to probabilities is not known: no log-loss or AUC, and why.
    predicted = multiclass.predict(xgboost.DMatrix(X)).argmax(axis=1)
    assert reported_metrics(path) == {
        "accuracy": metrics.accuracy_score(y, predicted),
        "balanced_accuracy": metrics.balanced_accuracy_score(y, predicted),
    }
    assert "Not shown: log-loss and ROC AUC" in model_text(path)
    with pytest.raises(ValueError, match="does not know: 7"):
        report(explainer, X, tmp_path / "m.html", y=np.where(y == 2, 7, y))


def test_lightgbm_booster_of_a_log_link_gets_no_metric(tmp_path):
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((100, 3)), columns=["a", "b", "c"])
    y = rng.poisson(3, 100)
    booster = lightgbm.train(
        {"objective": "poisson", "num_leaves": 4, "verbose": -1},
        lightgbm.Dataset(X, y),
        num_boost_round=3,
    )
    explainer = TreeExplainer(booster).fit()
    assert explainer.raw_output_ == "log"  # not the prediction: exp of it
    path = report(explainer, X, tmp_path / "p.html", y=y, top_k=0)
    assert reported_metrics(path) == {}
    assert "Not shown: no metric: its raw output (log)" in model_text(path)
