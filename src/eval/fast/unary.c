/* The fast engine for the unary family (eval/scalar/unary.h): every unary op,
 * clamp, complex, reduce-precision and stochastic-convert.
 *
 * Row kernels, one per (op, element type), made from eval/scalar/scalar.h's
 * per-element functions over a row of n elements whose operands have
 * stride 0 (one value for the row) or 1; contiguous loops run in multiples
 * of FU_VEC elements, then a tail, so that gcc -O2 vectorises what it can.
 * The same functions serve the reference engine, so results agree bit for
 * bit. The kernels have the shape of the fused engine's row kernels, so a
 * fused region can run them as members.
 *
 * The walk: dimensions in the result's physical order, size-1 ones dropped
 * and neighbours merged while every array stays contiguous; rows of the
 * innermost dimension in pieces of a staging chunk, an operand strided
 * along it gathered into a per-thread buffer first; a result written in
 * place over an operand, strided, or large enough to stream goes through
 * the staging buffer; threads split the pieces. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "core/index.h"
#include "eval/fast/fast.h"
#include "eval/fast/vmath.h"
#include "eval/scalar/clones.h"
#include "eval/scalar/scalar.h"
#include "eval/scalar/unary.h"

#define FU_VEC 32
#define FU_MAX_OPS 3
#define FU_MAX_THREADS 64
/* Pieces of a row: at most this many bytes of the widest array. */
#define FU_CHUNK_MAX 4096
/* Defaults (fast.h's fast_tuning): results this large are streamed; fewer
 * elements than this per thread do not get another thread. */
#define FU_STREAM_BYTES ((int64_t)8 << 20)
#define FU_MIN_PER_THREAD ((int64_t)1 << 16)

typedef ew_row_fn fu_row;

/* --- row kernels ---------------------------------------------------------------- */

/* One operand: a value for the whole row (stride 0), or a contiguous run. */
#define RU_KERNEL(fn, E, T_, R_)                                                                       \
	HLOI_CLONES static void ru_##fn##_##E(void *restrict vo, const void *const *va, const int64_t *s, int64_t n, \
				  const ew_params *p)                                                   \
	{                                                                                               \
		typedef T_ T;                                                                           \
		typedef R_ R;                                                                           \
		R *restrict o = vo;                                                                     \
		const T *restrict a = va[0];                                                            \
		int64_t i = 0, nv = n & ~(int64_t)(FU_VEC - 1);                                         \
		(void)p;                                                                                \
		if (s[0] == 0) {                                                                        \
			const R v = sc_##fn##_##E(a[0]);                                                \
			for (i = 0; i < n; i++)                                                         \
				o[i] = v;                                                               \
			return;                                                                         \
		}                                                                                       \
		for (i = 0; i < nv; i++)                                                                \
			o[i] = sc_##fn##_##E(a[i]);                                                     \
		for (; i < n; i++)                                                                      \
			o[i] = sc_##fn##_##E(a[i]);                                                     \
	}
#define RU_SAME(OPC, fn, E, T) RU_KERNEL(fn, E, T, T)
#define RU_PRED(OPC, fn, E, T) RU_KERNEL(fn, E, T, uint8_t)
#define RU_PART(OPC, fn, E, T) RU_KERNEL(fn, E, T, SC_CPART_##E)

/* clamp(lo, x, hi): scalar bounds around a contiguous x (the common case),
 * all contiguous, or any mix of strides 0 and 1. */
