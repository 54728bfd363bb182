/* The reference engine's element loops (eval/scalar/reference.c): the
 * per-element oracle, every output element computed on its own through
 * index conversion with the scalar ops of eval/scalar/scalar.h. The fast
 * executor falls back on them for what it does not cover, and the kernels
 * of eval/kernels/ run them. */
#ifndef HLOI_EVAL_SCALAR_REFERENCE_H
#define HLOI_EVAL_SCALAR_REFERENCE_H

#include "ir/ir.h"

/* out[i] = op(operands at i) through index conversion, for every elementwise
 * op (binary, compare, select, convert, copy, broadcast, bitcast-convert). */
void ref_elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops);
/* Whether ref_elementwise evaluates `in` for its operand and result types. */
int ref_elementwise_supported(const instr *in);
void ref_reshape(hloi_literal *out, const hloi_literal *op);
void ref_transpose(const instr *in, hloi_literal *out, const hloi_literal *op);
void ref_iota(const instr *in, hloi_literal *out);

/* compare's type=, or the default for the operands' element type. */
cmp_type eval_cmp_type(const instr *in, etype t);

#endif
