/* Deterministic pseudo-random values (base/random.c): inputs for every
 * parameter and values for elided constants, the same for the same seed. */
#ifndef HLOI_EVAL_BASE_RANDOM_H
#define HLOI_EVAL_BASE_RANDOM_H

#include <stdint.h>

#include "hloi.h"
#include "ir/ir.h"

/* Deterministic pseudo-random inputs for every parameter of the checked
 * module: the same seed always gives the same values. */
hloi_status eval_random_inputs(hloi_literal ***out, size_t *count, const module *m,
			       hloi_context *ctx, uint64_t seed);

/* A deterministic pseudo-random value of shape s (the values
 * eval_random_inputs draws, from `seed`). */
hloi_status eval_random_literal(hloi_literal **out, hloi_context *ctx, const shape *s, uint64_t seed);

/* Gives every elided constant (`{...}`) of the checked module deterministic
 * pseudo-random values drawn from `seed`; *filled counts them. */
hloi_status eval_fill_elided_constants(module *m, hloi_context *ctx, uint64_t seed, size_t *filled);

#endif
