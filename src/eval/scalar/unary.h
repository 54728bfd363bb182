/* The elementwise ops beyond the binary ones and compare: every unary op,
 * clamp, complex, reduce-precision and stochastic-convert. Their per-element
 * semantics are eval/scalar/scalar.h's (SC_UNARY_OPS_* and friends); this header
 * holds what both engines share about them: the instruction's parameters,
 * (the fast engine's entry, fast_unary, is in eval/fast/fast.h). */
#ifndef HLOI_EVAL_UNARY_H
#define HLOI_EVAL_UNARY_H

#include <stdint.h>

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

#endif
