"""Slow, obviously correct reference implementations for the tests.

Nothing here calls skshapley: every function enumerates coalitions or uses
plain NumPy, so that the fast code is checked against something independent.
"""

import copy
import itertools
from fractions import Fraction
from math import factorial

import numpy as np
import pandas as pd
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import (
    RBF,
    ConstantKernel,
    Product,
    Sum,
    WhiteKernel,
)
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import chi2_kernel, laplacian_kernel, rbf_kernel
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM


def table_of(value, n_players):
    """Tabulate ``value(set_of_players)`` by plain enumeration of bitmasks."""
    return np.array(
        [
            value({i for i in range(n_players) if mask >> i & 1})
            for mask in range(2**n_players)
        ],
        dtype=float,
    )


def product_game_table(a, b, weight=1.0):
    """All 2**d values v(S) = w prod_{S} a prod_{not S} b, indexed by bitmask."""
    d = len(a)
    table = np.empty(2**d)
    for mask in range(2**d):
        inside = [(mask >> j) & 1 for j in range(d)]
        table[mask] = weight * np.prod([a[j] if inside[j] else b[j] for j in range(d)])
    return table


def shapley_by_enumeration(table, d):
    """phi_i = sum_{S not containing i} |S|!(d-|S|-1)!/d! (v(S+i) - v(S))."""
    phi = np.zeros(d)
    for i in range(d):
        for mask in range(2**d):
            if not (mask >> i) & 1:
                size = bin(mask).count("1")
                weight = factorial(size) * factorial(d - size - 1) / factorial(d)
                phi[i] += weight * (table[mask | 1 << i] - table[mask])
    return phi


def banzhaf_by_enumeration(table, d):
    """beta_i = 2**-(d-1) sum_{S not containing i} (v(S+i) - v(S))."""
    beta = np.zeros(d)
    for i in range(d):
        for mask in range(2**d):
            if not (mask >> i) & 1:
                beta[i] += table[mask | 1 << i] - table[mask]
    return beta / 2 ** (d - 1)


def interactions_by_enumeration(table, d):
    """shap's convention: off-diagonal half the Shapley interaction index."""
    return shap_interaction_matrix(interaction_index_of_table(table, d), table, d)


def quotient_table(table, groups):
    """The game whose players are ``groups``: v_G(T) = v(union of T's groups)."""
    masks = [sum(1 << j for j in group) for group in groups]
    quotient = np.empty(2 ** len(groups))
    for group_mask in range(2 ** len(groups)):
        mask = sum(masks[k] for k in range(len(groups)) if (group_mask >> k) & 1)
        quotient[group_mask] = table[mask]
    return quotient


def product_shapley_quadrature(a, b, weights, nodes, node_weights):
    """NumPy twin of the compiled kernel, in log space with explicit signs.

    phi[g, i] = w_g (a_gi - b_gi) sum_k omega_k prod_{j != i} f_gj(t_k), the
    product taken as exp(sum of logs) with signs and zero factors counted, so
    that it neither overflows nor underflows.
    """
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    f = b[:, None, :] + nodes[None, :, None] * (a - b)[:, None, :]  # (g, k, j)
    zero = f == 0
    log_abs = np.log(np.abs(np.where(zero, 1.0, f)))
    negative = f < 0
    total_log = log_abs.sum(axis=2, keepdims=True)
    total_zeros = zero.sum(axis=2, keepdims=True)
    total_negative = negative.sum(axis=2, keepdims=True)
    others_zero = total_zeros - zero
    sign = np.where((total_negative - negative) % 2 == 1, -1.0, 1.0)
    with np.errstate(divide="ignore"):  # log(0) = -inf for dummies: exp gives 0
        scale = np.log(np.abs(weights))[:, None, None] + np.log(np.abs(a - b))[:, None]
        terms = sign * np.exp(total_log - log_abs + scale)
    terms = np.where(others_zero > 0, 0.0, terms)
    integral = np.einsum("k,gkj->gj", node_weights, terms)
    return np.sign(weights)[:, None] * np.sign(a - b) * integral


