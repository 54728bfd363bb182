/* `hloi lower`: rewrites a checked module into plain HLO the way XlaBuilder
 * emits it, so that it passes --strict and evaluates to the same values. */
#ifndef HLOI_REWRITE_LOWER_H
#define HLOI_REWRITE_LOWER_H

#include "hloi.h"
#include "ir/ir.h"

/* Every operand of a binary op or compare whose dims differ from the result's
 * gets an explicit `broadcast` (a scalar: dimensions={}), preceded by a
 * `reshape` that drops the stretched size-1 dims when there are any; the op
 * loses broadcast_dimensions. A stretching `broadcast` becomes reshape +
 * broadcast. New instructions are named `NAME.lhs.reshape`,
 * `NAME.lhs.broadcast`, `NAME.rhs.*`, `NAME.reshape` (with `.1`, `.2`, ...
 * appended when taken). Every instruction then has its shape written with
 * its layout; the broadcast_mode header attribute is dropped. The module must
 * be checked (HLOI_EINVAL otherwise) and must be checked again before it is
 * run. Errors: HLOI_EINVAL, HLOI_ENOMEM. */
hloi_status lower_module(module *m, hloi_context *ctx);

/* After a check with allow_mixed_precision: makes the mixed floating-point
 * types explicit. A float operand of an elementwise or data-movement op
 * (binary and unary ops, select, clamp, copy, broadcast, concatenate, pad,
 * transpose, reshape, slice, reverse, dynamic-slice, dynamic-update-slice;
 * dot and convolution, whose operands XLA's evaluator converts so)
 * whose type is not the op's float result type gets a `convert` to it
 * (`NAME.convert`); any other instruction whose declared float type differs
 * from the inferred one computes in the inferred type, and a `convert`
 * after it (`NAME.mixed`) gives its users the declared type. *changed
 * counts the converts; the module must be checked again when there are
 * any. Errors: HLOI_EINVAL (not checked), HLOI_ENOMEM. */
hloi_status lower_mixed_precision(module *m, hloi_context *ctx, size_t *changed);

#endif
