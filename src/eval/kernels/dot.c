/* dot in both engines, and the contraction machinery convolution shares
 * (eval/kernels/dot.h).
 *
 * The reference engine is XLA's evaluator's loop (HandleDotSlowPath): for
 * each result element, the products over the contracting index (row-major
 * over lhs_contracting_dims' order) summed from zero in the accumulation
 * type. The fast engine views the dot as a batch of matrix products
 * C[b] = A[b] B[b] (b over the batch dims, rows over the lhs free dims,
 * columns over the rhs free dims, k over the contracting dims): f32, f64,
 * c64 and c128 go to BLAS (OpenBLAS through CBLAS), reading the operands
 * in place when their layouts give each group one stride and packing them
 * otherwise; bf16 and f16 (and their mixes with f32) go to oneDNN's bf16
 * matmul or to f32 GEMM tiles (fast_dot_half), summed in f32 and rounded
 * once; every other type, and dots too small to gain, run contract_exact,
 * which sums in XLA's order and so equals the reference bit for bit. BLAS
 * and oneDNN order their sums their own way: those results agree with the
 * reference within a tolerance (doc/semantics.md, "Dot and convolution"). */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "core/half.h"
#include "core/index.h"
#include "eval/lib/blas.h"
#include "eval/lib/dnnl.h"
#include "eval/kernels/dot.h"
#include "eval/kernels/movement.h"
#include "util/alloc.h"
#include "util/checked.h"

/* --- accumulation -------------------------------------------------------------- */

etype contract_acc_type(etype result)
{
	switch (etype_get_kind(result)) {
	case KIND_PRED:
		return ET_PRED;
	case KIND_SINT:
		return ET_S64;
	case KIND_UINT:
		return ET_U64;
	case KIND_COMPLEX:
		return result;
	default:
		return result == ET_F64 ? ET_F64 : ET_F32;
	}
}

void acc_store(etype rt, void *out, etype at, const acc_val *a, int clamp)
{
	int bits = etype_bit_width(rt);
	if (clamp && at == ET_S64 && bits < 64) {
		int64_t v = (int64_t)a->u, hi = (int64_t)((UINT64_C(1) << (bits - 1)) - 1), lo = -hi - 1;
		v = v < lo ? lo : v > hi ? hi : v;
		sc_write(rt, out, sc_num_int(v));
		return;
	}
	if (clamp && at == ET_U64 && bits < 64) {
		uint64_t v = a->u, hi = (UINT64_C(1) << bits) - 1;
		sc_num n = sc_num_int((int64_t)(v > hi ? hi : v));
		n.is_unsigned = 1;
		sc_write(rt, out, n);
		return;
	}
	sc_convert(rt, out, at, a);
}

void contract_convert(etype dt, void *dst, etype mid, etype st, const void *src)
{
	if (st == mid || mid == dt) {
		sc_convert(dt, dst, st, src);
		return;
	}
	unsigned char tmp[16];
	sc_convert(mid, tmp, st, src);
	sc_convert(dt, dst, mid, tmp);
}

/* --- strided copies ---------------------------------------------------------- */

/* The innermost loop of contract_copy: n elements. */
static void copy_run(char *d, etype dt, int64_t ds, const char *s, etype st, int64_t ss, etype mid, int64_t n)
{
	int dw = etype_byte_width(dt), sw = etype_byte_width(st);
	if (st == dt && mid == dt) {
		switch (dw) {
		case 4:
			if (ds == 1 && ss == 1) {
				memcpy(d, s, (size_t)n * 4);
				return;
			}
			for (int64_t i = 0; i < n; i++)
				memcpy(d + i * ds * 4, s + i * ss * 4, 4);
			return;
		case 8:
			for (int64_t i = 0; i < n; i++)
				memcpy(d + i * ds * 8, s + i * ss * 8, 8);
			return;
		case 16:
			for (int64_t i = 0; i < n; i++)
				memcpy(d + i * ds * 16, s + i * ss * 16, 16);
			return;
		default:
			for (int64_t i = 0; i < n; i++)
				memcpy(d + i * ds * dw, s + i * ss * sw, (size_t)dw);
			return;
		}
	}
	for (int64_t i = 0; i < n; i++)
		contract_convert(dt, d + i * ds * dw, mid, st, s + i * ss * sw);
}

void contract_copy(void *dst, etype dt, const int64_t *dstride, const void *src, etype st, const int64_t *sstride,
		   etype mid, int n, const int64_t *dims)
{
	int64_t count = 1;
	for (int i = 0; i < n; i++)
		count *= dims[i];
	if (count == 0)
		return;
	int dw = etype_byte_width(dt), sw = etype_byte_width(st);
	if (n == 0) {
		copy_run(dst, dt, 1, src, st, 1, mid, 1);
		return;
	}
	int64_t idx[HLOI_MAX_RANK + 1] = { 0 };
	int64_t inner = dims[n - 1];
	for (;;) {
		int64_t doff = 0, soff = 0;
		for (int i = 0; i < n - 1; i++) {
			doff += idx[i] * dstride[i];
			soff += idx[i] * sstride[i];
		}
		copy_run((char *)dst + doff * dw, dt, dstride[n - 1], (const char *)src + soff * sw, st, sstride[n - 1],
			 mid, inner);
		int i = n - 2;
		while (i >= 0 && ++idx[i] == dims[i])
			idx[i--] = 0;
		if (i < 0)
			return;
	}
}

/* --- threads ----------------------------------------------------------------- */

#define CONTRACT_MAX_THREADS 64

typedef struct range_job {
	range_fn fn;
	void *ctx;
	int64_t lo, hi;
} range_job;

static void *range_worker(void *arg)
{
	range_job *j = arg;
	if (j->lo < j->hi)
		j->fn(j->ctx, j->lo, j->hi);
	return NULL;
}

static int machine_threads(void)
{
	static int cached;
	if (!cached) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		cached = n < 1 ? 1 : n > CONTRACT_MAX_THREADS ? CONTRACT_MAX_THREADS : (int)n;
	}
	return cached;
}

void contract_parallel(int threads, int64_t total, int64_t min_chunk, range_fn fn, void *ctx)
{
	int64_t nt = threads > 0 ? threads : machine_threads();
	if (nt > CONTRACT_MAX_THREADS)
		nt = CONTRACT_MAX_THREADS;
	if (min_chunk < 1)
		min_chunk = 1;
	if (nt > total / min_chunk)
		nt = total / min_chunk;
	if (nt <= 1) {
		if (total > 0)
			fn(ctx, 0, total);
		return;
	}
	range_job jobs[CONTRACT_MAX_THREADS];
	for (int64_t k = 0; k < nt; k++)
		jobs[k] = (range_job){ fn, ctx, total * k / nt, total * (k + 1) / nt };
	fx_fork((int)nt, jobs, sizeof *jobs, range_worker);
}

/* --- the exact product ---------------------------------------------------------- */

/* Rows computed together (they share each loaded row of B) and the
 * columns of a tile (the accumulators stay in L1). */
#define EXACT_ROWS 4
#define EXACT_COLS 256

typedef struct exact_job {
	etype t;
	int64_t nb, M, N, K;
	const char *A, *B;
	row_sink sink;
	void *ctx;
	int w;          /* acc element bytes */
	char *rows;     /* per-range scratch: EXACT_ROWS rows of N */
	int failed;
} exact_job;

