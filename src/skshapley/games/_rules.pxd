# Quadrature rules as the compiled kernels read them: the C view of
# ``_quadrature.Rules``, shared by the product-game core (_product_core.pyx)
# and the tree core (trees/_tree_core.pyx).


cdef struct Rule:
    # One game's (or tree's) rule on [0, 1].
    const double *nodes
    const double *weights
    Py_ssize_t n_points


cdef struct Rules:
    # A batch's rules: game g uses nodes[start[g]:][:n_points[g]].
    const double *nodes
    const double *weights
    const Py_ssize_t *start
    const Py_ssize_t *n_points
    Py_ssize_t n_games


cdef inline Rules rules_view(rules):
    """The struct view of a ``_quadrature.Rules``.

    Its pointers are into the arrays of ``rules``: the caller keeps that
    object alive while the struct is used.
    """
    cdef const double[::1] nodes = rules.nodes
    cdef const double[::1] weights = rules.weights
    cdef const Py_ssize_t[::1] start = rules.start
    cdef const Py_ssize_t[::1] n_points = rules.n_points
    cdef Rules view
    view.nodes = &nodes[0]
    view.weights = &weights[0]
    view.start = &start[0]
    view.n_points = &n_points[0]
    view.n_games = n_points.shape[0]
    return view


cdef inline Rule rule_of(const Rules *rules, Py_ssize_t g) noexcept nogil:
    """Game ``g``'s rule."""
    cdef Rule rule
    rule.nodes = rules.nodes + rules.start[g]
    rule.weights = rules.weights + rules.start[g]
    rule.n_points = rules.n_points[g]
    return rule