#define RU_CLAMP(OPC, fn, E, T_)                                                                      \
	HLOI_CLONES static void ru_clamp_##E(void *restrict vo, const void *const *va, const int64_t *s, int64_t n,  \
				 const ew_params *p)                                                    \
	{                                                                                               \
		typedef T_ T;                                                                           \
		T *restrict o = vo;                                                                     \
		const T *restrict l = va[0], *restrict x = va[1], *restrict h = va[2];                  \
		int64_t i = 0, nv = n & ~(int64_t)(FU_VEC - 1);                                         \
		(void)p;                                                                                \
		if (s[0] == 0 && s[1] == 1 && s[2] == 0) {                                              \
			const T l0 = l[0], h0 = h[0];                                                   \
			for (i = 0; i < nv; i++)                                                        \
				o[i] = sc_clamp_##E(l0, x[i], h0);                                      \
			for (; i < n; i++)                                                              \
				o[i] = sc_clamp_##E(l0, x[i], h0);                                      \
		} else if (s[0] == 1 && s[1] == 1 && s[2] == 1) {                                       \
			for (i = 0; i < nv; i++)                                                        \
				o[i] = sc_clamp_##E(l[i], x[i], h[i]);                                  \
			for (; i < n; i++)                                                              \
				o[i] = sc_clamp_##E(l[i], x[i], h[i]);                                  \
		} else {                                                                                \
			for (i = 0; i < n; i++)                                                         \
				o[i] = sc_clamp_##E(l[i * s[0]], x[i * s[1]], h[i * s[2]]);             \
		}                                                                                       \
	}

/* Floats: reduce-precision; stochastic-convert into the signed integer
 * type p->to, stored at its byte width (sub-byte values sign-extended). */
#define RU_FLOAT_EXTRA(E, T_)                                                                         \
	static void ru_reduce_precision_##E(void *restrict vo, const void *const *va, const int64_t *s, \
					    int64_t n, const ew_params *p)                              \
	{                                                                                               \
		typedef T_ T;                                                                           \
		T *restrict o = vo;                                                                     \
		const T *restrict a = va[0];                                                            \
		int eb = p->exponent_bits, mb = p->mantissa_bits;                                       \
		for (int64_t i = 0; i < n; i++)                                                         \
			o[i] = sc_reduce_precision_##E(a[i * s[0]], eb, mb);                            \
	}                                                                                               \
	static void ru_stochastic_convert_##E(void *restrict vo, const void *const *va, const int64_t *s, \
					      int64_t n, const ew_params *p)                            \
	{                                                                                               \
		typedef T_ T;                                                                           \
		const T *restrict a = va[0];                                                            \
		const unsigned char *restrict r = va[1];                                                \
		int bits = etype_bit_width(p->to), w = etype_byte_width(p->to);                         \
		char *o = vo;                                                                           \
		for (int64_t i = 0; i < n; i++) {                                                       \
			uint64_t u = 0;                                                                 \
			memcpy(&u, r + (size_t)(i * s[1]) * sizeof(T), sizeof(T));                      \
			int64_t v = sc_stochastic_convert_##E(a[i * s[0]], u, bits);                    \
			switch (w) {                                                                    \
			case 1: { int8_t x = (int8_t)v; memcpy(o + i, &x, 1); break; }                  \
			case 2: { int16_t x = (int16_t)v; memcpy(o + 2 * i, &x, 2); break; }            \
			case 4: { int32_t x = (int32_t)v; memcpy(o + 4 * i, &x, 4); break; }            \
			default: memcpy(o + 8 * i, &v, 8); break;                                       \
			}                                                                               \
		}                                                                                       \
	}
#define RU_EXTRA_KIND_FLOAT(E, T) RU_FLOAT_EXTRA(E, T)
#define RU_EXTRA_KIND_PRED(E, T)
#define RU_EXTRA_KIND_SINT(E, T)
#define RU_EXTRA_KIND_UINT(E, T)
/* complex(re, im), by the complex result type */
#define RU_EXTRA_KIND_COMPLEX(E, T_)                                                                  \
	static void ru_complex_##E(void *restrict vo, const void *const *va, const int64_t *s, int64_t n, \
				   const ew_params *p)                                                  \
	{                                                                                               \
		typedef SC_CPART_##E P;                                                                 \
		T_ *restrict o = vo;                                                                    \
		const P *restrict re = va[0], *restrict im = va[1];                                     \
		(void)p;                                                                                \
		for (int64_t i = 0; i < n; i++)                                                         \
			o[i] = sc_complex_##E(re[i * s[0]], im[i * s[1]]);                              \
	}

