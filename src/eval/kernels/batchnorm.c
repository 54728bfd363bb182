/* batch-norm-inference, -training and -grad with XLA's formulas (the
 * BatchNormExpander's, xla/service/batchnorm_expander.cc), per feature
 * (the operand's dimension feature_index), computed in double precision
 * and rounded once into the element type; epsilon is a float in XLA (the
 * instruction and its proto field hold f32) and is then rounded to the
 * element type, as the expander converts it. Both engines use this kernel.
 *
 *   inference: y = x * s' + (offset - mean * s'), s' = scale / sqrt(var + eps)
 *   training:  mean = E[x], var = E[x^2] - E[x]^2 (biased), y as inference;
 *              results (y, mean, var)
 *   grad:      with d = dy, c = x - mean, r = 1 / sqrt(var + eps), N per feature:
 *              dscale = sum(d c) r, doffset = sum(d),
 *              dx = scale r (N d - sum(d) - c sum(d c) / (var + eps)) / N
 *
 * The fast engine (bn_fast) computes the same per-element expressions in
 * double from the same per-feature values, on dense layouts, in one pass
 * for the sums (training, grad) and one for the result: only the order in
 * which the double sums add up differs (blocks fixed by the shape, never
 * by the thread count), so results agree with the reference within a unit
 * of the sums' double rounding before the one rounding into the element
 * type. */
#include <math.h>
#include <string.h>

#include "core/half.h"
#include "core/index.h"
#include "core/literal.h"
#include "eval/fast/fast.h"
#include "eval/scalar/clones.h"
#include "eval/scalar/halfconv.h"
#include "eval/scalar/cplx.h"
#include "eval/kernels/kernel.h"
#include "util/alloc.h"

static double rd(const hloi_literal *v, const int64_t *idx)
{
	return creal(cplx_read(v->shape.type, literal_element(v, idx)));
}

static void wr(hloi_literal *v, const int64_t *idx, double x)
{
	cplx_write(v->shape.type, literal_element(v, idx), x);
}

/* A rank-1 per-feature value at f. */
static double feat(const hloi_literal *v, int64_t f)
{
	return rd(v, &f);
}

static void put_feat(hloi_literal *v, int64_t f, double x)
{
	wr(v, &f, x);
}

/* x rounded to type t (the expander converts epsilon to the operand's type). */
static double in_type(etype t, double x)
{
	unsigned char buf[16] = {0};
	cplx_write(t, buf, x);
	return creal(cplx_read(t, buf));
}

/* --- the fast engine -------------------------------------------------------
 *
 * The operand seen as [outer, nf, inner] in memory order: the dimensions
 * more minor than the feature dimension make `inner`, the more major ones
 * `outer`. With a short row (nf * inner <= BN_ROW_MAX: the feature
 * dimension most minor, or nearly) a row of nf * inner elements is the
 * unit: the sums per row position over blocks of rows. Otherwise each
 * (outer, feature) pair is a contiguous run, and the sums of a feature go
 * by chunks of BN_CHUNK of its elements, each into BN_LANES partial sums.
 * Blocks and chunks depend on the shape only and are added up in their
 * order, so the threads that ran them do not change a bit. Elements are
 * converted to double in pieces of BN_PIECE (a few KiB, in L1), never as
 * a whole copy. */
enum {
	BN_PIECE = 512,      /* elements converted at once */
	BN_CHUNK = 16384,    /* a feature's elements per partial sum (runs) */
	BN_ROW_MAX = 1024,   /* the longest row summed by position */
	BN_MAX_BLOCKS = 256, /* blocks of rows at most */
	BN_LANES = 16,       /* partial sums within a chunk */
	BN_SPLIT = 32768,    /* elements per thread at least */
	BN_SKEW = 8          /* doubles between arrays used in step, so that
			      * they are not 4 KiB apart (a false store-to-load
			      * dependence on x86) */
};

