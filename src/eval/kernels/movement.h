/* Shared by the kernels of the data-movement ops (movement.c) and of gather
 * and scatter (gather.c): reading integer indices, copying a strided box of
 * elements, and strides in elements. */
#ifndef HLOI_EVAL_MOVEMENT_H
#define HLOI_EVAL_MOVEMENT_H

#include <stdint.h>

#include "core/shape.h"
#include "eval/kernels/kernel.h"

/* An integral element of type t at p as int64_t, as XLA's evaluator reads
 * start indices (static_cast<int64_t>: u64 values above INT64_MAX become
 * negative). */
int64_t mv_read_index(etype t, const void *p);
/* Copies n[0..rank) elements of w bytes from src (element strides ss) to
 * dst (element strides ds) on the calling thread: the innermost dimension
 * with memcpy when both sides are contiguous there. */
void mv_copy_box(char *dst, const int64_t *ds, const char *src, const int64_t *ss, const int64_t *n, int rank,
		 int64_t w);
/* Element strides of s per logical dimension (padding included). */
void mv_strides(const shape *s, int64_t *st);
/* Whether the frame owns the value of operand k of `in` and `in` is its
 * last reader (so `in` may take its buffer over). */
int mv_last_use(const frame *f, const instr *in, int k);

#endif
