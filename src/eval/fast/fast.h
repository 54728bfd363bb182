/* The fast engine's single-instruction entry point: one elementwise
 * instruction (binary op, compare, select, convert, bitcast-convert, copy,
 * broadcast, transpose, iota) computed by the region executor of
 * eval/fast/ as a region of one member. The evaluation loop runs whole
 * fused regions (eval/plan/plan.h); this entry serves layout conversions and
 * the tests. */
#ifndef HLOI_EVAL_FAST_H
#define HLOI_EVAL_FAST_H

#include "eval/scalar/unary.h"
#include "ir/ir.h"

/* Sizes the engine picks its strategies by; fast_default_tuning fills in the
 * ones it uses. Tests shrink them so that small arrays take every path. */
typedef struct fast_tuning {
	int64_t stream_bytes;   /* results this large are written with non-temporal stores */
	int64_t tile;           /* tile side along the result's inner dimension (elements) */
	int64_t tile_bytes;     /* bytes of a gathered tile (sets its other side) */
	int64_t chunk_bytes;    /* a row segment, in bytes of the widest element */
	int64_t min_per_thread; /* fewer elements per thread do not get another thread */
	int generic;            /* every computing member runs the reference element loop (tests) */
} fast_tuning;

void fast_default_tuning(fast_tuning *t);

/* Computes `in` into `out` (already allocated with in->result's shape and
 * layout, padding filled) from its operand values `ops` using `threads`
 * worker threads (0: the machine's cores). `out` may share its buffer with
 * an operand of the same type, dims and layout (in place). `tuning` may be
 * NULL (the defaults). Returns 0 when it did the work, nonzero when it does
 * not cover this case — the caller then uses the reference loop, so results
 * never depend on which path ran. */
int fast_elementwise(const instr *in, hloi_literal *out, hloi_literal *const *ops, int threads,
		     const fast_tuning *tuning);

/* Copies src into dst: the same dims and element width, any layouts
 * (tiles with register transposes where they disagree). Nonzero when it
 * does not cover the case (tuples, a missing buffer, out of memory). */
int fast_relayout(hloi_literal *dst, const hloi_literal *src, int threads, const fast_tuning *tuning);

/* Copies op into out as reshape does (the row-major order of the
 * elements kept), when the two shapes' dimensions refine into common
 * factors: one strided copy. Nonzero when they do not (f32[6,4] ->
 * f32[4,6]) or the case is not covered. */
int fast_reshape(hloi_literal *out, const hloi_literal *op, int threads, const fast_tuning *tuning);

/* A strided copy for the data-movement ops: n[0..rank) elements along each
 * dimension, of w bytes, from src (element strides ss[d], of any sign; 0
 * repeats one element, which makes a fill) to dst (element strides ds[d],
 * nonzero, distinct indices at distinct elements). dst and src must not
 * overlap. Runs as a region of one copying member: dimensions in dst's
 * memory order, neighbours merged, tiles when src is strided along dst's
 * inner dimension, threads over the outermost dimension. Returns 0 when it
 * did the copy, nonzero when it does not cover the case (an element width
 * other than 1, 2, 4, 8 or 16 bytes, out of memory). */
int fast_copy(void *dst, const int64_t *ds, const void *src, const int64_t *ss, const int64_t *n, int rank, int w,
	      int threads, const fast_tuning *tuning);

/* bytes from src to dst; with non-temporal stores when `stream` is set and
 * the machine has them, for runs of a destination larger than the caches.
 * Streamed runs are not fenced: a thread that copied some calls
 * fast_stream_fence before its stores may be seen by another thread (one
 * fence for many runs: a fence drains the write-combining buffers). */
void fast_copy_run(void *dst, const void *src, size_t bytes, int stream);
/* Orders the calling thread's streamed stores before its later stores. */
void fast_stream_fence(void);
/* Whether the machine has non-temporal stores. */
int fast_can_stream(void);
/* Whether a destination of `bytes` is written with non-temporal stores. */
int fast_streams(int64_t bytes);

/* --- the unary family (eval/fast/unary.c; the ops of eval/scalar/unary.h) --- */

/* Computes `in` (an op of that family, checked) into `out` (allocated
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

/* Runs fn(ctx, lo, hi) over [0, n) split into contiguous ranges on up to
 * `threads` threads (0: the machine's cores), no range shorter than
 * min_per_thread; a thread that cannot start has its range run by the
 * caller (eval/fast/parallel.c). */
void eval_parallel(int threads, int64_t n, int64_t min_per_thread, void (*fn)(void *ctx, int64_t lo, int64_t hi),
		   void *ctx);

/* Runs worker(job k) for the n jobs of `size` bytes at `jobs`: job 0 on
 * the calling thread, the others on threads of their own (a thread that
 * cannot start has its job run by the caller), and waits for them all:
 * the one fork and join of the fast engine and the kernels. n <= 64. */
void fx_fork(int n, void *jobs, size_t size, void *(*worker)(void *));

/* Who hears of each worker's span [t0, t1) (ns, CLOCK_MONOTONIC) of the
 * forks on the thread that set it (fx_tracer_set; NULL: none), told on
 * that thread after the join: a profile's trace (eval/base/profile.h). */
typedef struct fx_tracer {
	void (*span)(void *data, int worker, uint64_t t0, uint64_t t1);
	void *data;
} fx_tracer;
void fx_tracer_set(const fx_tracer *t);
const fx_tracer *fx_tracer_get(void);

#endif
