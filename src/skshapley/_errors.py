"""Exceptions that callers tell apart from others of their base class."""


class UnsupportedModelError(TypeError):
    """An explainer does not support this kind of model.

    A ``TypeError``, as scikit-learn raises for an estimator it cannot use.
    Its own class lets a caller that tries several explainers (the
    ``skshapley`` command, or a script) move on to the next one for this
    error only, and not for a ``TypeError`` raised by a bug or by a model the
    explainer does support. The message names the model and the supported
    families.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from skshapley import TreeExplainer, UnsupportedModelError
    >>> model = LinearRegression().fit([[0.0], [1.0]], [0.0, 1.0])
    >>> try:
    ...     TreeExplainer(model).fit()
    ... except UnsupportedModelError as exc:
    ...     print(type(exc).__name__, isinstance(exc, TypeError))
    UnsupportedModelError True
    """
