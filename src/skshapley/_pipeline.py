"""A pipeline's preprocessing and its final model.

Minimal version: the pipelines part of issue 12 replaces it with one that
also unwraps nested pipelines and search wrappers, and refuses wrappers that
cannot be explained exactly.
"""

from sklearn.pipeline import Pipeline


def final_estimator(model) -> tuple[Pipeline | None, object]:
    """The preprocessing steps (or None) and the final model of ``model``.

    Parameters
    ----------
    model : estimator
        A fitted model, or a ``Pipeline`` ending in one.

    Returns
    -------
    preprocess : Pipeline or None
        The steps before the last one, or None if there are none.
    estimator : estimator
        The model the explainer parses.
    """
    if not isinstance(model, Pipeline):
        return None, model
    return (model[:-1] if len(model) > 1 else None), model[-1]