#define RU_ROW_EVAL(E, T, kind)                                                   \
	SC_UNARY_OPS_##kind(RU_SAME, E, T) SC_UNARY_PRED_OPS_##kind(RU_PRED, E, T)   \
	SC_UNARY_PART_OPS_##kind(RU_PART, E, T) SC_CLAMP_##kind(RU_CLAMP, E, T)      \
	RU_EXTRA_##kind(E, T)
#define RU_ROW_NOEVAL(E, T, kind)
#define X(E, name, num, width, kind, ctype, ev, npy) RU_ROW_##ev(E, ctype, kind)
#include "core/types.def"
#undef X

/* The row kernel of op for type t (the operand's; x's for clamp; the
 * result's for complex), or NULL. */
static fu_row row_kernel(opcode op, etype t)
{
	fu_row v = vmath_row(op, t);
	if (v)
		return v;
#define CASE(OPC, fn, E, T) \
	case OP_##OPC:      \
		return ru_##fn##_##E;
	SC_LOOKUP_BY_OP_TYPE(op, t, SC_UNARY_FAMILY_OPS, CASE)
#undef CASE
}

/* --- moving bits ------------------------------------------------------------------- */


/* n elements of w bytes from src (element stride ss) to dst (stride ds). */
static void move_elems(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, int w)
{
	if (ds == 1 && ss == 1) {
		memcpy(dst, src, (size_t)(n * w));
		return;
	}
	switch (w) {
#define MOVE(W, T)                                                             \
	case W: {                                                              \
		T *d = (T *)(void *)dst;                                       \
		const T *s = (const T *)(const void *)src;                     \
		for (int64_t i = 0; i < n; i++)                                \
			d[i * ds] = s[i * ss];                                 \
		return;                                                        \
	}
		MOVE(1, uint8_t)
		MOVE(2, uint16_t)
		MOVE(4, uint32_t)
		MOVE(8, uint64_t)
#undef MOVE
	default:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + i * ds * w, src + i * ss * w, (size_t)w);
		return;
	}
}

/* --- the walk ------------------------------------------------------------------------ */

typedef struct fu_plan {
	int nops;
	int rank;                                /* >= 1; dimension 0 is the innermost */
	int64_t n[HLOI_MAX_RANK];
	int64_t st[FU_MAX_OPS + 1][HLOI_MAX_RANK]; /* element strides: the result, then operands */
	int w[FU_MAX_OPS + 1];
	char *base[FU_MAX_OPS + 1];
	fu_row fn;
	ew_params prm;
	int staged;                              /* rows go through the staging buffer */
	int stream;                              /* ... and out with non-temporal stores */
	int64_t chunk;                           /* elements per piece */
	int64_t pieces;                          /* pieces per row */
} fu_plan;

typedef struct fu_job {
	const fu_plan *p;
	int64_t lo, hi; /* pieces [lo, hi) of all rows */
} fu_job;