/* acc[r][j] += a[r] * b[j] for j < n, r < nr, in the type's arithmetic. */
#define EXACT_KERNEL(NAME, T, MAC)                                                             \
	static void NAME(char *accp, int64_t stride, const char *const *ap, int nr, const char *bp, \
			 int64_t n)                                                                 \
	{                                                                                           \
		const T *b = (const T *)bp;                                                         \
		for (int r = 0; r < nr; r++) {                                                      \
			T *acc = (T *)accp + r * stride;                                            \
			T a;                                                                        \
			memcpy(&a, ap[r], sizeof a);                                                \
			for (int64_t j = 0; j < n; j++)                                             \
				MAC;                                                                \
		}                                                                                   \
	}
EXACT_KERNEL(mac_pred, uint8_t, acc[j] = (uint8_t)(acc[j] | (a & b[j])))
EXACT_KERNEL(mac_u64, uint64_t, acc[j] += a * b[j])
EXACT_KERNEL(mac_f32, float, acc[j] = acc[j] + a * b[j])
EXACT_KERNEL(mac_f64, double, acc[j] = acc[j] + a * b[j])
EXACT_KERNEL(mac_c64, float _Complex, acc[j] = sc_add_C64(acc[j], sc_multiply_C64(a, b[j])))
EXACT_KERNEL(mac_c128, double _Complex, acc[j] = sc_add_C128(acc[j], sc_multiply_C128(a, b[j])))

typedef void (*mac_fn)(char *, int64_t, const char *const *, int, const char *, int64_t);

static mac_fn mac_for(etype t)
{
	switch (t) {
	case ET_PRED: return mac_pred;
	case ET_S64: case ET_U64: return mac_u64;
	case ET_F32: return mac_f32;
	case ET_F64: return mac_f64;
	case ET_C64: return mac_c64;
	case ET_C128: return mac_c128;
	default: return NULL;
	}
}

static void exact_range(void *arg, int64_t lo, int64_t hi)
{
	exact_job *j = arg;
	int w = j->w;
	int64_t N = j->N, K = j->K;
	char *rows = hloi_malloc((size_t)(EXACT_ROWS * N * w));
	if (!rows) {
		j->failed = 1;
		return;
	}
	mac_fn mac = mac_for(j->t);
	for (int64_t r0 = lo; r0 < hi;) {
		/* rows of one batch element together */
		int64_t b = r0 / j->M, end = (b + 1) * j->M;
		int nr = (int)(hi - r0 < EXACT_ROWS ? hi - r0 : EXACT_ROWS);
		if (r0 + nr > end)
			nr = (int)(end - r0);
		memset(rows, 0, (size_t)(nr * N * w));  /* zero of every acc type */
		const char *bm = j->B + b * K * N * w;
		for (int64_t j0 = 0; j0 < N; j0 += EXACT_COLS) {
			int64_t n = N - j0 < EXACT_COLS ? N - j0 : EXACT_COLS;
			for (int64_t k = 0; k < K; k++) {
				const char *ap[EXACT_ROWS];
				for (int r = 0; r < nr; r++)
					ap[r] = j->A + ((r0 + r) * K + k) * w;
				mac(rows + j0 * w, N, ap, nr, bm + (k * N + j0) * w, n);
			}
		}
		for (int r = 0; r < nr; r++)
			j->sink(j->ctx, r0 + r, rows + (int64_t)r * N * w);
		r0 += nr;
	}
	hloi_free(rows);
}

int contract_exact(etype t, int64_t nb, int64_t M, int64_t N, int64_t K, const void *A, const void *B,
		   row_sink sink, void *ctx, int threads)
{
	exact_job j = { t, nb, M, N, K, A, B, sink, ctx, etype_byte_width(t), NULL, 0 };
	if (!mac_for(t))
		return 1;
	int64_t work = N * (K > 0 ? K : 1);
	/* a range of rows worth at least ~64K multiply-adds */
	int64_t min_rows = work >= 65536 ? 1 : 65536 / (work > 0 ? work : 1);
	contract_parallel(threads, nb * M, min_rows, exact_range, &j);
	return j.failed;
}

/* --- BLAS ---------------------------------------------------------------------- */

int contract_blas_type(etype t)
{
	/* OpenBLAS opens here, at the first product that would call it; when
	 * it cannot, the products run hloi's own loops */
	return (t == ET_F32 || t == ET_F64 || t == ET_C64 || t == ET_C128) && blas_open();
}

/* A rows x cols matrix with strides (rs, cs) as a BLAS operand: row-major
 * (trans 0) when columns are adjacent, else column-major (trans 1) when
 * rows are; *ld its leading dimension. Nonzero when neither fits. */
static int blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *trans, int64_t *ld)
{
	if (cs == 1 || cols == 1) {
		*trans = 0;
		*ld = rows == 1 ? (cols > 1 ? cols : 1) : rs;
		if (*ld >= (cols > 1 ? cols : 1) && *ld <= INT_MAX)
			return 0;
	}
	if (rs == 1 || rows == 1) {
		*trans = 1;
		*ld = cols == 1 ? (rows > 1 ? rows : 1) : cs;
		if (*ld >= (rows > 1 ? rows : 1) && *ld <= INT_MAX)
			return 0;
	}
	return 1;
}

/* The row-major call's arguments, swapping the operands (C^T = B^T A^T)
 * when C's rows are adjacent rather than its columns. */
typedef struct blas_call {
	int64_t M, N, K, lda, ldb, ldc;
	int ta, tb, swap;
} blas_call;

static int blas_plan(blas_call *c, int64_t M, int64_t N, int64_t K, int64_t am, int64_t ak, int64_t bk, int64_t bn,
		     int64_t cm, int64_t cn)
{
	if (M > INT_MAX || N > INT_MAX || K > INT_MAX)
		return 1;
	int tc;
	int64_t ldc;
	if (blas_operand(M, N, cm, cn, &tc, &ldc))
		return 1;
	c->swap = tc;
	if (tc) {
		/* C^T (N x M) = B^T (N x K) A^T (K x M) */
		int64_t t = M;
		M = N;
		N = t;
		t = am; am = bn; bn = t;
		t = ak; ak = bk; bk = t;
	}
	c->M = M;
	c->N = N;
	c->K = K;
	c->ldc = ldc;
	return blas_operand(M, K, am, ak, &c->ta, &c->lda) || blas_operand(K, N, bk, bn, &c->tb, &c->ldb);
}

int contract_blas_fits(int64_t M, int64_t N, int64_t K, int64_t am, int64_t ak, int64_t bk, int64_t bn, int64_t cm,
		       int64_t cn)
{
	blas_call c;
	return !blas_plan(&c, M, N, K, am, ak, bk, bn, cm, cn);
}

int contract_blas(etype t, int64_t M, int64_t N, int64_t K, const void *A, int64_t am, int64_t ak, const void *B,
		  int64_t bk, int64_t bn, void *C, int64_t cm, int64_t cn, int threads)
{
	blas_call c;
	if (!contract_blas_type(t) || blas_plan(&c, M, N, K, am, ak, bk, bn, cm, cn))
		return 1;
	if (c.swap) {
		const void *x = A;
		A = B;
		B = x;
	}
	if (threads >= 0)
		blas_threads(threads);
	const blas_fns *f = blas_open();
	enum CBLAS_TRANSPOSE ta = c.ta ? CblasTrans : CblasNoTrans, tb = c.tb ? CblasTrans : CblasNoTrans;
	int m = (int)c.M, n = (int)c.N, k = (int)c.K, lda = (int)c.lda, ldb = (int)c.ldb, ldc = (int)c.ldc;
	switch (t) {
	case ET_F32:
		f->cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
		break;
	case ET_F64:
		f->cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, A, lda, B, ldb, 0.0, C, ldc);
		break;
	case ET_C64: {
		const float one[2] = { 1, 0 }, zero[2] = { 0, 0 };
		f->cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, one, A, lda, B, ldb, zero, C, ldc);
		break;
	}
	default: {
		const double one[2] = { 1, 0 }, zero[2] = { 0, 0 };
		f->cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, one, A, lda, B, ldb, zero, C, ldc);
		break;
	}
	}
	return 0;
}