def exact_pure_shapley(a):
    """Exact Shapley values of the pure game (b = 1) with rational factors.

    phi_i = (a_i - 1) Integral_0^1 prod_{j != i} (1 + t (a_j - 1)) dt, the
    polynomial multiplied out and integrated term by term in rational
    arithmetic: no quadrature, no rounding.
    """
    a = [Fraction(x) for x in a]
    phi = []
    for i in range(len(a)):
        coefficients = [Fraction(1)]
        for j, a_j in enumerate(a):
            if j != i:
                shifted = [Fraction(0), *(c * (a_j - 1) for c in coefficients)]
                coefficients = [
                    c + s
                    for c, s in zip([*coefficients, Fraction(0)], shifted, strict=True)
                ]
        integral = sum(c / (k + 1) for k, c in enumerate(coefficients))
        phi.append((a[i] - 1) * integral)
    return phi


def route_left(table, node, x):
    """Does the sample value ``x`` go left at ``node`` of a TreeEnsemble?"""
    rule = int(table.missing_left[node])
    if np.isnan(x) or (rule & 2 and abs(x) <= 1.0000000180025095e-35):
        return bool(rule & 1)
    if table.is_categorical[node]:
        if not (0 <= x < 256 and x == int(x)):
            return False
        word = table.category_bitset[node, int(x) // 32]
        return bool((int(word) >> (int(x) % 32)) & 1)
    return x <= table.threshold[node]


def cast_inputs(table, X):
    """The model's own input cast: float32 for scikit-learn's trees."""
    X = np.asarray(X, dtype=np.float64)
    return X.astype(np.float32).astype(np.float64) if table.float32_inputs else X


def predict_ensemble(table, X):
    """Raw outputs of a TreeEnsemble, one sample and one tree at a time."""
    X = cast_inputs(table, X)
    out = np.tile(table.base_offset, (len(X), 1))
    for i, x in enumerate(X):
        for root, first, width in zip(
            table.roots, table.tree_output, table.tree_width, strict=True
        ):
            node = root
            while table.left[node] >= 0:
                go_left = route_left(table, node, x[table.feature[node]])
                node = table.left[node] if go_left else table.right[node]
            out[i, first : first + width] += table.value[node, :width]
    return out


def reached_nodes(table, X):
    """For each internal node, the rows of ``X`` the table routes through it."""
    reaching = {}
    for i, x in enumerate(X):
        for root in table.roots:
            node = root
            while table.left[node] >= 0:
                reaching.setdefault(node, []).append(i)
                go_left = route_left(table, node, x[table.feature[node]])
                node = table.left[node] if go_left else table.right[node]
    return reaching


def rows_on_thresholds(table, X):
    """Rows placed exactly on, just below and just above each threshold.

    Each numerical node with a finite threshold gets two rows of ``X`` that
    reach it, with the node's feature replaced by the three values.
    """
    rows = []
    for node, reached in reached_nodes(table, X).items():
        t = table.threshold[node]
        if table.is_categorical[node] or not np.isfinite(t):
            continue
        for i in reached[:2]:
            for value in (t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf)):
                row = X[i].copy()
                row[table.feature[node]] = value
                rows.append(row)
    return np.array(rows)


def path_dependent_value(table, x, coalition):
    """shap's path-dependent value function, by its recursive definition.

    Features in ``coalition`` follow ``x``; at a split on any other feature
    the two children are averaged with weights proportional to their cover.
    """
    out = np.array(table.base_offset, dtype=np.float64)

    def expected(node):
        if table.left[node] < 0:
            return table.value[node]
        left, right = table.left[node], table.right[node]
        if table.feature[node] in coalition:
            go_left = route_left(table, node, x[table.feature[node]])
            return expected(left if go_left else right)
        return (
            table.cover[left] * expected(left) + table.cover[right] * expected(right)
        ) / table.cover[node]

    for root, first, width in zip(
        table.roots, table.tree_output, table.tree_width, strict=True
    ):
        out[first : first + width] += expected(root)[:width]
    return out


def coalition_of_players(players, mask):
    """The features of the players in bitmask ``mask``; a player is a feature list."""
    return {j for p, group in enumerate(players) if (mask >> p) & 1 for j in group}


