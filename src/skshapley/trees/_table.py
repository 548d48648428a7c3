"""The library's own form of a fitted tree ensemble: plain arrays, one row per node.

Parsers (one module per model library) read each tree of a fitted model into
a :class:`ParsedTree` and hand the list to :func:`concatenate_trees`, which
checks them and stacks them into one :class:`TreeEnsemble`; the compiled
kernels and :class:`TreeExplainer` read nothing else, so no model object
survives parsing.

Routing, at an internal node ``u`` with feature ``f = feature[u]``, of a
sample value ``x = X[i, f]`` (after the ensemble's input cast, see
``float32_inputs``):

* a missing value goes to ``left[u]`` if bit 0 of ``missing_left[u]`` is
  set, else to ``right[u]``. Missing means NaN, and also
  ``|x| <= ZERO_AS_MISSING``
  where bit 1 of ``missing_left[u]`` is set (LightGBM's "zero as missing");
* on a categorical node (``is_categorical[u]``), ``x`` is a category code:
  it goes left if ``0 <= x < 256``, ``x`` is integral and bit ``int(x)`` of
  ``category_bitset[u]`` (8 words of 32 bits, word ``c // 32``, bit
  ``c % 32``) is set, otherwise right;
* otherwise ``x`` goes left if ``x <= threshold[u]``, else right.

Every root-to-leaf path is a product game: for each distinct feature ``j``
on the path, ``a_j(x)`` is 1 if ``x`` follows all of the path's splits on
``j`` and ``b_j`` is the product of the path's cover ratios
``cover[child] / cover[parent]`` on ``j``; the game's weight is the leaf's
value. The user guide's ``docs/user_guide/how_it_works.rst`` derives this;
``docs/developers/architecture.rst`` shows where the table sits between the
parsers and the compiled walk, and how to add a parser.
"""

from dataclasses import dataclass

import numpy as np

from .._runtime.limits import MAX_FEATURES, MAX_OUTPUT_SCALE, MAX_OUTPUTS

# LightGBM's kZeroThreshold (``const double kZeroThreshold = 1e-35f``: the
# float 1e-35 widened to double): with zero-as-missing, |x| <= this is
# missing.
ZERO_AS_MISSING = float(np.float32(1e-35))

# Width of the category bitsets: 8 words of 32 bits, categories 0..255 (the
# most HistGradientBoosting supports).
BITSET_WORDS = 8
N_CATEGORIES = 32 * BITSET_WORDS

# How much a child's cover may exceed its parent's: the rounding of covers
# stored in float32 (XGBoost's hessian sums, ~1.2e-7) or summed in another
# order (scikit-learn's weighted counts), with a wide margin. Cover ratios
# above 1 would let the factors ``B`` of deep paths overflow.
COVER_ROUNDING = 1e-6


def category_bitset(categories) -> np.ndarray:
    """The bitset of ``categories`` (integers 0..255).

    Parameters
    ----------
    categories : array-like of int
        Category codes, each in ``0..N_CATEGORIES - 1`` (the caller checks).

    Returns
    -------
    ndarray of shape (8,), dtype uint32
        Category ``c`` at bit ``c % 32`` of word ``c // 32``.
    """
    categories = np.asarray(categories, dtype=np.intp)
    bitset = np.zeros(BITSET_WORDS, dtype=np.uint32)
    np.bitwise_or.at(
        bitset, categories // 32, np.uint32(1) << (categories % 32).astype(np.uint32)
    )
    return bitset


