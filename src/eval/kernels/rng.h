/* XLA's counter-based generators as plain functions: ThreeFry2x32 with 20
 * rounds and Philox4x32 with 10 (Salmon et al., "Parallel random numbers:
 * as easy as 1, 2, 3", SC 2011), and the streams of raw bits that
 * rng-bit-generator and rng draw from them, in XLA's order (its
 * xla/hlo/builder/lib/prng.cc, which the CPU backend expands these ops
 * with). eval/kernels/rng.c has the kernels; the unit tests call these directly. */
#ifndef HLOI_EVAL_RNG_H
#define HLOI_EVAL_RNG_H

#include <stdint.h>

#include "core/types.h"

/* x = ThreeFry2x32-20(counter x, key k), in place. */
void rng_threefry2x32(uint32_t x[2], const uint32_t k[2]);
/* x = Philox4x32-10(counter x, key k), in place. */
void rng_philox4x32(uint32_t x[4], const uint32_t k[2]);

/* The raw bits of `n` elements of width `bits` (at most 32: one 32-bit
 * word each, 64: one 64-bit word each) laid out in the row-major order of
 * dims[0..rank), as XLA's ThreeFry generator fills them: the key and the
 * 64-bit counter `ctr`. Writes out[0..n) (uint64_t, the low bits hold a
 * narrower value); returns the counter after the call. */
uint64_t rng_threefry_fill(uint64_t key, uint64_t ctr, int bits, int rank, const int64_t *dims, uint64_t *out);
/* The same for Philox with a 128-bit counter (lo, hi); ctr[] is advanced
 * in place. */
void rng_philox_fill(uint64_t key, uint64_t ctr[2], int bits, int64_t n, uint64_t *out);

/* XLA's split of a shape in two halves for the generators that make
 * values in pairs (ThreeFry's 32-bit stream, Box-Muller): the first even
 * dimension, else the first longest; a scalar has none (-1). */
int rng_split_dim(int rank, const int64_t *dims);

/* Stores the low bits of v as an element of integer type t at p (the
 * sub-byte types one per byte, signed ones sign-extended). */
void rng_store_bits(etype t, void *p, uint64_t v);

#endif
