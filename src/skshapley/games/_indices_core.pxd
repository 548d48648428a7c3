# The IndexRule view of an IndexPlan (_indices_core.pyx), cimported by the
# tree kernel (trees/_index_core.pyx).

from ._index_games cimport IndexRule


cdef class RuleView:
    cdef IndexRule rule
    cdef object arrays
