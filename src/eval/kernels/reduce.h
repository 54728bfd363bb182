/* Reductions shared by reduce.c (the kernels, in XLA's order of
 * combination) and reduce_fast.c (the fast engine's reductions by a known
 * monoid). */
#ifndef HLOI_EVAL_REDUCE_H
#define HLOI_EVAL_REDUCE_H

#include "eval/base/engine.h"

/* XLA's IsScalarAdd (hlo_evaluator.cc): two parameters, the root an add of
 * both (either order), all scalars. */
int reduce_is_scalar_add(const computation *comp);

/* The binary op comp is, when it is a monoid the fast engine knows: two
 * scalar parameters of one element type, the root add, multiply, maximum,
 * minimum, and, or of both (either order) in that type. OP_COUNT if not. */
opcode reduce_monoid(const computation *comp);

/* Sizes the fast reductions split their work by; tests shrink them so that
 * small arrays take every path. */
typedef struct reduce_tuning {
	int64_t strip;          /* elements of a column strip (at most REDUCE_STRIP_MAX) */
	int64_t min_per_thread; /* elements read per thread at least */
	int64_t block;          /* rows of a block of a column reduction */
} reduce_tuning;
#define REDUCE_STRIP_MAX 4096

/* reduce of x with init by monoid `op` into out (allocated with the
 * result's shape): vectorised and threaded. Returns 0 when done, nonzero
 * when it does not cover the case (the caller then combines in XLA's
 * order). `t` may be NULL (the defaults). */
int fast_reduce(const engine *e, const instr *in, opcode op, const hloi_literal *x, const hloi_literal *init,
		hloi_literal *out, const reduce_tuning *t);

/* reduce-window of x with init by monoid `op` into out, in XLA's order
 * (bit for bit the reference engine's values). 0 when done. */
int fast_reduce_window(const engine *e, const instr *in, opcode op, const hloi_literal *x, const hloi_literal *init,
		       hloi_literal *out, const reduce_tuning *t);

#endif