typedef struct bn_job {
	etype t;
	int w;                      /* element bytes */
	int grad, sums;             /* x and dy; the pass of the sums (else of the result) */
	int rows, stream;           /* row mode; non-temporal stores of the result */
	const unsigned char *x, *dy;
	unsigned char *y;
	int64_t outer, nf, inner, row, count;  /* row = nf * inner; count = outer * inner */
	int64_t nchunks;            /* runs: chunks per feature */
	int64_t block;              /* rows: rows per block */
	int64_t rp, span;           /* rows: rows taken at once, rp * row positions */
	double *part;               /* the chunks' or blocks' sums */
	/* per feature (runs) or per row position (rows): grad's mean, scale r,
	 * sum(d), sum(d c), var + eps; or the affine map's factor and term */
	const double *m, *c0, *c1, *c2, *c3;
	double per;
} bn_job;

HLOI_CLONES static void bn_load(etype t, const unsigned char *src, int n, double *restrict d)
{
	if (t == ET_F32) {
		const float *s = (const float *)(const void *)src;
		for (int j = 0; j < n; j++)
			d[j] = s[j];
	} else if (t == ET_F64) {
		memcpy(d, src, (size_t)n * sizeof *d);
	} else if (t == ET_BF16) {
		const uint16_t *s = (const uint16_t *)(const void *)src;
		for (int j = 0; j < n; j++)
			d[j] = bf16_to_f32(s[j]);
	} else {
		const uint16_t *s = (const uint16_t *)(const void *)src;
		for (int j = 0; j < n; j++)
			d[j] = f16_to_f32(s[j]);
	}
}

HLOI_CLONES static void bn_store(etype t, const double *restrict d, int n, unsigned char *dst)
{
	if (t == ET_F32) {
		float *o = (float *)(void *)dst;
		for (int j = 0; j < n; j++)
			o[j] = (float)d[j];
	} else if (t == ET_F64) {
		memcpy(dst, d, (size_t)n * sizeof *d);
	} else if (t == ET_BF16) {  /* the piece again the long way if any element needs it */
		uint16_t *o = (uint16_t *)(void *)dst;
		uint32_t bad = 0;
		for (int j = 0; j < n; j++)
			o[j] = hc_bf16_from_rounded((float)d[j], &bad);
		for (int j = 0; bad && j < n; j++)
			o[j] = hc_f64_to_bf16(d[j]);
	} else {
		uint16_t *o = (uint16_t *)(void *)dst;
		uint32_t bad = 0;
		for (int j = 0; j < n; j++)
			o[j] = hc_f16_from_rounded((float)d[j], &bad);
		for (int j = 0; bad && j < n; j++)
			o[j] = hc_f64_to_f16(d[j]);
	}
}

#if defined(__GNUC__)
typedef double bn_v4 __attribute__((vector_size(32)));
#endif

/* The sums of n elements of one feature into the lanes: x and x^2, or
 * (grad, dy given) dy and dy (x - m). Element j goes to lane j % BN_LANES,
 * each lane adding in order: four independent 4-wide sums where the
 * compiler has vectors (their latencies overlap), the same sums otherwise. */
HLOI_CLONES static void bn_lanes(const double *restrict v, const double *restrict dy, double m, int n,
				 double *restrict a1, double *restrict a2)
{
	int j = 0;
#if defined(__GNUC__)
	bn_v4 s[4], q[4], mm = { m, m, m, m };
	memcpy(s, a1, sizeof s);
	memcpy(q, a2, sizeof q);
	if (dy) {
		for (; j + BN_LANES <= n; j += BN_LANES)
			for (int l = 0; l < 4; l++) {
				bn_v4 x, d;
				memcpy(&x, v + j + 4 * l, sizeof x);
				memcpy(&d, dy + j + 4 * l, sizeof d);
				s[l] += d;
				q[l] += d * (x - mm);
			}
	} else {
		for (; j + BN_LANES <= n; j += BN_LANES)
			for (int l = 0; l < 4; l++) {
				bn_v4 x;
				memcpy(&x, v + j + 4 * l, sizeof x);
				s[l] += x;
				q[l] += x * x;
			}
	}
	memcpy(a1, s, sizeof s);
	memcpy(a2, q, sizeof q);
#endif
	for (; j < n; j++) {
		double d = dy ? dy[j] : v[j];
		a1[j % BN_LANES] += d;
		a2[j % BN_LANES] += d * (dy ? v[j] - m : v[j]);
	}
}

