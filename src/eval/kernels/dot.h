/* The contraction machinery dot (eval/kernels/dot.c) and convolution (eval/kernels/conv.c)
 * share: XLA's accumulation types, the multiply-accumulate of one element,
 * strided copies with conversion, a thread splitter, the exact matrix
 * product in XLA's summation order, and the BLAS call.
 *
 * Accumulation follows XLA's evaluator (HloEvaluatorTypedVisitor's
 * ElementwiseT): each operand element is converted to the result type, then
 * to the accumulation type; products are summed in that type from zero in
 * the order of the contracting index; the sum is converted to the result
 * type once. */
#ifndef HLOI_EVAL_DOT_H
#define HLOI_EVAL_DOT_H

#include <stdint.h>

#include "eval/kernels/kernel.h"
#include "eval/scalar/scalar.h"

/* The accumulation type of a result type: pred -> pred (an OR of ANDs),
 * signed integers -> s64 and unsigned -> u64 (wrapping), f16, bf16 and the
 * f8/f4 types -> f32, f32, f64, c64, c128 -> themselves. */
etype contract_acc_type(etype result);

/* The accumulator of one result element (the bytes of the acc type). */
typedef union acc_val {
	uint8_t p;
	uint64_t u;
	float f;
	double d;
	float _Complex c;
	double _Complex z;
} acc_val;

/* a += x * y, x and y holding elements of acc type t. */
static inline void acc_mac(etype t, acc_val *a, const void *x, const void *y)
{
	switch (t) {
	case ET_PRED:
		a->p = (uint8_t)(a->p | (*(const uint8_t *)x & *(const uint8_t *)y));
		break;
	case ET_S64:
	case ET_U64: {
		uint64_t p, q;
		memcpy(&p, x, 8);
		memcpy(&q, y, 8);
		a->u += p * q;
		break;
	}
	case ET_F32: {
		float p, q;
		memcpy(&p, x, 4);
		memcpy(&q, y, 4);
		a->f = a->f + p * q;
		break;
	}
	case ET_F64: {
		double p, q;
		memcpy(&p, x, 8);
		memcpy(&q, y, 8);
		a->d = a->d + p * q;
		break;
	}
	case ET_C64: {
		float _Complex p, q;
		memcpy(&p, x, 8);
		memcpy(&q, y, 8);
		a->c = sc_add_C64(a->c, sc_multiply_C64(p, q));
		break;
	}
	case ET_C128: {
		double _Complex p, q;
		memcpy(&p, x, 16);
		memcpy(&q, y, 16);
		a->z = sc_add_C128(a->z, sc_multiply_C128(p, q));
		break;
	}
	default:
		break;
	}
}

/* Writes the sum `a` (acc type at) as result type rt at out. With `clamp`
 * (convolution), an integer sum is first clamped to rt's range, as XLA's
 * evaluator clamps a convolution's; dot's wraps (truncates). */
void acc_store(etype rt, void *out, etype at, const acc_val *a, int clamp);

/* One element src of type st converted to type mid, then to dt, at dst. */
void contract_convert(etype dt, void *dst, etype mid, etype st, const void *src);

/* dst[idx] = convert(src[idx]) through `mid` for every idx of dims (rank n;
 * each side with its own strides in elements). */
void contract_copy(void *dst, etype dt, const int64_t *dstride, const void *src, etype st, const int64_t *sstride,
		   etype mid, int n, const int64_t *dims);

/* Runs fn(ctx, lo, hi) over [0, total) split in ranges across up to
 * `threads` threads (0: the machine's cores), no range smaller than
 * min_chunk. */
typedef void (*range_fn)(void *ctx, int64_t lo, int64_t hi);
void contract_parallel(int threads, int64_t total, int64_t min_chunk, range_fn fn, void *ctx);

/* Receives row r of an exact product: acc[0..N-1] of the acc type. */
typedef void (*row_sink)(void *ctx, int64_t r, const void *acc);

/* For r in [0, nb*M): row r of C = A[r] (K values) times the K x N matrix
 * B + (r / M) * K * N, all dense row-major of acc type t, each sum from zero
 * in increasing k (XLA's order, so the result is the reference's). Rows
 * are handed to sink, from up to `threads` threads. Returns nonzero when
 * its row buffers cannot be allocated. */
int contract_exact(etype t, int64_t nb, int64_t M, int64_t N, int64_t K, const void *A, const void *B,
		   row_sink sink, void *ctx, int threads);

/* Whether BLAS computes type t (f32, f64, c64, c128): OpenBLAS is opened
 * by the first call that asks (eval/lib/blas.h); 0 when it cannot be. */
int contract_blas_type(etype t);
/* An M x N x K matrix product of type t through BLAS: C = A B with
 * element strides A (am, ak), B (bk, bn), C (cm, cn). Returns nonzero
 * (and does nothing) when the strides or sizes do not fit a BLAS call; the
 * caller then packs the operand. contract_blas_fits says so in advance.
 * threads: BLAS's thread count, as hloi's --threads (0: BLAS's own); -1
 * leaves it as it is (for callers already on several threads, after
 * setting it to 1). */
int contract_blas_fits(int64_t M, int64_t N, int64_t K, int64_t am, int64_t ak, int64_t bk, int64_t bn, int64_t cm,
		       int64_t cn);
int contract_blas(etype t, int64_t M, int64_t N, int64_t K, const void *A, int64_t am, int64_t ak, const void *B,
		  int64_t bk, int64_t bn, void *C, int64_t cm, int64_t cn, int threads);

/* A scratch buffer of `count` elements of type t within the engine's
 * budget (NULL, silently, when the budget or memory has no room: the caller
 * takes a path that needs none). Free with value_drop. */
hloi_literal *contract_scratch(engine *e, etype t, int64_t count);

#endif
