/* arena.h: two-pass layout of a workspace inside one allocation. A module's layout function
 * calls arena_take for each buffer: the first pass (base NULL) only sums the sizes, the second
 * hands out aligned slices of the block. Nothing is allocated while a batch runs. */
#ifndef NMT_ARENA_H
#define NMT_ARENA_H

#include <stddef.h>

typedef struct arena { char *base; size_t used; } arena;

/* n bytes, 64-byte aligned (a cache line; also what AVX-512 loads like). NULL in the counting pass. */
static inline void *arena_take(arena *a, size_t n)
{
    void *p = a->base ? a->base + a->used : NULL;
    a->used += (n + 63) & ~(size_t)63;
    return p;
}

#endif