/* The same by position: a1[j], a2[j] for element j, m[j] its mean. */
HLOI_CLONES static void bn_by_position(const double *restrict v, const double *restrict dy, const double *restrict m,
				       int n, double *restrict a1, double *restrict a2)
{
	if (dy) {
		for (int j = 0; j < n; j++) {
			a1[j] += dy[j];
			a2[j] += dy[j] * (v[j] - m[j]);
		}
	} else {
		for (int j = 0; j < n; j++) {
			a1[j] += v[j];
			a2[j] += v[j] * v[j];
		}
	}
}

/* The result of n elements: with the coefficients of each element at
 * stride cs (0: one feature's, 1: per position), the reference's
 * expressions in its order. */
HLOI_CLONES static void bn_result(const bn_job *J, const double *restrict v, const double *restrict dy, int64_t at,
				  int cs, int n, double *restrict o)
{
	const double *c0 = J->c0 + at, *c1 = J->c1 + at;
	if (!J->grad) {
		if (cs)
			for (int j = 0; j < n; j++)
				o[j] = v[j] * c0[j] + c1[j];
		else
			for (int j = 0; j < n; j++)
				o[j] = v[j] * c0[0] + c1[0];
		return;
	}
	const double *c2 = J->c2 + at, *c3 = J->c3 + at, *m = J->m + at;
	double per = J->per;
	if (cs)
		for (int j = 0; j < n; j++)
			o[j] = c0[j] * (per * dy[j] - c1[j] - (v[j] - m[j]) * c2[j] / c3[j]) / per;
	else
		for (int j = 0; j < n; j++)
			o[j] = c0[0] * (per * dy[j] - c1[0] - (v[j] - m[0]) * c2[0] / c3[0]) / per;
}

/* The lanes added pairwise. */
static double bn_fold(const double *a)
{
	double t[BN_LANES];
	memcpy(t, a, sizeof t);
	for (int w = BN_LANES / 2; w > 0; w /= 2)
		for (int l = 0; l < w; l++)
			t[l] = t[2 * l] + t[2 * l + 1];
	return t[0];
}

/* f32, the commonest case, with no piece in double between: the same
 * operations on the same values as the general path (bn_by_position,
 * bn_lanes, bn_result). */
HLOI_CLONES static void bn_by_position_f32(const float *restrict x, const float *restrict dy,
					   const double *restrict m, int n, double *restrict a1, double *restrict a2)
{
	if (dy) {
		for (int j = 0; j < n; j++) {
			double d = dy[j];
			a1[j] += d;
			a2[j] += d * ((double)x[j] - m[j]);
		}
	} else {
		for (int j = 0; j < n; j++) {
			double v = x[j];
			a1[j] += v;
			a2[j] += v * v;
		}
	}
}

HLOI_CLONES static void bn_lanes_f32(const float *restrict x, const float *restrict dy, double m, int n,
				     double *restrict a1, double *restrict a2)
{
	int j = 0;
#if defined(__GNUC__)
	bn_v4 s[4], q[4], mm = { m, m, m, m };
	memcpy(s, a1, sizeof s);
	memcpy(q, a2, sizeof q);
	if (dy) {
		for (; j + BN_LANES <= n; j += BN_LANES)
			for (int l = 0; l < 4; l++) {
				const float *p = x + j + 4 * l, *e = dy + j + 4 * l;
				bn_v4 v = { p[0], p[1], p[2], p[3] }, d = { e[0], e[1], e[2], e[3] };
				s[l] += d;
				q[l] += d * (v - mm);
			}
	} else {
		for (; j + BN_LANES <= n; j += BN_LANES)
			for (int l = 0; l < 4; l++) {
				const float *p = x + j + 4 * l;
				bn_v4 v = { p[0], p[1], p[2], p[3] };
				s[l] += v;
				q[l] += v * v;
			}
	}
	memcpy(a1, s, sizeof s);
	memcpy(a2, q, sizeof q);
#endif
	for (; j < n; j++) {
		double v = x[j], d = dy ? (double)dy[j] : v;
		a1[j % BN_LANES] += d;
		a2[j % BN_LANES] += d * (dy ? v - m : v);
	}
}

