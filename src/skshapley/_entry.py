"""One entry point: the explainer that fits a model, and explain in one call."""

import inspect
from collections.abc import Mapping
from numbers import Integral

import pandas as pd

from ._base import BaseExplainer
from ._contract.malformed import malformed_model_errors
from ._contract.mixins import refusal
from ._contract.naming import model_name
from ._contract.pipeline import final_estimator
from ._errors import UnsupportedModelError, unsupported_model
from .agnostic import ExactExplainer, PermutationExplainer
from .kernels import ProductKernelExplainer
from .trees import TreeExplainer

#: The exact explainers of model families, tried in this order; the first
#: that supports a model explains it (a model that two would explain goes to
#: the cheaper one). Any other model is explained model-agnostically.
EXPLAINERS: tuple[type[BaseExplainer], ...] = (TreeExplainer, ProductKernelExplainer)

#: The model-agnostic explainers, by the ``method`` that forces them.
AGNOSTIC: dict[str, type[BaseExplainer]] = {
    "exact": ExactExplainer,
    "permutation": PermutationExplainer,
}

# ExactExplainer's default max_players: the dispatch's, unless given.
_MAX_PLAYERS = inspect.signature(ExactExplainer).parameters["max_players"].default

# Short: the error is one line, and the user guide has the full list.
_FAMILIES = (
    "tree ensembles (scikit-learn, XGBoost, LightGBM), product-kernel models "
    "and any model with predict, predict_proba or decision_function, or a "
    "callable"
)


def Explainer(model, **params) -> BaseExplainer:
    """The explainer of ``model``, not yet fitted.

    Tree ensembles go to :class:`TreeExplainer` and product-kernel models
    to :class:`ProductKernelExplainer`, which are exact and need no
    background data (they take one for interventional values). Any other
    model (one with ``predict``, ``predict_proba`` or
    ``decision_function``, or a callable) goes to
    :class:`ExactExplainer` when its players (features, or groups) are at
    most ``max_players``, else to :class:`PermutationExplainer`; both are
    fitted on background data. ``method_`` tells which was chosen.

    Parameters
    ----------
    model : estimator or callable
        A fitted model, a ``Pipeline``, or a callable ``f(X) -> array``.
    **params
        The explainer's parameters (``groups``, ``n_quadrature_points``,
        ``n_jobs``, ``response_method``, ...), passed as they are; for the
        model-agnostic explainers, ``max_players`` (default 16) also chooses
        between them, and is not passed to :class:`PermutationExplainer`.

    Returns
    -------
    explainer : TreeExplainer, ProductKernelExplainer, ExactExplainer or \
            PermutationExplainer
        The chosen explainer, constructed with ``params``; call ``fit``
        next (with background data for the model-agnostic ones).

    Raises
    ------
    UnsupportedModelError
        If no explainer supports the model (an object without ``predict``,
        ``predict_proba`` or ``decision_function`` that is not callable): the
        model's name and the supported families.

    See Also
    --------
    explain : Fit and explain in one call.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn.linear_model import Ridge
    >>> import skshapley
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    >>> skshapley.Explainer(model).method_
    'tree'
    >>> skshapley.Explainer(Ridge().fit(X, y)).method_
    'exact'
    >>> skshapley.Explainer(Ridge().fit(X, y), max_players=8).method_
    'permutation'
    """
    cls = explainer_class(model, params)
    return cls(model, **_taken(cls, params))


def explain(model, X, *, background=None, **params) -> pd.DataFrame:
    """Shapley values of ``model`` for the rows of ``X``, in one call.

    ``Explainer(model, **params)``, fitted (on ``background`` if given),
    then ``explain(X)``, for scripts; keep the explainer (and its
    ``expected_value_``) by calling those yourself.

    Parameters
    ----------
    model : estimator or callable
        A fitted model, a ``Pipeline``, or a callable ``f(X) -> array``.
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        The rows to explain.
    background : array-like or pandas.DataFrame, default=None
        Background data: features left out of a coalition take its rows'
        values (interventional Shapley values). Needed by the
        model-agnostic explainers; a tree or product-kernel model is then
        explained with ``feature_perturbation="interventional"``.
    **params
        The explainer's parameters, as for :func:`Explainer`.

    Returns
    -------
    phi : pandas.DataFrame
        One row per sample and one column per feature (or
        ``(output, feature)`` for several outputs), as
        :meth:`TreeExplainer.explain` gives them.

    Raises
    ------
    ValueError
        If ``background`` is missing for a model-agnostic explainer, given
        for a product-kernel model, or given with
        ``feature_perturbation="tree_path_dependent"``.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.svm import SVR
    >>> import skshapley
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> phi = skshapley.explain(SVR(C=100.0).fit(X, y), X.iloc[:3])
    >>> phi.shape
    (3, 10)
    >>> phi = skshapley.explain(Ridge().fit(X, y), X.iloc[:3], background=X.iloc[:20])
    >>> phi.shape
    (3, 10)
    """
    return fitted_explainer(model, background, params).explain(X)