hloi_literal *contract_scratch(engine *e, etype t, int64_t count)
{
	int64_t bytes;
	if (count < 0 || checked_mul_i64(count, etype_byte_width(t), &bytes))
		return NULL;
	if (e->live + (uint64_t)bytes > e->budget || e->live + (uint64_t)bytes < e->live) {
		value_free_spare(e);
		if (e->live + (uint64_t)bytes > e->budget)
			return NULL;
	}
	shape s;
	int64_t dims[1] = { count };
	shape_make_array(&s, t, 1, dims);
	hloi_literal *lit = NULL;
	if (value_new(e, &s, &lit) != HLOI_OK)
		return NULL;
	return lit;
}

/* --- dot: the groups of dimensions -------------------------------------------------- */

/* The dot's dimensions by role: batch (lhs/rhs pairs), lhs free, rhs free,
 * contracting (lhs/rhs pairs); with the product of each group's sizes. */
typedef struct dot_dims {
	int nb, nm, nn, nk;
	int lb[HLOI_MAX_RANK], rb[HLOI_MAX_RANK], lm[HLOI_MAX_RANK], rn[HLOI_MAX_RANK];
	int lk[HLOI_MAX_RANK], rk[HLOI_MAX_RANK];
	int64_t B, M, N, K;
} dot_dims;

static void dot_groups(const instr *in, const shape *l, const shape *r, dot_dims *g)
{
	const int_list *lb = instr_ints(in, ATTR_LHS_BATCH_DIMS), *rb = instr_ints(in, ATTR_RHS_BATCH_DIMS);
	const int_list *lc = instr_ints(in, ATTR_LHS_CONTRACTING_DIMS), *rc = instr_ints(in, ATTR_RHS_CONTRACTING_DIMS);
	unsigned lused = 0, rused = 0;
	memset(g, 0, sizeof *g);
	g->nb = lb ? lb->n : 0;
	g->nk = lc ? lc->n : 0;
	g->B = g->M = g->N = g->K = 1;
	for (int i = 0; i < g->nb; i++) {
		g->lb[i] = (int)lb->v[i];
		g->rb[i] = (int)rb->v[i];
		lused |= 1u << g->lb[i];
		rused |= 1u << g->rb[i];
		g->B *= l->dims[g->lb[i]];
	}
	for (int i = 0; i < g->nk; i++) {
		g->lk[i] = (int)lc->v[i];
		g->rk[i] = (int)rc->v[i];
		lused |= 1u << g->lk[i];
		rused |= 1u << g->rk[i];
		g->K *= l->dims[g->lk[i]];
	}
	for (int d = 0; d < l->rank; d++)
		if (!(lused & (1u << d))) {
			g->lm[g->nm++] = d;
			g->M *= l->dims[d];
		}
	for (int d = 0; d < r->rank; d++)
		if (!(rused & (1u << d))) {
			g->rn[g->nn++] = d;
			g->N *= r->dims[d];
		}
}

/* --- the reference engine ---------------------------------------------------------- */

/* ragged-dot's groups (fill_ragged_dot); NULL in a plain dot. */
typedef struct ragged {
	const hloi_literal *gs;
	int r, rg, mode; /* mode: 0 free, 1 contracting, 2 batch */
	int np;
	int prefix[HLOI_MAX_RANK];
} ragged;

static int64_t ragged_group(const ragged *rg, const int64_t *li);

/* Each result element summed from zero in row-major order of the
 * contracting indices (XLA's evaluator). With rg, ragged-dot: a free
 * ragged dimension picks the rhs group of each row (none: 0), a
 * contracting one gives [g, ...] with each group summing its own indices. */
static void ref_dot_ex(const instr *in, hloi_literal *out, const hloi_literal *lhs, const hloi_literal *rhs,
		       const ragged *rg)
{
	const shape *os = &out->shape;
	int64_t n;
	if (shape_element_count(os, &n) || n == 0)
		return;
	int mode = rg ? rg->mode : -1, gdim = rg ? rg->rg : -1;
	dot_dims g;
	dot_groups(in, &lhs->shape, &rhs->shape, &g);
	if (mode == 0) {
		/* the rhs's group dimension is no free dimension of the result */
		int k = 0;
		for (int i = 0; i < g.nn; i++)
			if (g.rn[i] != gdim)
				g.rn[k++] = g.rn[i];
		g.nn = k;
	}
	etype rt = os->type, at = contract_acc_type(rt), lt = lhs->shape.type, rtp = rhs->shape.type;
	int64_t kdims[HLOI_MAX_RANK];
	for (int i = 0; i < g.nk; i++)
		kdims[i] = lhs->shape.dims[g.lk[i]];
	int64_t oi[HLOI_MAX_RANK] = { 0 };
	do {
		int64_t li[HLOI_MAX_RANK] = { 0 }, ri[HLOI_MAX_RANK] = { 0 };
		int o = mode == 1 ? 1 : 0;  /* contracting ragged: dimension 0 is the group */
		for (int i = 0; i < g.nb; i++, o++)
			li[g.lb[i]] = ri[g.rb[i]] = oi[o];
		for (int i = 0; i < g.nm; i++)
			li[g.lm[i]] = oi[o++];
		for (int i = 0; i < g.nn; i++)
			ri[g.rn[i]] = oi[o++];
		acc_val acc;
		memset(&acc, 0, sizeof acc);
		int64_t grp = mode == 0 || mode == 2 ? ragged_group(rg, li) : 0;
		if (mode == 0 && grp >= 0)
			ri[gdim] = grp;
		if (g.K > 0 && grp >= 0) {
			int64_t ki[HLOI_MAX_RANK] = { 0 };
			do {
				for (int i = 0; i < g.nk; i++) {
					li[g.lk[i]] = ki[i];
					ri[g.rk[i]] = ki[i];
				}
				if (mode == 1 && ragged_group(rg, li) != oi[0])
					continue;
				unsigned char x[16], y[16];
				contract_convert(at, x, rt, lt, literal_element(lhs, li));
				contract_convert(at, y, rt, rtp, literal_element(rhs, ri));
				acc_mac(at, &acc, x, y);
			} while (index_next(g.nk, kdims, ki));
		}
		acc_store(rt, literal_element(out, oi), at, &acc, 0);
	} while (index_next(os->rank, os->dims, oi));
}

static void ref_dot(const instr *in, hloi_literal *out, const hloi_literal *lhs, const hloi_literal *rhs)
{
	ref_dot_ex(in, out, lhs, rhs, NULL);
}

/* --- the fast engine --------------------------------------------------------------- */

/* The stride of a group of dims (in group order) when they merge into one,
 * in *stride (1 for a group of size 1); nonzero when they do not. */
static int group_stride(const int64_t *strides, const int64_t *dims, const int *g, int n, int64_t *stride)
{
	int64_t s = 0, next = 0;
	int have = 0;
	for (int i = n - 1; i >= 0; i--) {
		if (dims[g[i]] == 1)
			continue;
		if (have && strides[g[i]] != next)
			return 1;
		if (!have)
			s = strides[g[i]];
		have = 1;
		next = strides[g[i]] * dims[g[i]];
	}
	*stride = have ? s : 1;
	return 0;
}