HLOI_CLONES static void bn_result_f32(const bn_job *J, const float *restrict x, const float *restrict dy, int64_t at,
				      int cs, int n, float *restrict y)
{
	const double *c0 = J->c0 + at, *c1 = J->c1 + at;
	if (!J->grad) {
		if (cs) {
			for (int j = 0; j < n; j++)
				y[j] = (float)((double)x[j] * c0[j] + c1[j]);
		} else {
			double a = c0[0], b = c1[0];
			for (int j = 0; j < n; j++)
				y[j] = (float)((double)x[j] * a + b);
		}
		return;
	}
	const double *c2 = J->c2 + at, *c3 = J->c3 + at, *m = J->m + at;
	double per = J->per;
	if (cs) {
		for (int j = 0; j < n; j++)
			y[j] = (float)(c0[j] * (per * (double)dy[j] - c1[j] - ((double)x[j] - m[j]) * c2[j] / c3[j]) / per);
	} else {
		double a = c0[0], b = c1[0], c = c2[0], v = c3[0], mm = m[0];
		for (int j = 0; j < n; j++)
			y[j] = (float)(a * (per * (double)dy[j] - b - ((double)x[j] - mm) * c / v) / per);
	}
}

/* Chunk `it` of the runs: feature it / nchunks, its elements
 * [j BN_CHUNK, (j + 1) BN_CHUNK) in (outer, inner) order. */
static void bn_sums_run(const bn_job *J, int64_t it)
{
	int64_t k = it / J->nchunks, p = it % J->nchunks * BN_CHUNK;
	int64_t end = p + BN_CHUNK < J->count ? p + BN_CHUNK : J->count;
	double a1[BN_LANES] = { 0 }, a2[BN_LANES] = { 0 }, buf[2 * BN_PIECE + BN_SKEW];
	double *v = buf, *d = buf + BN_PIECE + BN_SKEW;
	double m = J->grad ? J->m[k] : 0;
	while (p < end) {
		int64_t i = p % J->inner, off = (p / J->inner * J->nf + k) * J->inner + i;
		int64_t n = J->inner - i < end - p ? J->inner - i : end - p;
		for (int64_t q = 0; q < n; q += BN_PIECE) {
			int c = (int)(n - q < BN_PIECE ? n - q : BN_PIECE);
			if (J->t == ET_F32) {
				bn_lanes_f32((const float *)(const void *)J->x + off + q,
					     J->grad ? (const float *)(const void *)J->dy + off + q : NULL, m, c, a1, a2);
				continue;
			}
			bn_load(J->t, J->x + (off + q) * J->w, c, v);
			if (J->grad)
				bn_load(J->t, J->dy + (off + q) * J->w, c, d);
			bn_lanes(v, J->grad ? d : NULL, m, c, a1, a2);
		}
		p += n;
	}
	J->part[2 * it] = bn_fold(a1);
	J->part[2 * it + 1] = bn_fold(a2);
}

/* Block `b` of the rows: the sums per position of rp rows at a time
 * into part[b 2 span ...] (a1, then a2). */
