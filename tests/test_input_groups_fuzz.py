"""groups="input" on random preprocessings: right groups, or a clear refusal.

Hypothesis builds ColumnTransformers from a pool of transformers, some that
act column by column (scalers, ufuncs, the identity, discretizers, splines,
one-hot encoding) and some that mix the columns of a row (a
``FunctionTransformer`` named one-to-one that divides by the row's total,
``Normalizer``, ``PCA``, ``PolynomialFeatures``), each on a random subset of
the inputs. The oracle is what the fitted preprocessing does, not what it
says: every transformed column that :func:`input_groups` gives to input
``i`` must not change when any other input changes (several rows, several
perturbations). Where no such grouping exists, ``input_groups`` must raise
a ``ValueError`` naming the transformer; it never returns a wrong group.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    PolynomialFeatures,
    SplineTransformer,
    StandardScaler,
)

from skshapley._contract.input_groups import input_groups

INPUTS = ["a", "b", "c", "d"]


def _share_of_row(X):
    X = np.asarray(X, dtype=float)
    return X / (1.0 + np.abs(X).sum(axis=1, keepdims=True))


# name -> factory; each takes numeric columns.
POOL = {
    "scaler": StandardScaler,
    "minmax": MinMaxScaler,
    "ufunc": lambda: FunctionTransformer(np.tanh, feature_names_out="one-to-one"),
    "identity": lambda: FunctionTransformer(feature_names_out="one-to-one"),
    "bins": lambda: KBinsDiscretizer(
        n_bins=3, encode="onehot-dense", quantile_method="averaged_inverted_cdf"
    ),
    "splines": lambda: SplineTransformer(n_knots=3, degree=2),
    "onehot": lambda: OneHotEncoder(sparse_output=False, handle_unknown="ignore"),
    "share_of_row": lambda: FunctionTransformer(
        _share_of_row, feature_names_out="one-to-one"
    ),
    "normalizer": Normalizer,
    "pca": lambda: PCA(n_components=1),
    "polynomial": lambda: PolynomialFeatures(2, include_bias=False),
}


def data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, len(INPUTS))), columns=INPUTS)
    X["d"] = rng.integers(0, 3, n).astype(float)  # a few values, for one-hot
    return X


@st.composite
def preprocessings(draw):
    """A ColumnTransformer of 1-3 transformers on disjoint input subsets."""
    inputs = draw(st.permutations(INPUTS))
    n_steps = draw(st.integers(1, 3))
    cuts = sorted(draw(st.lists(st.integers(1, 3), min_size=n_steps - 1,
                                max_size=n_steps - 1, unique=True)))  # fmt: skip
    subsets = np.split(np.array(inputs), cuts)
    steps = []
    for k, subset in enumerate(subsets):
        if len(subset):
            name = draw(st.sampled_from(sorted(POOL)))
            steps.append((f"{name}{k}", POOL[name](), [str(c) for c in subset]))
    remainder = draw(st.sampled_from(["drop", "passthrough"]))
    return ColumnTransformer(steps, remainder=remainder)


def _depends(preprocess, X, j: int) -> np.ndarray:
    """Which transformed columns change when input ``j`` alone changes."""
    base = preprocess.transform(X)
    changed = np.zeros(base.shape[1], dtype=bool)
    for shift in (0.37, -1.3, 2.9):
        moved = X.copy()
        moved.iloc[:, j] += shift
        changed |= np.any(np.abs(preprocess.transform(moved) - base) > 1e-12, axis=0)
    return changed


@settings(max_examples=60, deadline=None)
@given(preprocess=preprocessings())
def test_input_groups_are_what_the_preprocessing_does(preprocess):
    X = data()
    preprocess.fit(X)
    names = list(preprocess.get_feature_names_out())
    try:
        groups, refusal = input_groups(preprocess, INPUTS), None
    except ValueError as exc:
        groups, refusal = None, str(exc)
    if refusal is not None:
        # Refused: a mixing step, named, is in the preprocessing.
        assert "cannot split" in refusal
        mixing = ("share_of_row", "normalizer", "pca", "polynomial")
        assert any(step[0].startswith(mixing) for step in preprocess.transformers)
        return
    owner = {column: name for name, columns in groups.items() for column in columns}
    assert sorted(owner) == sorted(names)  # every transformed column, once
    for j, name in enumerate(INPUTS):
        moved = _depends(preprocess, X, j)
        for column in np.array(names)[moved]:
            assert owner[column] == name, (column, name, groups)


@pytest.mark.parametrize("mixer", ["share_of_row", "normalizer", "pca", "polynomial"])
def test_each_mixing_step_on_two_inputs_is_refused(mixer):
    preprocess = ColumnTransformer(
        [(mixer, POOL[mixer](), ["a", "b"]), ("scaler", StandardScaler(), ["c"])]
    ).fit(data())
    with pytest.raises(ValueError, match=f"cannot split '{mixer}'"):
        input_groups(preprocess, INPUTS)
