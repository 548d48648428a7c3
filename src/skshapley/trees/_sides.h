/* Loops over a block of background rows, for the interventional fit's
 * counting (_routing.pxd's route_block, _cover.pxd).
 *
 * In C for `restrict` (the arrays do not overlap, so the loops vectorize
 * without run-time checks), and, where GCC builds for x86-64 Linux, for a
 * second copy of each loop with AVX2 that the loader picks on processors
 * that have it (function multiversioning, as NumPy dispatches its loops):
 * the build's baseline is SSE2. Comparisons and bit operations only: the
 * results are the same in every copy.
 */
#ifndef SKSHAPLEY_SIDES_H
#define SKSHAPLEY_SIDES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__)
#define SKS_DISPATCH __attribute__((target_clones("avx2", "default")))
#else
#define SKS_DISPATCH
#endif

/* went_left[r] = x[r] <= threshold, or missing_left (0 or 1) if x[r] is NaN:
 * a numerical split's side for each value. */
SKS_DISPATCH static void sides_numeric(const double *restrict x, ptrdiff_t n,
                                       double threshold, unsigned char missing_left,
                                       unsigned char *restrict went_left) {
    for (ptrdiff_t r = 0; r < n; r++) {
        double v = x[r];
        went_left[r] = (unsigned char)((v <= threshold) | ((v != v) & missing_left));
    }
}

/* keys[r] |= went_left[r] << k: a side (0 or 1) into bit k of each key. */
SKS_DISPATCH static void sides_into_keys(uint32_t *restrict keys,
                                         const unsigned char *restrict went_left,
                                         int k, ptrdiff_t n) {
    for (ptrdiff_t r = 0; r < n; r++) keys[r] |= (uint32_t)went_left[r] << k;
}

/* keys[r] |= (the side of x[r] at a numerical split) << k, as sides_numeric
 * gives it, for float64 values and for float32 ones (four times as many a
 * vector: see float32_threshold). */
SKS_DISPATCH static void numeric_sides_into_keys(uint32_t *restrict keys,
                                                 const double *restrict x,
                                                 double threshold,
                                                 uint32_t missing_left, int k,
                                                 ptrdiff_t n) {
    for (ptrdiff_t r = 0; r < n; r++) {
        double v = x[r];
        keys[r] |= ((uint32_t)(v <= threshold) | ((uint32_t)(v != v) & missing_left)) << k;
    }
}

SKS_DISPATCH static void numeric_sides_into_keys32(uint32_t *restrict keys,
                                                   const float *restrict x,
                                                   float threshold,
                                                   uint32_t missing_left, int k,
                                                   ptrdiff_t n) {
    for (ptrdiff_t r = 0; r < n; r++) {
        float v = x[r];
        keys[r] |= ((uint32_t)(v <= threshold) | ((uint32_t)(v != v) & missing_left)) << k;
    }
}

/* The largest float at most `threshold`: a float x is <= threshold exactly
 * when x <= float32_threshold(threshold). */
static inline float float32_threshold(double threshold) {
    float rounded = (float)threshold;
    if ((double)rounded > threshold) rounded = nextafterf(rounded, -INFINITY);
    return rounded;
}

/* out[i] = (float)x[i]; whether every value was a float's (or NaN). */
static inline int float32_copy(const double *restrict x, float *restrict out,
                               ptrdiff_t n) {
    int exact = 1;
    for (ptrdiff_t i = 0; i < n; i++) {
        out[i] = (float)x[i];
        exact &= ((double)out[i] == x[i]) | (x[i] != x[i]);
    }
    return exact;
}

#endif