/* The offset of batch element b (row-major over the batch dims). */
static int64_t batch_offset(const int64_t *dims, const int64_t *strides, const int *bd, int nb, int64_t b)
{
	int64_t off = 0;
	for (int i = nb - 1; i >= 0; i--) {
		int64_t n = dims[bd[i]];
		off += (b % n) * strides[bd[i]];
		b /= n;
	}
	return off;
}

/* An operand in dense row-major [B][rows][cols] order: dims and strides
 * of the source permuted into that order. */
static void dense_order(const shape *s, const int64_t *strides, const int *order, int n, int64_t *dims,
			int64_t *sst, int64_t *dst)
{
	for (int i = 0; i < n; i++) {
		dims[i] = s->dims[order[i]];
		sst[i] = strides[order[i]];
	}
	int64_t acc = 1;
	for (int i = n - 1; i >= 0; i--) {
		dst[i] = acc;
		acc *= dims[i];
	}
}

/* Packs lit into a dense [B][g1][g2] scratch of type t (through mid). */
static hloi_literal *pack(engine *e, const hloi_literal *lit, const int *order, int n, etype t, etype mid)
{
	int64_t st[HLOI_MAX_RANK], dims[HLOI_MAX_RANK], sst[HLOI_MAX_RANK], dst[HLOI_MAX_RANK], count;
	if (shape_element_count(&lit->shape, &count))
		return NULL;
	hloi_literal *p = contract_scratch(e, t, count);
	if (!p)
		return NULL;
	index_strides(&lit->shape, st);
	dense_order(&lit->shape, st, order, n, dims, sst, dst);
	contract_copy(p->data, t, dst, lit->data, lit->shape.type, sst, mid, n, dims);
	return p;
}

typedef struct dot_sink {
	hloi_literal *out;
	const dot_dims *g;
	etype rt, at;
	int64_t ost[HLOI_MAX_RANK];
	int n_affine;       /* the rhs free dims merge into one output stride */
	int64_t n_stride;
} dot_sink;

/* Writes row r = (b, i) of an exact product into the result. */
static void dot_row(void *ctx, int64_t r, const void *acc)
{
	dot_sink *s = ctx;
	const dot_dims *g = s->g;
	const shape *os = &s->out->shape;
	int64_t b = r / g->M, i = r % g->M;
	int64_t base = 0;
	int o = g->nb + g->nm;
	for (int d = o - 1; d >= 0; d--) {
		int64_t v = d < g->nb ? b : i;
		int64_t n = os->dims[d];
		base += (v % n) * s->ost[d];
		if (d < g->nb)
			b /= n;
		else
			i /= n;
	}
	int ow = etype_byte_width(s->rt), aw = etype_byte_width(s->at);
	char *out = s->out->data;
	const char *a = acc;
	for (int64_t j = 0; j < g->N; j++) {
		int64_t off = base;
		if (s->n_affine) {
			off += j * s->n_stride;
		} else {
			int64_t jj = j;
			for (int d = os->rank - 1; d >= o; d--) {
				off += (jj % os->dims[d]) * s->ost[d];
				jj /= os->dims[d];
			}
		}
		acc_val v;
		memcpy(&v, a + j * aw, (size_t)aw);
		acc_store(s->rt, out + off * ow, s->at, &v, 0);
	}
}

/* The exact path: both operands packed in the acc type. */
static int fast_dot_exact(engine *e, hloi_literal *out, const hloi_literal *lhs, const hloi_literal *rhs,
			  const dot_dims *g)
{
	etype rt = out->shape.type, at = contract_acc_type(rt);
	int lo[HLOI_MAX_RANK], ro[HLOI_MAX_RANK], n = 0;
	for (int i = 0; i < g->nb; i++)
		lo[n++] = g->lb[i];
	for (int i = 0; i < g->nm; i++)
		lo[n++] = g->lm[i];
	for (int i = 0; i < g->nk; i++)
		lo[n++] = g->lk[i];
	n = 0;
	for (int i = 0; i < g->nb; i++)
		ro[n++] = g->rb[i];
	for (int i = 0; i < g->nk; i++)
		ro[n++] = g->rk[i];
	for (int i = 0; i < g->nn; i++)
		ro[n++] = g->rn[i];
	hloi_literal *a = pack(e, lhs, lo, lhs->shape.rank, at, rt);
	hloi_literal *b = a ? pack(e, rhs, ro, rhs->shape.rank, at, rt) : NULL;
	int err = 1;
	if (a && b) {
		dot_sink s = { out, g, rt, at, { 0 }, 0, 1 };
		index_strides(&out->shape, s.ost);
		int od[HLOI_MAX_RANK];
		for (int i = 0; i < g->nn; i++)
			od[i] = g->nb + g->nm + i;
		s.n_affine = !group_stride(s.ost, out->shape.dims, od, g->nn, &s.n_stride);
		err = contract_exact(at, g->B, g->M, g->N, g->K, a->data, b->data, dot_row, &s, e->threads);
	}
	value_drop(e, a);
	value_drop(e, b);
	return err;
}

/* One operand as a BLAS matrix: its [B][rows][cols] strides, or a dense
 * packed copy when the layout gives a group no single stride, the type
 * differs from the result's, or BLAS cannot take the strides. */
typedef struct blas_view {
	const char *data;
	hloi_literal *packed;
	int64_t rs, cs;            /* row and column strides */
	const int64_t *dims;
	int64_t strides[HLOI_MAX_RANK];
	int bd[HLOI_MAX_RANK];     /* batch dims (for batch_offset) */
	int64_t bstride;           /* packed: elements per batch element */
} blas_view;

static int64_t view_batch(const blas_view *v, int nb, int64_t b)
{
	return v->packed ? b * v->bstride : batch_offset(v->dims, v->strides, v->bd, nb, b);
}

/* A batch of products of at most this many multiply-adds (M N K) is split
 * over hloi's threads, each product on one thread, instead of each product
 * over all of them: [64,128,128] x [64,128,128] ran 3.96 ms with the
 * threads in each product, against NumPy's 2.95. */
#define BLAS_SMALL_PRODUCT ((int64_t)1 << 24)

typedef struct blas_batch {
	const dot_dims *g;
	const blas_view *A, *B, *C;
	etype t;
	int w;
	int threads; /* contract_blas's: -1 leaves BLAS's thread count alone */
} blas_batch;

static void blas_batch_range(void *ctx, int64_t lo, int64_t hi)
{
	const blas_batch *j = ctx;
	const dot_dims *g = j->g;
	for (int64_t b = lo; b < hi; b++)
		contract_blas(j->t, g->M, g->N, g->K, j->A->data + view_batch(j->A, g->nb, b) * j->w, j->A->rs,
			      j->A->cs, j->B->data + view_batch(j->B, g->nb, b) * j->w, j->B->rs, j->B->cs,
			      (char *)j->C->data + view_batch(j->C, g->nb, b) * j->w, j->C->rs, j->C->cs, j->threads);
}

