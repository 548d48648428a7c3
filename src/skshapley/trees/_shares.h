/* Items shared between threads, each thread's own share first.
 *
 * Thread t of a team owns the items of share t, [first, end); it takes them
 * from the front, in order, then takes the other shares' items from their
 * back. A share is one 64-bit word holding both ends, changed by
 * compare-and-swap, so each item is taken once. On idle cores every thread
 * takes its own share, the same items at every call (their trees stay in
 * its core's cache, as with a static schedule); beside other work, a thread
 * scheduled late finds the end of its share taken by the others instead of
 * making the call wait for it.
 */
#ifndef SKSHAPLEY_SHARES_H
#define SKSHAPLEY_SHARES_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t shares_pack(int64_t first, int64_t end) {
    return ((uint64_t)(uint32_t)end << 32) | (uint32_t)first;
}

#if defined(_MSC_VER)
#include <windows.h>
/* Replace *share by `new` if it holds *expected; else load it into *expected. */
static inline int shares_swap(uint64_t *share, uint64_t *expected, uint64_t new) {
    uint64_t seen = (uint64_t)InterlockedCompareExchange64(
        (volatile LONG64 *)share, (LONG64) new, (LONG64) *expected);
    if (seen == *expected) return 1;
    *expected = seen;
    return 0;
}
#else
static inline int shares_swap(uint64_t *share, uint64_t *expected, uint64_t new) {
    return __atomic_compare_exchange_n(share, expected, new, 0, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}
#endif

/* Take one item of `share`: its first if `front`, else its last; -1 if
 * the share is empty. Shares hold fewer than 2**31 items. */
static inline ptrdiff_t shares_take(uint64_t *share, int front) {
    uint64_t old = *(volatile uint64_t *)share;
    for (;;) {
        int64_t first = (int64_t)(uint32_t)old, end = (int64_t)(old >> 32);
        if (first >= end) return -1;
        uint64_t new = front ? shares_pack(first + 1, end) : shares_pack(first, end - 1);
        if (shares_swap(share, &old, new))
            return front ? (ptrdiff_t)first : (ptrdiff_t)(end - 1);
    }
}

/* Share `n_items` items out between `n_team` threads, equally, in order. */
static inline void shares_init(uint64_t *shares, ptrdiff_t n_team, ptrdiff_t n_items) {
    for (ptrdiff_t t = 0; t < n_team; t++)
        shares[t] = shares_pack(t * n_items / n_team, (t + 1) * n_items / n_team);
}

/* The next item for thread `thread`, or -1 when every share is empty: from
 * the front of its own share, then from the back of the others', in turn.
 * `*k` (0 at first) is where the thread is in that turn. */
static inline ptrdiff_t shares_next(uint64_t *shares, ptrdiff_t n_team,
                                    ptrdiff_t thread, ptrdiff_t *k) {
    for (; *k < n_team; (*k)++) {
        ptrdiff_t item = shares_take(&shares[(thread + *k) % n_team], *k == 0);
        if (item >= 0) return item;
    }
    return -1;
}

#endif
