"""The report's ``model`` section: scikit-learn's metrics of the model on ``X``.

The metrics are computed on the model's own predictions (``predict``,
``predict_proba``, ``decision_function``), never on the explained raw
output unless the model has no such method (a raw booster): then only
what that output allows, and the section says what is missing and why.
"""

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn import metrics
from sklearn.base import BaseEstimator, is_classifier, is_regressor

from .._contract.input import as_pandas, real_values
from ._html import Markup, element, format_number, scroll

# Display names of the metric keys, in the order they are shown.
METRICS = {
    "r2": "R²",
    "mae": "Mean absolute error",
    "rmse": "Root mean squared error",
    "accuracy": "Accuracy",
    "balanced_accuracy": "Balanced accuracy",
    "log_loss": "Log-loss",
    "roc_auc": "ROC AUC",
}

# Raw outputs of classifiers that are scores, not probabilities.
SCORES = ("log-odds", "margin", "decision function")


@dataclass(frozen=True)
class Quality:
    """The metrics of the model on the explained rows, and what they compare."""

    metrics: dict  # metric key -> float, in METRICS' order
    compared: str  # what was compared with y, in words
    n_rows: int
    missing: str | None = None  # why metrics one would expect are absent


def checked_targets(y, X, explainer=None) -> np.ndarray:
    """``y`` as an array of ``n_samples`` targets, aligned with ``X``'s rows.

    A Series is aligned by position, so its index must be ``X``'s (for a
    DataFrame) to be sure that each target belongs to its row. Unless the
    ``explainer``'s model may be a classifier (a scikit-learn classifier,
    or a raw model explained on a score, whose labels may be text), the
    targets must be real numbers: text, dates or durations are refused.
    """
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise ValueError(
                f"y must have one column (one target per row), got {y.shape[1]}."
            )
        y = y.iloc[:, 0]
    X = as_pandas(X)
    n_samples = X.shape[0] if hasattr(X, "shape") else len(X)
    aligned = isinstance(y, pd.Series) and isinstance(X, pd.DataFrame)
    if aligned and not y.index.equals(X.index):
        raise ValueError(
            "y's index differs from X's: the targets are matched to the rows "
            "by position, so give them in X's order, e.g. "
            "y.reindex(X.index) or y.to_numpy()."
        )
    values = np.asarray(y)
    if values.ndim != 1 or len(values) != n_samples:
        raise ValueError(
            f"y must have shape ({n_samples},), one target per row of X, got "
            f"shape {values.shape}."
        )
    if _numeric_targets(explainer) and values.dtype.kind not in "biuf":
        try:
            values = real_values(values, "y")
        except ValueError as exc:
            raise ValueError(
                f"{exc} The model is not a classifier: its predictions are "
                "compared with numeric targets (R², MAE, RMSE), so y must hold "
                "the numbers it predicts (with the command: --target names "
                "that column)."
            ) from exc
    missing = pd.isna(values) | (
        np.isinf(values) if values.dtype.kind == "f" else False
    )
    if missing.any():
        raise ValueError(
            f"y has {int(missing.sum())} missing or infinite targets (the first "
            f"at position {int(np.argmax(missing))}): every explained row needs "
            "its target for the model-quality metrics."
        )
    return values


def _numeric_targets(explainer) -> bool:
    """Whether the explained model's targets are numbers (not class labels)."""
    if explainer is None or _is(is_classifier, explainer.model):
        return False
    return _is(is_regressor, explainer.model) or explainer.raw_output_ not in SCORES


def model_quality(explainer, X, y: np.ndarray) -> Quality:
    """The metrics of ``explainer.model``'s predictions on ``X`` against ``y``."""
    model = explainer.model
    X = model_input(explainer, X)
    with warnings.catch_warnings():
        # e.g. balanced accuracy when a class of y is never predicted: the
        # number is still right, and a report is no place for a warning.
        warnings.simplefilter("ignore", UserWarning)
        if _is(is_classifier, model):
            return _classifier(model, X, y)
        if _is(is_regressor, model):
            prediction = np.asarray(model.predict(X), dtype=np.float64)
            return Quality(_regression(y, prediction), "predict of the model", len(y))
        return _raw(explainer, X, y)