def in_category_bitset(bitset: np.ndarray, category: int) -> bool:
    """Whether ``category`` (0..255) is in ``bitset`` (see :func:`category_bitset`)."""
    return bool((int(bitset[category // 32]) >> (category % 32)) & 1)


@dataclass(frozen=True, eq=False)
class ParsedTree:
    """One tree's nodes as a parser read them, before the table checks them.

    What every parser hands to :func:`concatenate_trees`. Nothing here is
    trusted: shapes, children, features, outputs, covers and leaf values
    are checked there. The node arrays may still be edited in place (see
    :func:`swap_children`) until the tree is handed over.

    Attributes
    ----------
    feature : ndarray of shape (n_nodes,), dtype intp
        Split feature of each internal node; negative for leaves.
    threshold : ndarray of shape (n_nodes,), dtype float64
        Numerical split: go left iff ``x <= threshold``.
    left, right : ndarray of shape (n_nodes,), dtype intp
        Local indices (within this tree, root 0) of the children; -1 for
        leaves.
    missing_left : ndarray of shape (n_nodes,), dtype uint8
        The missing-value rule (see :class:`TreeEnsemble`).
    cover : ndarray of shape (n_nodes,), dtype float64
        The node's training mass (see :class:`TreeEnsemble`).
    value : ndarray of shape (n_nodes, width), dtype float64
        Leaf values, already weighted; ignored at internal nodes.
    output : int, default=0
        First output the tree adds to: its leaf values add to outputs
        ``output .. output + width - 1``.
    is_categorical : ndarray of shape (n_nodes,), dtype uint8, or None
        1 at categorical splits; None if the tree has none.
    category_bitset : ndarray of shape (n_nodes, 8), dtype uint32, or None
        Categories that go left at categorical splits; None if none.
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    missing_left: np.ndarray
    cover: np.ndarray
    value: np.ndarray
    output: int = 0
    is_categorical: np.ndarray | None = None
    category_bitset: np.ndarray | None = None

    @property
    def n_nodes(self) -> int:
        """Number of nodes (entries of ``feature``)."""
        return len(self.feature)

    @property
    def width(self) -> int:
        """Number of outputs the tree adds to (columns of ``value``)."""
        return np.shape(self.value)[1]


def swap_children(tree: ParsedTree, nodes) -> None:
    """Swap the children of ``nodes`` and flip their missing rule, in place.

    For categorical splits whose library sends the listed categories (and
    no others) right, or sends unknown categories to the missing side: the
    table sends a bitset's categories left and every other value right, so
    such a node is stored mirrored. Bit 0 of ``missing_left`` flips with
    the children, so missing values keep their side.
    """
    tree.left[nodes], tree.right[nodes] = tree.right[nodes], tree.left[nodes]
    tree.missing_left[nodes] ^= 1


@dataclass(frozen=True)
class TreeEnsemble:
    """A parsed tree ensemble (all trees' nodes in one table).

    Attributes
    ----------
    feature : ndarray of shape (n_nodes,), dtype intp
        Split feature of each internal node; -1 for leaves.
    threshold : ndarray of shape (n_nodes,), dtype float64
        Numerical split: go left iff ``x <= threshold`` (so a NaN threshold
        sends every non-missing value right, as in scikit-learn, XGBoost and
        LightGBM, whose comparisons with NaN are false).
    left, right : ndarray of shape (n_nodes,), dtype intp
        Global indices of the children; -1 for leaves.
    missing_left : ndarray of shape (n_nodes,), dtype uint8
        The missing-value rule: bit 0 set if missing values go left; bit 1
        set if ``|x| <= ZERO_AS_MISSING`` counts as missing too.
    is_categorical : ndarray of shape (n_nodes,), dtype uint8
        1 if the split is on category codes via ``category_bitset``.
    category_bitset : ndarray of shape (n_nodes, 8), dtype uint32
        Categories (0..255) that go left at categorical nodes.
    cover : ndarray of shape (n_nodes,), dtype float64
        What the model records as the node's training mass (weighted sample
        count, hessian sum): finite, >= 0, positive at the roots of trees
        with splits, and a child's at most its parent's (up to
        ``COVER_ROUNDING``). Zero covers are allowed (samples of zero
        weight); below a node of zero cover, cover ratios are 0.
    value : ndarray of shape (n_nodes, n_values), dtype float64
        Leaf values, already multiplied by the tree's weight in the
        ensemble (1/n_trees for forests, the learning rate for boosting);
        ignored at internal nodes. Finite, and the sum over trees of the
        largest ``|value|`` of their leaves, plus the largest
        ``|base_offset|``, is at most ``MAX_OUTPUT_SCALE`` (1e300).
    roots : ndarray of shape (n_trees,), dtype intp
        Root node of each tree.
    tree_output : ndarray of shape (n_trees,), dtype intp
        First output a tree contributes to: its leaf values
        ``value[:, :tree_width[t]]`` add to outputs ``tree_output[t]`` onward.
    tree_width : ndarray of shape (n_trees,), dtype intp
        Number of outputs each tree contributes to (at most ``n_values``).
    base_offset : ndarray of shape (n_outputs,), dtype float64
        Constant added to the raw output (boosting's initial prediction).
    n_features : int
        Number of input features the model was fitted on.
    float32_inputs : bool
        True if the model casts inputs to float32 before comparing
        (scikit-learn's trees); False if it compares in float64.
    allow_nan : bool
        Whether the model accepts NaN inputs.
    allow_inf : bool
        Whether the model accepts infinite inputs.
    output_names : tuple
        Name of each output: a class label, "target" or "target k".
    raw_output : str
        What the outputs are: "value", "probability", "log-odds" or
        "margin", for messages and reports.
    feature_names : tuple of str or None, default=None
        The names the model was fitted with, if it knows them.
    category_input : {"values", "codes", "lookup"}, default="values"
        How the model reads its input's categories (see
        ``trees/_categories.py``): every column as numbers ("values",
        scikit-learn's trees); numbers in categorical features as codes and
        pandas categories recoded by value ("codes", XGBoost, LightGBM); or
        every value of a categorical feature, strings included, looked up
        in its training categories ("lookup", HistGradientBoosting).
    category_levels : tuple or None, default=None
        Per feature, the categories seen in training (codes are positions in
        this list), or None; used to recode columns as the model does.
    categorical_features : tuple of int, default=()
        Features the model routes as category codes.
    category_rounding : {"trunc", "floor"}, default="trunc"
        How the model makes their values integral before routing: LightGBM
        truncates, XGBoost floors (after its float32 cast).
    unknown_categories : {"missing", "error"}, default="missing"
        What the model does with categories it did not see in training:
        route them as missing values (LightGBM, HistGradientBoosting) or
        refuse them (XGBoost).
    missing_value : float, default=nan
        A value the model treats as missing besides NaN (XGBoost's
        ``missing=``): inputs equal to it are routed as NaN. NaN means none.
    float32_unless_float : bool, default=False
        LightGBM's input cast: NumPy inputs that are not float32 or float64
        (integers, booleans) are cast to float32 before routing, and
        DataFrames to the common type of their columns and float32.
    spaces_in_names_as_underscores : bool, default=False
        LightGBM's feature names: its datasets replace spaces in column names
        by underscores, so a DataFrame column ``"a b"`` is the model's
        feature ``"a_b"``.
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    missing_left: np.ndarray
    is_categorical: np.ndarray
    category_bitset: np.ndarray
    cover: np.ndarray
    value: np.ndarray
    roots: np.ndarray
    tree_output: np.ndarray
    tree_width: np.ndarray
    base_offset: np.ndarray
    n_features: int
    float32_inputs: bool
    allow_nan: bool
    allow_inf: bool
    output_names: tuple
    raw_output: str
    feature_names: tuple | None = None
    category_input: str = "values"
    category_levels: tuple | None = None
    categorical_features: tuple = ()
    category_rounding: str = "trunc"
    unknown_categories: str = "missing"
    missing_value: float = float("nan")
    float32_unless_float: bool = False
    spaces_in_names_as_underscores: bool = False

    @property
    def n_outputs(self) -> int:
        return len(self.base_offset)

    @property
    def n_trees(self) -> int:
        return len(self.roots)


def concatenate_trees(trees: list[ParsedTree], **ensemble_fields) -> TreeEnsemble:
    """Build a :class:`TreeEnsemble` from the trees a parser read.

    Every parser goes through here: the trees are checked (see
    :func:`_check_tree`) before anything else reads them, and the model's
    size and output scale against the limits of ``_runtime/limits.py``.

    Parameters
    ----------
    trees : list of ParsedTree
        The model's trees, in order.
    **ensemble_fields
        ``base_offset``, ``n_features``, ``float32_inputs``, ``allow_nan``,
        ``allow_inf``, ``output_names``, ``raw_output`` and optionally
        ``feature_names`` and the category fields of :class:`TreeEnsemble`.

    Returns
    -------
    TreeEnsemble
        The trees' nodes in one table, children renumbered to global
        indices.

    Raises
    ------
    ValueError
        If the arrays do not form trees, or covers, leaf values or sizes are
        out of range; the message names the tree and node.
    """
    base_offset = np.asarray(ensemble_fields.pop("base_offset"), dtype=np.float64)
    n_features = ensemble_fields["n_features"]
    _check_sizes(n_features, base_offset, len(trees))
    n_outputs = len(base_offset)
    n_names = len(ensemble_fields["output_names"])
    if n_names != n_outputs:
        raise ValueError(
            f"The model names {n_names} outputs (classes or targets) but has "
            f"{n_outputs}; the model file may be corrupt."
        )
    for index, tree in enumerate(trees):
        _check_tree(tree, n_features, n_outputs, index)
    _check_output_scale(trees, base_offset)
    offsets = np.cumsum([0] + [tree.n_nodes for tree in trees])
    n_values = max(tree.width for tree in trees)

    def stacked(key, dtype):
        columns = []
        for tree in trees:
            column = getattr(tree, key)
            if column is None:  # a tree without categorical splits
                bitsets = key == "category_bitset"
                column = np.zeros(
                    (tree.n_nodes, BITSET_WORDS) if bitsets else tree.n_nodes
                )
            columns.append(np.asarray(column, dtype))
        return np.concatenate(columns)

    def children(key):
        return np.concatenate(
            [
                np.where(getattr(tree, key) >= 0, getattr(tree, key) + offset, -1)
                for tree, offset in zip(trees, offsets[:-1], strict=True)
            ]
        ).astype(np.intp)

    value = np.zeros((offsets[-1], n_values))
    for tree, offset in zip(trees, offsets[:-1], strict=True):
        value[offset : offset + tree.n_nodes, : tree.width] = tree.value
    return TreeEnsemble(
        feature=stacked("feature", np.intp),
        threshold=stacked("threshold", np.float64),
        left=children("left"),
        right=children("right"),
        missing_left=stacked("missing_left", np.uint8),
        is_categorical=stacked("is_categorical", np.uint8),
        category_bitset=stacked("category_bitset", np.uint32).reshape(-1, BITSET_WORDS),
        cover=stacked("cover", np.float64),
        value=value,
        roots=offsets[:-1].astype(np.intp),
        tree_output=np.array([tree.output for tree in trees], dtype=np.intp),
        tree_width=np.array([tree.width for tree in trees], dtype=np.intp),
        base_offset=base_offset,
        **ensemble_fields,
    )


def _check_sizes(n_features, base_offset: np.ndarray, n_trees: int) -> None:
    """Refuse models too large for the limits, before any array is built."""
    if (
        not isinstance(n_features, int | np.integer)
        or not 1 <= n_features <= MAX_FEATURES
    ):
        raise ValueError(
            f"The model has {n_features!r} features; at most {MAX_FEATURES} "
            "(and at least 1) are supported."
        )
    if base_offset.ndim != 1 or not 1 <= len(base_offset) <= MAX_OUTPUTS:
        raise ValueError(
            f"The model has {base_offset.size} outputs; at most {MAX_OUTPUTS} "
            "(and at least 1) are supported."
        )
    if not np.isfinite(base_offset).all():
        raise ValueError(
            f"The model's base score is not finite: {base_offset.tolist()[:5]}."
        )
    if n_trees == 0:
        raise ValueError("The model has no trees.")


def _check_tree(
    tree: ParsedTree, n_features: int, n_outputs: int, index: int = 0
) -> None:
    """Raise ``ValueError`` unless the node arrays form one tree.

    The compiled kernels trust these arrays, and models read from files
    (skops, XGBoost, LightGBM dumps) could be crafted: every child must come
    after its parent in the same tree, every node but the root must have
    exactly one parent, internal nodes must split on an existing feature,
    the tree's outputs must exist and every per-node array must have one
    entry per node. Covers and leaf values must be in range (see
    :class:`TreeEnsemble`): a NaN or infinite leaf value would make every
    row's values NaN (the base value is an average over all leaves).
    """
    if not _is_tree(tree, n_features, n_outputs):
        raise ValueError(
            f"The model's tree {index} is malformed (children, features or "
            "outputs out of range, per-node arrays of the wrong length, or "
            "nodes not forming a tree); the model file may be corrupt."
        )
    left, right = np.asarray(tree.left), np.asarray(tree.right)
    cover = np.asarray(tree.cover, dtype=np.float64)
    value = np.asarray(tree.value, dtype=np.float64)
    internal = np.flatnonzero(left >= 0)
    problems = (
        (~np.isfinite(cover) | (cover < 0), "cover", "finite and >= 0", cover),
        ((left < 0) & ~np.isfinite(value).all(axis=1), "leaf value", "finite", value),
    )
    for bad, what, allowed, array in problems:
        if bad.any():
            node = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"The model's tree {index}, node {node}, has {what} "
                f"{array[node].tolist()}: {what}s must be {allowed}."
            )
    if len(internal) and cover[0] == 0:
        raise ValueError(
            f"The model's tree {index} has splits but its root has zero cover "
            "(no training mass): its path-dependent values are undefined."
        )
    for children in (left[internal], right[internal]):
        grown = cover[children] > cover[internal] * (1 + COVER_ROUNDING)
        if grown.any():
            node = int(children[np.argmax(grown)])
            parent = int(internal[np.argmax(grown)])
            raise ValueError(
                f"The model's tree {index}, node {node}, has cover "
                f"{float(cover[node])!r}, more than its parent's "
                f"({float(cover[parent])!r}): a child's cover "
                "must be at most its parent's."
            )


def _check_output_scale(trees: list[ParsedTree], base_offset: np.ndarray) -> None:
    """Refuse leaf values whose sums could overflow (see ``MAX_OUTPUT_SCALE``)."""
    scale = np.abs(base_offset).max()
    for tree in trees:
        leaves = np.asarray(tree.left) < 0
        scale += np.abs(np.asarray(tree.value, dtype=np.float64)[leaves]).max()
    if not scale <= MAX_OUTPUT_SCALE:
        raise ValueError(
            "The model's leaf values are too large: the sum over trees of the "
            f"largest |leaf value|, plus the base score, is {scale:.3g}, above "
            f"the limit of {MAX_OUTPUT_SCALE:.0e} that keeps outputs, base "
            "values and Shapley values finite."
        )


def _is_tree(tree: ParsedTree, n_features: int, n_outputs: int) -> bool:
    """Whether the node arrays of ``tree`` form one tree (see ``_check_tree``)."""
    left, right = np.asarray(tree.left), np.asarray(tree.right)
    feature = np.asarray(tree.feature)
    n_nodes = len(feature)
    value = np.asarray(tree.value)
    if (
        n_nodes == 0
        or feature.shape != (n_nodes,)
        or not left.shape == right.shape == (n_nodes,)
        or value.ndim != 2
        or len(value) != n_nodes
        or value.shape[1] == 0
        or any(
            np.shape(array) != (n_nodes,)
            for array in (tree.threshold, tree.missing_left, tree.cover)
        )
        or (
            tree.is_categorical is not None
            and np.shape(tree.is_categorical) != (n_nodes,)
        )
        or (
            tree.category_bitset is not None
            and np.shape(tree.category_bitset) != (n_nodes, BITSET_WORDS)
        )
    ):
        return False
    internal = left >= 0
    if not np.array_equal(internal, right >= 0):
        return False
    nodes = np.arange(n_nodes)[internal]
    children = np.concatenate([left[internal], right[internal]])
    if np.any(children >= n_nodes) or np.any(children <= np.tile(nodes, 2)):
        return False
    parents = np.bincount(children, minlength=n_nodes)
    width = value.shape[1]
    return bool(
        parents[0] == 0
        and np.all(parents[1:] == 1)
        and np.all((feature[internal] >= 0) & (feature[internal] < n_features))
        and tree.output >= 0
        and tree.output + width <= n_outputs
    )
