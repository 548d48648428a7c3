"""ProductKernelExplainer: exact Shapley values of product-kernel models."""

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._base import BaseExplainer, BaseValueMeaning
from .._contract.features import feature_names
from .._contract.results import QuadratureUse, in_shap_convention
from .._runtime.memory import DEFAULT_MAX_MEMORY
from .._runtime.threads import effective_n_threads
from ..games import _indices_core
from ..games._indices_core import RuleView
from ..games._product import add_pure_game_sums
from ..games._product_core import GAMES_PER_TASK
from ..games._quadrature import (
    auto_n_points,
    check_n_quadrature_points,
    gauss_legendre,
)
from . import _factors_core, _interactions_core
from . import _interventional as interventional
from ._sklearn import parse_kernel_model

# Kernel factors computed at a time (rows x references x features): bounds the
# temporaries of a block to a few tens of MB (the gaps, at most this many, and
# the partial sums of 8 games each, an eighth of it per output).
_BLOCK_VALUES = 2**20


class ProductKernelExplainer(BaseExplainer):
    """Exact Shapley values of kernel models whose kernel is a product.

    A model ``f(x) = sum_i alpha_i prod_j k_j(x_j, r_ij) + c`` (kernel ridge
    regression, support vector machines, Gaussian processes with RBF kernels)
    has the value function ``v(S) = sum_i alpha_i prod_{j in S} k_j(x_j, r_ij)
    + c``: a feature outside ``S`` contributes a kernel factor of 1, as if it
    matched every reference point. That is a sum of product games, one per
    reference point ``r_i``, whose Shapley values are integrals of
    polynomials; Gauss–Legendre quadrature evaluates them exactly with
    ``ceil(d / 2)`` points, and to float64 accuracy with far fewer for large
    ``d``.

    Parameters
    ----------
    model : estimator
        A fitted ``KernelRidge`` (kernel ``"rbf"``, ``"laplacian"``,
        ``"chi2"`` or a Gaussian process kernel), ``SVR``, ``NuSVR``, ``SVC``,
        ``NuSVC`` or ``OneClassSVM`` (kernel ``"rbf"``),
        ``GaussianProcessRegressor`` or ``GaussianProcessClassifier`` (binary
        or one-vs-rest) whose kernel is built from
        ``RBF`` (isotropic or anisotropic; also ``Matern`` with
        ``nu=inf``), ``ConstantKernel`` and ``WhiteKernel`` by sums and
        products. Or a ``Pipeline`` of preprocessing steps ending in one of
        these, explained in the preprocessed features (named by
        ``get_feature_names_out()``) from the raw input, or a fitted
        ``GridSearchCV`` (or randomized or halving search) with
        ``refit=True``, whose ``best_estimator_`` is explained.
    feature_perturbation : {"kernel", "interventional"}, default="kernel"
        ``"kernel"``: an absent feature contributes a kernel factor of 1
        (above). ``"interventional"``: it takes the values of the background
        rows given to :meth:`fit`, ``v(S) = mean_z f(x_S, z_rest)``: a
        product game per reference point and background row, exact too.
    groups : mapping of str to list or "input", default=None
        Feature groups ``{group_name: [columns]}``, columns by feature name
        (or position); for a pipeline, the preprocessed features'. Each
        group is one player whose kernel factor is the product of its
        members' factors, so grouped values are exact. Features in no group
        stay players of their own. ``"input"``: one player per raw input
        column of a pipeline, holding the preprocessed features that come
        from it; the columns of :meth:`explain` are then the input columns,
        and one the pipeline drops is valued 0.
    n_quadrature_points : "auto" or int, default="auto"
        Quadrature points per reference point and explained row. ``"auto"``
        uses the exact rule ``ceil(d / 2)`` for ``d`` non-dummy players while
        it has at most 64 points; beyond that, the fewest points whose error
        bound is below one unit in the last place of ``|alpha_i|`` (see the
        user guide). An integer (at most 65,536) forces that many.
    n_jobs : int, default=None
        OpenMP threads; ``None`` or ``-1`` means all CPUs. More threads than
        the CPUs this process may use are not started.
    max_memory : int or str, default="1GB"
        The working memory of an explanation beyond its result, in bytes
        or as text (``"512MB"``, ``"2GiB"``): rows are explained in chunks
        that fit it, with the same values as in one piece.

    Attributes
    ----------
    game_ : KernelGame
        The parsed model: reference points, dual weights, per-feature kernel
        coefficients and intercept; no model object.
    expected_value_ : float or pandas.Series
        The base value ``v(∅) = sum_i alpha_i + c``: the model's output when
        no feature is known, every kernel factor being 1 (for an RBF kernel,
        as if ``x`` were at every reference point at once). One per output.
        For support vector machines, whose dual weights sum to 0, it is the
        intercept.
    output_names_ : tuple
        The outputs: ``"target"`` (or ``"target k"``) for regressors, the
        positive class for binary classifiers, ``"a vs b"`` for each
        one-vs-one decision function of a multiclass SVC.
    raw_output_ : str
        What is explained: ``"value"`` (``predict``), ``"decision
        function"`` (SVC, one-vs-one for several classes) or ``"latent
        mean"`` (Gaussian process classifier).
    player_names_ : ndarray of str
        The columns of :meth:`explain`: the group names, then the features in
        no group (the feature names when there are no groups).
    feature_names_in_ : ndarray of str
        The model's feature names (``x0, x1, ...`` if it has none); for a
        pipeline, its input columns.
    n_features_in_ : int
        The number of features (of a pipeline: of its input).
    columns_by_name_ : bool
        Whether DataFrame columns are matched to the model's features by
        name (the model, or the pipeline, knows its feature names) or by
        position.
    n_quadrature_points_ : int
        Set by :meth:`explain`: the most quadrature points any game of the
        last explanation used.
    quadrature_error_bound_ : float
        Set by :meth:`explain`: a bound on the absolute quadrature error of
        every value of the last explanation (0.0 when every game used the
        exact rule). ``phi.attrs`` holds both numbers too.
    base_value_meaning : str
        (Class attribute.) What ``expected_value_`` is, in words.
    method_ : str
        (Class attribute.) ``"kernel"``: how :func:`skshapley.Explainer`'s
        choice explains (``"tree"``, ``"exact"`` and ``"permutation"`` for
        the others).

    See Also
    --------
    skshapley.games.product_shapley : The product-game core.
    TreeExplainer : Exact Shapley values of tree ensembles.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.svm import SVR
    >>> from skshapley import ProductKernelExplainer
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = SVR(C=100.0).fit(X, y)
    >>> explainer = ProductKernelExplainer(model).fit()
    >>> phi = explainer.explain(X.iloc[:5])
    >>> phi.shape
    (5, 10)
    >>> total = phi.sum(axis=1) + explainer.expected_value_
    >>> bool(abs(total - model.predict(X.iloc[:5])).max() < 1e-8)
    True
    """

    _fitted_attribute = "game_"
    _parse = staticmethod(parse_kernel_model)
    supports_interactions = True
    supports_indices = True
    method_ = "kernel"

    base_value_meaning = BaseValueMeaning(
        "what the kernel model predicts when no feature is known: an unknown "
        "feature contributes a kernel factor of 1, as if the row matched every "
        "reference point on it, so the base value is Σ α_i + c (for support "
        "vector machines, whose dual weights sum to zero, the intercept)."
    )

    def __init__(
        self,
        model,
        *,
        feature_perturbation: str = "kernel",
        groups: Mapping[str, list] | str | None = None,
        n_quadrature_points: int | str = "auto",
        n_jobs: int | None = None,
        max_memory: int | str = DEFAULT_MAX_MEMORY,
    ):
        self.model = model
        self.feature_perturbation = feature_perturbation
        self.groups = groups
        self.n_quadrature_points = n_quadrature_points
        self.n_jobs = n_jobs
        self.max_memory = max_memory

    def fit(self, X=None, y=None):
        """Parse the model into its kernel game.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_background, n_features), \
                default=None
            Interventional: the background data, required, with the input
            contract of :meth:`explain`; every row is used. Otherwise
            unused: the reference points are the model's own.
        y : None
            Unused, for scikit-learn's API.

        Returns
        -------
        self : ProductKernelExplainer
            The fitted explainer.
        """
        if self.feature_perturbation not in ("kernel", "interventional"):
            raise ValueError(
                'feature_perturbation must be "kernel" or "interventional", '
                f"got {self.feature_perturbation!r}."
            )
        if self.feature_perturbation == "interventional" and X is None:
            raise ValueError(
                'feature_perturbation="interventional" averages the model over '
                "background data: pass it as fit(X_background), rows with the "
                "model's features."
            )
        check_n_quadrature_points(self.n_quadrature_points)
        effective_n_threads(self.n_jobs)  # refuses a bad n_jobs before any work
        game = self._parsed_model()
        self.game_ = game
        names, by_name = feature_names(game.feature_names, game.n_features)
        players = self._fit_players(names, by_name)
        # Each feature's player, for the compiled factors.
        self._players = (
            np.arange(game.n_features, dtype=np.intp)
            if players is None
            else np.asarray(players, dtype=np.intp)
        )
        self.output_names_ = game.output_names
        self.raw_output_ = game.raw_output
        self._background_rows = None
        if self.feature_perturbation == "interventional":
            self._fit_background(X)
        else:
            self.expected_value_ = self._per_output(game.expected_value)
        return self

    def _fit_background(self, X) -> None:
        """Keep the background's distinct rows, weighted by their counts; the
        base value is the rows' mean output."""
        background = self._validated_background(X)
        self._background_rows = interventional.distinct_background(background)
        self.n_background_ = len(background)
        self.expected_value_ = self._per_output(self._raw_rows(background).mean(axis=0))

    def _row_cost_ns(self) -> float:
        """A row's estimated time at one thread: ~30 ns per reference value.

        Measured: 28 to 31 ns per reference point and feature, 200 and
        2,000 points of 20 features.
        """
        return 30.0 * sum(c.reference.size for c in self.game_.components)

    def _explain_rows(self, X, values, n_threads) -> QuadratureUse:
        """Add the Shapley values of the validated rows ``X`` to ``values``.

        Returns the most points any game used and a bound on the
        quadrature error of every value. Each row's values are summed in an
        order fixed by its games (see ``add_pure_game_sums``): the same
        whatever ``n_jobs`` and whichever rows are explained with it.
        """
        if self._background_rows is not None:
            return interventional.values(
                self.game_, X, self._background_rows, self._players,
                len(self.player_names_), self.n_quadrature_points, values, n_threads,
            )  # fmt: skip
        error = np.zeros(values.shape[:2])
        most_points = 0
        for component in self.game_.components:
            for rows, references in _blocks(X.shape, component.weights.shape):
                block = X[rows]
                gaps, statistics = self._games(component, block, references, n_threads)
                weights = np.ascontiguousarray(component.weights[references])
                solved = add_pure_game_sums(
                    gaps, statistics, weights, self.n_quadrature_points,
                    values[rows], n_threads,
                )  # fmt: skip
                if solved.error_bounds.any():  # else every game was exact
                    bounds = solved.error_bounds.reshape(-1, len(weights))
                    error[rows] += np.einsum("rm,mo->ro", bounds, np.abs(weights))
                most_points = max(most_points, int(solved.n_points.max()))
        return QuadratureUse(most_points, float(error.max(initial=0.0)))

    def _games(self, component, X, references: slice, n_threads: int):
        """The gaps ``a - 1`` of the games of rows ``X`` and ``references``,
        of shape (n_rows * n_references, n_players), and their statistics."""
        log_factors = component.log_factors(
            X, references, self._players, len(self.player_names_), n_threads
        )
        n_games = len(log_factors)
        # a - 1 = expm1(log a): exact to rounding even where a is near 1.
        gaps = np.expm1(log_factors, out=log_factors)
        statistics = (np.empty(n_games, dtype=np.intp), np.empty(n_games))
        _factors_core.pure_game_statistics(gaps, *statistics, n_threads)
        return gaps, statistics

    def _interaction_rows(self, X, out, n_threads) -> QuadratureUse:
        """Add the interaction values of the validated rows ``X`` to ``out``.

        Each reference point's game is pure (``b = 1``): with ``u_j =
        (a_j - 1) / f_j(t)`` and ``G(t) = prod_j f_j(t)``, the index of
        ``j != k`` is ``sum_m alpha_m Integral G u_j u_k dt`` and the
        Shapley value ``sum_m alpha_m Integral G u_j dt``: per row, a Gram
        matrix of the ``u`` of every (reference, point), weighted by
        ``alpha_m w_q G`` (the compiled ``_interactions_core``). One rule
        per block of references, exact unless its games are too large for
        ``"auto"`` (see ``n_quadrature_points``).
        """
        n_players = len(self.player_names_)
        if self._background_rows is not None:
            return interventional.interactions(
                self.game_, X, self._background_rows, self._players, n_players,
                self.n_quadrature_points, out, n_threads,
            )  # fmt: skip
        phi = np.zeros(out.shape[:3])
        exact, most_points = True, 0
        for component in self.game_.components:
            for rows, references in _blocks(X.shape, component.weights.shape):
                block = X[rows]
                flat, statistics = self._games(component, block, references, n_threads)
                gaps = flat.reshape(len(block), -1, n_players)
                n_moving = statistics[0]
                n_points = self.n_quadrature_points
                if n_points == "auto":
                    n_points = int(
                        auto_n_points(flat, None, statistics=statistics).max()
                    )
                exact &= bool(2 * n_points >= n_moving.max(initial=0))
                most_points = max(most_points, n_points)
                _interactions_core.add_interactions(
                    gaps,
                    np.ascontiguousarray(component.weights[references]),
                    *gauss_legendre(n_points), out[rows], phi[rows], n_threads,
                )  # fmt: skip
        out += out.transpose(0, 1, 3, 2)  # the kernel fills the upper triangle
        in_shap_convention(out, phi)
        return QuadratureUse(most_points, 0.0 if exact else None)

    def _index_rows(self, X, plan, out, n_threads) -> None:
        """Add the interaction indices of the validated rows ``X`` to ``out``.

        Each reference point's game is pure (``b = 1``) on every player, so
        its indices are exact with the plan's rule; the intercept is the
        empty coalition's.
        """
        n_players = len(self.player_names_)
        by_colex = np.zeros_like(out)
        if self._background_rows is not None:
            interventional.indices(
                self.game_, X, self._background_rows, self._players, n_players,
                plan, by_colex, n_threads,
            )  # fmt: skip
        else:
            _kernel_indices(self, X, plan, by_colex, n_threads)
        if plan.has_empty:
            by_colex[:, :, 0] += self.game_.intercept
        out[:] = plan.finish(by_colex)

    def _index_game_players(self) -> int:
        """Every reference point's game has every player."""
        return len(self.player_names_)

    def _record(self, quadrature: QuadratureUse) -> None:
        """Keep the quadrature facts of the last explanation as attributes."""
        self.n_quadrature_points_ = quadrature.n_points
        self.quadrature_error_bound_ = quadrature.error_bound

    def _raw_rows(self, X) -> np.ndarray:
        """The output of the validated rows ``X``, from the parsed kernel game."""
        game = self.game_
        out = np.tile(game.intercept, (len(X), 1))
        n_threads = effective_n_threads(self.n_jobs)
        # Every feature one player: the log of the whole product kernel.
        one_player = np.zeros(game.n_features, dtype=np.intp)
        for component in game.components:
            for rows, references in _blocks(X.shape, component.weights.shape):
                block = X[rows]
                log_kernel = component.log_factors(
                    block, references, one_player, 1, n_threads
                ).reshape(len(block), -1)
                out[rows] += np.exp(log_kernel) @ component.weights[references]
        return out

    def describe(self) -> dict[str, str]:
        """Facts about the fitted explainer, in words, for reports.

        Returns
        -------
        facts : dict of str to str
            The explainer, model, output and features, and the value
            function, its reference points and the quadrature rule.
        """
        facts = super().describe()
        n_references = sum(len(c.reference) for c in self.game_.components)
        rule = (
            "auto: exact up to 64 points, else the fewest within the error bound"
            if self.n_quadrature_points == "auto"
            else f"{self.n_quadrature_points} per game (fixed)"
        )
        value_function = (
            "product kernel: v(S) = Σ α_i Π_{j∈S} k_j(x_j, r_ij) + c; an "
            "absent feature matches every reference point"
        )
        background = (
            f"none: the model's {n_references} reference points "
            "(training points or support vectors)"
        )
        if self.feature_perturbation == "interventional":
            value_function = (
                "interventional: v(S) = mean_z f(x_S, z_rest), a product game "
                "per reference point and background row"
            )
            background = f"{self.n_background_} rows"
        return {
            **facts,
            "value function": value_function,
            "background data": background,
            "quadrature points": rule,
        }

    def _prepared(self, X) -> tuple[np.ndarray, pd.Index]:
        """The rows the kernel model reads, validated."""
        X, index = self._validate_X(X, allow_nan=False, allow_inf=False)
        if self.game_.nonnegative_inputs and (X < 0).any():
            raise ValueError(
                "X contains negative values, for which the chi-squared kernel "
                "is not defined."
            )
        return X, index


