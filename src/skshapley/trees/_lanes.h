/* Loops over the samples of a block, for _tree_core.pyx.
 *
 * Written in C for one reason: `restrict` tells the compiler that the
 * arrays do not overlap, so these loops are vectorized without run-time
 * overlap checks (Cython cannot express `restrict`). Each array holds one
 * value per sample of the block. Beside them, the loops over one edge's
 * quadrature points and a select that cannot become a branch.
 */
#ifndef SKSHAPLEY_LANES_H
#define SKSHAPLEY_LANES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* out[s] = a[s] * c */
static inline void lanes_scale(double *restrict out, const double *restrict a,
                               double c, ptrdiff_t n) {
    for (ptrdiff_t s = 0; s < n; s++) out[s] = a[s] * c;
}

/* out[s] += a[s] */
static inline void lanes_add(double *restrict out, const double *restrict a,
                             ptrdiff_t n) {
    for (ptrdiff_t s = 0; s < n; s++) out[s] += a[s];
}

/* The child's product: out[s] = a[s] * (ratio if the sample had left the
 * feature's path, follow if it follows the edge, leave if it leaves it),
 * selected by the indicators gone[s], follows[s], leaves[s] (one is 1). */
static inline void lanes_select_scale(double *restrict out, const double *restrict a,
                                      const double *restrict gone,
                                      const double *restrict follows,
                                      const double *restrict leaves, double ratio,
                                      double follow, double leave, ptrdiff_t n) {
    for (ptrdiff_t s = 0; s < n; s++)
        out[s] = a[s] * (gone[s] * ratio + follows[s] * follow + leaves[s] * leave);
}

/* acc[s] += (follows[s] * follow + leaves[s] * leave) * h[s] */
static inline void lanes_select_accumulate(double *restrict acc,
                                           const double *restrict follows,
                                           const double *restrict leaves,
                                           double follow, double leave,
                                           const double *restrict h, ptrdiff_t n) {
    for (ptrdiff_t s = 0; s < n; s++)
        acc[s] += (follows[s] * follow + leaves[s] * leave) * h[s];
}

/* went_left[s] = 1.0 if x[s] goes left: missing values (NaN, and
 * |x| <= zero_limit; zero_limit < 0 means no such rule) by missing_left,
 * the others if x[s] <= threshold. */
static inline void lanes_route(double *restrict went_left, const double *restrict x,
                               double threshold, double missing_left,
                               double zero_limit, ptrdiff_t n) {
    for (ptrdiff_t s = 0; s < n; s++) {
        int missing = isnan(x[s]) || fabs(x[s]) <= zero_limit;
        went_left[s] = missing ? missing_left : (x[s] <= threshold ? 1.0 : 0.0);
    }
}

/* An edge's terms, loops over the quadrature points, written once for both
 * walks (a block's and one sample's), so that they give the same bits. The
 * points are t, their complements 1 - t are u (computed once per tree) and
 * the weights w. */

/* The edge followed (A stays 1): the new 1/f and g, g's weighted change, and
 * the factor that takes G to the child's. */
static inline void points_follow(double *restrict factor, double *restrict change,
                                 double *restrict reciprocal, double *restrict g,
                                 const double *restrict old_reciprocal,
                                 const double *restrict old_g, const double *restrict t,
                                 const double *restrict u, const double *restrict w,
                                 double new_cover, ptrdiff_t m) {
    for (ptrdiff_t k = 0; k < m; k++) {
        reciprocal[k] = 1.0 / (u[k] * new_cover + t[k]);
        g[k] = (1.0 - new_cover) * reciprocal[k];
        change[k] = w[k] * (g[k] - old_g[k]);
        factor[k] = (u[k] * new_cover + t[k]) * old_reciprocal[k];
    }
}

/* The edge left (A becomes 0): g's weighted change, and G's factor. */
static inline void points_leave(double *restrict factor, double *restrict change,
                                const double *restrict old_reciprocal,
                                const double *restrict old_g,
                                const double *restrict leave_g, const double *restrict u,
                                const double *restrict w, double new_cover, ptrdiff_t m) {
    for (ptrdiff_t k = 0; k < m; k++) {
        change[k] = w[k] * (leave_g[k] - old_g[k]);
        factor[k] = u[k] * new_cover * old_reciprocal[k];
    }
}

/* which ? if_true : if_false, without a branch (which is 0 or 1). */
static inline double select_double(ptrdiff_t which, double if_true, double if_false) {
    uint64_t t, f, mask = (uint64_t)0 - (uint64_t)which;
    memcpy(&t, &if_true, sizeof t);
    memcpy(&f, &if_false, sizeof f);
    t = (t & mask) | (f & ~mask);
    memcpy(&if_true, &t, sizeof t);
    return if_true;
}

/* out[k] = a[k] * b[k] */
static inline void points_product(double *restrict out, const double *restrict a,
                                  const double *restrict b, ptrdiff_t m) {
    for (ptrdiff_t k = 0; k < m; k++) out[k] = a[k] * b[k];
}

/* out[k] = a[k] + b[k] */
static inline void points_sum(double *restrict out, const double *restrict a,
                              const double *restrict b, ptrdiff_t m) {
    for (ptrdiff_t k = 0; k < m; k++) out[k] = a[k] + b[k];
}

#endif
