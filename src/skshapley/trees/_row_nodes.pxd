# The nodes as the one-row walks read them (_tree_core.pyx's path-dependent
# values, _interactions_core.pyx's interaction values), written once: one
# record of 32 bytes per node (the TreeEnsemble's arrays spread these fields
# over eight), so that one pointer reaches all of a node and the walk's other
# locals stay in registers. _tree_core.Forest packs them.

from libc.math cimport isnan

from ._routing cimport Routing, goes_left


cdef struct RowNode:
    int children[2]                 # left then right (indexed by side), -1
                                    # at leaves
    int player
    int feature
    double threshold                # NaN where goes_left decides anyway
                                    # (categorical splits, zero-as-missing)
    double cover_ratio


cdef inline bint row_goes_left(
    const RowNode *nodes, const RowNode *record, const Routing *routing, double x
) noexcept nogil:
    """goes_left for the split ``record`` of ``nodes``: a compare, unless
    ``x`` or the record's threshold is NaN (a missing value, or a rule of
    goes_left; also for ``x`` and the threshold infinite, opposite, which
    goes_left routes too)."""
    if isnan(x + record.threshold):
        return goes_left(routing, record - nodes, x)
    return x <= record.threshold


cdef struct RowTrees:
    # A TreeEnsemble's arrays (see _table.py) as the one-row walks read
    # them, read-only: pointers into the ensemble's arrays, valid while it is.
    const Py_ssize_t *roots
    const Py_ssize_t *tree_output
    const Py_ssize_t *tree_width
    const RowNode *nodes            # children, player, feature, threshold,
                                    # cover ratio (_tree_core.Forest.row_nodes)
    Routing routing                 # the split conditions goes_left reads
    const double *value             # (n_nodes, value_stride)
    Py_ssize_t value_stride


cdef inline RowTrees row_trees(ensemble, const unsigned char[::1] row_nodes) except *:
    """The RowTrees view of ``ensemble`` and its packed ``row_nodes``."""
    cdef const Py_ssize_t[::1] roots = ensemble.roots
    cdef const Py_ssize_t[::1] tree_output = ensemble.tree_output
    cdef const Py_ssize_t[::1] tree_width = ensemble.tree_width
    cdef const double[::1] threshold = ensemble.threshold
    cdef const double[:, ::1] value = ensemble.value
    cdef const unsigned char[::1] missing_left = ensemble.missing_left
    cdef const unsigned char[::1] is_categorical = ensemble.is_categorical
    cdef const unsigned int[:, ::1] bitset = ensemble.category_bitset
    cdef RowTrees trees
    from ._table import ZERO_AS_MISSING  # (a .pxd imports nothing itself)
    if row_nodes.shape[0] != threshold.shape[0] * sizeof(RowNode):
        raise ValueError("row_nodes must hold one record per node.")
    trees.roots = &roots[0]
    trees.tree_output = &tree_output[0]
    trees.tree_width = &tree_width[0]
    trees.nodes = <const RowNode *> &row_nodes[0]
    trees.routing.threshold = &threshold[0]
    trees.routing.missing_left = &missing_left[0]
    trees.routing.is_categorical = &is_categorical[0]
    trees.routing.bitset = &bitset[0, 0]
    trees.routing.zero_as_missing = ZERO_AS_MISSING
    trees.value = &value[0, 0]
    trees.value_stride = value.shape[1]
    return trees
