"""How reports, the command and explainers' ``describe()`` name a model."""

import inspect


def model_name(model) -> str:
    """The model's class name, with its library's unless it is scikit-learn's.

    A pipeline is named with its steps, ``Pipeline(StandardScaler,
    KernelRidge)``. Models the command read from XGBoost or LightGBM files
    describe themselves (``"XGBoost model file"``).

    Parameters
    ----------
    model : object
        A fitted model.

    Returns
    -------
    name : str
        For example ``"GradientBoostingRegressor"`` or
        ``"xgboost.XGBClassifier"``.
    """
    description = getattr(model, "description", None)
    if isinstance(description, str):
        return description
    if inspect.isfunction(model) or inspect.ismethod(model):
        return f"function {model.__qualname__}"
    cls = type(model)
    library = cls.__module__.partition(".")[0]
    if library != "sklearn":
        return f"{library}.{cls.__name__}"
    steps = getattr(model, "steps", None)  # a Pipeline: name its steps
    # (A pipeline read from a file may hold anything as its steps.)
    if isinstance(steps, list) and all(
        isinstance(step, tuple) and len(step) == 2 for step in steps
    ):
        return f"{cls.__name__}({', '.join(model_name(step) for _, step in steps)})"
    return cls.__name__