def model_input(explainer, X):
    """``X`` as the model takes it: a DataFrame's columns in the model's order.

    The explainers match columns by name, or by position when the model
    knows no names (then the model gets an array, as in its fit); the
    model's own methods want them as in fit. ``X`` itself is never modified.
    """
    X = as_pandas(X)
    if not isinstance(X, pd.DataFrame):
        return X
    if not explainer.columns_by_name_:
        return X.to_numpy()
    names = list(explainer.feature_names_in_)
    return X[names] if set(names) <= set(X.columns) else X


def probability_view(explainer, X, ex) -> tuple:
    """The model's probability of the shown class per row, for scores.

    For a classifier explained as a score (log-odds, margin, decision
    function) whose model has ``predict_proba``: that probability per row
    (None otherwise), and for one log-odds output the sigmoid of the base
    value (None otherwise).
    """
    if ex.raw_output not in SCORES:
        return None, None
    binary = ex.raw_output == "log-odds" and len(ex.output_names) == 1
    base_probability = float(expit(ex.base_value)) if binary else None
    found = _probabilities(explainer, X)
    if found is None:
        return None, base_probability
    proba, classes = found
    column = np.flatnonzero(classes == ex.output)
    if len(column) != 1:
        return None, base_probability
    return proba[:, column[0]], base_probability


def _probabilities(explainer, X) -> tuple[np.ndarray, np.ndarray] | None:
    """``predict_proba`` of the model on ``X`` and its classes, or None."""
    model = explainer.model
    if not (_is(is_classifier, model) and hasattr(model, "predict_proba")):
        return None
    proba = np.asarray(model.predict_proba(model_input(explainer, X)))
    return proba, np.asarray(model.classes_)


def _is(kind, model) -> bool:
    """``kind(model)`` for scikit-learn estimators, False for others.

    scikit-learn's tests fail on objects without its tags (a raw booster).
    """
    return isinstance(model, BaseEstimator) and kind(model)


def _classifier(model, X, y: np.ndarray) -> Quality:
    classes = np.asarray(model.classes_)
    _check_labels(y, classes)
    found = _labels(y, model.predict(X))
    if hasattr(model, "predict_proba"):
        proba = np.asarray(model.predict_proba(X))
        found["log_loss"] = metrics.log_loss(y, proba, labels=classes)
        scores, method = proba, "predict_proba"
    elif hasattr(model, "decision_function"):
        scores, method = np.asarray(model.decision_function(X)), "decision_function"
    else:
        return Quality(found, "predict of the model", len(y), "the model has no scores")
    auc, missing = _roc_auc(y, scores, classes)
    if auc is not None:
        found["roc_auc"] = auc
    return Quality(found, f"predict and {method} of the model", len(y), missing)


def _check_labels(y: np.ndarray, classes: np.ndarray) -> None:
    """Refuse labels of ``y`` that are not among the model's ``classes``."""
    unknown = sorted({str(label) for label in np.unique(y) if label not in classes})
    if unknown:
        raise ValueError(
            f"y has labels that the model does not know: {', '.join(unknown)}; "
            f"its classes are {', '.join(str(c) for c in classes)}."
        )


