"""Exceptions that callers tell apart from others of their base class."""

from ._contract.naming import model_name

# Where the unsupported-model error sends the reader for the full list.
_FULL_LIST = 'See the user guide\'s "Supported models" for the full list.'


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

    # Whether the explainer does not know the model's kind at all (rather
    # than a setting of one of its models, such as a kernel that is not a
    # product): skshapley.Explainer reports the specific reasons first.
    _unknown_kind = False


def unsupported_model(who: str, model, families: str) -> UnsupportedModelError:
    """The one-line error for a model that ``who`` does not explain.

    It names the model, the supported ``families`` and where the full list
    of models is, and nothing longer: a list of every class is unreadable in
    an error.
    """
    error = UnsupportedModelError(
        f"{who} does not support {model_name(model)}; it explains {families}. "
        f"{_FULL_LIST}"
    )
    error._unknown_kind = True
    return error