static int fast_dot_blas(engine *e, hloi_literal *out, const hloi_literal *lhs, const hloi_literal *rhs,
			 const dot_dims *g)
{
	etype rt = out->shape.type;
	int w = etype_byte_width(rt);
	blas_view A = { lhs->data, NULL, 0, 0, lhs->shape.dims, { 0 }, { 0 }, 0 };
	blas_view Bv = { rhs->data, NULL, 0, 0, rhs->shape.dims, { 0 }, { 0 }, 0 };
	blas_view C = { out->data, NULL, 0, 0, out->shape.dims, { 0 }, { 0 }, 0 };
	index_strides(&lhs->shape, A.strides);
	index_strides(&rhs->shape, Bv.strides);
	index_strides(&out->shape, C.strides);
	int od[HLOI_MAX_RANK], on[HLOI_MAX_RANK];
	for (int i = 0; i < g->nb; i++) {
		A.bd[i] = g->lb[i];
		Bv.bd[i] = g->rb[i];
		C.bd[i] = i;
	}
	for (int i = 0; i < g->nm; i++)
		od[i] = g->nb + i;
	for (int i = 0; i < g->nn; i++)
		on[i] = g->nb + g->nm + i;
	int a_ok = lhs->shape.type == rt && !group_stride(A.strides, A.dims, g->lm, g->nm, &A.rs) &&
		   !group_stride(A.strides, A.dims, g->lk, g->nk, &A.cs);
	int b_ok = rhs->shape.type == rt && !group_stride(Bv.strides, Bv.dims, g->rk, g->nk, &Bv.rs) &&
		   !group_stride(Bv.strides, Bv.dims, g->rn, g->nn, &Bv.cs);
	int c_ok = !group_stride(C.strides, C.dims, od, g->nm, &C.rs) &&
		   !group_stride(C.strides, C.dims, on, g->nn, &C.cs);
	/* each side packed when its own strides do not fit (the others as
	 * they are, or dense) */
	int64_t dm = g->K, dn = g->N, dc = g->N;
	if (!a_ok || !contract_blas_fits(g->M, g->N, g->K, A.rs, A.cs, b_ok ? Bv.rs : dn, b_ok ? Bv.cs : 1,
					 c_ok ? C.rs : dc, c_ok ? C.cs : 1)) {
		int order[HLOI_MAX_RANK], n = 0;
		for (int i = 0; i < g->nb; i++)
			order[n++] = g->lb[i];
		for (int i = 0; i < g->nm; i++)
			order[n++] = g->lm[i];
		for (int i = 0; i < g->nk; i++)
			order[n++] = g->lk[i];
		A.packed = pack(e, lhs, order, n, rt, rt);
		if (!A.packed)
			return 1;
		A.data = A.packed->data;
		A.rs = dm;
		A.cs = 1;
		A.bstride = g->M * g->K;
	}
	int err = 1;
	if (!b_ok || !contract_blas_fits(g->M, g->N, g->K, A.rs, A.cs, Bv.rs, Bv.cs, c_ok ? C.rs : dc, c_ok ? C.cs : 1)) {
		int order[HLOI_MAX_RANK], n = 0;
		for (int i = 0; i < g->nb; i++)
			order[n++] = g->rb[i];
		for (int i = 0; i < g->nk; i++)
			order[n++] = g->rk[i];
		for (int i = 0; i < g->nn; i++)
			order[n++] = g->rn[i];
		Bv.packed = pack(e, rhs, order, n, rt, rt);
		if (!Bv.packed)
			goto done;
		Bv.data = Bv.packed->data;
		Bv.rs = dn;
		Bv.cs = 1;
		Bv.bstride = g->K * g->N;
	}
	if (!c_ok || !contract_blas_fits(g->M, g->N, g->K, A.rs, A.cs, Bv.rs, Bv.cs, C.rs, C.cs)) {
		int64_t count = g->B * g->M * g->N;
		C.packed = contract_scratch(e, rt, count);
		if (!C.packed)
			goto done;
		C.data = C.packed->data;
		C.rs = dc;
		C.cs = 1;
		C.bstride = g->M * g->N;
	}
	if (!contract_blas_fits(g->M, g->N, g->K, A.rs, A.cs, Bv.rs, Bv.cs, C.rs, C.cs))
		goto done;
	blas_batch job = { g, &A, &Bv, &C, rt, w, e->threads };
	int64_t work = g->M * g->N * g->K, nt = e->threads > 0 ? e->threads : machine_threads();
	if (nt > 1 && g->B >= nt && work <= BLAS_SMALL_PRODUCT && !e->spmd) {
		/* a product each thread, BLAS on the calling thread (fork and join
		 * per small product cost more than the product) */
		blas_threads(1);
		job.threads = -1;
		contract_parallel((int)nt, g->B, 1, blas_batch_range, &job);
	} else {
		blas_batch_range(&job, 0, g->B);
	}
	if (C.packed) {
		/* the dense [B][M][N] product into the result's layout */
		int64_t dims[HLOI_MAX_RANK], dst[HLOI_MAX_RANK], sst[HLOI_MAX_RANK];
		int order[HLOI_MAX_RANK];
		for (int i = 0; i < out->shape.rank; i++)
			order[i] = i;
		dense_order(&out->shape, C.strides, order, out->shape.rank, dims, dst, sst);
		contract_copy(out->data, rt, dst, C.data, rt, sst, rt, out->shape.rank, dims);
	}
	err = 0;
done:
	value_drop(e, A.packed);
	value_drop(e, Bv.packed);
	value_drop(e, C.packed);
	return err;
}

/* --- bf16 and f16 through f32 GEMM ------------------------------------------------- */

/* A dot whose result is bf16, f16 or f32 and whose operands are any of
 * the three (not all f32) is computed in tiles of the result: each tile's
 * panels of both operands converted to f32 (the way the reference reads
 * them: through the result type) into buffers that stay in cache, their
 * product summed by sgemm on one OpenBLAS thread into an f32 tile over
 * blocks of k, then rounded once into the result. The tiles are the
 * threads' work, so no phase runs serially whatever the size; the tiling
 * does not depend on the thread count, so neither do the results. */
#define HALF_MB 256
#define HALF_NB 256
#define HALF_KB 512
/* below this many multiply-adds the exact product is as fast */
#define HALF_MIN_WORK ((int64_t)1 << 14)
/* below this many the tiles beat oneDNN: its OpenMP threads wake for each
 * call (mha_block's 12 x [128,64] x [64,128]: 3.9 ms a run with tiles, 12
 * with oneDNN, minima on a loaded machine), and its primitive is made per
 * call */
#define DNNL_MIN_WORK ((int64_t)1 << 24)

static int half_type(etype t)
{
	return t == ET_BF16 || t == ET_F16 || t == ET_F32;
}

/* One operand (or the result) seen as [batch][rows][cols]: the element
 * offset of every batch entry, row and column. */
typedef struct half_side {
	char *data;
	etype t;
	int64_t *boff, *roff, *coff;
	int row_unit, col_unit;  /* the rows' (columns') offsets step by 1 */
} half_side;

/* The offsets of a group of dims, row-major over the group. */
static void group_offsets(const shape *s, const int64_t *strides, const int *gd, int n, int64_t *off)
{
	int64_t idx[HLOI_MAX_RANK] = { 0 }, dims[HLOI_MAX_RANK], count = 1;
	for (int i = 0; i < n; i++) {
		dims[i] = s->dims[gd[i]];
		count *= dims[i];
	}
	for (int64_t j = 0; j < count; j++) {
		int64_t o = 0;
		for (int i = 0; i < n; i++)
			o += idx[i] * strides[gd[i]];
		off[j] = o;
		index_next(n, dims, idx);
	}
}

static int unit_steps(const int64_t *off, int64_t n)
{
	for (int64_t i = 1; i < n; i++)
		if (off[i] != off[0] + i)
			return 0;
	return 1;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* consecutive f16 to f32 by F16C's vcvtph2ps, exact as f16_to_f32: the
 * f16 panels' conversion took longer than their sgemm without it */
__attribute__((target("avx,f16c"))) static void f16_load_f16c(float *dst, const uint16_t *s, int64_t n)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
	for (; i < n; i++)
		dst[i] = f16_to_f32(s[i]);
}
#include <cpuid.h>
/* F16C is CPUID.1:ECX bit 29; clang 14 has no "f16c" for
 * __builtin_cpu_supports, whose "avx" also checks the OS saves ymm */