static void bn_sums_rows(const bn_job *J, int64_t b)
{
	double *a1 = J->part + b * (2 * J->span + 2 * BN_SKEW), *a2 = a1 + J->span + BN_SKEW;
	double buf[2 * BN_PIECE + BN_SKEW], *v = buf, *d = buf + BN_PIECE + BN_SKEW;
	int64_t lo = b * J->block, hi = lo + J->block < J->outer ? lo + J->block : J->outer;
	memset(a1, 0, (size_t)(2 * J->span + BN_SKEW) * sizeof *a1);
	for (int64_t o = lo; o < hi; o += J->rp) {
		int64_t n = (hi - o < J->rp ? hi - o : J->rp) * J->row;
		for (int64_t q = 0; q < n; q += BN_PIECE) {
			int c = (int)(n - q < BN_PIECE ? n - q : BN_PIECE);
			int64_t off = o * J->row + q;
			if (J->t == ET_F32) {
				bn_by_position_f32((const float *)(const void *)J->x + off,
						   J->grad ? (const float *)(const void *)J->dy + off : NULL, J->m + q, c,
						   a1 + q, a2 + q);
				continue;
			}
			bn_load(J->t, J->x + off * J->w, c, v);
			if (J->grad)
				bn_load(J->t, J->dy + off * J->w, c, d);
			bn_by_position(v, J->grad ? d : NULL, J->m + q, c, a1 + q, a2 + q);
		}
	}
}

/* The result's elements [off, off + n): coefficients from `at` (stride cs). */
static void bn_piece_out(const bn_job *J, int64_t off, int64_t n, int64_t at, int cs)
{
	double work[3 * BN_PIECE + 2 * BN_SKEW];
	double *v = work, *d = v + BN_PIECE + BN_SKEW, *o = d + BN_PIECE + BN_SKEW;
	_Alignas(64) unsigned char buf[BN_PIECE * sizeof(double)];
	for (int64_t q = 0; q < n; q += BN_PIECE) {
		int c = (int)(n - q < BN_PIECE ? n - q : BN_PIECE);
		unsigned char *dst = J->y + (off + q) * J->w;
		if (J->t == ET_F32) {
			float *to = J->stream ? (float *)(void *)buf : (float *)(void *)dst;
			bn_result_f32(J, (const float *)(const void *)J->x + off + q,
				      J->grad ? (const float *)(const void *)J->dy + off + q : NULL, at + (cs ? q : 0), cs, c,
				      to);
			if (J->stream)
				fast_copy_run(dst, buf, (size_t)c * sizeof(float), 1);
			continue;
		}
		bn_load(J->t, J->x + (off + q) * J->w, c, v);
		if (J->grad)
			bn_load(J->t, J->dy + (off + q) * J->w, c, d);
		bn_result(J, v, d, at + (cs ? q : 0), cs, c, o);
		if (J->stream) {
			bn_store(J->t, o, c, buf);
			fast_copy_run(dst, buf, (size_t)c * (size_t)J->w, 1);
		} else {
			bn_store(J->t, o, c, dst);
		}
	}
}

static void bn_range(void *ctx, int64_t lo, int64_t hi)
{
	const bn_job *J = ctx;
	if (J->sums) {
		for (int64_t it = lo; it < hi; it++)
			if (J->rows)
				bn_sums_rows(J, it);
			else
				bn_sums_run(J, it);
		return;
	}
	if (J->rows) {  /* rows [lo, hi), rp at a time: the coefficients repeat each row */
		for (int64_t o = lo; o < hi; o += J->rp)
			bn_piece_out(J, o * J->row, (hi - o < J->rp ? hi - o : J->rp) * J->row, 0, 1);
	} else {        /* elements [lo, hi) */
		for (int64_t p = lo; p < hi;) {
			int64_t i = p % J->inner, n = J->inner - i < hi - p ? J->inner - i : hi - p;
			bn_piece_out(J, p, n, p / J->inner % J->nf, 0);
			p += n;
		}
	}
	if (J->stream)
		fast_stream_fence();
}

/* Whether s is an array of f32, f64, bf16 or f16 whose elements fill its
 * buffer in memory order (no tiles, no padding). */
