/* Structured sparsity of convolution operands (sparse.c): a (values,
 * metadata) tuple expanded into the dense operand it stands for. */
#ifndef HLOI_EVAL_SPARSE_H
#define HLOI_EVAL_SPARSE_H

#include "eval/kernels/kernel.h"

/* The dense operand k (0 lhs, 1 rhs) of convolution `in` from its sparse
 * values and metadata under sd: a new value (value_drop it) in *out.
 * HLOI_EINVAL with an error naming the instruction and the element when a
 * metadata entry is outside [0, block) or repeats a position of its block
 * (or the two do not fit sd, which the checker refuses); HLOI_ENOMEM over
 * the memory budget. */
hloi_status eval_sparse_dense(engine *e, const instr *in, int k, const sparsity_side *sd, const hloi_literal *v,
			      const hloi_literal *meta, hloi_literal **out);

#endif
