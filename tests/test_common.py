"""The contract every explainer keeps, for every model family, in a pipeline or not.

One suite, parametrized over (explainer, model family, pipeline or not): the
scikit-learn estimator contract (parameters, clone, pickle, not fitted), the
input contract (DataFrames matched by name in any column order, NumPy
arrays, polars frames, the caller's data never modified), bit-identical
values for any ``n_jobs``, efficiency against the model's own output,
outputs named by the model's own labels as Python values, ``raw_predict``
as a float64 NumPy array, one output for a binary classifier (its positive
class, ``classes_[1]``), and interaction values that sum to the Shapley
values in the same layout.
The model-agnostic explainers keep the same contract with a background
given to ``fit``, have no ``n_jobs`` and no interaction values.
What is particular to one explainer is tested in ``tests/trees``,
``tests/kernels`` and ``tests/agnostic``.
"""

import inspect
import pickle
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import pandas as pd
import pytest
from naive import kernel_model_output
from sklearn.base import clone
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    IsolationForest,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, OneClassSVM

import skshapley
from skshapley import (
    ExactExplainer,
    PermutationExplainer,
    ProductKernelExplainer,
    TreeExplainer,
)

FEATURES = ["age", "dose", "weight", "height"]


@dataclass(frozen=True)
class Family:
    """A model family: how to fit one, and its own raw output."""

    name: str
    explainer: type
    make: object  # () -> unfitted model
    raw: object  # (fitted model, X) -> the model's own raw output
    classes: int = 0  # 0: a regressor
    # Efficiency is checked to this absolute error, on outputs of scale ~1.
    atol: float = 1e-10
    library: str | None = None  # an optional library the model needs
    # The explainer's constructor parameters besides the model.
    params: dict = field(default_factory=dict)

    @property
    def agnostic(self) -> bool:
        """Whether the explainer calls the model on a background (no parsing)."""
        return self.explainer in (ExactExplainer, PermutationExplainer)

    def fit_data(self) -> tuple:
        """What ``fit`` takes: a background for the agnostic explainers."""
        return (data(n=10, seed=4)[0],) if self.agnostic else ()


def predict(model, X):
    return model.predict(X)


def decision(model, X):
    return model.decision_function(X)


def probability(model, X):
    return model.predict_proba(X)


def margin(model, X):
    return model.predict(X, output_margin=True)


def raw_score(model, X):
    return model.predict(X, raw_score=True)


def final(model):
    """A pipeline's final model, or the model."""
    return model[-1] if isinstance(model, Pipeline) else model


def path_length(model, X):
    """An isolation forest's average path length, from its own score_samples.

    ``score_samples = -2 ** (-h / c(n))`` with ``c(n) = 2 H(n - 1) - 2 (n -
    1) / n``, ``H(i) ~ ln(i) + Euler's gamma`` (Liu et al., 2008).
    """
    n = final(model).max_samples_
    c = 2.0 * (np.log(n - 1.0) + np.euler_gamma) - 2.0 * (n - 1.0) / n
    return -c * np.log2(-model.score_samples(X))


def latent_mean(model, X):
    """A multiclass GPC's one-vs-rest latent means, from its Laplace models."""
    if isinstance(model, Pipeline):
        X = model[:-1].transform(X)
    return kernel_model_output(final(model), X)


def xgboost_model():
    import xgboost

    return xgboost.XGBClassifier(n_estimators=4, max_depth=3, random_state=0)


def lightgbm_model():
    import lightgbm

    return lightgbm.LGBMRegressor(n_estimators=4, num_leaves=6, verbose=-1)