static int bn_dense(const shape *s)
{
	const layout *l = &s->layout;
	if ((s->type != ET_F32 && s->type != ET_F64 && s->type != ET_BF16 && s->type != ET_F16) || l->ntiles ||
	    l->n_minor_to_major != s->rank ||
	    (l->element_size_in_bits && l->element_size_in_bits != 8 * (int64_t)etype_byte_width(s->type)))
		return 0;
	for (int d = 0; d < s->rank; d++)
		if (shape_padded_dim(s, d) != s->dims[d])
			return 0;
	return 1;
}

/* Whether a is laid out as x, with its buffer at hand. */
static int bn_like(const hloi_literal *a, const hloi_literal *x)
{
	return a->data && !literal_is_dynamic(a) && a->shape.type == x->shape.type && a->shape.rank == x->shape.rank &&
	       !memcmp(a->shape.dims, x->shape.dims, (size_t)x->shape.rank * sizeof *x->shape.dims) &&
	       layout_equal(&a->shape.layout, &x->shape.layout);
}

/* The fast engine's batch norm of ops into y: training's sums into s1, s2
 * and its mean and var from them, or grad's sums into s1, s2 from the
 * given mean and var (as the reference); then y. 0 when it does not cover
 * the case: nothing is written then. */
static int bn_fast(engine *e, opcode op, hloi_literal *const *ops, hloi_literal *y, int64_t fi, double eps,
		   int64_t per, double *s1, double *s2, double *mean, double *var)
{
	const hloi_literal *x = ops[0];
	const shape *xs = &x->shape;
	int grad = op == OP_BATCH_NORM_GRAD, training = op == OP_BATCH_NORM_TRAINING;
	int nops = training ? 3 : 5;
	if (!bn_dense(xs) || !bn_like(x, x) || !bn_like(y, x) || (grad && !bn_like(ops[4], x)))
		return 0;
	for (int k = 1; k < nops; k++)
		if (!ops[k]->data)
			return 0;
	bn_job J;
	memset(&J, 0, sizeof J);
	J.t = xs->type;
	J.w = etype_byte_width(xs->type);
	J.grad = grad;
	J.x = x->data;
	J.dy = grad ? ops[4]->data : NULL;
	J.y = y->data;
	int p = 0;
	while (xs->layout.minor_to_major[p] != fi)
		p++;
	J.inner = J.outer = 1;
	for (int i = 0; i < xs->rank; i++) {
		int64_t d = xs->dims[xs->layout.minor_to_major[i]];
		if (i < p)
			J.inner *= d;
		else if (i > p)
			J.outer *= d;
	}
	J.nf = xs->dims[fi];
	J.row = J.nf * J.inner;
	J.count = J.outer * J.inner;
	J.per = (double)per;
	J.rows = J.row <= BN_ROW_MAX;
	int64_t len, nitems, item;  /* coefficients, blocks of sums, elements of a block */
	if (J.rows) {
		J.rp = J.row < BN_PIECE ? BN_PIECE / J.row : 1;
		J.span = J.rp * J.row;
		J.block = (BN_SPLIT + J.row - 1) / J.row;
		if (J.block < (J.outer + BN_MAX_BLOCKS - 1) / BN_MAX_BLOCKS)
			J.block = (J.outer + BN_MAX_BLOCKS - 1) / BN_MAX_BLOCKS;
		nitems = (J.outer + J.block - 1) / J.block;
		len = J.span;
		item = J.block * J.row;
	} else {
		J.nchunks = (J.count + BN_CHUNK - 1) / BN_CHUNK;
		nitems = J.nf * J.nchunks;
		len = J.nf;
		item = J.count < BN_CHUNK ? J.count : BN_CHUNK;
	}
	int64_t nd = nitems * 2 * (J.rows ? J.span + BN_SKEW : 1) + 5 * (len + BN_SKEW);
	int64_t bytes = nd * (int64_t)sizeof(double);
	if (value_reserve(e, bytes) != HLOI_OK)
		return 0;
	double *scratch = hloi_malloc((size_t)bytes);
	if (!scratch) {
		value_unreserve(e, bytes);
		return 0;
	}
	int64_t cs = len + BN_SKEW;
	double *m = scratch, *c0 = m + cs, *c1 = c0 + cs, *c2 = c1 + cs, *c3 = c2 + cs;
	J.part = c3 + cs;
	J.m = m;
	J.c0 = c0;
	J.c1 = c1;
	J.c2 = c2;
	J.c3 = c3;
	if (training || grad) {
		if (grad)  /* (m at each position, as below) */
			for (int64_t at = 0; at < len; at++)
				m[at] = mean[J.rows ? at % J.row / J.inner : at];
		J.sums = 1;
		int64_t min = (BN_SPLIT + item - 1) / item;
		eval_parallel(e->threads, nitems, min, bn_range, &J);
		for (int64_t k = 0; k < J.nf; k++) {
			double a = 0, b = 0;
			for (int64_t it = 0; it < (J.rows ? nitems : J.nchunks); it++) {
				if (!J.rows) {
					a += J.part[2 * (k * J.nchunks + it)];
					b += J.part[2 * (k * J.nchunks + it) + 1];
					continue;
				}
				const double *pa = J.part + it * (2 * J.span + 2 * BN_SKEW), *pb = pa + J.span + BN_SKEW;
				for (int64_t r = 0; r < J.rp; r++)
					for (int64_t i = 0; i < J.inner; i++) {
						a += pa[r * J.row + k * J.inner + i];
						b += pb[r * J.row + k * J.inner + i];
					}
			}
			s1[k] = a;
			s2[k] = b;
			if (training) {  /* as the reference */
				mean[k] = s1[k] / (double)per;
				var[k] = s2[k] / (double)per - mean[k] * mean[k];
			}
		}
	}
	/* the coefficients of feature k at k, then (rows) spread to each
	 * position of rp rows, from the last (position at >= its feature) */
	for (int64_t k = 0; k < J.nf; k++) {
		double r = 1.0 / sqrt(var[k] + eps);
		m[k] = mean[k];
		c0[k] = feat(ops[1], k) * r;
		if (grad) {
			c1[k] = s1[k];
			c2[k] = s2[k];
			c3[k] = var[k] + eps;
		} else {
			c1[k] = feat(ops[2], k) - mean[k] * c0[k];
			c2[k] = c3[k] = 0;
		}
	}
	for (int64_t at = J.rows ? len - 1 : -1; at >= 0; at--) {
		int64_t k = at % J.row / J.inner;
		m[at] = m[k];
		c0[at] = c0[k];
		c1[at] = c1[k];
		c2[at] = c2[k];
		c3[at] = c3[k];
	}
	J.sums = 0;
	fast_tuning dt;
	const fast_tuning *tu = e->tuning;
	if (!tu) {
		fast_default_tuning(&dt);
		tu = &dt;
	}
	J.stream = fast_can_stream() && (int64_t)y->nbytes >= tu->stream_bytes;
	if (J.rows)
		eval_parallel(e->threads, J.outer, (BN_SPLIT + J.row - 1) / J.row, bn_range, &J);
	else
		eval_parallel(e->threads, J.outer * J.row, BN_SPLIT, bn_range, &J);
	hloi_free(scratch);
	value_unreserve(e, bytes);
	return 1;
}

