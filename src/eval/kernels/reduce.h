/* What the reduce kernels (kernels/reduce.c, in XLA's order of
 * combination) know of a reducer computation; the fast engine's reductions
 * by a known monoid are fast/reduce.h's. */
#ifndef HLOI_EVAL_REDUCE_H
#define HLOI_EVAL_REDUCE_H

#include "eval/fast/reduce.h"
#include "eval/kernels/kernel.h"

/* XLA's IsScalarAdd (hlo_evaluator.cc): two parameters, the root an add of
 * both (either order), all scalars. */
int reduce_is_scalar_add(const computation *comp);

/* The binary op comp is, when it is a monoid the fast engine knows: two
 * scalar parameters of one element type, the root add, multiply, maximum,
 * minimum, and, or of both (either order) in that type. OP_COUNT if not. */
opcode reduce_monoid(const computation *comp);

#endif