/* Pieces [lo, hi): piece k is row k / pieces, part k % pieces. */
static void run_pieces(const fu_plan *p, int64_t lo, int64_t hi)
{
	_Alignas(64) char stage[FU_CHUNK_MAX];
	_Alignas(64) char gath[FU_MAX_OPS][FU_CHUNK_MAX];
	int64_t idx[HLOI_MAX_RANK];
	int64_t row = -1;
	char *rb[FU_MAX_OPS + 1] = { NULL };
	for (int64_t k = lo; k < hi; k++) {
		int64_t r = k / p->pieces, part = k % p->pieces;
		if (r != row) {
			/* the row's origin in every array */
			int64_t q = r;
			for (int d = 1; d < p->rank; d++) {
				idx[d] = q % p->n[d];
				q /= p->n[d];
			}
			for (int x = 0; x <= p->nops; x++) {
				int64_t off = 0;
				for (int d = 1; d < p->rank; d++)
					off += idx[d] * p->st[x][d];
				rb[x] = p->base[x] + off * p->w[x];
			}
			row = r;
		}
		int64_t i0 = part * p->chunk;
		int64_t len = p->n[0] - i0 < p->chunk ? p->n[0] - i0 : p->chunk;
		const void *a[FU_MAX_OPS];
		int64_t s[FU_MAX_OPS];
		for (int x = 1; x <= p->nops; x++) {
			int64_t sx = p->st[x][0];
			const char *src = rb[x] + i0 * sx * p->w[x];
			if (sx == 0 || sx == 1) {
				a[x - 1] = src;
				s[x - 1] = sx;
			} else {
				move_elems(gath[x - 1], 1, src, sx, len, p->w[x]);
				a[x - 1] = gath[x - 1];
				s[x - 1] = 1;
			}
		}
		char *dst = rb[0] + i0 * p->st[0][0] * p->w[0];
		if (!p->staged) {
			p->fn(dst, a, s, len, &p->prm);
			continue;
		}
		p->fn(stage, a, s, len, &p->prm);
		if (p->stream)
			fast_copy_run(dst, stage, (size_t)(len * p->w[0]), 1);
		else
			move_elems(dst, p->st[0][0], stage, 1, len, p->w[0]);
	}
	if (p->stream)
		fast_stream_fence();
}

static void *worker(void *arg)
{
	const fu_job *j = arg;
	run_pieces(j->p, j->lo, j->hi);
	return NULL;
}

static int machine_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > FU_MAX_THREADS ? FU_MAX_THREADS : (int)n;
}

/* Splits the pieces between up to `threads` threads; a thread that cannot
 * be started has its share run here. */
static void run_threads(const fu_plan *p, int64_t total, int threads, int64_t min_per_thread)
{
	int64_t units = p->pieces;
	for (int d = 1; d < p->rank; d++)
		units *= p->n[d];
	int64_t nt = threads > 0 ? threads : machine_threads();
	if (nt > FU_MAX_THREADS)
		nt = FU_MAX_THREADS;
	if (min_per_thread < 1)
		min_per_thread = 1;
	if (nt > total / min_per_thread)
		nt = total / min_per_thread;
	if (nt > units)
		nt = units;
	if (nt < 1)
		nt = 1;
	fu_job jobs[FU_MAX_THREADS];
	for (int64_t k = 0; k < nt; k++) {
		jobs[k].p = p;
		jobs[k].lo = units * k / nt;
		jobs[k].hi = units * (k + 1) / nt;
	}
	fx_fork((int)nt, jobs, sizeof *jobs, worker);
}

/* The type the row kernel is chosen by (see row_kernel). */
static etype kernel_type(const instr *in, hloi_literal *const *ops)
{
	if (in->op == OP_COMPLEX)
		return in->result->type;
	if (in->op == OP_CLAMP)
		return ops[1]->shape.type;
	return ops[0]->shape.type;
}

ew_row_fn fast_unary_row(const instr *in)
{
	if (!ew_is_unary_family(in->op) || in->nops < 1 || in->nops > FU_MAX_OPS)
		return NULL;
	etype t = in->op == OP_COMPLEX ? in->result->type
		: in->op == OP_CLAMP && in->nops == 3 ? in->ops[1].def->result->type
		: in->ops[0].def->result->type;
	return row_kernel(in->op, t);
}

int fast_unary(const instr *in, hloi_literal *out, hloi_literal *const *ops, int threads)
{
	return fast_unary_tuned(in, out, ops, threads, NULL);
}