hloi_status kernel_batch_norm(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	const hloi_literal *x = ops[0];
	const shape *xs = &x->shape;
	int64_t fi;
	const attr *ea = instr_attr(in, ATTR_EPSILON);
	if (!instr_int(in, ATTR_FEATURE_INDEX, &fi) || !ea || ea->kind != AK_FLOAT || fi < 0 || fi >= xs->rank)
		return kernel_none(kc);
	int training = in->op == OP_BATCH_NORM_TRAINING, grad = in->op == OP_BATCH_NORM_GRAD;
	int64_t nf = xs->dims[fi], total;
	if (shape_element_count(xs, &total))
		return kernel_none(kc);
	int64_t per = nf ? total / nf : 0;  /* elements per feature */
	/* XLA holds epsilon as a float (HloInstruction and its proto field) */
	double eps = in_type(xs->type, (double)(float)ea->u.f);
	/* per feature: sums (sum x, sum x^2 / sum d, sum d c) and mean, var */
	int64_t bytes = nf > 0 ? nf * 4 * (int64_t)sizeof(double) : 0;
	if (nf > INT64_MAX / 64)
		return value_oom(e, INT64_MAX);
	hloi_status st = value_reserve(e, bytes);
	if (st != HLOI_OK)
		return st;
	double *acc = hloi_calloc((size_t)(nf ? 4 * nf : 1), sizeof *acc);
	if (!acc) {
		value_unreserve(e, bytes);
		return value_oom(e, bytes);
	}
	double *s1 = acc, *s2 = acc + nf, *mean = acc + 2 * nf, *var = acc + 3 * nf;
	hloi_literal *res = dest;
	if (!res)
		st = value_new(e, in->result, &res);
	if (st != HLOI_OK) {
		hloi_free(acc);
		value_unreserve(e, bytes);
		return st;
	}
	hloi_literal *y = shape_is_tuple(in->result) ? res->elems[0] : res;
	int64_t idx[HLOI_MAX_RANK] = { 0 };
	if (grad || !training) {
		/* the statistics are operands: grad (x, scale, mean, var, dy), inference (x, scale, offset, mean, var) */
		for (int64_t k = 0; k < nf; k++) {
			mean[k] = feat(ops[grad ? 2 : 3], k);
			var[k] = feat(ops[grad ? 3 : 4], k);
		}
	}
	int done = e->fast && total > 0 && bn_fast(e, in->op, ops, y, fi, eps, per, s1, s2, mean, var);
	if (training && !done) {
		if (total > 0)
			do {
				double v = rd(x, idx);
				s1[idx[fi]] += v;
				s2[idx[fi]] += v * v;
			} while (index_next(xs->rank, xs->dims, idx));
		for (int64_t k = 0; k < nf; k++) {  /* no elements: 0 / 0, NaN */
			mean[k] = s1[k] / (double)per;
			var[k] = s2[k] / (double)per - mean[k] * mean[k];
		}
	}
	if (grad && total > 0 && !done) {
		/* sum(d), sum(d (x - mean)) */
		memset(s1, 0, (size_t)(2 * nf) * sizeof *s1);
		do {
			int64_t k = idx[fi];
			double d = rd(ops[4], idx);
			s1[k] += d;
			s2[k] += d * (rd(x, idx) - mean[k]);
		} while (index_next(xs->rank, xs->dims, idx));
	}
	if (total > 0 && !done) {
		do {
			int64_t k = idx[fi];
			double r = 1.0 / sqrt(var[k] + eps), v = rd(x, idx), out;
			if (grad) {
				double d = rd(ops[4], idx), c = v - mean[k];
				out = feat(ops[1], k) * r * ((double)per * d - s1[k] - c * s2[k] / (var[k] + eps)) / (double)per;
			} else {
				double s = feat(ops[1], k) * r;
				out = v * s + (feat(ops[2], k) - mean[k] * s);
			}
			wr(y, idx, out);
		} while (index_next(xs->rank, xs->dims, idx));
	}
	if (training || grad)
		for (int64_t k = 0; k < nf; k++) {
			put_feat(res->elems[1], k, grad ? s2[k] / sqrt(var[k] + eps) : mean[k]);
			put_feat(res->elems[2], k, grad ? s1[k] : var[k]);
		}
	hloi_free(acc);
	value_unreserve(e, bytes);
	f->vals[in->position] = res;
	f->owned[in->position] = res != dest ? VAL_OWNED : VAL_BORROWED;
	return HLOI_OK;
}
