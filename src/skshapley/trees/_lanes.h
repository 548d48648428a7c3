/* Short loops over the quadrature points of a tree's rule, for _tree_core.pyx.
 *
 * Written in C for one reason: `restrict` tells the compiler that the
 * arrays do not overlap, so these loops are vectorized without run-time
 * overlap checks (Cython cannot express `restrict`).
 */
#ifndef SKSHAPLEY_LANES_H
#define SKSHAPLEY_LANES_H

#include <stddef.h>

/* out[k] = a[k] * b[k] */
static inline void lanes_multiply(double *restrict out, const double *restrict a,
                                  const double *restrict b, ptrdiff_t n) {
    for (ptrdiff_t k = 0; k < n; k++) out[k] = a[k] * b[k];
}

/* out[k] = a[k] * c */
static inline void lanes_scale(double *restrict out, const double *restrict a,
                               double c, ptrdiff_t n) {
    for (ptrdiff_t k = 0; k < n; k++) out[k] = a[k] * c;
}

/* out[k] += a[k] */
static inline void lanes_add(double *restrict out, const double *restrict a,
                             ptrdiff_t n) {
    for (ptrdiff_t k = 0; k < n; k++) out[k] += a[k];
}

/* sum_k a[k] * b[k], in 2 partial sums (a fixed, short rounding pattern) */
static inline double lanes_dot(const double *restrict a, const double *restrict b,
                               ptrdiff_t n) {
    double even = 0.0, odd = 0.0;
    ptrdiff_t k = 0;
    for (; k + 1 < n; k += 2) {
        even += a[k] * b[k];
        odd += a[k + 1] * b[k + 1];
    }
    if (k < n) even += a[k] * b[k];
    return even + odd;
}

#endif