def _roc_auc(y, scores: np.ndarray, classes) -> tuple[float | None, str | None]:
    """ROC AUC: binary of the positive class, else one-vs-rest macro."""
    present = np.isin(classes, y)
    if present.sum() < 2:
        return None, "ROC AUC needs rows of at least two classes in y"
    if len(classes) == 2:
        positive = scores[:, 1] if scores.ndim == 2 else scores
        return metrics.roc_auc_score(y == classes[1], positive), None
    if not present.all():
        return None, "ROC AUC (one-vs-rest) needs rows of every class in y"
    # One-vs-rest macro, as roc_auc_score(multi_class="ovr") computes it for
    # probabilities; decision scores do not sum to 1, which it refuses.
    aucs = [
        metrics.roc_auc_score(y == label, scores[:, j])
        for j, label in enumerate(classes)
    ]
    return float(np.mean(aucs)), None


def _labels(y, prediction) -> dict:
    """The metrics of predicted labels."""
    return {
        "accuracy": metrics.accuracy_score(y, prediction),
        "balanced_accuracy": metrics.balanced_accuracy_score(y, prediction),
    }


def _regression(y, prediction: np.ndarray) -> dict:
    return {
        "r2": metrics.r2_score(y, prediction),
        "mae": metrics.mean_absolute_error(y, prediction),
        "rmse": metrics.root_mean_squared_error(y, prediction),
    }


def _raw(explainer, X, y: np.ndarray) -> Quality:
    """Metrics from ``raw_predict``, for models without scikit-learn's methods."""
    raw = np.asarray(explainer.raw_predict(X), dtype=np.float64)
    kind = explainer.raw_output_
    source = f"the explainer's raw_predict ({kind}): the model has no predict"
    if kind == "value":
        return Quality(_regression(y, raw), source, len(y))
    if kind == "log-odds" and raw.ndim == 1:
        labels = set(np.unique(y).tolist())
        if not labels <= {0, 1}:
            raise ValueError(
                "y must hold the labels 0 and 1 for a binary model explained "
                f"in log-odds, got {', '.join(str(v) for v in sorted(labels))}."
            )
        proba = expit(raw)
        found = _labels(y, raw > 0)
        found["log_loss"] = metrics.log_loss(y, proba, labels=[0, 1])
        auc, missing = _roc_auc(y, proba, np.array([0, 1]))
        if auc is not None:
            found["roc_auc"] = auc
        return Quality(found, source + "; probability = sigmoid", len(y), missing)
    if kind == "margin" and raw.ndim == 2:
        # The largest margin is the predicted class whether the model takes
        # a softmax or one sigmoid per class; its probabilities are not known.
        classes = np.asarray(explainer.output_names_)
        _check_labels(y, classes)
        found = _labels(y, classes[raw.argmax(axis=1)])
        missing = (
            "log-loss and ROC AUC, which need probabilities: how the model "
            "turns its margins into them (softmax, one-vs-rest) is not known"
        )
        return Quality(found, source + "; class = largest margin", len(y), missing)
    return Quality(
        {},
        source,
        len(y),
        f"no metric: its raw output ({kind}) cannot be turned into predictions "
        "without knowing the model's objective",
    )


def quality_section(quality: Quality, section) -> Markup:
    """The ``model`` section; ``section`` wraps content in its heading."""
    rows = [
        element(
            "tr",
            element("th", METRICS[key]),
            element(
                "td",
                format_number(value),
                class_="num",
                data_metric=key,
                data_value=repr(float(value)),
            ),
        )
        for key, value in quality.metrics.items()
    ]
    rows.append(
        element(
            "tr",
            element("th", "Rows"),
            element("td", f"{quality.n_rows:,}", class_="num"),
        )
    )
    lead = element(
        "p",
        f"How well the model predicts the {quality.n_rows:,} explained rows: "
        f"scikit-learn's metrics of {quality.compared}, against the y given. "
        "On the rows the model was trained on, these numbers overstate how "
        "well it predicts new data.",
        class_="lead",
    )
    body = scroll(element("table", element("tbody", *rows), class_="facts quality"))
    parts = [lead, body]
    if quality.missing:
        parts.append(element("p", f"Not shown: {quality.missing}.", class_="note"))
    return section("model", *parts)
