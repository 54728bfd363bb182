/* The elementwise ops beyond the binary ones and compare: every unary op,
 * clamp, complex, reduce-precision and stochastic-convert. Their per-element
 * semantics are eval/scalar.h's (SC_UNARY_OPS_* and friends); this header
 * holds what both engines share about them: the instruction's parameters,
 * and the fast engine's entry (fast_unary.c). */
#ifndef HLOI_EVAL_UNARY_H
#define HLOI_EVAL_UNARY_H

#include "eval/fast/fast.h"
#include "ir/ir.h"

/* What an element function needs besides its operands. */
typedef struct ew_params {
	int exponent_bits; /* reduce-precision */
	int mantissa_bits;
	etype to;          /* stochastic-convert: the result type */
} ew_params;

/* A row kernel: n elements into o (contiguous) from the operand rows a[k],
 * each with element stride s[k] of 0 (one value for the row) or 1. The
 * fused engine's members (eval/fast/fx.h) have the same shape. */
typedef void (*ew_row_fn)(void *restrict o, const void *const *a, const int64_t *s, int64_t n,
			  const ew_params *p);

/* The parameters of `in` (zeros for ops without any). */
void ew_params_of(const instr *in, ew_params *p);

/* Whether `in` is one of the ops this header is about. */
int ew_is_unary_family(opcode op);

/* Computes `in` (an op of the family above, checked) into `out` (allocated
 * with in->result's shape and layout, padding filled) from its operand
 * values, on `threads` threads (0: the machine's cores). `out` may share its
 * buffer with an operand of the same dims, layout and element width.
 * `tuning` may be NULL (the defaults; tests shrink the sizes so that small
 * arrays take every path). Returns 0 when done; nonzero when the fast engine
 * does not cover the case, and then the caller uses the reference engine. */
int fast_unary(const instr *in, hloi_literal *out, hloi_literal *const *ops, int threads);
/* The fast engine's row kernel for `in` (an op of the family, checked) by
 * its operands' types, or NULL when it has none: what a fused region runs
 * for it. */
ew_row_fn fast_unary_row(const instr *in);
int fast_unary_tuned(const instr *in, hloi_literal *out, hloi_literal *const *ops, int threads,
		     const fast_tuning *tuning);

#endif
