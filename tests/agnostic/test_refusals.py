"""Careless input to the model-agnostic explainers: one clear error, never a number.

Each case is what a user may pass by mistake; the error must say what was
expected and what was received, and nothing is computed from it.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

from skshapley import ExactExplainer, PermutationExplainer, TreeExplainer

rng = np.random.default_rng(0)
X = pd.DataFrame(rng.normal(size=(12, 3)), columns=["a", "b", "c"])


def model(rows):
    rows = np.asarray(rows, dtype=float)
    return rows[:, 0] * rows[:, 1] + rows[:, 2]


@pytest.mark.parametrize("cls", [ExactExplainer, PermutationExplainer])
@pytest.mark.parametrize(
    "output",
    [
        lambda out: out + 1j,  # the imaginary part used to be dropped
        lambda out: out.astype(complex),  # even a zero one
        lambda out: out.astype(str),
        lambda out: np.full(len(out), np.datetime64("2020-01-01")),
    ],
    ids=["complex", "complex zero", "strings", "dates"],
)
def test_a_callable_whose_output_is_not_real_is_refused(cls, output):
    explainer = cls(lambda rows: output(model(rows)))
    with pytest.raises(ValueError, match=r"^The output of the callable holds"):
        explainer.fit(X).explain(X.iloc[:2])


@pytest.mark.parametrize("cls", [ExactExplainer, PermutationExplainer, TreeExplainer])
@pytest.mark.parametrize(
    ("groups", "match"),
    [
        ({"g": None}, r"Group 'g' must list its features .* got None"),
        ({"g": 3.5}, r"Group 'g' must list its features .* got 3\.5"),
        ({"g": ["a", None]}, r"Group member None is not one of the model's features"),
    ],
)
def test_a_group_without_features_is_refused(cls, groups, match):
    if cls is TreeExplainer:
        explainer = cls(
            DecisionTreeRegressor(max_depth=2).fit(X, model(X)), groups=groups
        )
        fit = explainer.fit
    else:
        fit = lambda: cls(model, groups=groups).fit(X)  # noqa: E731
    with pytest.raises(ValueError, match=match):
        fit()


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, "0", True])
def test_a_random_state_that_seeds_nothing_is_refused(seed):
    with pytest.raises(ValueError, match=r"random_state must be None, an integer"):
        PermutationExplainer(model, random_state=seed).fit(X)


@pytest.mark.parametrize(
    "seed", [0, 2**63 - 1, np.random.default_rng(1), np.random.RandomState(1)]
)
def test_every_kind_of_seed_is_accepted(seed):
    phi = PermutationExplainer(model, random_state=seed).fit(X).explain(X.iloc[:2])
    np.testing.assert_allclose(
        phi.sum(axis=1) + model(X).mean(), model(X.iloc[:2]), atol=1e-12
    )


@pytest.mark.parametrize("cls", [ExactExplainer, PermutationExplainer])
@pytest.mark.parametrize(
    "empty", [X.iloc[:, :0], np.empty((5, 0))], ids=["frame", "array"]
)
def test_data_without_features_is_refused(cls, empty):
    with pytest.raises(ValueError, match=r"has no columns: there are no features"):
        cls(lambda rows: np.ones(len(rows))).fit(empty)


@pytest.mark.parametrize("cls", [ExactExplainer, PermutationExplainer])
def test_a_background_past_max_memory_is_refused_at_fit(cls):
    background = np.zeros((2000, 3))
    needed = 24 * 2000 * 3  # three float64 copies: kept, and per chunk
    with pytest.raises(
        ValueError,
        match=rf"X_background of 2,000 rows and 3 features needs {needed:,} bytes "
        r"as 3 float64 copies.*"
        r"\(about 1,999 rows fit",
    ):
        cls(model, max_memory=2 * needed - 2).fit(background)
    cls(model, max_memory=2 * needed).fit(background)  # exactly enough