static int have_f16c(void)
{
	static _Atomic int known = -1; /* cpuid may trap to a hypervisor */
	int v = atomic_load_explicit(&known, memory_order_relaxed);
	if (v < 0) {
		unsigned a, b, c, d;
		v = __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
		atomic_store_explicit(&known, v, memory_order_relaxed);
	}
	return v;
}
#define HAVE_F16C() have_f16c()
#else
#define HAVE_F16C() 0
static void f16_load_f16c(float *dst, const uint16_t *s, int64_t n)
{
	(void)dst;
	(void)s;
	(void)n;
}
#endif

/* n elements of type t at src (offsets off from it, or consecutive when
 * off is NULL) into f32, as the reference reads them: through rt. */
static void half_load(float *dst, const char *src, etype t, etype rt, const int64_t *off, int64_t n)
{
	switch (t) {
	case ET_BF16: {
		const uint16_t *s = (const uint16_t *)src;
		if (off)
			for (int64_t i = 0; i < n; i++)
				dst[i] = bf16_to_f32(s[off[i]]);
		else
			for (int64_t i = 0; i < n; i++)
				dst[i] = bf16_to_f32(s[i]);
		break;
	}
	case ET_F16: {
		const uint16_t *s = (const uint16_t *)src;
		if (off)
			for (int64_t i = 0; i < n; i++)
				dst[i] = f16_to_f32(s[off[i]]);
		else if (HAVE_F16C())
			f16_load_f16c(dst, s, n);
		else
			for (int64_t i = 0; i < n; i++)
				dst[i] = f16_to_f32(s[i]);
		break;
	}
	default: {
		const float *s = (const float *)src;
		if (off)
			for (int64_t i = 0; i < n; i++)
				dst[i] = s[off[i]];
		else
			memcpy(dst, s, (size_t)n * sizeof *dst);
		break;
	}
	}
	if (t == rt || rt == ET_F32)
		return;
	/* a wider (or other) operand type than the result's: rounded to it */
	if (rt == ET_BF16)
		for (int64_t i = 0; i < n; i++)
			dst[i] = bf16_to_f32(f32_to_bf16(dst[i]));
	else
		for (int64_t i = 0; i < n; i++)
			dst[i] = f16_to_f32(f32_to_f16(dst[i]));
}

/* n f32 values into type t at dst (offsets off, or consecutive), each
 * rounded once. */
static void half_store(char *dst, etype t, const int64_t *off, const float *src, int64_t n)
{
	switch (t) {
	case ET_BF16: {
		uint16_t *d = (uint16_t *)dst;
		if (off)
			for (int64_t i = 0; i < n; i++)
				d[off[i]] = f32_to_bf16(src[i]);
		else
			for (int64_t i = 0; i < n; i++)
				d[i] = f32_to_bf16(src[i]);
		break;
	}
	case ET_F16: {
		uint16_t *d = (uint16_t *)dst;
		for (int64_t i = 0; i < n; i++)
			d[off ? off[i] : i] = f32_to_f16(src[i]);
		break;
	}
	default: {
		float *d = (float *)dst;
		if (off)
			for (int64_t i = 0; i < n; i++)
				d[off[i]] = src[i];
		else
			memcpy(d, src, (size_t)n * sizeof *d);
		break;
	}
	}
}

/* Rows [r0, r0 + nr) and columns [c0, c0 + nc) of batch entry b into a
 * dense f32 panel: row-major, or column-major (*trans) when the columns
 * are not adjacent in memory and the rows are. */
static void half_panel(float *p, const half_side *s, etype rt, int64_t b, int64_t r0, int64_t nr, int64_t c0,
		       int64_t nc, int *trans)
{
	int w = etype_byte_width(s->t);
	const char *base = s->data + s->boff[b] * w;
	*trans = !s->col_unit && s->row_unit;
	if (*trans) {
		for (int64_t c = 0; c < nc; c++)
			half_load(p + c * nr, base + (s->coff[c0 + c] + s->roff[r0]) * w, s->t, rt, NULL, nr);
		return;
	}
	for (int64_t r = 0; r < nr; r++) {
		const char *row = base + s->roff[r0 + r] * w;
		if (s->col_unit)
			half_load(p + r * nc, row + s->coff[c0] * w, s->t, rt, NULL, nc);
		else
			half_load(p + r * nc, row, s->t, rt, s->coff + c0, nc);
	}
}

/* Subnormal operands. A multiply with a subnormal input takes the core a
 * microcode assist of ~100 cycles; softmax probabilities in bf16 are often
 * subnormal (3% of mha_block's, which made its second product 8x slower
 * than its first). When the A panel holds subnormals and the B panel only
 * finite values, they are taken out of the panel (made +0, whose products
 * with finite values add nothing) before sgemm, and their products added
 * to the tile after it: each product exact in double (a subnormal f32 is
 * a normal double) and added to the f32 sum with one rounding. That is the
 * same sum in another order, each product rounded no more than sgemm
 * rounds it. An infinite or NaN B keeps them in the panel (+0 * inf would
 * be NaN where the subnormal gives inf). */

/* Whether the n values at p are all finite. */
static int half_finite(const float *p, int64_t n)
{
	uint32_t any = 0;
	for (int64_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, p + i, 4);
		any |= (u & 0x7f800000u) == 0x7f800000u;
	}
	return !any;
}

/* Moves the subnormals of the n values at p into (at[], val[]) (their
 * indices and values), leaving +0; returns how many. */
static int64_t half_take_subnormals(float *p, int64_t n, int32_t *at, float *val)
{
	uint32_t any = 0;
	for (int64_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, p + i, 4);
		any |= (u & 0x7fffffffu) - 1u < 0x007fffffu;
	}
	if (!any)
		return 0;
	int64_t k = 0;
	for (int64_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, p + i, 4);
		if ((u & 0x7fffffffu) - 1u < 0x007fffffu) {
			at[k] = (int32_t)i;
			memcpy(&val[k++], &u, 4);
			p[i] = 0.0f;
		}
	}
	return k;
}

typedef struct half_job {
	const half_side *A, *B, *C;
	etype rt;
	int64_t M, N, K, mt, nt;  /* tiles along M and N */
	int failed;
} half_job;

static void half_range(void *ctx, int64_t lo, int64_t hi)
{
	half_job *j = ctx;
	const blas_fns *f = blas_open();
	float *ap = hloi_malloc(sizeof(float) * (HALF_MB * HALF_KB + HALF_KB * HALF_NB + HALF_MB * HALF_NB) +
				(sizeof(int32_t) + sizeof(float)) * HALF_MB * HALF_KB);
	if (!ap) {
		j->failed = 1;
		return;
	}
	float *bp = ap + HALF_MB * HALF_KB, *cp = bp + HALF_KB * HALF_NB, *sval = cp + HALF_MB * HALF_NB;
	int32_t *sat = (int32_t *)(sval + HALF_MB * HALF_KB);
	const half_side *C = j->C;
	int ow = etype_byte_width(C->t);
	for (int64_t t = lo; t < hi; t++) {
		int64_t b = t / (j->mt * j->nt), m0 = t / j->nt % j->mt * HALF_MB, n0 = t % j->nt * HALF_NB;
		int64_t mb = j->M - m0 < HALF_MB ? j->M - m0 : HALF_MB, nb = j->N - n0 < HALF_NB ? j->N - n0 : HALF_NB;
		for (int64_t k0 = 0; k0 < j->K; k0 += HALF_KB) {
			int64_t kb = j->K - k0 < HALF_KB ? j->K - k0 : HALF_KB;
			int ta, tb;
			half_panel(ap, j->A, j->rt, b, m0, mb, k0, kb, &ta);
			half_panel(bp, j->B, j->rt, b, k0, kb, n0, nb, &tb);
			int64_t ns = half_finite(bp, kb * nb) ? half_take_subnormals(ap, mb * kb, sat, sval) : 0;
			f->cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
				       (int)mb, (int)nb, (int)kb, 1.0f, ap, (int)(ta ? mb : kb), bp, (int)(tb ? kb : nb),
				       k0 ? 1.0f : 0.0f, cp, (int)nb);
			for (int64_t s = 0; s < ns; s++) {
				int64_t r = ta ? sat[s] % mb : sat[s] / kb, k = ta ? sat[s] / mb : sat[s] % kb;
				double v = sval[s];
				float *crow = cp + r * nb;
				if (tb)
					for (int64_t n = 0; n < nb; n++)
						crow[n] = (float)((double)crow[n] + v * (double)bp[n * kb + k]);
				else
					for (int64_t n = 0; n < nb; n++)
						crow[n] = (float)((double)crow[n] + v * (double)bp[k * nb + n]);
			}
		}
		char *ob = C->data + C->boff[b] * ow;
		for (int64_t r = 0; r < mb; r++) {
			char *row = ob + C->roff[m0 + r] * ow;
			if (C->col_unit)
				half_store(row + C->coff[n0] * ow, C->t, NULL, cp + r * nb, nb);
			else
				half_store(row, C->t, C->coff + n0, cp + r * nb, nb);
		}
	}
	hloi_free(ap);
}