FAMILIES = [
    Family(
        "random_forest",
        TreeExplainer,
        lambda: RandomForestRegressor(n_estimators=3, max_depth=5, random_state=0),
        predict,
    ),
    Family(
        "random_forest_classifier",
        TreeExplainer,
        lambda: RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0),
        probability,
        classes=3,
    ),
    Family(
        "gradient_boosting_classifier",
        TreeExplainer,
        lambda: GradientBoostingClassifier(n_estimators=3, random_state=0),
        decision,
        classes=3,
    ),
    Family(
        "hist_gradient_boosting",
        TreeExplainer,
        lambda: HistGradientBoostingRegressor(max_iter=5, random_state=0),
        predict,
    ),
    # XGBoost and LightGBM sum their trees in float32 (XGBoost) or in
    # another order: their own outputs agree to float32 rounding.
    Family("xgboost", TreeExplainer, xgboost_model, margin, 2, 1e-5, "xgboost"),
    Family("lightgbm", TreeExplainer, lightgbm_model, raw_score, 0, 1e-9, "lightgbm"),
    Family(
        "kernel_ridge",
        ProductKernelExplainer,
        lambda: KernelRidge(kernel="rbf", gamma=0.3),
        predict,
    ),
    # decision_function_shape="ovo": the explainer's outputs are the
    # one-vs-one decision functions.
    Family(
        "svc",
        ProductKernelExplainer,
        lambda: SVC(decision_function_shape="ovo"),
        decision,
        classes=3,
    ),
    Family(
        "gaussian_process",
        ProductKernelExplainer,
        lambda: GaussianProcessRegressor(RBF([1.0] * 4), optimizer=None),
        predict,
    ),
    Family(
        "isolation_forest",
        TreeExplainer,
        lambda: IsolationForest(n_estimators=5, random_state=0),
        path_length,
    ),
    Family(
        "one_class_svm",
        ProductKernelExplainer,
        lambda: OneClassSVM(gamma=0.3),
        decision,
    ),
    Family(
        "gaussian_process_classifier",
        ProductKernelExplainer,
        lambda: GaussianProcessClassifier(RBF([1.0] * 4), optimizer=None),
        latent_mean,
        classes=3,
    ),
    Family(
        "logistic_regression",
        ExactExplainer,
        LogisticRegression,
        probability,
        classes=3,
    ),
    Family(
        "mlp_regressor",
        ExactExplainer,
        lambda: MLPRegressor(hidden_layer_sizes=(8,), max_iter=2000, random_state=0),
        predict,
    ),
    Family(
        "k_neighbors_classifier",
        PermutationExplainer,
        lambda: KNeighborsClassifier(5),
        probability,
        classes=3,
        params={"n_permutations": 4, "random_state": 0},
    ),
]


