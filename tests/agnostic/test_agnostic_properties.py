"""Property tests: ExactExplainer keeps the Shapley axioms on random models.

The models are callables drawn at random: a linear part plus a product of
per-feature affine factors (every feature interacts with every other), on
random backgrounds and rows. The axioms are checked on the explainer's own
output, with the data built so that each axiom's premise holds exactly:
identical data columns for symmetry, a column the callable never reads for
the dummy, two callables and their sum for linearity.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skshapley import ExactExplainer

# Each value is a weighted sum of at most 2**5 means of model outputs:
# rounding stays below ~1e-14 of the outputs' scale.
RTOL = 1e-12
SETTINGS = settings(max_examples=12, deadline=None)


class Model:
    """f(x) = w . x + c * prod_j (1 + a_j x_j): reads only ``reads`` columns."""

    def __init__(self, w, a, c, reads):
        self.w, self.a, self.c, self.reads = w, a, c, list(reads)

    def __call__(self, X):
        # Row by row (no matrix product, whose rounding may depend on the
        # other rows of a call): a row's output depends on that row only.
        X = np.asarray(X, dtype=float)[:, self.reads]
        return (X * self.w).sum(axis=1) + self.c * np.prod(1 + self.a * X, axis=1)


@st.composite
def problems(draw, min_features=2):
    """(n_features, background, rows, seed) with a few features and rows."""
    d = draw(st.integers(min_features, 5))
    n_background = draw(st.integers(2, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    return d, rng.normal(size=(n_background, d)), rng.normal(size=(2, d)), rng


def random_model(rng, reads):
    k = len(reads)
    return Model(rng.normal(size=k), rng.normal(size=k), rng.normal(), reads)


def scale_of(model, *datasets):
    return np.abs(model(np.vstack(datasets))).max() + 1.0


@SETTINGS
@given(problems())
def test_efficiency(problem):
    d, background, rows, rng = problem
    model = random_model(rng, range(d))
    explainer = ExactExplainer(model).fit(background)
    total = explainer.explain(rows).sum(axis=1) + explainer.expected_value_
    atol = RTOL * scale_of(model, background, rows)
    np.testing.assert_allclose(total, model(rows), rtol=0, atol=atol)


@SETTINGS
@given(problems(min_features=3))
def test_symmetry_of_identical_columns(problem):
    # Column 1 repeats column 0 in the background and in the rows, and the
    # model weighs them alike: players 0 and 1 are interchangeable.
    d, background, rows, rng = problem
    model = random_model(rng, range(d))
    model.w[1], model.a[1] = model.w[0], model.a[0]
    background[:, 1], rows[:, 1] = background[:, 0], rows[:, 0]
    phi = ExactExplainer(model).fit(background).explain(rows).to_numpy()
    atol = RTOL * scale_of(model, background, rows)
    np.testing.assert_allclose(phi[:, 0], phi[:, 1], rtol=0, atol=atol)


@SETTINGS
@given(problems(), st.data())
def test_a_column_the_model_ignores_gets_exactly_zero(problem, data):
    d, background, rows, rng = problem
    ignored = data.draw(st.integers(0, d - 1))
    model = random_model(rng, [j for j in range(d) if j != ignored])
    phi = ExactExplainer(model).fit(background).explain(rows).to_numpy()
    # The model's outputs do not depend on the column, bit for bit, so
    # v(S + ignored) = v(S) for every S but one: v(N) is f(x) itself while
    # v(N minus ignored) is the mean of n_background copies of f(x), which
    # may differ from it by a few units in the last place (3 * 0.1 / 3 is
    # not 0.1). A leak of the column into any v(S) would be far larger.
    atol = 1e-14 * scale_of(model, background, rows)
    np.testing.assert_allclose(phi[:, ignored], 0.0, rtol=0, atol=atol)


@SETTINGS
@given(problems())
def test_linearity(problem):
    d, background, rows, rng = problem
    first, second = random_model(rng, range(d)), random_model(rng, range(d))

    def total(X):
        return first(X) + second(X)

    values = [
        ExactExplainer(f).fit(background).explain(rows).to_numpy()
        for f in (first, second, total)
    ]
    atol = RTOL * (
        scale_of(first, background, rows) + scale_of(second, background, rows)
    )
    np.testing.assert_allclose(values[0] + values[1], values[2], rtol=0, atol=atol)