/* Fills s's offset tables (in one allocation, *mem) for the batch dims
 * bd, row dims rd and column dims cd of lit. */
static int half_side_init(half_side *s, const hloi_literal *lit, const int *bd, int nb, const int *rd, int nr,
			  const int *cd, int nc, int64_t B, int64_t R, int64_t Cn)
{
	int64_t st[HLOI_MAX_RANK];
	index_strides(&lit->shape, st);
	s->data = lit->data;
	s->t = lit->shape.type;
	s->boff = hloi_malloc(sizeof(int64_t) * (size_t)(B + R + Cn));
	if (!s->boff)
		return 1;
	s->roff = s->boff + B;
	s->coff = s->roff + R;
	group_offsets(&lit->shape, st, bd, nb, s->boff);
	group_offsets(&lit->shape, st, rd, nr, s->roff);
	group_offsets(&lit->shape, st, cd, nc, s->coff);
	s->row_unit = unit_steps(s->roff, R);
	s->col_unit = unit_steps(s->coff, Cn);
	return 0;
}

static int fast_dot_half(engine *e, hloi_literal *out, const hloi_literal *lhs, const hloi_literal *rhs,
			 const dot_dims *g)
{
	etype rt = out->shape.type;
	if (!blas_open())
		return 1;
	half_side A = { 0 }, Bs = { 0 }, C = { 0 };
	int od[HLOI_MAX_RANK], on[HLOI_MAX_RANK], ob[HLOI_MAX_RANK], err = 1;
	for (int i = 0; i < g->nb; i++)
		ob[i] = i;
	for (int i = 0; i < g->nm; i++)
		od[i] = g->nb + i;
	for (int i = 0; i < g->nn; i++)
		on[i] = g->nb + g->nm + i;
	if (half_side_init(&A, lhs, g->lb, g->nb, g->lm, g->nm, g->lk, g->nk, g->B, g->M, g->K) ||
	    half_side_init(&Bs, rhs, g->rb, g->nb, g->rk, g->nk, g->rn, g->nn, g->B, g->K, g->N) ||
	    half_side_init(&C, out, ob, g->nb, od, g->nm, on, g->nn, g->B, g->M, g->N))
		goto done;
	half_job j = { &A, &Bs, &C, rt, g->M, g->N, g->K, (g->M + HALF_MB - 1) / HALF_MB,
		       (g->N + HALF_NB - 1) / HALF_NB, 0 };
	int64_t tiles = g->B * j.mt * j.nt;
	if (e->spmd) {
		/* a participant: its tiles in turn, sgemm on the run's count */
		half_range(&j, 0, tiles);
	} else {
		blas_threads(1);
		contract_parallel(e->threads, tiles, 1, half_range, &j);
	}
	err = j.failed;
done:
	hloi_free(A.boff);
	hloi_free(Bs.boff);
	hloi_free(C.boff);
	return err;
}

/* The bf16 dot oneDNN's matmul takes: both operands bf16, result bf16
 * or f32, each group of each side one stride. Nonzero when it does not. */
static int fast_dot_dnnl(engine *e, hloi_literal *out, const hloi_literal *lhs, const hloi_literal *rhs,
			 const dot_dims *g)
{
	etype rt = out->shape.type;
	if (lhs->shape.type != ET_BF16 || rhs->shape.type != ET_BF16 || (rt != ET_BF16 && rt != ET_F32))
		return 1;
	int64_t ls[HLOI_MAX_RANK], rs[HLOI_MAX_RANK], os[HLOI_MAX_RANK];
	int ob[HLOI_MAX_RANK], od[HLOI_MAX_RANK], on[HLOI_MAX_RANK];
	index_strides(&lhs->shape, ls);
	index_strides(&rhs->shape, rs);
	index_strides(&out->shape, os);
	for (int i = 0; i < g->nb; i++)
		ob[i] = i;
	for (int i = 0; i < g->nm; i++)
		od[i] = g->nb + i;
	for (int i = 0; i < g->nn; i++)
		on[i] = g->nb + g->nm + i;
	dnnl_mm mm = { g->B, g->M, g->N, g->K, lhs->data, rhs->data, out->data, rt == ET_BF16,
			   { 0 }, { 0 }, { 0 } };
	if (group_stride(ls, lhs->shape.dims, g->lb, g->nb, &mm.src_s[0]) ||
	    group_stride(ls, lhs->shape.dims, g->lm, g->nm, &mm.src_s[1]) ||
	    group_stride(ls, lhs->shape.dims, g->lk, g->nk, &mm.src_s[2]) ||
	    group_stride(rs, rhs->shape.dims, g->rb, g->nb, &mm.wei_s[0]) ||
	    group_stride(rs, rhs->shape.dims, g->rk, g->nk, &mm.wei_s[1]) ||
	    group_stride(rs, rhs->shape.dims, g->rn, g->nn, &mm.wei_s[2]) ||
	    group_stride(os, out->shape.dims, ob, g->nb, &mm.dst_s[0]) ||
	    group_stride(os, out->shape.dims, od, g->nm, &mm.dst_s[1]) ||
	    group_stride(os, out->shape.dims, on, g->nn, &mm.dst_s[2]))
		return 1;
	return dnnl_matmul_run(&mm, e->threads);
}

/* Nonzero when it does not cover the case (the reference then runs). */
static int fast_dot(engine *e, const instr *in, hloi_literal *out, const hloi_literal *lhs, const hloi_literal *rhs)
{
	int64_t n;
	if (shape_element_count(&out->shape, &n))
		return 1;
	if (n == 0)
		return 0;
	dot_dims g;
	dot_groups(in, &lhs->shape, &rhs->shape, &g);
	etype rt = out->shape.type;
	if (g.K == 0) {
		/* empty sums: zero of the acc type, converted */
		acc_val zero;
		memset(&zero, 0, sizeof zero);
		unsigned char z[16];
		acc_store(rt, z, contract_acc_type(rt), &zero, 0);
		int64_t st[HLOI_MAX_RANK], none[HLOI_MAX_RANK] = { 0 };
		index_strides(&out->shape, st);
		contract_copy(out->data, rt, st, z, rt, none, rt, out->shape.rank, out->shape.dims);
		return 0;
	}
	if (contract_blas_type(rt) && lhs->shape.type == rt && rhs->shape.type == rt &&
	    fast_dot_blas(e, out, lhs, rhs, &g) == 0)
		return 0;
	if (half_type(rt) && half_type(lhs->shape.type) && half_type(rhs->shape.type) &&
	    (g.B * g.M * g.N * g.K >= HALF_MIN_WORK || dnnl_every_size())) {
		int64_t work = g.B * g.M * g.N * g.K;
		if (((work >= DNNL_MIN_WORK || dnnl_every_size()) && fast_dot_dnnl(e, out, lhs, rhs, &g) == 0) ||
		    fast_dot_half(e, out, lhs, rhs, &g) == 0)
			return 0;
	}
	if (contract_blas_type(rt) && fast_dot_blas(e, out, lhs, rhs, &g) == 0)
		return 0;
	return fast_dot_exact(e, out, lhs, rhs, &g);
}