def data(n=80, seed=0):
    """A DataFrame with string column names and a non-default index, and y."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        rng.normal(size=(n, len(FEATURES))),
        columns=FEATURES,
        index=pd.Index([f"p{i}" for i in range(seed * 1000, seed * 1000 + n)]),
    )
    y = np.sin(X["age"]) + X["dose"] * X["weight"] - 0.5 * X["height"]
    return X, y


@cache
def fitted(name: str, pipeline: bool):
    family = next(family for family in FAMILIES if family.name == name)
    if family.library:
        pytest.importorskip(family.library)
    X, y = data()
    if family.classes:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, family.classes + 1)[1:-1]))
    model = family.make()
    if pipeline:
        model = make_pipeline(StandardScaler(), model)
    return model.fit(X, y)


def cases(families):
    return [
        pytest.param(
            (family, pipeline),
            id=f"{family.name}-{'pipeline' if pipeline else 'model'}",
        )
        for family in families
        for pipeline in (False, True)
    ]


CASES = cases(FAMILIES)
# The explainers that parse the model: threads and interaction values.
PARSED_CASES = cases([family for family in FAMILIES if not family.agnostic])
AGNOSTIC_CASES = cases([family for family in FAMILIES if family.agnostic])


@pytest.fixture(params=CASES)
def case(request):
    """(family, fitted model, fitted explainer) of one case."""
    family, pipeline = request.param
    model = fitted(family.name, pipeline)
    explainer = family.explainer(model, **family.params)
    return family, model, explainer.fit(*family.fit_data())


def test_the_entry_point_picks_the_explainer(case):
    family, model, explainer = case
    assert family.explainer.supports(model)
    others = {TreeExplainer, ProductKernelExplainer} - {family.explainer}
    assert not any(other.supports(model) for other in others)
    X, _ = data(n=5, seed=1)
    if not family.agnostic:
        chosen = skshapley.Explainer(model, n_jobs=1)
        assert chosen.n_jobs == 1
        explained = skshapley.explain(model, X)
    else:
        # Four features: the permutation explainer is chosen above max_players.
        params = dict(family.params)
        if family.explainer is PermutationExplainer:
            params["max_players"] = 3
        chosen = skshapley.Explainer(model, **params)
        background = family.fit_data()[0]
        explained = skshapley.explain(model, X, background=background, **params)
    assert type(chosen) is family.explainer
    pd.testing.assert_frame_equal(explained, explainer.explain(X))


# Parameters set_params changes, with values other than the defaults.
SETTABLE = {
    ExactExplainer: {"max_players": 7, "index": "banzhaf"},
    PermutationExplainer: {"n_permutations": 7, "random_state": 3},
}


def test_params_are_the_constructors(case):
    family, model, explainer = case
    names = set(inspect.signature(family.explainer).parameters)
    params = explainer.get_params(deep=False)
    assert set(params) == names
    assert params["model"] is model
    unfitted = family.explainer(model)
    settable = SETTABLE.get(family.explainer, {"n_jobs": 2, "n_quadrature_points": 7})
    assert unfitted.set_params(**settable) is unfitted
    assert {name: getattr(unfitted, name) for name in settable} == settable
    assert not hasattr(unfitted, "expected_value_")  # set_params only stores
    if family.agnostic:
        assert unfitted.fit(*family.fit_data()) is unfitted
    else:
        assert unfitted.fit(*data()) is unfitted  # X and y are not used


def test_clone_explains_the_same_model(case):
    family, model, explainer = case
    cloned = clone(explainer)
    assert cloned.get_params(deep=False)["model"] is model  # not a refitted copy
    assert not hasattr(cloned, "expected_value_")
    X, _ = data(n=6, seed=1)
    pd.testing.assert_frame_equal(
        cloned.fit(*family.fit_data()).explain(X), explainer.explain(X)
    )


def test_pickle_round_trip_needs_no_model_object(case):
    # What explain and raw_predict read is parsed into the explainer's own
    # arrays (and a pipeline's preprocessing): not the model object. The
    # agnostic explainers call the model: theirs travels with them.
    family, _, explainer = case
    restored = pickle.loads(pickle.dumps(explainer))
    if not family.agnostic:
        restored.set_params(model=None)
    X, _ = data(n=6, seed=1)
    pd.testing.assert_frame_equal(restored.explain(X), explainer.explain(X))
    np.testing.assert_array_equal(restored.raw_predict(X), explainer.raw_predict(X))
    if isinstance(explainer.expected_value_, float):
        assert restored.expected_value_ == explainer.expected_value_
    else:
        pd.testing.assert_series_equal(
            restored.expected_value_, explainer.expected_value_
        )


def test_not_fitted(case):
    family, model, _ = case
    X, _ = data(n=3)
    explainer = family.explainer(model)
    for method in (explainer.explain, explainer.raw_predict, explainer.describe):
        with pytest.raises(NotFittedError):
            method(*(() if method == explainer.describe else (X,)))


def test_frames_by_name_in_any_order_and_arrays_by_position(case):
    _, _, explainer = case
    X, _ = data(n=7, seed=1)
    phi = explainer.explain(X)
    pd.testing.assert_index_equal(phi.index, X.index)
    reordered = X[FEATURES[::-1]]
    pd.testing.assert_frame_equal(explainer.explain(reordered), phi)
    np.testing.assert_array_equal(
        explainer.raw_predict(reordered), explainer.raw_predict(X)
    )
    from_array = explainer.explain(X.to_numpy())
    pd.testing.assert_index_equal(from_array.index, pd.RangeIndex(7))
    pd.testing.assert_frame_equal(from_array.set_axis(X.index), phi)


def test_polars_frames_by_name(case):
    polars = pytest.importorskip("polars")
    _, _, explainer = case
    X, _ = data(n=7, seed=1)
    expected = explainer.explain(X).reset_index(drop=True)
    reordered = polars.from_pandas(X[FEATURES[::-1]])
    pd.testing.assert_frame_equal(explainer.explain(reordered), expected)


def test_input_is_not_modified(case):
    _, _, explainer = case
    X, _ = data(n=6, seed=1)
    X.iloc[0, 0] = 0.1  # not a float32: a cast in place would change it
    frame, array = X.copy(), X.to_numpy().copy()
    for method in (explainer.explain, explainer.raw_predict):
        method(frame)
        method(array)
    pd.testing.assert_frame_equal(frame, X)
    np.testing.assert_array_equal(array, X.to_numpy())


@pytest.mark.parametrize("case", PARSED_CASES, indirect=True)
def test_n_jobs_gives_identical_values(case):
    """Bit for bit, for row counts around the tree kernel's 32-row block."""
    family, model, _ = case
    one, two = (family.explainer(model, n_jobs=n_jobs).fit() for n_jobs in (1, 2))
    for n_rows in (1, 2, 31, 33, 100):
        X, _ = data(n=n_rows, seed=2)
        pd.testing.assert_frame_equal(one.explain(X), two.explain(X), check_exact=True)


