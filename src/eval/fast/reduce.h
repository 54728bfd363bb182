/* The fast engine's reductions by a known monoid (fast/reduce.c): add,
 * multiply, maximum, minimum, and, or, which kernels/reduce.c picks out of a
 * reducer computation (reduce_monoid). */
#ifndef HLOI_EVAL_FAST_REDUCE_H
#define HLOI_EVAL_FAST_REDUCE_H

#include <stdint.h>

#include "eval/fast/fx.h"
#include "ir/ir.h"

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
 * order). `t` may be NULL (the defaults); `threads` as eval_parallel's. */
int fast_reduce(int threads, const instr *in, opcode op, const hloi_literal *x, const hloi_literal *init,
		hloi_literal *out, const reduce_tuning *t);

/* The binary op comp is, when it is a monoid the kernels know: two scalar
 * parameters of one element type, the root add, multiply, maximum,
 * minimum, and, or of both (either order) in that type. OP_COUNT if not. */
opcode fast_reduce_monoid(const computation *comp);

/* Whether reduce `in` (checked) can read its input from a fused region
 * (fast_reduce_fused): one input, dense and strided, of static shape; the
 * reducer a monoid with kernels for the input's type, which the init
 * value and the result have too. */
int fast_reduce_fusible(const instr *in);

/* The domain dimension along which fast_reduce_fused computes the runs of
 * its input of shape xs (rank 1 or more): the innermost of more than one
 * element, else the innermost. */
int fast_reduce_run_dim(const shape *xs);

/* reduce `in` (fast_reduce_fusible) of the values of region src's last
 * member (fx_runs_setup: out -1, the domain the input's dims), computed a
 * run at a time where the reduction reads them, never materialised; the
 * region's outputs are written on the way. As fast_reduce otherwise (the
 * same kernels and order of combination, but for where long runs are cut
 * into pieces). 0 when done, 1 not covered, -1 out of memory. */
int fast_reduce_fused(int threads, const instr *in, opcode op, const fx_region *src, const hloi_literal *init,
		      hloi_literal *out, const reduce_tuning *t, const fast_tuning *ft);

/* reduce-window of x with init by monoid `op` into out, in XLA's order
 * (bit for bit the reference engine's values). 0 when done. */
int fast_reduce_window(int threads, const instr *in, opcode op, const hloi_literal *x, const hloi_literal *init,
		       hloi_literal *out, const reduce_tuning *t);

/* acc[j] = op(acc[j], x[j]) for j < n, elements of type t: the reducer
 * applied element by element, in the element type with
 * eval/scalar/scalar.h's semantics (reduce-window's kernels), so bit for
 * bit what the reference engine's application of it gives (the
 * collectives' reductions). 0 when done; nonzero when (op, t) is not
 * covered (acc untouched). */
int fast_combine(opcode op, etype t, void *acc, const void *x, int64_t n);

#endif
