/* rng.h: a small, seedable, reproducible random number generator (xoshiro256**-style state
 * seeded by splitmix64), with normal draws and random orthogonal matrices for initialisation.
 * Its state is plain data so that checkpoints can save and restore it exactly. */
#ifndef NMT_RNG_H
#define NMT_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "base/real.h"

typedef struct rng { uint64_t s[4]; } rng;

void rng_seed(rng *r, uint64_t seed);
/* splitmix64's finalizer: every input bit moves every output bit; for hashing keys into seeds */
uint64_t rng_mix64(uint64_t x);
uint64_t rng_u64(rng *r);
double rng_uniform(rng *r);          /* [0, 1) with 53 random bits */
double rng_normal(rng *r);           /* N(0, 1), Box-Muller */
uint64_t rng_below(rng *r, uint64_t n); /* uniform in [0, n), unbiased */
/* An inverted-dropout mask: each of mask[0..n) is 0 with probability p, else 1/(1-p), drawn
 * one after another (the order is part of a run's results). Returns mask. */
real *rng_dropout_mask(rng *r, real *mask, size_t n, double p);

/* Fills Q[n,n] (row-major) with a random orthogonal matrix: the Q of a Gaussian matrix's QR
 * decomposition with the signs of R's diagonal folded in, which makes Q Haar-distributed.
 * Returns -1 if the scratch allocation fails. */
int rng_orthogonal(rng *r, real *Q, int n, int ldq);

#endif
