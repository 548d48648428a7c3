"""Which types a skops file may make skshapley construct: an explicit list.

A skops file names, for every object in it, the type to build it from
("module.Class") and skops imports that name and constructs it. skops trusts
some types by default (scikit-learn's estimators, NumPy's functions); any
other name is code the file chooses to run. The command reads a skops file
without ``--trust-pickle`` only if every type it names is in
:data:`TRUSTED_TYPES`, which holds what the supported models (see
``trees/_readers/dispatch.py`` and ``kernels/_sklearn.py``) and the pipelines put in
front of them contain, and nothing that stores code:

* the estimators both explainers read and their internal types (the tree
  structure ``sklearn.tree._tree.Tree``, HistGradientBoosting's predictors,
  bin mapper and losses, Gaussian-process kernels);
* ``Pipeline``, ``FeatureUnion``, ``ColumnTransformer`` (and its
  ``make_column_selector``) and preprocessing transformers that store only
  arrays (scalers, encoders, imputers, splines, ...), with their internal
  types (SciPy's ``BSpline``, from SciPy 1.18 its NumPy implementation
  ``_BSpline``, and the ``asarray`` function it keeps);
* the hyperparameter searches that the explainers unwrap to their
  ``best_estimator_`` (``GridSearchCV``, ``RandomizedSearchCV`` and the
  halving searches), with what they keep of the search: the default
  cross-validation splitters and scorer, and masked arrays in
  ``cv_results_``;
* containers, NumPy arrays, dtypes and random states, SciPy sparse matrices.

``FunctionTransformer``, ``functools.partial`` and one function,
``sklearn.utils.validation.check_array``, are listed because
HistGradientBoosting models with categorical features hold them in their
internal preprocessor. A FunctionTransformer calls what it stores, but the
only callables a file can name are then ``check_array`` and the classes
listed here, none of which runs code or touches files when called.

A name is trusted only if it is in the list *and* names the type where it
is defined: after import, its ``__module__`` and ``__qualname__`` must spell
the name in the file. A re-export or an alias (``sklearn.tree.Tree``, or the
standard library's ``GzipFile`` imported into a scikit-learn module) is
refused, so what is trusted cannot change when a module imports something.
"""

import importlib
from functools import cache

_HGB = "sklearn.ensemble._hist_gradient_boosting"
_HALVING = "sklearn.model_selection._search_successive_halving"
_LOSSES = (
    "AbsoluteError", "ExponentialLoss", "HalfBinomialLoss", "HalfGammaLoss",
    "HalfMultinomialLoss", "HalfPoissonLoss", "HalfSquaredError", "HuberLoss",
    "PinballLoss",
)  # fmt: skip