def test_efficiency_against_the_models_own_output(case):
    family, model, explainer = case
    X, _ = data(n=20, seed=3)
    raw = np.asarray(family.raw(model, X), dtype=np.float64)
    phi = explainer.explain(X)
    predicted = explainer.raw_predict(X)
    assert_raw_predict_type(explainer, predicted, len(X))
    assert predicted.shape == raw.shape
    np.testing.assert_allclose(predicted, raw, rtol=0, atol=family.atol)
    if raw.ndim == 1:
        total = phi.sum(axis=1) + explainer.expected_value_
        np.testing.assert_allclose(total, raw, rtol=0, atol=family.atol)
        return
    for k, output in enumerate(explainer.output_names_):
        one = explainer.explain(X, output=output)  # one output's plain frame
        pd.testing.assert_frame_equal(one, phi[output].rename_axis(columns=None))
        total = one.sum(axis=1) + explainer.expected_value_[output]
        np.testing.assert_allclose(total, raw[:, k], rtol=0, atol=family.atol)


def assert_raw_predict_type(explainer, raw, n_samples: int) -> None:
    """``raw_predict``'s one type: float64 ndarray, (n,) or (n, n_outputs)."""
    n_outputs = len(explainer.output_names_)
    assert type(raw) is np.ndarray
    assert raw.dtype == np.float64
    assert raw.shape == ((n_samples,) if n_outputs == 1 else (n_samples, n_outputs))


def assert_plain_labels(names, labels) -> None:
    """``names`` are Python values equal to ``labels``, and print as them."""
    assert type(names) is tuple
    assert names == tuple(labels)
    for name, label in zip(names, labels, strict=True):
        assert type(name) in (str, int, float, bool)
        assert isinstance(name, str) == isinstance(label, str)  # text stays text
    assert "np." not in repr(names)


def test_output_names_are_python_values(case):
    family, model, explainer = case
    names = explainer.output_names_
    classes = getattr(final(model), "classes_", None)
    if family.classes and family.raw is probability:
        assert_plain_labels(names, classes.tolist())
    else:
        assert_plain_labels(names, names)
    if not isinstance(explainer.expected_value_, float):
        assert "np." not in repr(explainer.expected_value_.index.tolist())
    assert_raw_predict_type(explainer, explainer.raw_predict(data(n=0)[0]), 0)


def binary_model(make, labels):
    """``make()`` fitted on two classes labelled ``labels`` (0 then 1)."""
    X, y = data()
    return make().fit(X, np.asarray(labels)[(y > np.median(y)).astype(int)])