def _kernel_indices(explainer, X, plan, out, n_threads) -> None:
    """The kernel value function's indices, by colexicographic column."""
    view = RuleView(plan)
    n_players = len(explainer.player_names_)
    for component in explainer.game_.components:
        for rows, references in _blocks(X.shape, component.weights.shape):
            block = X[rows]
            gaps, _ = explainer._games(component, block, references, n_threads)
            factors = (gaps + 1.0).reshape(len(block), -1, n_players)
            _indices_core.add_row_games(
                view, factors, np.ones(factors.shape[1:]),
                np.ascontiguousarray(component.weights[references]),
                out[rows], n_threads,
            )  # fmt: skip


def _blocks(shape: tuple[int, int], weights_shape: tuple[int, int]):
    """Slices of rows and reference points of about ``_BLOCK_VALUES`` values.

    ``shape`` is the rows' (n_samples, n_features), ``weights_shape`` the
    component's (n_references, n_outputs). A block holds a factor per
    reference, row and feature, and the games' partial sums a row of
    values per output and task of ``GAMES_PER_TASK`` references: with many
    outputs (one-vs-one classifiers), blocks shrink so that those stay
    within about as many values as the factors.
    """
    n_samples, n_features = shape
    n_references, n_outputs = weights_shape
    per_reference = n_features * max(1, -(-n_outputs // GAMES_PER_TASK))
    per_row = n_references * per_reference
    if per_row <= _BLOCK_VALUES:
        step = max(1, _BLOCK_VALUES // per_row)
        for begin in range(0, n_samples, step):
            yield slice(begin, begin + step), slice(None)
        return
    step = max(1, _BLOCK_VALUES // per_reference)
    for row in range(n_samples):
        for begin in range(0, n_references, step):
            yield slice(row, row + 1), slice(begin, begin + step)
