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