#: Every type a skops file may name without ``--trust-pickle``, by the name
#: of its defining module.
TRUSTED_TYPES = frozenset(
    [
        # containers and scalars
        *(f"builtins.{name}" for name in ("dict", "list", "tuple", "slice")),
        *(f"builtins.{name}" for name in ("str", "int", "float", "bool")),
        "functools.partial",
        # NumPy and SciPy data
        "numpy.ndarray",
        "numpy.dtype",
        *(f"numpy.{name}" for name in ("bool", "float32", "float64")),
        *(
            f"numpy.{kind}{bits}"
            for kind in ("int", "uint")
            for bits in (8, 16, 32, 64)
        ),
        *(f"numpy.{name}" for name in ("str_", "bytes_")),
        "numpy.random.mtrand.RandomState",
        "numpy.random._generator.Generator",
        *(
            f"scipy.sparse._{f}.{f}_{kind}"
            for f in ("csr", "csc")
            for kind in ("matrix", "array")
        ),
        # trees, forests and gradient boosting
        *(
            f"sklearn.tree._classes.{name}"
            for name in (
                "DecisionTreeRegressor",
                "DecisionTreeClassifier",
                "ExtraTreeRegressor",
                "ExtraTreeClassifier",
            )
        ),
        "sklearn.tree._tree.Tree",
        *(
            f"sklearn.ensemble._forest.{name}"
            for name in (
                "RandomForestRegressor",
                "RandomForestClassifier",
                "ExtraTreesRegressor",
                "ExtraTreesClassifier",
            )
        ),
        "sklearn.ensemble._gb.GradientBoostingRegressor",
        "sklearn.ensemble._gb.GradientBoostingClassifier",
        "sklearn.ensemble._iforest.IsolationForest",
        "sklearn.dummy.DummyRegressor",
        "sklearn.dummy.DummyClassifier",
        f"{_HGB}.gradient_boosting.HistGradientBoostingRegressor",
        f"{_HGB}.gradient_boosting.HistGradientBoostingClassifier",
        f"{_HGB}.predictor.TreePredictor",
        f"{_HGB}.binning._BinMapper",
        *(f"sklearn._loss.loss.{name}" for name in _LOSSES),
        *(f"sklearn._loss._loss.Cy{name}" for name in _LOSSES),
        *(
            f"sklearn._loss.link.{name}"
            for name in (
                "IdentityLink",
                "LogLink",
                "LogitLink",
                "HalfLogitLink",
                "MultinomialLogit",
                "Interval",
            )
        ),
        # kernel models
        "sklearn.kernel_ridge.KernelRidge",
        *(
            f"sklearn.svm._classes.{name}"
            for name in ("SVR", "SVC", "NuSVR", "NuSVC", "OneClassSVM")
        ),
        "sklearn.gaussian_process._gpr.GaussianProcessRegressor",
        "sklearn.gaussian_process._gpc.GaussianProcessClassifier",
        "sklearn.gaussian_process._gpc._BinaryGaussianProcessClassifierLaplace",
        # a multiclass GaussianProcessClassifier's one-vs-rest classifiers
        "sklearn.multiclass.OneVsRestClassifier",
        "sklearn.preprocessing._label.LabelBinarizer",
        *(
            f"sklearn.gaussian_process.kernels.{name}"
            for name in (
                "RBF",
                "Matern",
                "ConstantKernel",
                "WhiteKernel",
                "Sum",
                "Product",
            )
        ),
        # pipelines and the transformers in front of the models
        "sklearn.pipeline.Pipeline",
        "sklearn.pipeline.FeatureUnion",
        "sklearn.compose._column_transformer.ColumnTransformer",
        "sklearn.compose._column_transformer.make_column_selector",
        *(
            f"sklearn.preprocessing._data.{name}"
            for name in (
                "StandardScaler",
                "MinMaxScaler",
                "MaxAbsScaler",
                "RobustScaler",
                "Normalizer",
                "PowerTransformer",
                "QuantileTransformer",
            )
        ),
        "sklearn.preprocessing._encoders.OneHotEncoder",
        "sklearn.preprocessing._encoders.OrdinalEncoder",
        "sklearn.preprocessing._target_encoder.TargetEncoder",
        "sklearn.preprocessing._label.LabelEncoder",
        "sklearn.preprocessing._discretization.KBinsDiscretizer",
        "sklearn.preprocessing._polynomial.PolynomialFeatures",
        "sklearn.preprocessing._polynomial.SplineTransformer",
        "scipy.interpolate._bsplines.BSpline",
        # SciPy >= 1.18: the NumPy implementation a BSpline delegates to
        # (knots, coefficients, degree; no code)
        "scipy.interpolate._bsplines._BSpline",
        "scipy._lib.array_api_compat.numpy._aliases.asarray",
        "sklearn.impute._base.SimpleImputer",
        "sklearn.impute._base.MissingIndicator",
        # hyperparameter searches (unwrapped to best_estimator_)
        "sklearn.model_selection._search.GridSearchCV",
        "sklearn.model_selection._search.RandomizedSearchCV",
        f"{_HALVING}.HalvingGridSearchCV",
        f"{_HALVING}.HalvingRandomSearchCV",
        "sklearn.model_selection._split.KFold",
        "sklearn.model_selection._split.StratifiedKFold",
        "sklearn.metrics._scorer._PassthroughScorer",
        "numpy.ma.MaskedArray",
        # HistGradientBoosting's preprocessor of categorical features
        "sklearn.preprocessing._function_transformer.FunctionTransformer",
        "sklearn.utils.validation.check_array",
    ]
)


def untrusted(names) -> list[str]:
    """The names among ``names`` ("module.Type") that are not trusted, sorted."""
    return sorted(name for name in set(names) if not is_trusted(name))


@cache
def is_trusted(name: str) -> bool:
    """Whether ``name`` is listed and is where its type is defined.

    Only listed names are imported (their modules are scikit-learn's,
    NumPy's, SciPy's or the standard library's), so checking a name runs no
    code that the file chose.
    """
    if name not in TRUSTED_TYPES:
        return False
    module, _, qualname = name.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), qualname)
    except (ImportError, AttributeError):  # a version of the library without it
        return False
    # NumPy's scalar types and dtype report the module "numpy".
    return (found.__module__, found.__qualname__) == (module, qualname)


# How skops builds an object from a name (the node's "__loader__"). Those it
# uses for the supported models; others (MethodNode, OperatorFuncNode, ...)
# look up attributes or operators by names the file chooses.
_TRUSTED_LOADERS = frozenset(
    [
        "CachedNode", "DictNode", "ListNode", "TupleNode", "SliceNode", "JsonNode",
        "TypeNode", "FunctionNode", "PartialNode", "ObjectNode", "NdArrayNode",
        "DTypeNode", "RandomStateNode", "RandomGeneratorNode", "SparseMatrixNode",
        "TreeNode", "LossNode", "MaskedArrayNode",
    ]
)  # fmt: skip


def schema_types(schema) -> set[str]:
    """Every type name in a skops ``schema.json`` (parsed), as "module.Type".

    A node with a loader outside the trusted ones is named with its loader,
    "module.Type (skops Loader)", which no list holds.
    """
    names = set()
    stack = [schema]
    while stack:  # not recursive: the file decides how deep it nests
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if "__loader__" in item:
                loader = item["__loader__"]
                name = f"{item.get('__module__')}.{item.get('__class__')}"
                names.add(
                    name if loader in _TRUSTED_LOADERS else f"{name} (skops {loader})"
                )
            stack.extend(item.values())
    return names