def path_dependent_shapley(table, x, players=None):
    """Shapley values of the path-dependent game by enumerating coalitions.

    ``players`` lists each player's features (default: one per feature); a
    coalition of players holds all their features. Returns an array of shape
    (n_players, n_outputs).
    """
    x = cast_inputs(table, x[None])[0]
    if players is None:
        players = [[j] for j in range(table.n_features)]
    d = len(players)
    tables = np.array(
        [
            path_dependent_value(table, x, coalition_of_players(players, mask))
            for mask in range(2**d)
        ]
    )
    return np.stack(
        [shapley_by_enumeration(tables[:, k], d) for k in range(table.n_outputs)],
        axis=1,
    )


def tree_shapley_by_paths(table, x):
    """Path-dependent Shapley values, one root-to-leaf product game at a time.

    For each leaf, each distinct feature ``j`` on its path gets
    ``a_j = [x follows all the path's splits on j]`` and ``b_j`` = the product
    of those edges' cover ratios; the game's Shapley values are integrated
    with NumPy's own Gauss–Legendre rule (``numpy.polynomial.legendre``) with
    ``ceil(d / 2)`` points, which is exact. Returns (n_features, n_outputs).
    """
    x = cast_inputs(table, x[None])[0]
    phi = np.zeros((table.n_features, table.n_outputs))
    for root, first, width in zip(
        table.roots, table.tree_output, table.tree_width, strict=True
    ):
        stack = [(root, {})]
        while stack:
            node, factors = stack.pop()
            if table.left[node] >= 0:
                feature = table.feature[node]
                a, b = factors.get(feature, (1.0, 1.0))
                go_left = route_left(table, node, x[feature])
                for child, followed in (
                    (table.left[node], go_left),
                    (table.right[node], not go_left),
                ):
                    ratio = table.cover[child] / table.cover[node]
                    stack.append(
                        (child, {**factors, feature: (a * followed, b * ratio)})
                    )
                continue
            if not factors:
                continue
            features = list(factors)
            a = np.array([factors[j][0] for j in features])
            b = np.array([factors[j][1] for j in features])
            nodes, weights = np.polynomial.legendre.leggauss(-(-len(a) // 2))
            t, weights = (nodes + 1) / 2, weights / 2
            f = (1 - t[:, None]) * b + t[:, None] * a  # (points, players)
            for i, feature in enumerate(features):
                integral = weights @ np.prod(np.delete(f, i, axis=1), axis=1)
                phi[feature, first : first + width] += (
                    table.value[node, :width] * (a[i] - b[i]) * integral
                )
    return phi


# ---------------------------------------------------------------------------
# Kernel models: the value function v(S) = sum_i alpha_i k_S(x, r_i) + c, with
# k_S scikit-learn's own kernel evaluated on the features in S only.

_PAIRWISE = {"rbf": rbf_kernel, "laplacian": laplacian_kernel, "chi2": chi2_kernel}


def kernel_model_output(model, X):
    """What the kernel explainer explains, straight from the model.

    ``predict`` for regressors and GPR; ``decision_function`` for SVC and
    NuSVC, one-vs-one for several classes, and for OneClassSVM; the latent
    mean ``k(X, X_train) @ (y_train - pi)`` of a binary GPC's Laplace model,
    one column per class (that class against the rest) for a multiclass GPC.
    """
    if isinstance(model, SVC | NuSVC):
        ovo = copy.deepcopy(model).set_params(decision_function_shape="ovo")
        return ovo.decision_function(X)
    if isinstance(model, OneClassSVM):
        return model.decision_function(X)
    if isinstance(model, GaussianProcessClassifier):
        latent = [
            laplace.kernel_(X, laplace.X_train_) @ (laplace.y_train_ - laplace.pi_)
            for laplace in gpc_laplace_models(model)
        ]
        return latent[0] if len(latent) == 1 else np.column_stack(latent)
    return model.predict(X)


def gpc_laplace_models(model):
    """A GPC's binary Laplace models: one, or one per class (one-vs-rest)."""
    return getattr(model.base_estimator_, "estimators_", [model.base_estimator_])


def restricted_gp_kernel(kernel, coalition, n_features):
    """A Gaussian-process kernel that sees only the features in ``coalition``.

    An RBF factor with length scale +inf on feature ``j`` ignores it (the term
    ``((x_j - y_j) / inf)**2`` is 0), so every RBF gets length scale inf
    outside the coalition; constants and white noise see no features.
    """
    if isinstance(kernel, Sum | Product):
        return type(kernel)(
            restricted_gp_kernel(kernel.k1, coalition, n_features),
            restricted_gp_kernel(kernel.k2, coalition, n_features),
        )
    if isinstance(kernel, RBF):
        length_scale = np.ones(n_features) * kernel.length_scale
        length_scale[[j for j in range(n_features) if j not in coalition]] = np.inf
        return RBF(length_scale)
    if isinstance(kernel, ConstantKernel | WhiteKernel):
        return kernel
    raise TypeError(f"no oracle for {kernel!r}")


def gp_kernel_without_features(kernel):
    """k(x, y) of a GP kernel on no features, by the kernel algebra.

    RBF is 1 (an empty product), a constant its value, white noise 0 between
    two different sets of points (how the models evaluate it at prediction).
    """
    if isinstance(kernel, Sum | Product):
        first = gp_kernel_without_features(kernel.k1)
        second = gp_kernel_without_features(kernel.k2)
        return first + second if isinstance(kernel, Sum) else first * second
    if isinstance(kernel, RBF):
        return 1.0
    if isinstance(kernel, ConstantKernel):
        return kernel.constant_value
    if isinstance(kernel, WhiteKernel):
        return 0.0
    raise TypeError(f"no oracle for {kernel!r}")


def _ovo_weights(model):
    """Dual weights of each one-vs-one decision function, (n_SV, n_pairs).

    Pair (i, j): the support vectors of class i weighted by row j - 1 of
    ``dual_coef_``, those of class j by row i; zero for the other classes'.
    """
    start = np.r_[0, np.cumsum(model.n_support_)]
    n_classes = len(model.classes_)
    columns = []
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            alpha = np.zeros(len(model.support_vectors_))
            of_i, of_j = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
            alpha[of_i] = model.dual_coef_[j - 1, of_i]
            alpha[of_j] = model.dual_coef_[i, of_j]
            columns.append(alpha)
    return np.column_stack(columns)


def kernel_expansion(model):
    """The model as ``sum_i alpha_i k(x, r_i) + c`` from its own attributes.

    Returns the reference points ``R`` (n_ref, n_features), the weights
    ``alpha`` (n_ref, n_outputs), the intercepts ``c`` (n_outputs,) and the
    kernel, a scikit-learn kernel name with its ``gamma`` or a GP kernel.
    """
    gamma = None
    if isinstance(model, KernelRidge):
        R, alpha, c = model.X_fit_, model.dual_coef_, np.zeros(1)
        kernel, gamma = model.kernel, model.gamma
        if gamma is None and isinstance(kernel, str):
            gamma = 1.0 / model.n_features_in_  # of all features, not of S
        if alpha.ndim == 2:
            c = np.zeros(alpha.shape[1])
    elif isinstance(model, SVR | NuSVR | SVC | NuSVC | OneClassSVM):
        R, c = model.support_vectors_, model.intercept_
        alpha = model.dual_coef_.T if len(c) == 1 else _ovo_weights(model)
        kernel, gamma = model.kernel, model._gamma  # the gamma libsvm was given
    elif isinstance(model, GaussianProcessRegressor):
        # predict: y_std * k(x, X_train) @ alpha_ + y_mean (0 and 1 unless
        # normalize_y); scikit-learn keeps the two statistics private.
        R, kernel = model.X_train_, model.kernel_
        alpha = model.alpha_ * np.ravel(model._y_train_std)
        c = np.ravel(model._y_train_mean)
    elif isinstance(model, GaussianProcessClassifier):
        laplace = model.base_estimator_
        R, kernel = laplace.X_train_, laplace.kernel_
        alpha, c = laplace.y_train_ - laplace.pi_, np.zeros(1)
    else:
        raise TypeError(f"no oracle for {type(model).__name__}")
    R, c = np.asarray(R, dtype=float), np.asarray(c, dtype=float)
    return R, alpha.reshape(len(R), -1), c, (kernel, gamma)


def kernel_expansions(model):
    """The model as a sum of expansions (see :func:`kernel_expansion`).

    One, except for a multiclass GPC: one per class, each with the class's
    own fitted kernel and zero weights on the other classes' outputs.
    """
    laplaces = (
        gpc_laplace_models(model)
        if isinstance(model, GaussianProcessClassifier)
        else []
    )
    if len(laplaces) < 2:
        return [kernel_expansion(model)]
    expansions = []
    for k, laplace in enumerate(laplaces):
        alpha = np.zeros((len(laplace.X_train_), len(laplaces)))
        alpha[:, k] = laplace.y_train_ - laplace.pi_
        R = np.asarray(laplace.X_train_, dtype=float)
        expansions.append((R, alpha, np.zeros(len(laplaces)), (laplace.kernel_, None)))
    return expansions


def kernel_on_features(kernel, A, B, coalition):
    """The kernel matrix k_S(A, B) on the features in ``coalition`` only."""
    kernel, gamma = kernel
    coalition = sorted(coalition)
    if isinstance(kernel, str):
        if not coalition:
            return np.ones((len(A), len(B)))
        return _PAIRWISE[kernel](A[:, coalition], B[:, coalition], gamma=gamma)
    return restricted_gp_kernel(kernel, set(coalition), A.shape[1])(A, B)


def kernel_value(model, x, coalition, expansions=None):
    """v(S) of the kernel game of ``model`` at the row ``x``, per output."""
    if expansions is None:
        expansions = kernel_expansions(model)
    return sum(
        kernel_on_features(kernel, x[None], R, coalition)[0] @ alpha + c
        for R, alpha, c, kernel in expansions
    )


def kernel_value_table(model, x):
    """v(S) for all 2**d coalitions S (bitmask order), shape (2**d, n_outputs)."""
    d, expansions = len(x), kernel_expansions(model)
    return np.array(
        [
            kernel_value(model, x, {j for j in range(d) if mask >> j & 1}, expansions)
            for mask in range(2**d)
        ]
    )


def kernel_shapley_of_players(model, x, players):
    """Shapley values of the kernel game whose players are groups of features.

    ``players`` lists each player's feature positions (an empty list is a
    player that holds no feature: a dummy); v(T) is :func:`kernel_value` on
    the union of T's features, enumerated over the ``2**len(players)``
    coalitions. Returns (n_players, n_outputs).
    """
    expansions = kernel_expansions(model)
    tables = np.array(
        [
            kernel_value(model, x, coalition_of_players(players, mask), expansions)
            for mask in range(2 ** len(players))
        ]
    )
    return shapley_of_tables(tables)


def shapley_of_tables(tables, groups=None):
    """Shapley values of each column of ``tables`` (2**d, n_outputs).

    Returns (n_players, n_outputs). ``groups`` (lists of feature positions)
    makes the players the groups, in that order: the quotient game.
    """
    d = int(np.log2(len(tables)))
    if groups is not None:
        tables = np.column_stack([quotient_table(t, groups) for t in tables.T])
        d = len(groups)
    return np.column_stack([shapley_by_enumeration(t, d) for t in tables.T])


# ---------------------------------------------------------------------------
# Trees of any depth: no recursion, and covers of any size (zero included).


def path_dependent_value_by_leaves(tree, goes_left, coalition):
    """shap's path-dependent value function, summed over leaves, iteratively.

    ``tree`` has arrays ``left``, ``right`` (-1 at leaves), ``feature``,
    ``cover`` and ``value`` (one value per node); ``goes_left[u]`` says
    where the sample goes at internal node ``u``. Each leaf weighs its value
    by the product, over the edges of its path, of ``[the sample takes the
    edge]`` if the parent's feature is in ``coalition``, else the cover
    ratio ``cover[child] / cover[parent]`` (0 below a parent of zero cover:
    a node without training mass passes none on). The products along the
    paths are taken by pointer jumping (each node multiplies in its
    ancestor's partial product, doubling the reach each pass), so trees of
    any depth take O(n_nodes log depth) work and no recursion.
    """
    left, right = np.asarray(tree["left"]), np.asarray(tree["right"])
    feature, cover = np.asarray(tree["feature"]), np.asarray(tree["cover"], float)
    n_nodes = len(left)
    internal = np.flatnonzero(left >= 0)
    parent = np.full(n_nodes, -1)
    factor = np.ones(n_nodes)
    known = np.isin(feature[internal], list(coalition))
    for children, taken in (
        (left[internal], goes_left[internal]),
        (right[internal], ~goes_left[internal]),
    ):
        parent[children] = internal
        ratio = np.zeros(len(internal))
        massive = cover[internal] > 0
        ratio[massive] = cover[children][massive] / cover[internal][massive]
        factor[children] = np.where(known, taken.astype(float), ratio)
    # reach[u]: the product over the edges from ancestor[u] down to u.
    reach, ancestor = factor.copy(), parent
    while (ancestor >= 0).any():
        has, up = ancestor >= 0, np.maximum(ancestor, 0)
        reach, ancestor = (
            np.where(has, reach * reach[up], reach),
            np.where(has, ancestor[up], -1),
        )
    leaves = left < 0
    return float(reach[leaves] @ np.asarray(tree["value"], float)[leaves])


def path_dependent_shapley_by_leaves(tree, goes_left, features):
    """Shapley values of :func:`path_dependent_value_by_leaves` over ``features``.

    Enumerates the ``2**len(features)`` coalitions; other features must not
    be split on.
    """
    d = len(features)
    table = [
        path_dependent_value_by_leaves(
            tree, goes_left, {features[j] for j in range(d) if mask >> j & 1}
        )
        for mask in range(2**d)
    ]
    return shapley_by_enumeration(np.array(table), d)


# ---------------------------------------------------------------------------
# Shapley interaction index of any set function, by its definition.


def interaction_index_of_table(table, d):
    """I_ij = sum_{S without i, j} |S|!(d-|S|-2)!/(d-1)! Delta_ij v(S); I_ii = 0.

    ``Delta_ij v(S) = v(S+i+j) - v(S+i) - v(S+j) + v(S)``; ``table`` holds
    v(S) for every bitmask S.
    """
    index = np.zeros((d, d))
    for i, j in itertools.permutations(range(d), 2):
        for mask in range(2**d):
            if not (mask >> i) & 1 and not (mask >> j) & 1:
                size = bin(mask).count("1")
                weight = factorial(size) * factorial(d - size - 2) / factorial(d - 1)
                index[i, j] += weight * (
                    table[mask | 1 << i | 1 << j]
                    - table[mask | 1 << i]
                    - table[mask | 1 << j]
                    + table[mask]
                )
    return index


def shapley_interaction_index(value, n):
    """The Shapley interaction index of the set function ``value`` on n players.

    ``value(set_of_players)`` is a number; all 2**n coalitions are
    evaluated. The diagonal is 0.
    """
    return interaction_index_of_table(table_of(value, n), n)


def shap_interaction_matrix(index, table, d):
    """shap's convention from the index: half of it off the diagonal, and on
    it the main effects phi_i - sum_{j != i} I_ij / 2 (rows sum to phi)."""
    matrix = index / 2
    np.fill_diagonal(matrix, shapley_by_enumeration(table, d) - matrix.sum(axis=1))
    return matrix


# ---------------------------------------------------------------------------
# Interventional trees: v(S) = the mean, over every background row z, of the
# model's own prediction on the hybrid row (x on S's features, z elsewhere).


def _hybrid(background, x, columns):
    """The background rows with ``x``'s values in ``columns`` (positions)."""
    if isinstance(background, pd.DataFrame):
        hybrid = background.copy()
        for column in background.columns[columns]:
            hybrid[column] = pd.Series(
                [x[column].iloc[0]] * len(hybrid),
                index=hybrid.index,
                dtype=background[column].dtype,
            )
        return hybrid
    hybrid = np.array(background, dtype=float)
    hybrid[:, columns] = np.asarray(x, dtype=float)[columns]
    return hybrid


def interventional_table(predict, x, background, players):
    """v(S) for every bitmask S of ``players``, of shape (2**d, n_outputs).

    ``predict`` is the model's own raw output (``predict``,
    ``decision_function``, ``predict_proba``...); ``x`` one row (a 1-D
    array, or a one-row DataFrame like ``background``); ``players`` each
    player's column positions. All 2**d coalitions' hybrid rows are
    predicted at once.
    """
    d = len(players)
    hybrids = [
        _hybrid(background, x, sorted(coalition_of_players(players, mask)))
        for mask in range(2**d)
    ]
    stacked = (
        pd.concat(hybrids, ignore_index=True)
        if isinstance(background, pd.DataFrame)
        else np.concatenate(hybrids)
    )
    raw = np.asarray(predict(stacked), dtype=float)
    return raw.reshape(2**d, len(background), -1).mean(axis=1)


def interventional_shapley(predict, x, background, players=None):
    """Interventional Shapley values by the factorial formula, (d, n_outputs).

    ``players`` lists each player's columns (default: one per column).
    """
    if players is None:
        players = [[j] for j in range(np.shape(background)[1])]
    return shapley_of_tables(interventional_table(predict, x, background, players))


def interventional_interactions(predict, x, background, players=None):
    """The interventional game's interactions in shap's convention.

    Of shape (n_outputs, d, d): half the Shapley interaction index off the
    diagonal, the main effects on it.
    """
    if players is None:
        players = [[j] for j in range(np.shape(background)[1])]
    d = len(players)
    tables = interventional_table(predict, x, background, players)
    return np.stack(
        [
            shap_interaction_matrix(interaction_index_of_table(table, d), table, d)
            for table in tables.T
        ]
    )


# ---------------------------------------------------------------------------
# Model-agnostic explainers: the indices of one interventional table (see
# interventional_table) by their definitions, and the marginal contributions
# of the players along one order of arrival (what permutation sampling
# averages).


def index_of_tables(tables, index):
    """``index`` ("shapley", "banzhaf" or "loo") of each column of ``tables``.

    ``tables`` holds v(S) for every bitmask S, shape (2**d, n_outputs);
    returns (d, n_outputs). Leave-one-out is ``v(N) - v(N minus i)``.
    """
    d = int(np.log2(len(tables)))
    full = 2**d - 1
    if index == "loo":
        return np.array([tables[full] - tables[full & ~(1 << i)] for i in range(d)])
    by_enumeration = {
        "shapley": shapley_by_enumeration,
        "banzhaf": banzhaf_by_enumeration,
    }
    return np.column_stack([by_enumeration[index](t, d) for t in tables.T])


def interventional_index(predict, x, background, index, players=None):
    """The interventional game's ``index`` at the row ``x``, (d, n_outputs)."""
    if players is None:
        players = [[j] for j in range(np.shape(background)[1])]
    return index_of_tables(interventional_table(predict, x, background, players), index)


def arrival_contributions(table, order):
    """v(players before i, and i) - v(players before i), for each player i.

    ``order`` is the order in which the players arrive; ``table`` one
    output's v(S) for every bitmask S. The contributions sum to
    v(N) - v(empty set) whatever the order.
    """
    contributions = np.zeros(len(order))
    mask = 0
    for player in order:
        contributions[player] = table[mask | 1 << player] - table[mask]
        mask |= 1 << player
    return contributions


def contributions_by_order(table, d):
    """:func:`arrival_contributions` of each of the d! orders, keyed by order."""
    return {
        order: arrival_contributions(table, order)
        for order in itertools.permutations(range(d))
    }


# -- interaction indices of any order, from their definitions ---------------


def _discrete_derivative(table, mask_s, mask_t):
    """Delta_S v(T) = sum_{L ⊆ S} (-1)**(|S|-|L|) v(T ∪ L), for T disjoint of S."""
    members = [j for j in range(64) if mask_s >> j & 1]
    total = 0.0
    for size in range(len(members) + 1):
        for subset in itertools.combinations(members, size):
            total += (-1) ** (len(members) - size) * table[
                mask_t | sum(1 << j for j in subset)
            ]
    return total


def _mask(coalition):
    return sum(1 << j for j in coalition)


def _outside(mask_s, d):
    """The bitmasks of the coalitions disjoint of ``mask_s``."""
    return [t for t in range(2**d) if not t & mask_s]


def cardinal_index_by_definition(table, d, coalition, weight_of_size):
    """sum_{T ⊆ N∖S} p(|T|) Delta_S v(T), ``weight_of_size(t, s)`` = p."""
    mask_s, s = _mask(coalition), len(coalition)
    return sum(
        weight_of_size(bin(t).count("1"), s) * _discrete_derivative(table, mask_s, t)
        for t in _outside(mask_s, d)
    )


def faithful_index_by_least_squares(table, d, order, banzhaf):
    """FSII or FBII as the weighted least-squares fit of the game by a sum of
    terms on the coalitions of at most ``order`` players (Tsai et al., 2023).

    FSII: weights (d-1) / (C(d, s) s (d-s)) on 0 < |S| < d, and the empty
    and the grand coalition fitted exactly (as constraints); FBII: equal
    weights on every coalition, no constraint.
    """
    terms = [
        c for size in range(order + 1) for c in itertools.combinations(range(d), size)
    ]
    design = np.array(
        [[float(_mask(c) & mask == _mask(c)) for c in terms] for mask in range(2**d)]
    )
    if banzhaf:
        solution, *_ = np.linalg.lstsq(design, table, rcond=None)
        return dict(zip(terms, solution, strict=True))
    sizes = np.array([bin(mask).count("1") for mask in range(2**d)])
    inner = (sizes > 0) & (sizes < d)
    weights = np.zeros(2**d)
    weights[inner] = [(d - 1) / (math_comb(d, s) * s * (d - s)) for s in sizes[inner]]
    # Constraints as a KKT system: minimise sum w (A x - v)^2 s.t. C x = c.
    root = np.sqrt(weights)[:, None]
    a_matrix = design * root
    constraints = design[[0, 2**d - 1]]
    kkt = np.block(
        [
            [2 * a_matrix.T @ a_matrix, constraints.T],
            [constraints, np.zeros((2, 2))],
        ]
    )
    rhs = np.concatenate([2 * a_matrix.T @ (table * root[:, 0]), table[[0, 2**d - 1]]])
    solution = np.linalg.solve(kkt, rhs)[: len(terms)]
    return dict(zip(terms, solution, strict=True))


def math_comb(n, k):
    return factorial(n) // (factorial(k) * factorial(n - k))


def bernoulli_by_recurrence(count):
    """B_0..B_{count-1} from sum_{j<=n} C(n+1, j) B_j = 0, B_0 = 1."""
    numbers = [Fraction(1)]
    for n in range(1, count):
        numbers.append(
            -sum(math_comb(n + 1, j) * numbers[j] for j in range(n)) / Fraction(n + 1)
        )
    return numbers


def interaction_index_by_definition(table, d, index, order):
    """``{coalition: value}`` of an index, each from its definition."""

    def sii(t, s):
        return factorial(d - t - s) * factorial(t) / factorial(d - s + 1)

    def stii_top(t, s):
        return order / d / math_comb(d - 1, t)

    coalitions = [
        c for size in range(order + 1) for c in itertools.combinations(range(d), size)
    ]
    if index in ("FSII", "FBII"):
        return faithful_index_by_least_squares(table, d, order, index == "FBII")
    values = {}
    for c in coalitions:
        s = len(c)
        if index == "Moebius" or (index == "STII" and s < order):
            values[c] = _discrete_derivative(table, _mask(c), 0)
        elif index == "STII":
            values[c] = cardinal_index_by_definition(table, d, c, stii_top)
        elif index == "BII":
            values[c] = cardinal_index_by_definition(
                table, d, c, lambda t, s: 0.5 ** (d - s)
            )
        else:  # SII, and k-SII from it
            values[c] = cardinal_index_by_definition(table, d, c, sii)
    if index == "k-SII":
        bernoulli = bernoulli_by_recurrence(order + 1)
        aggregated = {(): table[0]}
        for c in coalitions[1:]:
            aggregated[c] = sum(
                float(bernoulli[len(t) - len(c)]) * values[t]
                for t in coalitions
                if set(c) <= set(t)
            )
        values = aggregated
    if index in ("SII", "BII"):
        values.pop(())
    return values
