"""TreeExplainer: exact path-dependent or interventional values of tree ensembles."""

from collections.abc import Mapping

import numpy as np

from .._base import BaseExplainer, BaseValueMeaning
from .._contract.features import feature_names
from .._runtime.memory import DEFAULT_MAX_MEMORY, parse_memory
from .._runtime.threads import effective_n_threads
from ..games._quadrature import check_n_quadrature_points
from ._categories import tree_reading, tree_values
from ._interventional import Background
from ._path_dependent import PathDependent
from ._readers.dispatch import parse_model
from ._rows import casts_to_float32, mark_as_the_model_reads, rounded_to_float32

_VALUE_FUNCTIONS = ("tree_path_dependent", "interventional")


class TreeExplainer(BaseExplainer):
    """Exact Shapley values of tree ensembles, at any depth.

    Every root-to-leaf path of a tree is a product game; its Shapley values
    are integrals of a polynomial that Gauss–Legendre quadrature evaluates
    exactly. The compiled kernel walks each tree once per block of samples,
    in O(nodes × points) work, in the stable ``(a, b)`` form of the games:
    no division by cover ratios, so efficiency holds to rounding even on
    trees of depth 100. The walk is iterative: a tree's depth is limited
    only by the kernel's scratch memory (at most 256 MiB per thread), which
    is checked at :meth:`fit`.

    With ``feature_perturbation="interventional"``, each path and background
    row is a product game with 0/1 factors, solved in closed form (Beta
    integrals). :meth:`fit` counts, per leaf, the background rows by the
    splits they fail and turns the counts into tables of each player's value
    for every pattern a row may have; :meth:`explain` then costs one walk
    per row and tree, whatever the size of the background. Leaves whose
    paths have more distinct players than a table pays for (more than 14,
    or than about log2 of the background's size) keep the background's
    distinct patterns with their counts instead (any depth). Tables beyond
    256 MiB are rebuilt at each :meth:`explain`, a batch of trees at a time.

    Parameters
    ----------
    model : estimator
        A fitted tree model: scikit-learn's ``DecisionTree*``,
        ``ExtraTree*``, ``RandomForest*``, ``ExtraTrees*``,
        ``GradientBoosting*`` or ``HistGradientBoosting*`` (regressor or
        classifier), ``IsolationForest`` (its average path length), XGBoost
        or LightGBM. Or a ``Pipeline`` of preprocessing
        steps ending in one (explained in the preprocessed features, named
        by ``get_feature_names_out()``, from the raw input), or a fitted
        ``GridSearchCV`` (or randomized or halving search) with
        ``refit=True``, whose ``best_estimator_`` is explained.
    feature_perturbation : {"tree_path_dependent", "interventional"}, \
            default="tree_path_dependent"
        The value function. ``"tree_path_dependent"``: absent features
        follow both branches of their splits, weighted by the training
        cover. ``"interventional"``: absent features take their values from
        each row of a background population (given to :meth:`fit`), and
        the model's outputs are averaged over the whole background,
        ``v(S) = mean_z f(x_S, z_rest)`` (shap's ``"interventional"``). Its
        cost grows with rows plus background rows, not their product.
    groups : mapping of str to list or "input", default=None
        Feature groups ``{group_name: [columns]}``, columns by feature name
        (or position); for a pipeline, the preprocessed features'. Each
        group is one player: absent, all its features follow both branches
        of their splits; present, the sample's path. The values are the
        exact Shapley values of that game of groups (not sums of the
        members' values). Features in no group stay players of their own.
        ``"input"``: one player per raw input column of a pipeline, holding
        the preprocessed features that come from it (one-hot columns,
        missing indicators, ...); the columns of :meth:`explain` are then
        the input columns, and one the pipeline drops is valued 0.
    n_quadrature_points : "auto" or int, default="auto"
        Quadrature points per tree (path-dependent values and interactions;
        interventional values are closed forms). ``"auto"`` uses ``ceil(D / 2)`` for the
        tree's largest number ``D`` of distinct players on a path, which is
        exact; an integer (at most 65,536) forces that many for every tree.
    n_jobs : int, default=None
        OpenMP threads over the explained rows; ``None`` or ``-1`` means all
        CPUs. More threads than the CPUs this process may use are not
        started.
    max_memory : int or str, default="1GB"
        The working memory of an explanation beyond its result, in bytes
        or as text (``"512MB"``, ``"2GiB"``): rows are explained in chunks
        that fit it, with the same values as in one piece. Interventional
        values build tables of the background at ``fit`` in half of it, a
        batch of trees at a time; a tree that needs more alone (a fully
        grown tree against a large background) is refused at ``fit``,
        saying what it needs and how many background rows would fit.

    Attributes
    ----------
    ensemble_ : TreeEnsemble
        The parsed model: node arrays only, no model object.
    expected_value_ : float or pandas.Series
        The base value ``v(∅)``: the cover-weighted mean of the leaves' raw
        outputs (plus boosting's initial prediction); interventional: the
        mean raw output over the background. One per output.
    n_background_ : int
        (Interventional only.) The number of background rows.
    output_names_ : tuple
        The outputs: class labels for classifiers' probabilities or scores
        (a binary classifier has one, its positive class ``classes_[1]``),
        ``"target"`` for regressors.
    raw_output_ : str
        What is explained: ``"value"``, ``"probability"``, ``"log-odds"``,
        ``"margin"`` (or the link space of a regression loss).
    n_quadrature_points_ : ndarray of shape (n_trees,)
        The number of points used for each tree.
    quadrature_error_bound_ : float or None
        0.0 when every tree's rule is exact (always with ``"auto"``); None
        when an integer ``n_quadrature_points`` is below the exact rule of
        some tree, whose values are then approximate with no computed bound.
    feature_names_in_ : ndarray of str
        The model's feature names (``x0, x1, ...`` if it has none); for a
        pipeline, its input columns.
    n_features_in_ : int
        The number of features (of a pipeline: of its input).
    player_names_ : ndarray of str
        The columns of :meth:`explain`: the group names, then the features in
        no group (the feature names when there are no groups).
    columns_by_name_ : bool
        Whether DataFrame columns are matched to the model's features by
        name (the model knows its feature names) or by position.
    base_value_meaning : str
        What ``expected_value_`` is, in words (for the value function).
    method_ : str
        (Class attribute.) ``"tree"``: how :func:`skshapley.Explainer`'s
        choice explains (``"kernel"``, ``"exact"`` and ``"permutation"`` for
        the others).

    See Also
    --------
    skshapley.games.product_shapley : The product-game core.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from skshapley import TreeExplainer
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    >>> explainer = TreeExplainer(model).fit()
    >>> phi = explainer.explain(X.iloc[:5])
    >>> phi.shape
    (5, 10)
    >>> total = phi.sum(axis=1) + explainer.expected_value_
    >>> bool(abs(total - model.predict(X.iloc[:5])).max() < 1e-8)
    True

    Against a background population:

    >>> explainer = TreeExplainer(model, feature_perturbation="interventional")
    >>> explainer = explainer.fit(X.iloc[100:300])
    >>> explainer.n_background_
    200
    >>> phi = explainer.explain(X.iloc[:5])
    >>> total = phi.sum(axis=1) + explainer.expected_value_
    >>> bool(abs(total - model.predict(X.iloc[:5])).max() < 1e-8)
    True
    """

    _fitted_attribute = "ensemble_"
    _parse = staticmethod(parse_model)
    supports_interactions = True
    supports_indices = True
    method_ = "tree"

    base_value_meaning = BaseValueMeaning(
        "what the trees predict when no feature is known: every split on an "
        "unknown feature sends the row down both branches, weighted by how many "
        "training samples went each way. It is the training-cover-weighted "
        "average of the model's raw output — close to the average raw "
        "prediction on the training data."
    )

    def __init__(
        self,
        model,
        *,
        feature_perturbation: str = "tree_path_dependent",
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
        """Parse the model into the library's own tree table.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_background, n_features), \
                default=None
            Interventional: the background data, required, with the input
            contract of :meth:`explain` (columns by name, a pipeline's raw
            input, missing values routed as the model routes them); every
            row is used. Path-dependent: unused (the trees' covers play its
            part).
        y : None
            Unused, for scikit-learn's API.

        Returns
        -------
        self : TreeExplainer
            The fitted explainer.
        """
        if self.feature_perturbation not in _VALUE_FUNCTIONS:
            raise ValueError(
                'feature_perturbation must be "tree_path_dependent" or '
                f'"interventional", got {self.feature_perturbation!r}.'
            )
        if self.feature_perturbation == "interventional" and X is None:
            raise ValueError(
                'feature_perturbation="interventional" averages the model over '
                "background data: pass it as fit(X_background), rows with the "
                "model's features."
            )
        check_n_quadrature_points(self.n_quadrature_points)
        effective_n_threads(self.n_jobs)  # refuses a bad n_jobs before any work
        ensemble = self._parsed_model()
        players = self._fit_players(
            *feature_names(ensemble.feature_names, ensemble.n_features)
        )
        if players is None:
            players = np.arange(ensemble.n_features)
        # Leaves have no feature (-1 or -2): any player will do, none is read.
        self._node_player = players[np.maximum(ensemble.feature, 0)]
        walks = PathDependent(
            ensemble, self._node_player, len(self.player_names_),
            self.n_quadrature_points,
        )  # fmt: skip
        self._path_dependent = walks
        self.ensemble_ = ensemble
        self.n_quadrature_points_ = walks.n_points
        self.quadrature_error_bound_ = 0.0 if walks.exact else None
        self.output_names_ = ensemble.output_names
        self.raw_output_ = ensemble.raw_output
        if self.feature_perturbation == "interventional":
            self._fit_background(X)
        else:
            self.expected_value_ = self._per_output(walks.expected_value())
        return self

    def _fit_background(self, X) -> None:
        """Keep the background's tables; the base value is its mean raw output."""
        # Its validated rows, and the copy by feature the tables are built from.
        background = self._validated_background(X)
        n_threads = effective_n_threads(self.n_jobs)
        self._background = Background(
            self.ensemble_, self._node_player, len(self.player_names_),
            background, n_threads, parse_memory(self.max_memory),
        )  # fmt: skip
        self.n_background_ = len(background)
        mean = self._background.mean_output()
        if mean is None:  # no tables kept from fit: predict the background
            mean = self._raw_rows(background).mean(axis=0)
        self.expected_value_ = self._per_output(mean)

    def _interventional_interaction_rows(self, X, out, n_threads) -> None:
        """Interaction matrices of the validated rows ``X``, added to ``out``.

        ``out`` has shape (n_samples, n_outputs, n_players, n_players) and
        is zero; shap's convention: half the interaction index off the
        diagonal, the main effect on it.
        """
        self._background.interactions(X, out, n_threads)

    def _explain_rows(self, X, values, n_threads) -> None:
        """Add the Shapley values of the validated rows ``X`` to ``values``."""
        if self.feature_perturbation == "interventional":
            self._background.shapley(X, values, n_threads)
            return
        self._path_dependent.shapley(X, values, n_threads)

    def _interaction_rows(self, X, out, n_threads) -> None:
        """Add the interaction values of the validated rows ``X`` to ``out``."""
        if self.feature_perturbation == "interventional":
            return self._interventional_interaction_rows(X, out, n_threads)
        self._path_dependent.interactions(X, out, n_threads)
        return None

    def _index_rows(self, X, plan, out, n_threads) -> None:
        """Add the interaction indices of the validated rows ``X`` to ``out``."""
        by_colex = np.zeros_like(out)
        if self.feature_perturbation == "interventional":
            row_nodes = self._path_dependent.forest().row_nodes()
            self._background.indices(X, row_nodes, plan, by_colex, n_threads)
        else:
            self._path_dependent.indices(X, plan, by_colex, n_threads)
        if plan.has_empty:  # the constant is the empty coalition's
            by_colex[:, :, 0] += self.ensemble_.base_offset
        out[:] = plan.finish(by_colex)

    def _index_game_players(self) -> int:
        """The most distinct players on one path."""
        if self.feature_perturbation == "interventional":
            return self._background.max_bits
        return self._path_dependent.max_depth

    def _raw_rows(self, X) -> np.ndarray:
        """The raw output of the validated rows ``X``, from the parsed trees."""
        out = np.tile(self.ensemble_.base_offset, (len(X), 1))
        self._path_dependent.forest().predict(X, out, effective_n_threads(self.n_jobs))
        return out

    def describe(self) -> dict[str, str]:
        """Facts about the fitted explainer, in words, for reports.

        Returns
        -------
        facts : dict of str to str
            The explainer, model, output and features, and the trees, the
            value function, its background data and the quadrature rule (the
            points each tree uses are ``n_quadrature_points_``).
        """
        facts = {**super().describe(), "trees": str(self.ensemble_.n_trees)}
        if self.feature_perturbation == "interventional":
            return {
                **facts,
                "value function": (
                    "interventional (shap's interventional): an absent feature "
                    "takes its value from each background row, and the outputs "
                    "are averaged over the background"
                ),
                "background data": f"{self.n_background_} rows",
            }
        rule = (
            "auto: each tree's exact rule, enough points for its deepest path"
            if self.n_quadrature_points == "auto"
            else f"{self.n_quadrature_points} per tree (fixed)"
        )
        return {
            **facts,
            "value function": (
                "path-dependent (shap's tree_path_dependent): an absent feature "
                "follows both branches of its splits, weighted by training cover"
            ),
            "background data": "none: the trees' training covers play its part",
            "quadrature points": rule,
        }

    def _row_bytes(self) -> int:
        """A row's input copies, and what it adds to the compiled walk's scratch."""
        if self.feature_perturbation == "interventional":
            n_values = len(self.output_names_) * len(self.player_names_)
            scratch = self._background.scratch_row_bytes(n_values)
        else:
            scratch = self._path_dependent.scratch_row_bytes
        return super()._row_bytes() + scratch

    def _row_cost_ns(self) -> float:
        """A row's estimated time at one thread: its value function's."""
        if self.feature_perturbation == "interventional":
            return self._background.row_cost_ns
        return self._path_dependent.row_cost_ns

    def _interaction_row_bytes(self) -> int:
        """A row's matrices; interventional walks sum them in their scratch too."""
        matrices = super()._interaction_row_bytes()
        if self.feature_perturbation != "interventional":
            return matrices  # a thread's scratch does not grow with its rows
        background = self._background
        n_values = len(self.output_names_) * len(self.player_names_)
        return (
            matrices
            + background.scratch_row_bytes(matrices // 8)
            - background.scratch_row_bytes(n_values)
        )

    def _prepared(self, X):
        """Validated rows, cast and marked missing as the model does it."""
        ensemble = self.ensemble_
        to_float32 = casts_to_float32(ensemble, X)
        checks = {"allow_nan": ensemble.allow_nan, "allow_inf": ensemble.allow_inf}
        reading = tree_reading(ensemble)
        rows, index = self._validate_X(
            X, **checks, reading=reading, check_values=not to_float32
        )
        if to_float32 and not rounded_to_float32(rows, ensemble):
            # The input's own NaN or infinity are named as such; else finite
            # values became infinite.
            self._validate_X(X, **checks, reading=reading)
            raise ValueError(
                "X contains values too large for float32, which the model compares in."
            )
        mark_as_the_model_reads(rows, ensemble, to_float32)
        return rows, index

    def _values(self, X) -> np.ndarray:
        """``X`` as float64, categorical features as the model's category codes."""
        return tree_values(X, self.ensemble_)
