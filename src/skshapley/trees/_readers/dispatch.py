"""Which parser reads which model, by class name.

Models are matched by the name of their class (and module), so that
importing skshapley never imports an optional model library: the parser
modules only use the objects they are given, never import xgboost or
lightgbm themselves.
"""

from collections.abc import Callable

from sklearn.utils.validation import check_is_fitted

from ..._errors import unsupported_model
from .._table import TreeEnsemble
from .hist_gradient_boosting import parse_hist_gradient_boosting
from .lightgbm.model import parse_lightgbm
from .sklearn import (
    parse_gradient_boosting,
    parse_isolation_forest,
    parse_tree_or_forest,
)
from .xgboost.file import parse_xgboost_file
from .xgboost.model import parse_xgboost

# (module prefix, class name) -> parser
_PARSERS: dict[tuple[str, str], Callable[[object], TreeEnsemble]] = {
    **{
        ("sklearn.", name): parse_tree_or_forest
        for name in (
            "DecisionTreeRegressor",
            "DecisionTreeClassifier",
            "ExtraTreeRegressor",
            "ExtraTreeClassifier",
            "RandomForestRegressor",
            "RandomForestClassifier",
            "ExtraTreesRegressor",
            "ExtraTreesClassifier",
        )
    },
    **{
        ("sklearn.", name): parse_gradient_boosting
        for name in ("GradientBoostingRegressor", "GradientBoostingClassifier")
    },
    **{
        ("sklearn.", name): parse_hist_gradient_boosting
        for name in ("HistGradientBoostingRegressor", "HistGradientBoostingClassifier")
    },
    ("sklearn.", "IsolationForest"): parse_isolation_forest,
    **{
        ("lightgbm.", name): parse_lightgbm
        for name in ("LGBMRegressor", "LGBMClassifier", "LGBMRanker", "Booster")
    },
    # A LightGBM text model file, as the command reads it.
    ("skshapley.", "LightGBMTextModel"): parse_lightgbm,
    **{
        ("xgboost.", name): parse_xgboost
        for name in (
            "XGBRegressor",
            "XGBClassifier",
            "XGBRanker",
            "XGBRFRegressor",
            "XGBRFClassifier",
            "Booster",
        )
    },
    # An XGBoost file read by skshapley itself (the command's .json / .ubj).
    ("skshapley.", "XGBoostModel"): parse_xgboost_file,
}

# What the unsupported-model error names: the families, in one short line
# (the list of every class above is too long to read in an error).
SUPPORTED_FAMILIES = (
    "scikit-learn decision trees, random forests, extra trees, gradient "
    "boosting, HistGradientBoosting and IsolationForest; XGBoost; LightGBM"
)


def parse_model(model) -> TreeEnsemble:
    """Parse a fitted tree ensemble into a :class:`TreeEnsemble`.

    Raises
    ------
    UnsupportedModelError
        (a ``TypeError``) If the model is not a supported tree ensemble.
    sklearn.exceptions.NotFittedError
        If it is not fitted.
    """
    cls = type(model)
    key = next(
        (
            key
            for key in _PARSERS
            if cls.__module__.startswith(key[0]) and cls.__name__ == key[1]
        ),
        None,
    )
    if key is None:
        raise unsupported_model("TreeExplainer", model, SUPPORTED_FAMILIES)
    if hasattr(model, "fit"):  # a scikit-learn style estimator, not a Booster
        check_is_fitted(model)
    return _PARSERS[key](model)