int fast_unary_tuned(const instr *in, hloi_literal *out, hloi_literal *const *ops, int threads,
		     const fast_tuning *tuning)
{
	const shape *os = &out->shape;
	int nops = in->nops;
	fu_plan p;
	memset(&p, 0, sizeof p);
	if (!ew_is_unary_family(in->op) || nops < 1 || nops > FU_MAX_OPS || shape_is_tuple(os) ||
	    os->rank > HLOI_MAX_RANK)
		return 1;
	for (int k = 0; k < nops; k++)
		if (!ops[k] || shape_is_tuple(&ops[k]->shape) || ops[k]->shape.rank > os->rank)
			return 1;
	/* not covered when tiled: positions are not strides (core/index.h) */
	if (!index_is_strided(os))
		return 1;
	for (int k = 0; k < nops; k++)
		if (!index_is_strided(&ops[k]->shape))
			return 1;
	p.fn = row_kernel(in->op, kernel_type(in, ops));
	if (!p.fn)
		return 1;
	p.nops = nops;
	ew_params_of(in, &p.prm);
	int64_t total;
	if (shape_element_count(os, &total))
		return 1;
	if (total == 0)
		return 0;
	if (!out->data)
		return 1;

	/* Strides per result dimension (0 where an operand is broadcast or has
	 * size 1). */
	int64_t full[FU_MAX_OPS + 1][HLOI_MAX_RANK];
	memset(full, 0, sizeof full);
	index_strides(os, full[0]);
	p.w[0] = etype_byte_width(os->type);
	p.base[0] = out->data;
	int inplace = 0;
	for (int k = 0; k < nops; k++) {
		const shape *s = &ops[k]->shape;
		int64_t st[HLOI_MAX_RANK];
		if (!ops[k]->data)
			return 1;
		index_strides(s, st);
		for (int j = 0; j < s->rank; j++) {
			int d = in->ops[k].out_dim[j];
			if (d < 0 || d >= os->rank)
				return 1;
			if (s->dims[j] != 1) {
				if (s->dims[j] != os->dims[d])
					return 1;
				full[k + 1][d] = st[j];
			}
		}
		p.w[k + 1] = etype_byte_width(s->type);
		p.base[k + 1] = ops[k]->data;
		if (ops[k]->data == out->data) {
			/* in place: read where written, same element width */
			if (p.w[k + 1] != p.w[0])
				return 1;
			for (int d = 0; d < os->rank; d++)
				if (os->dims[d] != 1 && full[k + 1][d] != full[0][d])
					return 1;
			inplace = 1;
		}
	}

	/* Physical order of the result, size-1 dims dropped, neighbours merged. */
	int r = 0;
	for (int i = 0; i < os->rank; i++) {
		int d = (int)os->layout.minor_to_major[i];
		if (os->dims[d] == 1)
			continue;
		if (r > 0) {
			int merge = 1;
			for (int x = 0; x <= nops; x++)
				if (full[x][d] != p.st[x][r - 1] * p.n[r - 1])
					merge = 0;
			if (merge) {
				p.n[r - 1] *= os->dims[d];
				continue;
			}
		}
		p.n[r] = os->dims[d];
		for (int x = 0; x <= nops; x++)
			p.st[x][r] = full[x][d];
		r++;
	}
	if (r == 0) {
		p.n[0] = 1;
		for (int x = 0; x <= nops; x++)
			p.st[x][0] = 1;
		r = 1;
	}
	p.rank = r;

	int64_t stream_bytes = tuning && tuning->stream_bytes >= 0 ? tuning->stream_bytes : FU_STREAM_BYTES;
	int64_t min_per_thread = tuning ? tuning->min_per_thread : FU_MIN_PER_THREAD;
	int64_t cb = tuning && tuning->chunk_bytes > 0 && tuning->chunk_bytes < FU_CHUNK_MAX ? tuning->chunk_bytes
											   : FU_CHUNK_MAX;
	int wmax = 1;
	for (int x = 0; x <= nops; x++)
		if (p.w[x] > wmax)
			wmax = p.w[x];
	p.chunk = cb / wmax > 0 ? cb / wmax : 1;
	p.pieces = (p.n[0] + p.chunk - 1) / p.chunk;
	p.stream = fast_can_stream() && (int64_t)out->nbytes >= stream_bytes && p.st[0][0] == 1;
	p.staged = inplace || p.stream || p.st[0][0] != 1;
	run_threads(&p, total, threads, min_per_thread);
	return 0;
}
