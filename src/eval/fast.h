/* The fast engine's entry point, called by the evaluation loop for every
 * elementwise instruction (binary op, compare, broadcast) when the engine is
 * not the reference one. */
#ifndef HLOI_EVAL_FAST_H
#define HLOI_EVAL_FAST_H

#include "ir/ir.h"

/* Computes `in` into `out` (already allocated with in->result's shape and
 * layout, padding filled) from its operand values `ops` using `threads`
 * worker threads (0: the machine's cores). Returns 0 when it did the work,
 * nonzero when it does not cover this case — the caller then uses the
 * reference loop, so results never depend on which path ran. */
int fast_elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops, int threads);

#endif