def fitted_explainer(
    model,
    background,
    params: dict,
    *,
    method: str = "auto",
    permutation_params: Mapping | None = None,
    option: str = "background=",
) -> BaseExplainer:
    """The explainer of ``model`` with ``params``, fitted (on ``background``).

    ``method`` is "auto" (:func:`Explainer`'s choice) or a key of
    :data:`AGNOSTIC` (that explainer, for any model).
    ``permutation_params`` go to :class:`PermutationExplainer` only, if it
    is chosen. Errors name the background ``option`` (the command says
    ``--background``). Each exact explainer parses the
    model once, in its ``fit``; only its :class:`UnsupportedModelError`
    moves on to the next one.
    """
    refusals = []
    if method == "auto":
        for cls in EXPLAINERS:
            if not set(params) <= set(inspect.signature(cls).parameters):
                # Another explainer's parameters: skip this one, unless it
                # explains the model (then its constructor names them).
                refused = refusal(cls, model)
                if refused is not None:
                    refusals.append(refused)
                    continue
            try:
                return _fitted(cls, model, background, params, option)
            except UnsupportedModelError as exc:
                refusals.append(exc)
    cls = _agnostic_class(model, params, refusals, method)
    explainer = cls(model, **_taken(cls, params))
    if cls is PermutationExplainer:
        explainer.set_params(**(permutation_params or {}))
    if background is None:
        raise ValueError(
            f"{model_name(model)} is explained by {cls.__name__}, "
            f"whose values compare each row with background data: pass "
            f"{option} (rows such as a sample of the training data)."
        )
    return explainer.fit(background)


def _fitted(cls, model, background, params: dict, option: str) -> BaseExplainer:
    """``cls``'s explainer of ``model``, fitted; interventional with a background
    (given as ``option``: ``background=``, or the command's ``--background``)."""
    if background is None:
        return cls(model, **params).fit()
    params = {"feature_perturbation": "interventional", **params}
    if params["feature_perturbation"] != "interventional":
        raise ValueError(
            f'{option} is for feature_perturbation="interventional"; '
            f"got feature_perturbation={params['feature_perturbation']!r}: "
            "leave out one of them."
        )
    return cls(model, **params).fit(background)


def explainer_class(model, params: dict, method: str = "auto") -> type:
    """The class of :func:`Explainer`'s choice for ``model`` and ``params``.

    ``method`` is "auto" or a key of :data:`AGNOSTIC` (that class, if it
    explains the model). Raises the error of :func:`no_explainer` for a
    model that no explainer takes.
    """
    refusals = []
    if method == "auto":
        for cls in EXPLAINERS:
            refused = refusal(cls, model)
            if refused is None:
                return cls
            refusals.append(refused)
    return _agnostic_class(model, params, refusals, method)


def _agnostic_class(model, params: dict, refusals: list, method: str) -> type:
    """The model-agnostic explainer class of ``model``.

    ``method`` "auto" chooses :class:`ExactExplainer` for at most
    ``max_players`` players, else :class:`PermutationExplainer`. A model
    neither explains raises the error of :func:`no_explainer` (``refusals``
    are the exact explainers').
    """
    refused = refusal(AGNOSTIC.get(method, ExactExplainer), model)
    if refused is not None and method != "auto":
        raise refused  # the explainer asked for does not take it
    if refused is not None:
        raise no_explainer(model, [*refusals, refused])
    if method == "auto":
        n_players = _n_players(model, params.get("groups"))
        large = n_players is not None and n_players > params.get(
            "max_players", _MAX_PLAYERS
        )
        method = "permutation" if large else "exact"
    return AGNOSTIC[method]


def _taken(cls, params: dict) -> dict:
    """``params`` as ``cls`` takes them: the sampler has no ``max_players``."""
    if cls is PermutationExplainer:
        return {key: value for key, value in params.items() if key != "max_players"}
    return params


def _n_players(model, groups) -> int | None:
    """The players of ``model`` with ``groups``, or None if it is not known.

    A mapping's groups are players, and so is each input column in none of
    them; without a mapping, each input column (``n_features_in_``) is one.
    """
    n_features = _n_features(model)
    if not isinstance(groups, Mapping):
        return n_features
    members = set()
    for listed in groups.values():
        members |= {listed} if isinstance(listed, str | int) else set(listed)
    if n_features is None:
        return len(groups)
    return len(groups) + max(n_features - len(members), 0)


@malformed_model_errors
def _n_features(model) -> int | None:
    """``model.n_features_in_``, or None unless it is a count (a model read
    from a file may hold anything there)."""
    n_features = getattr(model, "n_features_in_", None)
    if isinstance(n_features, bool) or not isinstance(n_features, Integral):
        return None
    return int(n_features)


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
