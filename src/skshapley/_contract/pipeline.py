"""The model inside a pipeline or a search: its preprocessing and final estimator.

Every explainer explains the last step of a ``Pipeline`` (nested pipelines
too) in the features its preceding steps produce, and the refitted
``best_estimator_`` of a hyperparameter search. Wrappers whose output is not
their inner model's (a calibration map, a vote, a stack) are refused here
with what to pass instead. Classes are matched by name and module, as the
tree parsers do, so that no experimental scikit-learn module is imported.
"""

from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils.validation import check_is_fitted

from .._errors import UnsupportedModelError
from .malformed import malformed_model_errors

# Searches whose best_estimator_ is the model, when refitted (refit=True).
_SEARCHES = frozenset(
    {
        "GridSearchCV",
        "RandomizedSearchCV",
        "HalvingGridSearchCV",
        "HalvingRandomSearchCV",
    }
)

# Wrappers explained only through what they wrap: why, and what to pass.
_REFUSED = {
    "TransformedTargetRegressor": (
        "its predictions are the inverse transform of its regressor's",
        "pass its fitted regressor, .regressor_ (the values are then in the "
        "transformed target space)",
    ),
    "CalibratedClassifierCV": (
        "its probabilities are a calibration map of its classifiers' outputs",
        "pass an uncalibrated classifier, such as "
        ".calibrated_classifiers_[0].estimator",
    ),
    "VotingRegressor": (
        "it averages several models",
        "explain each of .estimators_; Shapley values are linear, so the "
        "weighted average of theirs is the average model's",
    ),
    "VotingClassifier": (
        "it combines several models' votes or probabilities",
        "explain each of .estimators_",
    ),
    "StackingRegressor": (
        "its final estimator reads the other models' predictions",
        "explain each of .estimators_",
    ),
    "StackingClassifier": (
        "its final estimator reads the other models' predictions",
        "explain each of .estimators_",
    ),
    "BaggingRegressor": (
        "each member sees its own subset of the features",
        "use RandomForestRegressor or ExtraTreesRegressor",
    ),
    "BaggingClassifier": (
        "each member sees its own subset of the features",
        "use RandomForestClassifier or ExtraTreesClassifier",
    ),
    "MultiOutputRegressor": (
        "it holds one model per output",
        "explain each of .estimators_",
    ),
    "MultiOutputClassifier": (
        "it holds one model per output",
        "explain each of .estimators_",
    ),
}


@malformed_model_errors
def final_estimator(model) -> tuple[Pipeline | None, object]:
    """A model's preprocessing steps, or None, and the estimator to explain.

    Unwraps ``Pipeline`` (its steps before the last transform the input;
    nested pipelines are flattened into one chain) and fitted searches with
    ``refit=True`` (``GridSearchCV``, ``RandomizedSearchCV``,
    ``HalvingGridSearchCV``, ``HalvingRandomSearchCV``: their
    ``best_estimator_``). Any other model is returned as it is, with no
    preprocessing.

    Parameters
    ----------
    model : estimator
        A fitted model, possibly a pipeline or a search.

    Returns
    -------
    preprocess : Pipeline or None
        The fitted steps that transform the raw input, or None if there
        are none (``"passthrough"`` steps are left out).
    estimator : estimator
        The final model.

    Raises
    ------
    UnsupportedModelError
        For wrappers that cannot be explained exactly (a
        ``TransformedTargetRegressor``, ``CalibratedClassifierCV``, voting,
        stacking or bagging ensemble, ...), saying what to pass instead; for
        a search not refitted, and a pipeline ending in ``"passthrough"``.
    sklearn.exceptions.NotFittedError
        If a pipeline or search is not fitted.
    ValueError
        If a pipeline's steps are malformed (a corrupt model file).
    """
    steps = []
    while True:
        model = _unwrapped_search(model)
        _refuse_wrapper(model)
        if not isinstance(model, Pipeline):
            break
        _check_steps(model)
        steps += [step for _, step in model.steps[:-1] if _transforms(step)]
        model = model.steps[-1][1]
        if not _transforms(model):
            raise UnsupportedModelError(
                "The pipeline's last step is 'passthrough'; there is no model "
                "to explain."
            )
    return (make_pipeline(*steps) if steps else None), model


def _unwrapped_search(model):
    """A fitted search's ``best_estimator_``; any other model as it is."""
    cls = type(model)
    if not (cls.__name__ in _SEARCHES and cls.__module__.startswith("sklearn.")):
        return model
    check_is_fitted(model)
    if getattr(model, "refit", True) is False:
        raise UnsupportedModelError(
            f"The {cls.__name__} was fitted with refit=False, so it has no "
            "best_estimator_; refit it with refit=True, or pass the model "
            "fitted with its best_params_."
        )
    return model.best_estimator_


def _refuse_wrapper(model) -> None:
    """Raise, saying what to pass instead, for a wrapper we cannot explain."""
    cls = type(model)
    if cls.__name__ in _REFUSED and cls.__module__.startswith("sklearn."):
        why, instead = _REFUSED[cls.__name__]
        raise UnsupportedModelError(
            f"A {cls.__name__} cannot be explained exactly: {why}; {instead}."
        )


def _check_steps(pipeline: Pipeline) -> None:
    """Raise unless the pipeline's steps are fitted (name, estimator) pairs."""
    steps = pipeline.steps
    if not (
        isinstance(steps, list)
        and steps
        and all(isinstance(step, tuple) and len(step) == 2 for step in steps)
    ):
        raise ValueError(
            "The pipeline is malformed: its steps must be a non-empty list of "
            "(name, estimator) pairs; the model file may be corrupt."
        )
    check_is_fitted(pipeline)


def _transforms(step) -> bool:
    """Whether a pipeline step does anything (not ``None`` or ``"passthrough"``)."""
    return step is not None and not (isinstance(step, str) and step == "passthrough")