static void fill_dot(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	if (!e->fast || fast_dot(e, in, out, ops[0], ops[1]) != 0)
		ref_dot(in, out, ops[0], ops[1]);
}

hloi_status kernel_dot(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 0, fill_dot);
}

/* --- ragged-dot ------------------------------------------------------------------ */

/* ragged-dot(lhs, rhs, group_sizes): dot's dimension numbers with one lhs
 * ragged dimension r, whose consecutive indices group_sizes splits into g
 * groups (the sizes read at the lhs indices of the dims before r in r's
 * role when group_sizes has more than one dimension; a negative size counts
 * as 0). By r's role (XLA's RaggedDotDimensionNumbers, jax.lax.ragged_dot_general):
 * free: an lhs row of group j takes rhs group j (rhs_group_dims) and a row
 * in no group gives 0; contracting: result [g, dot's dims], group j summing
 * over its own indices of r; batch: dot's result, a batch in no group 0.
 * Computed per element as the reference dot, for both engines. */

/* The group of index x of dimension r, for the lhs index li; -1 if none. */
static int64_t ragged_group(const ragged *rg, const int64_t *li)
{
	const shape *s = &rg->gs->shape;
	int64_t gi[HLOI_MAX_RANK] = { 0 };
	if (s->rank > 1)
		for (int i = 0; i < rg->np; i++)
			gi[i] = li[rg->prefix[i]];
	int64_t start = 0, x = li[rg->r], g = s->dims[s->rank - 1];
	for (int64_t j = 0; j < g; j++) {
		gi[s->rank - 1] = j;
		int64_t n = mv_read_index(s->type, literal_element(rg->gs, gi));
		if (n > 0 && x >= start && x - start < n)
			return j;
		if (n > 0)
			start += n;
	}
	return -1;
}

static int has_dim(const int_list *l, int64_t d)
{
	for (int i = 0; l && i < l->n; i++)
		if (l->v[i] == d)
			return 1;
	return 0;
}

static void fill_ragged_dot(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	(void)e;
	const int_list *lb = instr_ints(in, ATTR_LHS_BATCH_DIMS), *lc = instr_ints(in, ATTR_LHS_CONTRACTING_DIMS);
	const int_list *rgd = instr_ints(in, ATTR_RHS_GROUP_DIMS);
	ragged rg;
	memset(&rg, 0, sizeof rg);
	rg.gs = ops[2];
	rg.r = (int)instr_ints(in, ATTR_LHS_RAGGED_DIMS)->v[0];
	rg.mode = has_dim(lb, rg.r) ? 2 : has_dim(lc, rg.r) ? 1 : 0;
	rg.rg = rg.mode == 0 ? (int)rgd->v[0] : -1;
	/* the dims before r in its role index group_sizes (as the checker's rule) */
	for (int i = 0; lb && i < lb->n && !(rg.mode == 2 && lb->v[i] == rg.r); i++)
		rg.prefix[rg.np++] = (int)lb->v[i];
	if (rg.mode == 1)
		for (int i = 0; i < lc->n && lc->v[i] != rg.r; i++)
			rg.prefix[rg.np++] = (int)lc->v[i];
	if (rg.mode == 0)
		for (int d = 0; d < rg.r; d++)
			if (!has_dim(lc, d) && !has_dim(lb, d))
				rg.prefix[rg.np++] = d;
	ref_dot_ex(in, out, ops[0], ops[1], &rg);
}

hloi_status kernel_ragged_dot(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 0, fill_ragged_dot);
}

/* --- scaled-dot ------------------------------------------------------------------- */

/* The type an operand and its scale meet in (XLA's ScaledDotRewriter):
 * bf16 when both are narrower than 16 bits, the type itself when they
 * agree, f32 for two types of one width, else the wider. */
static etype scaled_type(etype a, etype b)
{
	int wa = 8 * etype_byte_width(a), wb = 8 * etype_byte_width(b);
	if (wa < 16 && wb < 16)
		return ET_BF16;
	if (a == b)
		return a;
	if (wa == wb)
		return ET_F32;
	return wa > wb ? a : b;
}

/* x * scale in their common type t, each scale element covering a block of
 * x (x's dimension over the scale's); a scalar scale leaves x as it is, as
 * the rewriter does. *out is x itself then, else a new value. */
static hloi_status dequantize(engine *e, const hloi_literal *x, const hloi_literal *s, hloi_literal **out)
{
	const shape *xs = &x->shape, *ss = &s->shape;
	if (ss->rank == 0) {
		*out = (hloi_literal *)x;
		return HLOI_OK;
	}
	etype t = scaled_type(xs->type, ss->type);
	shape ds;
	shape_make_array(&ds, t, xs->rank, xs->dims);
	hloi_status st = value_new(e, &ds, out);
	int64_t n;
	if (st != HLOI_OK || shape_element_count(xs, &n) || n == 0)
		return st;
	int64_t block[HLOI_MAX_RANK], xi[HLOI_MAX_RANK] = { 0 }, si[HLOI_MAX_RANK];
	for (int d = 0; d < xs->rank; d++)
		block[d] = ss->dims[d] > 0 ? xs->dims[d] / ss->dims[d] : 1;
	do {
		for (int d = 0; d < xs->rank; d++)
			si[d] = xi[d] / block[d];
		double a, b;
		contract_convert(ET_F64, &a, t, xs->type, literal_element(x, xi));
		contract_convert(ET_F64, &b, t, ss->type, literal_element(s, si));
		/* the exact product of two values of t, rounded once to t */
		double p = a * b;
		contract_convert(t, literal_element(*out, xi), t, ET_F64, &p);
	} while (index_next(xs->rank, xs->dims, xi));
	return HLOI_OK;
}

/* The reference dot, for both engines: scaled-dot's dequantized operands
 * are summed in XLA's evaluator's order, so the engines agree bit for bit
 * (BLAS's order differs by more than --compare allows on long sums of
 * bf16 products with cancellation). */
static void fill_ref_dot(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	(void)e;
	ref_dot(in, out, ops[0], ops[1]);
}

/* scaled-dot(lhs, rhs, lhs_scale, rhs_scale): dot of the dequantized
 * operands, in the result type (the dot's accumulation). */
hloi_status kernel_scaled_dot(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	hloi_literal *deq[2] = { NULL, NULL };
	hloi_status st = dequantize(e, ops[0], ops[2], &deq[0]);
	if (st == HLOI_OK)
		st = dequantize(e, ops[1], ops[3], &deq[1]);
	if (st == HLOI_OK)
		st = kernel_array(e, f, in, deq, dest, 0, fill_ref_dot);
	for (int k = 0; k < 2; k++)
		if (deq[k] && deq[k] != ops[k])
			value_drop(e, deq[k]);
	return st;
}