# Every explainer, on a binary classifier of its family: what is explained
# and shown by default is the positive class, classes_[1], as in
# scikit-learn's displays (a binary classifier has one output).
BINARY = [
    pytest.param(
        TreeExplainer,
        lambda: GradientBoostingClassifier(n_estimators=3, random_state=0),
        decision,
        id="tree-gradient_boosting",
    ),
    pytest.param(
        TreeExplainer,
        lambda: RandomForestClassifier(n_estimators=3, random_state=0),
        lambda model, X: model.predict_proba(X)[:, 1],
        id="tree-random_forest",
    ),
    pytest.param(ProductKernelExplainer, SVC, decision, id="kernel-svc"),
    pytest.param(
        ExactExplainer,
        LogisticRegression,
        lambda model, X: model.predict_proba(X)[:, 1],
        id="exact-logistic_regression",
    ),
    pytest.param(
        PermutationExplainer,
        lambda: KNeighborsClassifier(5),
        lambda model, X: model.predict_proba(X)[:, 1],
        id="permutation-k_neighbors",
    ),
]


@pytest.mark.parametrize("labels", [[0, 1], ["no", "yes"]], ids=["ints", "text"])
@pytest.mark.parametrize(("explainer_class", "make", "positive"), BINARY)
def test_a_binary_classifier_explains_its_positive_class(
    explainer_class, make, positive, labels
):
    model = binary_model(make, labels)
    background, _ = data(n=10, seed=4)
    agnostic = explainer_class in (ExactExplainer, PermutationExplainer)
    # Seeded: explain's two calls below draw the same orderings.
    seeded = {"random_state": 0} if explainer_class is PermutationExplainer else {}
    explainer = explainer_class(model, **seeded)
    explainer.fit(*((background,) if agnostic else ()))
    assert_plain_labels(explainer.output_names_, model.classes_.tolist()[1:])
    # One output: a float base value, plain feature columns, a 1-D raw output.
    assert type(explainer.expected_value_) is float
    X, _ = data(n=6, seed=1)
    phi = explainer.explain(X)
    assert list(phi.columns) == FEATURES
    raw = explainer.raw_predict(X)
    assert_raw_predict_type(explainer, raw, len(X))
    np.testing.assert_allclose(raw, positive(model, X), rtol=0, atol=1e-10)
    total = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(total, raw, rtol=0, atol=1e-10)
    # The output is chosen by its label; the negative class is not one.
    positive_class = model.classes_[1]
    one = explainer.explain(X, output=positive_class)
    pd.testing.assert_frame_equal(one, phi)
    with pytest.raises(ValueError, match="is not one of the model's outputs"):
        explainer.explain(X, output=model.classes_[0])


@pytest.mark.parametrize("case", PARSED_CASES, indirect=True)
def test_interactions_sum_to_explain_in_its_layout(case):
    family, model, explainer = case
    assert explainer.supports_interactions
    X, _ = data(n=5, seed=1)
    frame = explainer.explain_interactions(X)
    phi = explainer.explain(X)
    players = list(explainer.player_names_)
    pd.testing.assert_index_equal(frame.columns, phi.columns)
    assert frame.index.tolist() == [(r, p) for r in X.index for p in players]
    outputs = [None] if phi.columns.nlevels == 1 else explainer.output_names_
    for output in outputs:
        block = frame if output is None else frame[output]
        sums = block.sum(axis=1).to_numpy().reshape(len(X), len(players))
        expected = phi if output is None else phi[output]
        # Two kernels (interactions' and explain's) agree to rounding.
        np.testing.assert_allclose(sums, expected, rtol=0, atol=family.atol)
    one, two = (
        family.explainer(model, n_jobs=n_jobs).fit().explain_interactions(X)
        for n_jobs in (1, 2)
    )
    pd.testing.assert_frame_equal(one, two, check_exact=True)


@pytest.mark.parametrize("case", AGNOSTIC_CASES, indirect=True)
def test_agnostic_explainers_have_no_interactions(case):
    _, _, explainer = case
    assert not explainer.supports_interactions
    with pytest.raises(NotImplementedError):
        explainer.explain_interactions(data(n=2, seed=1)[0])
