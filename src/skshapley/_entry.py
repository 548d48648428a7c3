"""One entry point: the explainer that fits a model, and explain in one call."""

import pandas as pd

from ._base import BaseExplainer
from ._errors import UnsupportedModelError, unsupported_model
from ._pipeline import final_estimator
from .kernels import ProductKernelExplainer
from .trees import TreeExplainer

#: The explainers, tried in this order; the first that supports a model
#: explains it (a model that two would explain goes to the cheaper one).
EXPLAINERS: tuple[type[BaseExplainer], ...] = (TreeExplainer, ProductKernelExplainer)

_FAMILIES = (
    "tree ensembles (scikit-learn, XGBoost, LightGBM) and product-kernel models "
    "(kernel ridge regression, support vector machines, Gaussian processes)"
)


def Explainer(model, **params) -> BaseExplainer:
    """The explainer of ``model``, not yet fitted.

    Parameters
    ----------
    model : estimator
        A fitted model that some explainer supports, or a ``Pipeline``
        ending in one.
    **params
        The explainer's parameters (``groups``, ``n_quadrature_points``,
        ``n_jobs``, ...).

    Returns
    -------
    explainer : TreeExplainer or ProductKernelExplainer
        The first explainer whose :meth:`~TreeExplainer.supports` accepts
        ``model``, constructed with ``params``; call ``fit`` next.

    Raises
    ------
    UnsupportedModelError
        If no explainer supports the model: the reason an explainer gave for
        a model of its kind with unsupported settings (a kernel that is not
        a product, say), else the model's name and the supported families.

    See Also
    --------
    explain : Fit and explain in one call.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> import skshapley
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    >>> explainer = skshapley.Explainer(model)
    >>> type(explainer).__name__
    'TreeExplainer'
    """
    refusals = []
    for cls in EXPLAINERS:
        refusal = cls._refusal(model)
        if refusal is None:
            return cls(model, **params)
        refusals.append(refusal)
    raise no_explainer(model, refusals)


def explain(model, X, **params) -> pd.DataFrame:
    """Shapley values of ``model`` for the rows of ``X``, in one call.

    ``Explainer(model, **params).fit().explain(X)``, for scripts; keep the
    explainer (and its ``expected_value_``) by calling those yourself.

    Parameters
    ----------
    model : estimator
        A fitted model that some explainer supports, or a ``Pipeline``
        ending in one.
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        The rows to explain.
    **params
        The explainer's parameters.

    Returns
    -------
    phi : pandas.DataFrame
        One row per sample and one column per feature (or
        ``(output, feature)`` for several outputs), as
        :meth:`TreeExplainer.explain` gives them.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.svm import SVR
    >>> import skshapley
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = SVR(C=100.0).fit(X, y)
    >>> phi = skshapley.explain(model, X.iloc[:3])
    >>> phi.shape
    (3, 10)
    """
    return Explainer(model, **params).fit().explain(X)


def no_explainer(model, refusals: list[UnsupportedModelError]):
    """The error for a model that every explainer refused, in one line.

    An explainer's refusal of a model of its own kind (with a setting it
    does not support) says what to change, and is the error; if every
    explainer refused the kind of model, the error names it and the
    families supported.
    """
    specific = [refusal for refusal in refusals if not refusal._unknown_kind]
    if specific:
        return specific[0]
    return unsupported_model("skshapley", final_estimator(model)[1], _FAMILIES)
