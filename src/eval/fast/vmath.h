/* Vectorised math for the fast engine's unary rows: f32 `tanh`,
 * `exponential` and `log` through glibc's vector math library (libmvec,
 * the x86-64 vector ABI: 16 lanes with AVX-512, 8 with AVX2, else 4 with
 * SSE2). The
 * reference engine keeps the C library's scalar functions; the vector ones
 * stay within a bound of them that doc/semantics.md states (measured over every f32
 * input), NaN stays NaN and signed zeros are kept. Every element of a row
 * goes through the vector function, tails and broadcast scalars too, so
 * the fast engine's results do not depend on how a row is cut.
 *
 * HLOI_VECTOR_MATH=0 in the environment turns them off (the fast engine
 * then gives the reference engine's bits); vmath_enable() does the same
 * for tests that compare the engines bit for bit. */
#ifndef HLOI_EVAL_VMATH_H
#define HLOI_EVAL_VMATH_H

#include "eval/scalar/unary.h"
#include "ir/ir.h"

/* The vectorised row kernel of op over type t, or NULL (none, or off). */
ew_row_fn vmath_row(opcode op, etype t);

/* 1 on, 0 off (overrides HLOI_VECTOR_MATH); whether vector math is built in. */
int vmath_enable(int on);

#endif
