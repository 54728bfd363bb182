/* convolution in both engines.
 *
 * The reference engine is XLA's evaluator's loop
 * (HandleConvolutionWithLiterals): for each result element, the window
 * positions in row-major order over the spatial dims, skipping those that
 * fall into padding or between dilated input elements, and for each the
 * input features of the element's group; products summed from zero in the
 * accumulation type (eval/kernels/dot.h), an integer sum clamped to the result
 * type's range.
 *
 * The fast engine lowers each feature (or batch) group to a matrix product
 * (im2col): rows are (output batch, output spatial position), columns
 * (window position, input feature) — XLA's order — and the kernel is packed
 * as a columns x output-features matrix. Rows go in chunks whose patch
 * matrix stays within CONV_CHUNK_BYTES. f32, f64, c64, c128 multiply through
 * BLAS; every other type through contract_exact, whose sums equal the
 * reference's (a padded position adds a zero product, which leaves a sum
 * that started at +0 unchanged). A kernel holding an infinity or NaN goes
 * to the reference loop: there a skipped position never multiplies it.
 * A depthwise convolution (one input feature per group) runs a direct
 * kernel instead, in the reference's summation order (see below).
 *
 * A sparse operand (sparsity_config) is expanded into its dense form first
 * (eval/kernels/sparse.c), one expansion for both engines. */
#include <math.h>

#include "core/half.h"
#include "core/index.h"
#include "eval/kernels/dot.h"
#include "eval/kernels/sparse.h"
#include "eval/lib/dnnl.h"
#include "eval/scalar/clones.h"
#include "util/alloc.h"
#include "util/checked.h"

/* Bytes of the patch matrix of one chunk of rows. */
#define CONV_CHUNK_BYTES ((int64_t)32 << 20)

typedef struct conv_geom {
	const conv_dims *d;
	const window_dim *w;
	int ns;
	int64_t batch, cin, cout;        /* input batch, input and output features */
	int64_t G, cin_g, cout_g;        /* groups, features per group */
	int64_t fgc, bgc, nout;          /* output batch = batch / bgc */
	int64_t ksz[HLOI_MAX_RANK], isz[HLOI_MAX_RANK], osz[HLOI_MAX_RANK];
	int64_t W, S;                    /* window positions, output positions */
} conv_geom;

static void conv_geometry(const instr *in, const shape *lhs, const shape *rhs, const shape *out, conv_geom *g)
{
	static const window_dim none = { 1, 1, 0, 0, 1, 1, 0 };
	const attr *la = instr_attr(in, ATTR_DIM_LABELS);
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	memset(g, 0, sizeof *g);
	g->d = la->conv;
	g->ns = g->d->nspatial;
	g->w = wa && wa->kind == AK_WINDOW && wa->u.win.n ? wa->u.win.d : &none;
	g->fgc = g->bgc = 1;
	instr_int(in, ATTR_FEATURE_GROUP_COUNT, &g->fgc);
	instr_int(in, ATTR_BATCH_GROUP_COUNT, &g->bgc);
	g->batch = lhs->dims[g->d->input_batch];
	g->cin = lhs->dims[g->d->input_feature];
	g->cout = rhs->dims[g->d->kernel_output_feature];
	g->G = g->fgc > g->bgc ? g->fgc : g->bgc;
	g->cin_g = g->cin / g->fgc;
	g->cout_g = g->cout / g->G;
	g->nout = g->batch / g->bgc;
	g->W = g->S = 1;
	for (int i = 0; i < g->ns; i++) {
		g->ksz[i] = rhs->dims[g->d->kernel_spatial[i]];
		g->isz[i] = lhs->dims[g->d->input_spatial[i]];
		g->osz[i] = out->dims[g->d->output_spatial[i]];
		g->W *= g->ksz[i];
		g->S *= g->osz[i];
	}
}

/* The input position along spatial dim i of output position o and window
 * position k, or -1 when it falls into padding or a dilation hole. */
static inline int64_t input_pos(const conv_geom *g, int i, int64_t o, int64_t k)
{
	const window_dim *w = &g->w[i];
	int64_t u = o * w->stride - w->pad_lo + k * w->rhs_dilate;
	if (w->lhs_dilate > 1) {
		if (u % w->lhs_dilate != 0)
			return -1;
		u /= w->lhs_dilate;
	}
	return u >= 0 && u < g->isz[i] ? u : -1;
}

/* --- the reference engine ---------------------------------------------------------- */

static void ref_conv(const instr *in, hloi_literal *out, const hloi_literal *lhs, const hloi_literal *rhs)
{
	const shape *os = &out->shape;
	int64_t n;
	if (shape_element_count(os, &n) || n == 0)
		return;
	conv_geom g;
	conv_geometry(in, &lhs->shape, rhs ? &rhs->shape : NULL, os, &g);
	const conv_dims *d = g.d;
	etype rt = os->type, at = contract_acc_type(rt), lt = lhs->shape.type, kt = rhs->shape.type;
	int64_t ofg = g.cout / g.fgc, obg = g.cout / g.bgc;
	int64_t oi[HLOI_MAX_RANK] = { 0 };
	do {
		int64_t ob = oi[d->output_batch], oz = oi[d->output_feature];
		int64_t fg = oz / ofg, bg = oz / obg;
		acc_val acc;
		memset(&acc, 0, sizeof acc);
		int64_t ki[HLOI_MAX_RANK] = { 0 };
		do {
			int64_t li[HLOI_MAX_RANK] = { 0 }, ri[HLOI_MAX_RANK] = { 0 };
			int skip = 0;
			for (int i = 0; i < g.ns && !skip; i++) {
				int64_t p = input_pos(&g, i, oi[d->output_spatial[i]], ki[i]);
				skip = p < 0;
				li[d->input_spatial[i]] = p;
				ri[d->kernel_spatial[i]] = g.w[i].reversal ? g.ksz[i] - 1 - ki[i] : ki[i];
			}
			if (skip)
				continue;
			li[d->input_batch] = ob + bg * (g.batch / g.bgc);
			ri[d->kernel_output_feature] = oz;
			for (int64_t f = 0; f < g.cin_g; f++) {
				li[d->input_feature] = fg * g.cin_g + f;
				ri[d->kernel_input_feature] = f;
				unsigned char x[16], y[16];
				contract_convert(at, x, rt, lt, literal_element(lhs, li));
				contract_convert(at, y, rt, kt, literal_element(rhs, ri));
				acc_mac(at, &acc, x, y);
			}
		} while (index_next(g.ns, g.ksz, ki));
		acc_store(rt, literal_element(out, oi), at, &acc, 1);
	} while (index_next(os->rank, os->dims, oi));
}

/* --- the fast engine --------------------------------------------------------------- */

typedef struct conv_job {
	const conv_geom *g;
	etype rt, at, lt;
	const char *lhs;
	int64_t ls[HLOI_MAX_RANK], os[HLOI_MAX_RANK];
	hloi_literal *out;
	int64_t group;       /* the group being computed */
	int64_t row0;        /* the chunk's first row */
	char *patch;         /* [rows][W * cin_g] of type at */
	const char *prod;    /* BLAS: [rows][cout_g] of type rt */
} conv_job;

/* Output row r = (batch, spatial position): its batch and spatial indices. */
static void row_index(const conv_geom *g, int64_t r, int64_t *ob, int64_t *o)
{
	for (int i = g->ns - 1; i >= 0; i--) {
		o[i] = r % g->osz[i];
		r /= g->osz[i];
	}
	*ob = r;
}

/* im2col of rows [lo, hi) of the chunk. */
static void im2col(void *arg, int64_t lo, int64_t hi)
{
	conv_job *j = arg;
	const conv_geom *g = j->g;
	const conv_dims *d = g->d;
	int aw = etype_byte_width(j->at), lw = etype_byte_width(j->lt);
	int64_t cols = g->W * g->cin_g;
	int64_t foff = g->fgc > 1 ? j->group * g->cin_g : 0;
	int64_t boff = g->bgc > 1 ? j->group * g->nout : 0;
	int64_t fs = j->ls[d->input_feature];
	int same = j->lt == j->at;
	for (int64_t r = lo; r < hi; r++) {
		int64_t ob, o[HLOI_MAX_RANK], k[HLOI_MAX_RANK] = { 0 };
		row_index(g, j->row0 + r, &ob, o);
		char *dst = j->patch + r * cols * aw;
		int64_t base = (ob + boff) * j->ls[d->input_batch] + foff * fs;
		do {
			int64_t off = base;
			int skip = 0;
			for (int i = 0; i < g->ns && !skip; i++) {
				int64_t p = input_pos(g, i, o[i], k[i]);
				skip = p < 0;
				off += p * j->ls[d->input_spatial[i]];
			}
			if (skip) {
				memset(dst, 0, (size_t)(g->cin_g * aw));
			} else {
				const char *src = j->lhs + off * lw;
				if (same && fs == 1)  /* the group's features side by side */
					memcpy(dst, src, (size_t)(g->cin_g * aw));
				else if (same && aw == 4)
					for (int64_t f = 0; f < g->cin_g; f++)
						memcpy(dst + f * 4, src + f * fs * 4, 4);
				else if (same)
					for (int64_t f = 0; f < g->cin_g; f++)
						memcpy(dst + f * aw, src + f * fs * lw, (size_t)aw);
				else
					for (int64_t f = 0; f < g->cin_g; f++)
						contract_convert(j->at, dst + f * aw, j->rt, j->lt, src + f * fs * lw);
			}
			dst += g->cin_g * aw;
		} while (index_next(g->ns, g->ksz, k));
	}
}

/* The output offset of chunk row r and the group's first feature. */
static int64_t out_base(const conv_job *j, int64_t r)
{
	const conv_geom *g = j->g;
	int64_t ob, o[HLOI_MAX_RANK];
	row_index(g, j->row0 + r, &ob, o);
	int64_t off = ob * j->os[g->d->output_batch] + j->group * g->cout_g * j->os[g->d->output_feature];
	for (int i = 0; i < g->ns; i++)
		off += o[i] * j->os[g->d->output_spatial[i]];
	return off;
}

/* An exact product's row: clamped into the result. */
static void conv_row(void *arg, int64_t r, const void *acc)
{
	conv_job *j = arg;
	int aw = etype_byte_width(j->at), ow = etype_byte_width(j->rt);
	int64_t base = out_base(j, r), fs = j->os[j->g->d->output_feature];
	char *out = j->out->data;
	for (int64_t c = 0; c < j->g->cout_g; c++) {
		acc_val v;
		memcpy(&v, (const char *)acc + c * aw, (size_t)aw);
		acc_store(j->rt, out + (base + c * fs) * ow, j->at, &v, 1);
	}
}

/* BLAS rows [lo, hi) of the chunk into the result. */
static void scatter_rows(void *arg, int64_t lo, int64_t hi)
{
	conv_job *j = arg;
	int w = etype_byte_width(j->rt);
	int64_t fs = j->os[j->g->d->output_feature], n = j->g->cout_g;
	for (int64_t r = lo; r < hi; r++) {
		char *dst = (char *)j->out->data + out_base(j, r) * w;
		const char *src = j->prod + r * n * w;
		if (fs == 1)
			memcpy(dst, src, (size_t)(n * w));
		else
			for (int64_t c = 0; c < n; c++)
				memcpy(dst + c * fs * w, src + c * w, (size_t)w);
	}
}

/* Whether any of n elements of acc type t is an infinity or NaN. */
static int any_nonfinite(etype t, const void *p, int64_t n)
{
	if (t == ET_F32 || t == ET_C64) {
		const float *f = p;
		for (int64_t i = 0; i < n * (t == ET_C64 ? 2 : 1); i++)
			if (!isfinite(f[i]))
				return 1;
	} else if (t == ET_F64 || t == ET_C128) {
		const double *f = p;
		for (int64_t i = 0; i < n * (t == ET_C128 ? 2 : 1); i++)
			if (!isfinite(f[i]))
				return 1;
	}
	return 0;
}

/* The kernel of group grp as a [W * cin_g][cout_g] matrix of type at. */
static void pack_kernel(const conv_geom *g, const hloi_literal *rhs, int64_t grp, etype at, etype rt, char *dst)
{
	const conv_dims *d = g->d;
	int64_t ks[HLOI_MAX_RANK];
	index_strides(&rhs->shape, ks);
	int aw = etype_byte_width(at), kw = etype_byte_width(rhs->shape.type);
	int same = rhs->shape.type == at && rt == at;  /* no conversion: a copy */
	int64_t k[HLOI_MAX_RANK] = { 0 };
	do {
		int64_t off = grp * g->cout_g * ks[d->kernel_output_feature];
		for (int i = 0; i < g->ns; i++)
			off += (g->w[i].reversal ? g->ksz[i] - 1 - k[i] : k[i]) * ks[d->kernel_spatial[i]];
		for (int64_t f = 0; f < g->cin_g; f++)
			for (int64_t c = 0; c < g->cout_g; c++) {
				const char *src = (const char *)rhs->data +
						  (off + f * ks[d->kernel_input_feature] + c * ks[d->kernel_output_feature]) * kw;
				if (same)
					memcpy(dst, src, (size_t)aw);
				else
					contract_convert(at, dst, rt, rhs->shape.type, src);
				dst += aw;
			}
	} while (index_next(g->ns, g->ksz, k));
}

/* --- depthwise: a direct kernel ---------------------------------------------------- */

/* A depthwise convolution (one input feature per group: feature_group_count
 * = input features, batch_group_count 1) has W products per result element
 * and moves little more than its operands: im2col would build a patch
 * matrix W times the input to feed a matrix product of width 1. It runs
 * directly instead, on lines of results along one axis of the output (the
 * inner axis): the feature axis (input channel = output feature; with a
 * channel multiplier > 1 never) or a spatial axis. A line's sums start at
 * zero in a buffer of the accumulation type and take the window positions
 * in row-major order, each position adding its products to the results it
 * reaches (an inner loop over the line, vectorised); positions in padding
 * add nothing. Each sum thus gets the reference's products in the
 * reference's order: the results are the reference's bits. f32, f64, f16
 * and bf16 with lhs, rhs and result of one type. */

#define DW_BLOCK 256  /* results of a line per block (the buffer on the stack) */

/* bf16 <-> f32 as core/half.c converts, inline: the line loops call them for
 * every element */
static inline float dw_bf16_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static inline uint16_t dw_f32_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu))
		return (uint16_t)((u >> 16) | 0x0040u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

#define DW_LOAD_F32(v) (v)
#define DW_LOAD_F64(v) (v)
#define DW_LOAD_BF16(v) dw_bf16_f32(v)
#define DW_LOAD_F16(v) f16_to_f32(v)

/* acc[i] += x[i * xs] * w0 for i < n (a spatial axis: one weight). */
#define DW_LINES(NAME, X, A, LOAD)                                                                        \
	HLOI_CLONES static void dw_spat_##NAME(A *restrict acc, const X *restrict x, int64_t xs, A w0,     \
					       int64_t n)                                                  \
	{                                                                                                  \
		if (xs == 1)                                                                               \
			for (int64_t i = 0; i < n; i++)                                                    \
				acc[i] = acc[i] + (A)LOAD(x[i]) * w0;                                      \
		else                                                                                       \
			for (int64_t i = 0; i < n; i++)                                                    \
				acc[i] = acc[i] + (A)LOAD(x[i * xs]) * w0;                                 \
	}
/* The feature axis over all np window positions of a line at once:
 * acc[i] += x[xoff[p] + i * xs] * w[p][i] for p < np in turn, i < n, in blocks
 * of DW_LANES results kept in registers across the positions (the sums
 * still take the positions in order). */
#define DW_LANES 16
#define DW_FEATS(NAME, X, A, LOAD)                                                                         \
	HLOI_CLONES static void dw_feats_##NAME(A *restrict acc, const X *restrict x, int64_t xs,           \
						const int64_t *restrict xoff, const A *const *restrict w,   \
						int np, int64_t n)                                          \
	{                                                                                                   \
		int64_t i = 0;                                                                              \
		for (; i + DW_LANES <= n; i += DW_LANES) {                                                  \
			A a[DW_LANES];                                                                      \
			for (int l = 0; l < DW_LANES; l++)                                                  \
				a[l] = acc[i + l];                                                          \
			if (xs == 1)                                                                        \
				for (int p = 0; p < np; p++)                                                \
					for (int l = 0; l < DW_LANES; l++)                                  \
						a[l] = a[l] + (A)LOAD(x[xoff[p] + i + l]) * w[p][i + l];    \
			else                                                                                \
				for (int p = 0; p < np; p++)                                                \
					for (int l = 0; l < DW_LANES; l++)                                  \
						a[l] = a[l] + (A)LOAD(x[xoff[p] + (i + l) * xs]) * w[p][i + l]; \
			for (int l = 0; l < DW_LANES; l++)                                                  \
				acc[i + l] = a[l];                                                          \
		}                                                                                           \
		for (; i < n; i++) {                                                                        \
			A a = acc[i];                                                                       \
			for (int p = 0; p < np; p++)                                                        \
				a = a + (A)LOAD(x[xoff[p] + i * xs]) * w[p][i];                             \
			acc[i] = a;                                                                         \
		}                                                                                           \
	}
#if defined(__GNUC__)
/* f32 and bf16 in vectors of DW_LANES floats (GCC's and clang's vector
 * extension): the loop above leaves the sums in memory, these keep them in
 * registers across the positions. Each lane is the same IEEE operation in
 * the same order. */
typedef float dw_vf __attribute__((vector_size(DW_LANES * 4)));
typedef uint32_t dw_vu __attribute__((vector_size(DW_LANES * 4)));
typedef uint16_t dw_vh __attribute__((vector_size(DW_LANES * 2)));
#define DW_VFEATS(NAME, X, VLOAD, LOAD)                                                                     \
	HLOI_CLONES static void dw_feats_##NAME(float *restrict acc, const X *restrict x, int64_t xs,       \
						const int64_t *restrict xoff, const float *const *restrict w, \
						int np, int64_t n)                                          \
	{                                                                                                   \
		int64_t i = 0;                                                                              \
		if (xs == 1)                                                                                \
			for (; i + DW_LANES <= n; i += DW_LANES) {                                          \
				dw_vf a, v, wv;                                                             \
				memcpy(&a, acc + i, sizeof a);                                              \
				for (int p = 0; p < np; p++) {                                              \
					VLOAD(v, x + xoff[p] + i);                                          \
					memcpy(&wv, w[p] + i, sizeof wv);                                   \
					a = a + v * wv;                                                     \
				}                                                                           \
				memcpy(acc + i, &a, sizeof a);                                              \
			}                                                                                   \
		for (; i < n; i++) {                                                                        \
			float a = acc[i];                                                                   \
			for (int p = 0; p < np; p++)                                                        \
				a = a + LOAD(x[xoff[p] + i * xs]) * w[p][i];                                \
			acc[i] = a;                                                                         \
		}                                                                                           \
	}
#define DW_VLOAD_F32(v, p) memcpy(&(v), (p), sizeof(v))
#define DW_VLOAD_BF16(v, p)                                              \
	{                                                                \
		dw_vh h_;                                                \
		memcpy(&h_, (p), sizeof h_);                             \
		dw_vu u_ = __builtin_convertvector(h_, dw_vu) << 16;     \
		memcpy(&(v), &u_, sizeof(v));                            \
	}
DW_VFEATS(f32, float, DW_VLOAD_F32, DW_LOAD_F32)
DW_VFEATS(bf16, uint16_t, DW_VLOAD_BF16, DW_LOAD_BF16)
#undef DW_VFEATS
#else
DW_FEATS(f32, float, float, DW_LOAD_F32)
DW_FEATS(bf16, uint16_t, float, DW_LOAD_BF16)
#endif
DW_FEATS(f64, double, double, DW_LOAD_F64)
DW_FEATS(f16, uint16_t, float, DW_LOAD_F16)
#undef DW_FEATS

DW_LINES(f32, float, float, DW_LOAD_F32)
DW_LINES(f64, double, double, DW_LOAD_F64)
DW_LINES(bf16, uint16_t, float, DW_LOAD_BF16)
DW_LINES(f16, uint16_t, float, DW_LOAD_F16)
#undef DW_LINES

/* The window positions the feature kernel takes at once. */
#define DW_POS 32

/* Adds the products of the *np positions gathered (xoff, wrow) to acc. */
static void dw_flush(etype t, void *acc, const char *x, int64_t xs, const int64_t *xoff, const char **wrow, int *np,
		     int64_t n)
{
	if (*np == 0)
		return;
	switch (t) {
	case ET_F32:
		dw_feats_f32(acc, (const float *)x, xs, xoff, (const float *const *)wrow, *np, n);
		break;
	case ET_F64:
		dw_feats_f64(acc, (const double *)x, xs, xoff, (const double *const *)wrow, *np, n);
		break;
	case ET_BF16:
		dw_feats_bf16(acc, (const uint16_t *)x, xs, xoff, (const float *const *)wrow, *np, n);
		break;
	default:
		dw_feats_f16(acc, (const uint16_t *)x, xs, xoff, (const float *const *)wrow, *np, n);
		break;
	}
	*np = 0;
}

typedef struct dw_job {
	const conv_geom *g;
	etype rt;
	int inner;                   /* the inner axis: -1 features, else a spatial dim */
	int64_t len;                 /* results per line */
	const char *x;               /* lhs */
	char *y;                     /* result */
	const char *w;               /* the kernel, [window position][output feature], acc type */
	int64_t ls[HLOI_MAX_RANK], os[HLOI_MAX_RANK];
} dw_job;

/* Lines [lo, hi): line = (batch, [feature,] the spatial positions but the
 * inner one), row-major in that order. */
static void dw_lines(void *arg, int64_t lo, int64_t hi)
{
	const dw_job *j = arg;
	const conv_geom *g = j->g;
	const conv_dims *d = g->d;
	int a = j->inner, f64 = j->rt == ET_F64;
	int xw = etype_byte_width(j->rt), aw = f64 ? 8 : 4;
	int64_t m = g->cout_g;  /* channel multiplier: feature o reads channel o / m */
	double buf[DW_BLOCK];
	/* the line's indices, found for lo and then counted on */
	int64_t o[HLOI_MAX_RANK], r = lo, feat = 0, ob;
	for (int i = g->ns - 1; i >= 0; i--) {
		o[i] = i == a ? 0 : r % g->osz[i];
		r /= i == a ? 1 : g->osz[i];
	}
	if (a >= 0) {
		feat = r % g->cout;
		r /= g->cout;
	}
	ob = r;
	for (int64_t line = lo; line < hi; line++) {
		if (line > lo) {
			int i = g->ns - 1;
			for (; i >= 0; i--) {
				if (i == a)
					continue;
				if (++o[i] < g->osz[i])
					break;
				o[i] = 0;
			}
			if (i < 0 && (a < 0 || ++feat == g->cout)) {
				feat = 0;
				ob++;
			}
		}
		int64_t xbase = ob * j->ls[d->input_batch], ybase = ob * j->os[d->output_batch];
		if (a >= 0) {
			xbase += feat / m * j->ls[d->input_feature];
			ybase += feat * j->os[d->output_feature];
		}
		for (int i = 0; i < g->ns; i++)
			if (i != a)
				ybase += o[i] * j->os[d->output_spatial[i]];
		int64_t xs = a < 0 ? j->ls[d->input_feature] : j->ls[d->input_spatial[a]];
		int64_t ys = a < 0 ? j->os[d->output_feature] : j->os[d->output_spatial[a]];
		for (int64_t b0 = 0; b0 < j->len; b0 += DW_BLOCK) {
			int64_t n = j->len - b0 < DW_BLOCK ? j->len - b0 : DW_BLOCK;
			/* loops, not memset and an initialiser: gcc makes them
			 * `rep stos`, whose start costs more than a short line */
			if (f64)
				for (int64_t i = 0; i < n; i++)
					buf[i] = 0;
			else
				for (int64_t i = 0; i < n; i++)
					((float *)buf)[i] = 0;
			int64_t k[HLOI_MAX_RANK], xoff[DW_POS];
			for (int i = 0; i < g->ns; i++)
				k[i] = 0;
			const char *wrow[DW_POS];
			int np = 0;
			do {
				int64_t kk = 0, off = xbase;
				int skip = 0;
				for (int i = 0; i < g->ns && !skip; i++) {
					int64_t ki = g->w[i].reversal ? g->ksz[i] - 1 - k[i] : k[i];
					kk = kk * g->ksz[i] + ki;
					if (i == a)
						continue;
					int64_t p = input_pos(g, i, o[i], k[i]);
					skip = p < 0;
					off += p * j->ls[d->input_spatial[i]];
				}
				if (skip)
					continue;
				if (a < 0) {
					xoff[np] = off + b0 * xs;
					wrow[np++] = j->w + (kk * g->cout + b0) * aw;
					if (np == DW_POS)
						dw_flush(j->rt, buf, j->x, xs, xoff, wrow, &np, n);
					continue;
				}
				/* the outputs i of the block whose input position
				 * u = (b0 + i) * stride - pad_lo + k * dilation is in [0, isz) */
				const window_dim *wd = &g->w[a];
				int64_t st = wd->stride, s0 = k[a] * wd->rhs_dilate - wd->pad_lo + b0 * st;
				int64_t i0 = s0 >= 0 ? 0 : (-s0 + st - 1) / st;
				int64_t i1 = g->isz[a] - s0 <= 0 ? 0 : (g->isz[a] - s0 + st - 1) / st;
				i1 = i1 < n ? i1 : n;
				if (i0 >= i1)
					continue;
				const char *x = j->x + (off + (s0 + i0 * st) * xs) * xw;
				const char *wp = j->w + (kk * g->cout + feat) * aw;
				switch (j->rt) {
				case ET_F32:
					dw_spat_f32((float *)buf + i0, (const float *)x, st * xs, *(const float *)wp, i1 - i0);
					break;
				case ET_F64:
					dw_spat_f64(buf + i0, (const double *)x, st * xs, *(const double *)wp, i1 - i0);
					break;
				case ET_BF16:
					dw_spat_bf16((float *)buf + i0, (const uint16_t *)x, st * xs, *(const float *)wp,
						     i1 - i0);
					break;
				default:
					dw_spat_f16((float *)buf + i0, (const uint16_t *)x, st * xs, *(const float *)wp,
						    i1 - i0);
					break;
				}
			} while (index_next(g->ns, g->ksz, k));
			dw_flush(j->rt, buf, j->x, xs, xoff, wrow, &np, n);
			char *y = j->y + (ybase + b0 * ys) * xw;
			const float *bf = (const float *)buf;
			switch (j->rt) {
			case ET_F32:
				for (int64_t i = 0; i < n; i++)
					memcpy(y + i * ys * 4, &bf[i], 4);
				break;
			case ET_F64:
				for (int64_t i = 0; i < n; i++)
					memcpy(y + i * ys * 8, &buf[i], 8);
				break;
			case ET_BF16:
				for (int64_t i = 0; i < n; i++) {
					uint16_t h = dw_f32_bf16(bf[i]);
					memcpy(y + i * ys * 2, &h, 2);
				}
				break;
			default:
				for (int64_t i = 0; i < n; i++) {
					uint16_t h = f32_to_f16(bf[i]);
					memcpy(y + i * ys * 2, &h, 2);
				}
				break;
			}
		}
	}
}

#if defined(__GNUC__)
/* A spatial inner axis of unit stride and two spatial dims at most (NCHW's
 * 3x3 depthwise convolutions): the lines above are short (a row of the
 * image) and each of their window positions a call of a few vectors, so
 * their bookkeeping outweighs the products. Here a task takes whole planes
 * (batch, output feature): the plane of its channel is first widened to
 * f32, once, into a buffer whose rows have room around them, so that a
 * block of DW_LANES results of an output row loads each window position's
 * inputs as one vector; the block's sums stay in registers across the
 * window positions, which they take in the reference's order. A position
 * whose input row is padding is skipped; in a block that reaches into the
 * column padding the lanes there keep their sums unchanged (a select, not
 * an added zero, so that a -0 sum and an infinite weight come out as the
 * reference's). f32, bf16 and f16. */
typedef int32_t dw_vi __attribute__((vector_size(DW_LANES * 4)));

typedef struct dw_pos {
	int64_t kr, kc;  /* the window position along the row and the column axes */
	int64_t kk;      /* its row of the packed kernel */
} dw_pos;

typedef struct dw_plane_job {
	const dw_job *lines;      /* the line kernel, for a plane whose buffer cannot be had */
	int rows;                 /* whether there is a row axis */
	int64_t ih, iw, oh, ow;   /* input and output sizes along the row and column axes */
	int64_t xr, xc, yr, yc;   /* their strides in the lhs and the result */
	int64_t sr, pr, dr;       /* the row axis's stride, low padding, window dilation */
	int64_t pc, dc;           /* the column axis's low padding and window dilation */
	int64_t lpad, width;      /* buffer: a row's elements before column 0, per row */
	int np;
	const dw_pos *pos;
} dw_plane_job;

/* n elements from x (stride xc) widened to f32 at dst. */
static void dw_widen(etype t, float *dst, const char *x, int64_t xc, int64_t n)
{
	switch (t) {
	case ET_F32:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + i, x + i * xc * 4, 4);
		break;
	case ET_BF16:
		if (xc == 1)
			for (int64_t i = 0; i < n; i++) {
				uint16_t h;
				memcpy(&h, x + i * 2, 2);
				dst[i] = dw_bf16_f32(h);
			}
		else
			for (int64_t i = 0; i < n; i++) {
				uint16_t h;
				memcpy(&h, x + i * xc * 2, 2);
				dst[i] = dw_bf16_f32(h);
			}
		break;
	default:
		for (int64_t i = 0; i < n; i++) {
			uint16_t h;
			memcpy(&h, x + i * xc * 2, 2);
			dst[i] = f16_to_f32(h);
		}
		break;
	}
}

/* The n results of a block, *v, stored from y (stride yc) in type t.
 * Vectors by address and always inline: a clone passing a vector by value
 * to a function compiled for the baseline would pass it in another way
 * than that function takes it (unoptimised builds do not inline). */
static inline __attribute__((always_inline)) void dw_store(etype t, char *y, int64_t yc, const dw_vf *v, int64_t n)
{
	dw_vf a = *v;
	if (t == ET_F32) {
		if (yc == 1 && n == DW_LANES)
			memcpy(y, &a, sizeof a);
		else
			for (int64_t i = 0; i < n; i++) {
				float f = a[i];  /* clang takes no vector element's address */
				memcpy(y + i * yc * 4, &f, 4);
			}
		return;
	}
	uint16_t h[DW_LANES];
	if (t == ET_BF16) {
		/* dw_f32_bf16 on each lane */
		dw_vu u, r;
		memcpy(&u, &a, sizeof u);
		dw_vi nan = (u & 0x7fffffffu) > 0x7f800000u;
		r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
		r = (r & ~(dw_vu)nan) | (((u >> 16) | 0x0040u) & (dw_vu)nan);
		dw_vh hv = __builtin_convertvector(r, dw_vh);
		memcpy(h, &hv, sizeof h);
	} else {
		for (int64_t i = 0; i < n; i++)
			h[i] = f32_to_f16(a[i]);
	}
	if (yc == 1 && n == DW_LANES)
		memcpy(y, h, sizeof h);
	else if (yc == 1)
		memcpy(y, h, (size_t)n * 2);
	else
		for (int64_t i = 0; i < n; i++)
			memcpy(y + i * yc * 2, &h[i], 2);
}

/* Blocks of a row computed together: their sums are independent chains
 * of additions, which the core overlaps. */
#define DW_UNROLL 4  /* as dw_plane_row writes it out */

/* *a + x * w in the lanes of mask m, *a elsewhere */
static inline __attribute__((always_inline)) void dw_step(dw_vf *acc, const float *x, const uint32_t *m, float w)
{
	dw_vf a = *acc;
	dw_vf v, s;
	dw_vu su, au, mv;
	memcpy(&v, x, sizeof v);
	memcpy(&mv, m, sizeof mv);
	s = a + v * w;
	memcpy(&su, &s, sizeof su);
	memcpy(&au, &a, sizeof au);
	au = (su & mv) | (au & ~mv);
	memcpy(acc, &au, sizeof au);
}

/* Output row o of a plane into y: buf the widened input plane, w[p] the
 * weight of window position p, mask[block][p] its lanes that are not
 * column padding (the blocks rounded up to DW_UNROLL, the extra ones
 * without lanes). */
HLOI_CLONES static void dw_plane_row(const dw_plane_job *pj, etype t, const float *buf, const float *w,
				     const uint32_t *mask, int64_t o, char *y, int yw)
{
	int np = pj->np;
	int64_t at[DW_POS];  /* position p's input row o in buf, at column -off; -1: padding */
	for (int p = 0; p < np; p++) {
		const dw_pos *q = &pj->pos[p];
		int64_t r = pj->rows ? o * pj->sr - pj->pr + q->kr * pj->dr : 0;
		at[p] = r < 0 || r >= pj->ih ? -1 : r * pj->width + pj->lpad + q->kc * pj->dc - pj->pc;
	}
	for (int64_t b = 0, bi = 0; b < pj->ow; b += DW_UNROLL * DW_LANES, bi += DW_UNROLL) {
		/* four named sums, not an array: gcc keeps an array in memory */
		dw_vf a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 };
		for (int p = 0; p < np; p++) {
			if (at[p] < 0)
				continue;
			const float *x = buf + at[p] + b;
			const uint32_t *m = mask + (bi * np + p) * DW_LANES;
			float wp = w[p];
			dw_step(&a0, x, m, wp);
			dw_step(&a1, x + DW_LANES, m + np * DW_LANES, wp);
			dw_step(&a2, x + 2 * DW_LANES, m + 2 * np * DW_LANES, wp);
			dw_step(&a3, x + 3 * DW_LANES, m + 3 * np * DW_LANES, wp);
		}
		dw_vf a[DW_UNROLL] = { a0, a1, a2, a3 };
		for (int u = 0; u < DW_UNROLL; u++) {
			int64_t bu = b + u * DW_LANES, n = pj->ow - bu < DW_LANES ? pj->ow - bu : DW_LANES;
			if (n > 0)
				dw_store(t, y + bu * pj->yc * yw, pj->yc, &a[u], n);
		}
	}
}

/* Planes [lo, hi): plane = (batch, output feature), row-major. */
static void dw_planes(void *arg, int64_t lo, int64_t hi)
{
	const dw_plane_job *pj = arg;
	const dw_job *j = pj->lines;
	const conv_geom *g = j->g;
	const conv_dims *d = g->d;
	int xw = etype_byte_width(j->rt), np = pj->np;
	int64_t nb = (pj->ow + DW_UNROLL * DW_LANES - 1) / (DW_UNROLL * DW_LANES) * DW_UNROLL;
	size_t fl = (size_t)(pj->ih * pj->width + DW_LANES);
	size_t bytes = (size_t)(nb * np) * DW_LANES * 4 + fl * sizeof(float);
	uint32_t *mask = hloi_malloc(bytes);
	if (!mask) {
		/* the lines of these planes instead */
		dw_lines((void *)j, lo * pj->oh, hi * pj->oh);
		return;
	}
	float *buf = (float *)(mask + nb * np * DW_LANES);
	memset(buf, 0, fl * sizeof(float));
	for (int64_t bi = 0; bi < nb; bi++)
		for (int p = 0; p < np; p++) {
			/* lane l of block bi reads input column c0 + l */
			int64_t c0 = bi * DW_LANES + pj->pos[p].kc * pj->dc - pj->pc;
			for (int l = 0; l < DW_LANES; l++)
				mask[(bi * np + p) * DW_LANES + l] =
					bi * DW_LANES + l < pj->ow && c0 + l >= 0 && c0 + l < pj->iw ? ~0u : 0u;
		}
	int64_t m = g->cout_g, cur = -1;
	for (int64_t p = lo; p < hi; p++) {
		int64_t ob = p / g->cout, feat = p % g->cout;
		int64_t xbase = ob * j->ls[d->input_batch] + feat / m * j->ls[d->input_feature];
		int64_t ybase = ob * j->os[d->output_batch] + feat * j->os[d->output_feature];
		if (xbase != cur) {
			for (int64_t r = 0; r < pj->ih; r++)
				dw_widen(j->rt, buf + r * pj->width + pj->lpad, j->x + (xbase + r * pj->xr) * xw, pj->xc,
					 pj->iw);
			cur = xbase;
		}
		float w[DW_POS];
		for (int q = 0; q < np; q++)
			w[q] = ((const float *)j->w)[pj->pos[q].kk * g->cout + feat];
		for (int64_t o = 0; o < pj->oh; o++)
			dw_plane_row(pj, j->rt, buf, w, mask, o, j->y + (ybase + o * pj->yr) * xw, xw);
	}
	hloi_free(mask);
}

/* The plane kernel when it covers job j: 0 done, 1 not covered. */
static int dw_plane_conv(engine *e, const dw_job *j)
{
	const conv_geom *g = j->g;
	const conv_dims *d = g->d;
	int a = j->inner;
	if (a < 0 || g->ns > 2 || j->rt == ET_F64 || g->w[a].stride != 1)
		return 1;
	dw_plane_job pj;
	memset(&pj, 0, sizeof pj);
	pj.lines = j;
	pj.rows = g->ns == 2;
	int r = 1 - a;
	pj.iw = g->isz[a];
	pj.ow = g->osz[a];
	pj.xc = j->ls[d->input_spatial[a]];
	pj.yc = j->os[d->output_spatial[a]];
	pj.pc = g->w[a].pad_lo;
	pj.dc = g->w[a].rhs_dilate;
	pj.ih = pj.oh = 1;
	if (pj.rows) {
		pj.ih = g->isz[r];
		pj.oh = g->osz[r];
		pj.xr = j->ls[d->input_spatial[r]];
		pj.yr = j->os[d->output_spatial[r]];
		pj.sr = g->w[r].stride;
		pj.pr = g->w[r].pad_lo;
		pj.dr = g->w[r].rhs_dilate;
	}
	/* lanes read columns -pc .. ob - 1 + (kc - 1) * dc - pc, ob the output
	 * columns rounded up to whole groups of blocks */
	int64_t kc = g->ksz[a], ob = (pj.ow + DW_UNROLL * DW_LANES - 1) / (DW_UNROLL * DW_LANES) * DW_UNROLL * DW_LANES;
	int64_t hi = ob + (kc - 1) * pj.dc - pj.pc;
	pj.lpad = pj.pc > 0 ? pj.pc : 0;
	pj.width = pj.lpad + (hi > pj.iw ? hi : pj.iw);
	if (pj.ih * pj.width > (1 << 20))
		return 1;
	dw_pos pos[DW_POS];
	if (g->W > DW_POS)
		return 1;
	int64_t k[HLOI_MAX_RANK] = { 0 };
	int np = 0;
	do {
		int64_t kk = 0;
		for (int i = 0; i < g->ns; i++)
			kk = kk * g->ksz[i] + (g->w[i].reversal ? g->ksz[i] - 1 - k[i] : k[i]);
		pos[np].kc = k[a];
		pos[np].kr = pj.rows ? k[r] : 0;
		pos[np++].kk = kk;
	} while (index_next(g->ns, g->ksz, k));
	pj.np = np;
	pj.pos = pos;
	int64_t planes = g->nout * g->cout, work = pj.oh * pj.ow * g->W;
	int64_t chunk = work > 0 ? 65536 / work : 1;
	contract_parallel(e->threads, planes, chunk < 1 ? 1 : chunk, dw_planes, (void *)&pj);
	return 0;
}
#endif

/* The depthwise kernel when it covers the convolution: 0 done, 1 not
 * covered, -1 no room for the packed kernel. */
static int depthwise_conv(engine *e, const conv_geom *g, hloi_literal *out, const hloi_literal *lhs,
			  const hloi_literal *rhs)
{
	etype rt = out->shape.type;
	if (g->bgc != 1 || g->fgc != g->cin || g->cin_g != 1 || g->cin < 1 || lhs->shape.type != rt ||
	    rhs->shape.type != rt || g->W < 1 || (rt != ET_F32 && rt != ET_F64 && rt != ET_BF16 && rt != ET_F16))
		return 1;
	for (int i = 0; i < g->ns; i++)
		if (g->w[i].lhs_dilate != 1 || g->w[i].stride < 1)
			return 1;
	dw_job j;
	memset(&j, 0, sizeof j);
	j.g = g;
	j.rt = rt;
	index_strides(&lhs->shape, j.ls);
	index_strides(&out->shape, j.os);
	/* the inner axis: the features when they are the result's or the
	 * input's innermost (and one feature per channel), else the spatial
	 * dim with the smallest result stride */
	j.inner = -1;
	int64_t fo = j.os[g->d->output_feature];
	if (g->ns > 0) {
		int a = 0;
		for (int i = 1; i < g->ns; i++)
			if (j.os[g->d->output_spatial[i]] < j.os[g->d->output_spatial[a]])
				a = i;
		if (g->cout_g != 1 || (fo != 1 && j.ls[g->d->input_feature] != 1 && j.os[g->d->output_spatial[a]] < fo))
			j.inner = a;
	} else if (g->cout_g != 1) {
		return 1;
	}
	j.len = j.inner < 0 ? g->cout : g->osz[j.inner];
	etype at = rt == ET_F64 ? ET_F64 : ET_F32;
	hloi_literal *wk = contract_scratch(e, at, g->W * g->cout);
	if (!wk)
		return -1;
	/* [window position][output feature], reversal applied when used */
	int64_t ks[HLOI_MAX_RANK], k[HLOI_MAX_RANK] = { 0 }, kl = 0;
	index_strides(&rhs->shape, ks);
	int aw = etype_byte_width(at), kw = etype_byte_width(rt);
	do {
		int64_t off = 0;
		for (int i = 0; i < g->ns; i++)
			off += k[i] * ks[g->d->kernel_spatial[i]];
		for (int64_t c = 0; c < g->cout; c++)
			contract_convert(at, (char *)wk->data + (kl * g->cout + c) * aw, rt, rt,
					 (const char *)rhs->data + (off + c * ks[g->d->kernel_output_feature]) * kw);
		kl++;
	} while (index_next(g->ns, g->ksz, k));
	j.x = lhs->data;
	j.y = out->data;
	j.w = wk->data;
	int64_t lines = g->nout * (j.inner < 0 ? g->S : g->S / g->osz[j.inner] * g->cout);
	int64_t work = j.len * g->W, chunk = work > 0 ? 65536 / work : 1;
#if defined(__GNUC__)
	if (dw_plane_conv(e, &j) != 0)
#endif
		contract_parallel(e->threads, lines, chunk < 1 ? 1 : chunk, dw_lines, &j);
	value_drop(e, wk);
	return 0;
}

/* --- a depthwise weight gradient: a direct kernel ------------------------------------ */

/* The gradient of a depthwise convolution's weights, as XLA writes it: a
 * batch group per output feature (batch_group_count = output features,
 * one output feature per group, one result batch), so that result
 * feature c at output position o is the sum over the input features f
 * (the model's batch) and the window positions k (the model's output
 * positions) of lhs[c][f][pos(o, k)] * rhs[f][c][k]. The window is large
 * (the model's spatial size) and the output positions few (the model's
 * kernel): im2col would copy the input once per output position. Here
 * each thread takes groups; for each input feature the group's plane of
 * lhs and of rhs are read once, from cache, for all output positions,
 * each sum a dot product along the innermost spatial dim in eight f32
 * lanes; when the groups are innermost in both operands (NHWC), sixteen
 * groups side by side in the lanes instead. f32 only; the sums take another order than the reference's and
 * agree within rounding, as BLAS's do. */
typedef struct wg_job {
	const conv_geom *g;
	const float *x, *k;
	float *y;
	int64_t ls[HLOI_MAX_RANK], ks[HLOI_MAX_RANK], os[HLOI_MAX_RANK];
	int64_t xb;  /* lhs elements between batch groups */
} wg_job;

/* Along spatial dim i at output position o: the input position of window
 * position 0 (*base) and the window positions [*k0, *k1) whose input
 * position base + k * rhs_dilate is inside the input. */
static void wg_range(const conv_geom *g, int i, int64_t o, int64_t *base, int64_t *k0, int64_t *k1)
{
	const window_dim *wd = &g->w[i];
	int64_t b = o * wd->stride - wd->pad_lo, rd = wd->rhs_dilate;
	*base = b;
	*k0 = b >= 0 ? 0 : (-b + rd - 1) / rd;
	*k1 = b >= g->isz[i] ? 0 : (g->isz[i] - b + rd - 1) / rd;
	if (*k1 > g->ksz[i])
		*k1 = g->ksz[i];
}

/* sum over i < n of x[i * xs] * w[i] (w contiguous when ws == 1) */
static inline float wg_dot(const float *x, int64_t xs, const float *w, int64_t ws, int64_t n)
{
	float l[8] = { 0 };
	int64_t i = 0;
	if (xs == 1 && ws == 1)
		for (; i + 8 <= n; i += 8)
			for (int j = 0; j < 8; j++)
				l[j] += x[i + j] * w[i + j];
	float s = 0;
	for (; i < n; i++)
		s += x[i * xs] * w[i * ws];
	return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7])) + s;
}

/* The sum over the window of spatial dims [i, ns) of output position o,
 * lhs at x and rhs at w (offsets of the dims before i applied). */
static float wg_window(const wg_job *j, int i, const int64_t *o, const float *x, const float *w)
{
	const conv_geom *g = j->g;
	const window_dim *wd = &g->w[i];
	int64_t xs = j->ls[g->d->input_spatial[i]], ws = j->ks[g->d->kernel_spatial[i]];
	int64_t base, rd = wd->rhs_dilate, k0, k1;
	wg_range(g, i, o[i], &base, &k0, &k1);
	if (k0 >= k1)
		return 0;
	const float *xp = x + (base + k0 * rd) * xs, *wp = w + k0 * ws;
	if (i == g->ns - 1)
		return wg_dot(xp, rd * xs, wp, ws, k1 - k0);
	float s = 0;
	for (int64_t k = k0; k < k1; k++)
		s += wg_window(j, i + 1, o, xp + (k - k0) * rd * xs, wp + (k - k0) * ws);
	return s;
}

static void wg_groups(void *arg, int64_t lo, int64_t hi)
{
	const wg_job *j = arg;
	const conv_geom *g = j->g;
	const conv_dims *d = g->d;
	float acc[64];
	for (int64_t c = lo; c < hi; c++) {
		for (int64_t o = 0; o < g->S; o++)
			acc[o] = 0;
		for (int64_t f = 0; f < g->cin_g; f++) {
			const float *x = j->x + c * j->xb + f * j->ls[d->input_feature];
			const float *w = j->k + f * j->ks[d->kernel_input_feature] + c * j->ks[d->kernel_output_feature];
			int64_t oi[HLOI_MAX_RANK] = { 0 };
			for (int64_t o = 0; o < g->S; o++) {
				acc[o] += g->ns ? wg_window(j, 0, oi, x, w) : x[0] * w[0];
				index_next(g->ns, g->osz, oi);
			}
		}
		int64_t oi[HLOI_MAX_RANK] = { 0 };
		for (int64_t o = 0; o < g->S; o++) {
			int64_t off = c * j->os[d->output_feature];
			for (int i = 0; i < g->ns; i++)
				off += oi[i] * j->os[d->output_spatial[i]];
			j->y[off] = acc[o];
			index_next(g->ns, g->osz, oi);
		}
	}
}

/* Channels innermost in both operands (NHWC): lanes of WG_LANES groups
 * side by side. acc[c] += the sum over the window dims [i, ns) of output
 * position o of x[... + c] * w[... + c], c < nc. */
#define WG_LANES 16
static void wg_lanes(const wg_job *j, int i, const int64_t *o, const float *x, const float *w, float *acc, int nc)
{
	const conv_geom *g = j->g;
	const window_dim *wd = &g->w[i];
	int64_t xs = j->ls[g->d->input_spatial[i]], ws = j->ks[g->d->kernel_spatial[i]];
	int64_t base, rd = wd->rhs_dilate, k0, k1;
	wg_range(g, i, o[i], &base, &k0, &k1);
	for (int64_t k = k0; k < k1; k++) {
		const float *xp = x + (base + k * rd) * xs, *wp = w + k * ws;
		if (i < g->ns - 1) {
			wg_lanes(j, i + 1, o, xp, wp, acc, nc);
		} else if (nc == WG_LANES) {
			for (int c = 0; c < WG_LANES; c++)
				acc[c] += xp[c] * wp[c];
		} else {
			for (int c = 0; c < nc; c++)
				acc[c] += xp[c] * wp[c];
		}
	}
}

/* Lanes [lo, hi) of WG_LANES groups each. */
static void wg_lane_groups(void *arg, int64_t lo, int64_t hi)
{
	const wg_job *j = arg;
	const conv_geom *g = j->g;
	const conv_dims *d = g->d;
	float acc[64][WG_LANES];
	for (int64_t l = lo; l < hi; l++) {
		int64_t c0 = l * WG_LANES;
		int nc = g->bgc - c0 < WG_LANES ? (int)(g->bgc - c0) : WG_LANES;
		memset(acc, 0, sizeof acc);
		for (int64_t f = 0; f < g->cin_g; f++) {
			const float *x = j->x + c0 + f * j->ls[d->input_feature];
			const float *w = j->k + c0 + f * j->ks[d->kernel_input_feature];
			int64_t oi[HLOI_MAX_RANK] = { 0 };
			for (int64_t o = 0; o < g->S; o++) {
				wg_lanes(j, 0, oi, x, w, acc[o], nc);
				index_next(g->ns, g->osz, oi);
			}
		}
		int64_t oi[HLOI_MAX_RANK] = { 0 };
		for (int64_t o = 0; o < g->S; o++) {
			int64_t off = 0;
			for (int i = 0; i < g->ns; i++)
				off += oi[i] * j->os[d->output_spatial[i]];
			for (int c = 0; c < nc; c++)
				j->y[off + (c0 + c) * j->os[d->output_feature]] = acc[o][c];
			index_next(g->ns, g->osz, oi);
		}
	}
}

/* 0 done, 1 not covered. */
static int depthwise_weight_grad(engine *e, const conv_geom *g, hloi_literal *out, const hloi_literal *lhs,
				 const hloi_literal *rhs)
{
	if (g->bgc < 2 || g->fgc != 1 || g->cout_g != 1 || g->nout != 1 || g->S > 64 || g->cin_g < 1 ||
	    out->shape.type != ET_F32 || lhs->shape.type != ET_F32 || rhs->shape.type != ET_F32)
		return 1;
	for (int i = 0; i < g->ns; i++)
		if (g->w[i].lhs_dilate != 1 || g->w[i].reversal || g->w[i].stride < 1 || g->w[i].rhs_dilate < 1)
			return 1;
	wg_job j;
	memset(&j, 0, sizeof j);
	j.g = g;
	j.x = lhs->data;
	j.k = rhs->data;
	j.y = out->data;
	index_strides(&lhs->shape, j.ls);
	index_strides(&rhs->shape, j.ks);
	index_strides(&out->shape, j.os);
	j.xb = (g->batch / g->bgc) * j.ls[g->d->input_batch];
	if (g->ns > 0 && j.xb == 1 && j.ks[g->d->kernel_output_feature] == 1)
		contract_parallel(e->threads, (g->bgc + WG_LANES - 1) / WG_LANES, 1, wg_lane_groups, &j);
	else
		contract_parallel(e->threads, g->bgc, 1, wg_groups, &j);
	return 0;
}

/* --- pointwise: a matrix product in place ---------------------------------------------- */

/* A 1x1 convolution (every window size 1, stride 1, no padding or lhs
 * dilation, no batch groups) is a matrix product per feature group:
 * result[position][o] = sum over c of lhs[position][c] kernel[c][o], the
 * positions the spatial dims (with the batch when its stride continues
 * theirs) read in place in both arrays, NCHW or NHWC alike: no im2col, no
 * scatter. BLAS types with lhs, kernel and result of one type. 0 done,
 * nonzero not done. */
static int pointwise_gemm(engine *e, const conv_geom *g, hloi_literal *out, const hloi_literal *lhs,
			  const hloi_literal *rhs)
{
	const conv_dims *d = g->d;
	etype t = out->shape.type;
	if (g->bgc != 1 || lhs->shape.type != t || rhs->shape.type != t || g->cin_g < 1 || !contract_blas_type(t))
		return 1;
	for (int i = 0; i < g->ns; i++) {
		const window_dim *w = &g->w[i];
		if (g->ksz[i] != 1 || w->stride != 1 || w->pad_lo != 0 || w->pad_hi != 0 || w->lhs_dilate != 1)
			return 1;
	}
	int64_t ls[HLOI_MAX_RANK], ks[HLOI_MAX_RANK], os[HLOI_MAX_RANK];
	index_strides(&lhs->shape, ls);
	index_strides(&rhs->shape, ks);
	index_strides(&out->shape, os);
	/* the positions as one axis of stride (ps, qs) in (lhs, out) when the
	 * spatial dims continue each other, innermost last */
	int64_t P = 1, ps = 1, qs = 1;
	if (g->ns > 0) {
		ps = ls[d->input_spatial[g->ns - 1]];
		qs = os[d->output_spatial[g->ns - 1]];
		P = g->osz[g->ns - 1];
		for (int i = g->ns - 2; i >= 0; i--) {
			if (ls[d->input_spatial[i]] != ps * P || os[d->output_spatial[i]] != qs * P)
				return 1;
			P *= g->osz[i];
		}
	}
	int64_t nb = g->nout;  /* products per group: one per batch, or one in all */
	if (g->ns == 0 || (ls[d->input_batch] == ps * P && os[d->output_batch] == qs * P)) {
		if (g->ns == 0) {
			ps = ls[d->input_batch];
			qs = os[d->output_batch];
		}
		P *= g->nout;
		nb = 1;
	}
	int w = etype_byte_width(t);
	int64_t am = ps, ak = ls[d->input_feature], bk = ks[d->kernel_input_feature], bn = ks[d->kernel_output_feature];
	int64_t cm = qs, cn = os[d->output_feature];
	if (!contract_blas_fits(P, g->cout_g, g->cin_g, am, ak, bk, bn, cm, cn))
		return 1;
	for (int64_t grp = 0; grp < g->G; grp++)
		for (int64_t b = 0; b < nb; b++) {
			const char *A = (const char *)lhs->data + (b * ls[d->input_batch] + grp * g->cin_g * ak) * w;
			const char *B = (const char *)rhs->data + grp * g->cout_g * bn * w;
			char *C = (char *)out->data + (b * os[d->output_batch] + grp * g->cout_g * cn) * w;
			if (contract_blas(t, P, g->cout_g, g->cin_g, A, am, ak, B, bk, bn, C, cm, cn, e->threads))
				return 1;
		}
	return 0;
}

/* --- a weight gradient of one output position: products in place -------------------- */

/* A convolution whose window covers its whole input (no padding, stride
 * or dilation, so one output position) and has no batch groups: the
 * weight gradient of a 1x1 convolution as XLA writes it (fb01_io01->01bf,
 * the window the model's activation). It is a sum over the input features
 * (the model's batch) of matrix products: result[b][o] = sum over f of
 * sum over k of lhs[b][f][k] * kernel[f][o][k], k the window positions
 * read in place in both (the spatial dims continuing each other). One
 * BLAS product per input feature and group, added up in feature order:
 * im2col would copy the whole input (and lay its features out first).
 * BLAS types with lhs, kernel and result of one type. 0 done, nonzero not
 * done. */
static int whole_window_gemm(engine *e, const conv_geom *g, hloi_literal *out, const hloi_literal *lhs,
			     const hloi_literal *rhs)
{
	const conv_dims *d = g->d;
	etype t = out->shape.type;
	if (g->bgc != 1 || g->ns < 1 || g->S != 1 || lhs->shape.type != t || rhs->shape.type != t || g->cin_g < 1 ||
	    (t != ET_F32 && t != ET_F64) || !contract_blas_type(t))
		return 1;
	for (int i = 0; i < g->ns; i++) {
		const window_dim *w = &g->w[i];
		if (g->ksz[i] != g->isz[i] || w->pad_lo != 0 || w->pad_hi != 0 || w->lhs_dilate != 1 ||
		    w->rhs_dilate != 1 || w->reversal)
			return 1;
	}
	int64_t ls[HLOI_MAX_RANK], ks[HLOI_MAX_RANK], os[HLOI_MAX_RANK];
	index_strides(&lhs->shape, ls);
	index_strides(&rhs->shape, ks);
	index_strides(&out->shape, os);
	/* the window positions as one axis in both operands */
	int last = g->ns - 1;
	int64_t ak = ls[d->input_spatial[last]], bk = ks[d->kernel_spatial[last]], K = g->ksz[last];
	for (int i = last - 1; i >= 0; i--) {
		if (ls[d->input_spatial[i]] != ak * K || ks[d->kernel_spatial[i]] != bk * K)
			return 1;
		K *= g->ksz[i];
	}
	int64_t M = g->nout, N = g->cout_g, am = ls[d->input_batch], bn = ks[d->kernel_output_feature];
	/* few window positions against many features: a product per feature
	 * is too small (im2col's one product is better) */
	if (K < 16 || K < g->cin_g / 8 || !contract_blas_fits(M, N, K, am, ak, bk, bn, N, 1))
		return 1;
	hloi_literal *buf = contract_scratch(e, t, 2 * M * N);
	if (!buf)
		return 1;
	int w = etype_byte_width(t), err = 0;
	char *prod = buf->data, *acc = prod + M * N * w;
	for (int64_t grp = 0; grp < g->G && !err; grp++) {
		for (int64_t f = 0; f < g->cin_g && !err; f++) {
			const char *A = (const char *)lhs->data + (grp * g->cin_g + f) * ls[d->input_feature] * w;
			const char *B = (const char *)rhs->data +
					(f * ks[d->kernel_input_feature] + grp * g->cout_g * bn) * w;
			err = contract_blas(t, M, N, K, A, am, ak, B, bk, bn, f ? prod : acc, N, 1, e->threads);
			if (err || f == 0)
				continue;
			if (t == ET_F32)
				for (int64_t i = 0; i < M * N; i++)
					((float *)acc)[i] += ((const float *)prod)[i];
			else
				for (int64_t i = 0; i < M * N; i++)
					((double *)acc)[i] += ((const double *)prod)[i];
		}
		for (int64_t m = 0; m < M && !err; m++)
			for (int64_t n = 0; n < N; n++)
				memcpy((char *)out->data +
					       (m * os[d->output_batch] + (grp * N + n) * os[d->output_feature]) * w,
				       acc + (m * N + n) * w, (size_t)w);
	}
	value_drop(e, buf);
	return err;
}

/* --- oneDNN ------------------------------------------------------------------------- */

/* Below this many multiply-adds im2col's product is as fast as oneDNN's
 * primitive is to make (its JIT and dispatch, ~0.1 ms). */
#define CONV_DNNL_MIN_MACS ((int64_t)1 << 21)

/* Runs c through oneDNN, its weights' reorder in engine scratch: 0 done. */
static int dnnl_run(engine *e, const dnnl_conv *c)
{
	dnnl_conv_plan p;
	if (dnnl_conv_prepare(c, &p))
		return 1;
	hloi_literal *wbuf = p.wei_bytes ? contract_scratch(e, ET_F32, (int64_t)(p.wei_bytes + 3) / 4) : NULL;
	int err = (p.wei_bytes && !wbuf) || dnnl_conv_run(c, &p, wbuf ? wbuf->data : NULL, e->threads);
	value_drop(e, wbuf);
	dnnl_conv_free(&p);
	return err;
}

/* An f32 convolution through oneDNN (eval/lib/dnnl.h) when oneDNN covers it:
 * feature groups, padding (a negative one crops the input), strides, rhs
 * dilation, any layouts (oneDNN reads strided arrays). Not lhs dilation,
 * batch groups or reversal. 0 done, nonzero not done. oneDNN sums in its
 * own order, as BLAS does. */
static int dnnl_convolution(engine *e, const conv_geom *g, hloi_literal *out, const hloi_literal *lhs,
			    const hloi_literal *rhs)
{
	const conv_dims *d = g->d;
	int64_t macs;
	if (out->shape.type != ET_F32 || lhs->shape.type != ET_F32 || rhs->shape.type != ET_F32 || g->bgc != 1 ||
	    g->ns < 1 || g->ns > DNNL_CONV_MAX_SPATIAL || g->W < 1 ||
	    checked_mul_i64(g->nout * g->S, g->cout * g->cin_g * g->W, &macs) ||
	    (macs < CONV_DNNL_MIN_MACS && !dnnl_every_size()))
		return 1;
	dnnl_conv c;
	memset(&c, 0, sizeof c);
	int64_t ls[HLOI_MAX_RANK], ks[HLOI_MAX_RANK], os[HLOI_MAX_RANK];
	index_strides(&lhs->shape, ls);
	index_strides(&rhs->shape, ks);
	index_strides(&out->shape, os);
	c.ns = g->ns;
	c.n = g->batch;
	c.c = g->cin;
	c.o = g->cout;
	c.g = g->fgc;
	const float *src = lhs->data;
	c.src_s[0] = ls[d->input_batch];
	c.src_s[1] = ls[d->input_feature];
	c.dst_s[0] = os[d->output_batch];
	c.dst_s[1] = os[d->output_feature];
	c.wei_s[0] = g->cout_g * ks[d->kernel_output_feature];
	c.wei_s[1] = ks[d->kernel_output_feature];
	c.wei_s[2] = ks[d->kernel_input_feature];
	for (int i = 0; i < g->ns; i++) {
		const window_dim *w = &g->w[i];
		if (w->lhs_dilate != 1 || w->reversal || w->stride < 1 || w->rhs_dilate < 1)
			return 1;
		int64_t sp = ls[d->input_spatial[i]], isz = g->isz[i], lo = w->pad_lo, hi = w->pad_hi;
		if (lo < 0) {  /* the input from -lo on */
			src += -lo * sp;
			isz += lo;
			lo = 0;
		}
		if (hi < 0) {
			isz += hi;
			hi = 0;
		}
		if (isz < 1)
			return 1;
		c.isz[i] = isz;
		c.ksz[i] = g->ksz[i];
		c.osz[i] = g->osz[i];
		c.stride[i] = w->stride;
		c.dilate[i] = w->rhs_dilate;
		c.pad_lo[i] = lo;
		c.pad_hi[i] = hi;
		c.src_s[2 + i] = sp;
		c.dst_s[2 + i] = os[d->output_spatial[i]];
		c.wei_s[3 + i] = ks[d->kernel_spatial[i]];
	}
	/* an infinity or NaN in the kernel: oneDNN may multiply it by a
	 * padding zero, which the reference never does */
	int64_t kn;
	if (shape_element_count(&rhs->shape, &kn) || any_nonfinite(ET_F32, rhs->data, kn))
		return 1;
	c.src = src;
	c.wei = rhs->data;
	c.dst = out->data;
	return dnnl_run(e, &c);
}

/* An f32 convolution with lhs dilation (XLA's input gradient) through
 * oneDNN: in a dim dilated by d (stride 1, no rhs dilation) the results
 * whose position is r mod d take the kernel taps k = k0 + j d only (k0
 * from r and the padding), each reading a plain input position; so the
 * convolution splits into prod(d) phases, each an ordinary convolution
 * of a sub-kernel (packed, reversal applied) over the undilated input,
 * written to its own results (a dense buffer copied into every d-th
 * result). No product with a dilation hole is computed. 0 done, nonzero
 * not done. */
static int dnnl_lhs_dilated(engine *e, const conv_geom *g, hloi_literal *out, const hloi_literal *lhs,
			    const hloi_literal *rhs)
{
	const conv_dims *d = g->d;
	int64_t nph = 1, macs, kn;
	if (out->shape.type != ET_F32 || lhs->shape.type != ET_F32 || rhs->shape.type != ET_F32 || g->bgc != 1 ||
	    g->ns < 1 || g->ns > DNNL_CONV_MAX_SPATIAL || g->W < 1)
		return 1;
	for (int i = 0; i < g->ns; i++) {
		const window_dim *w = &g->w[i];
		if (w->lhs_dilate > 1 && (w->stride != 1 || w->rhs_dilate != 1))
			return 1;
		if (w->lhs_dilate < 1 || w->stride < 1 || w->rhs_dilate < 1)
			return 1;
		nph *= w->lhs_dilate;
	}
	if (nph == 1 || checked_mul_i64(g->nout * g->S, g->cout * g->cin_g * g->W, &macs) ||
	    (macs / nph < CONV_DNNL_MIN_MACS && !dnnl_every_size()) || shape_element_count(&rhs->shape, &kn) ||
	    any_nonfinite(ET_F32, rhs->data, kn))
		return 1;
	int64_t ls[HLOI_MAX_RANK], ks[HLOI_MAX_RANK], os[HLOI_MAX_RANK];
	index_strides(&lhs->shape, ls);
	index_strides(&rhs->shape, ks);
	index_strides(&out->shape, os);
	/* out's dims from major to minor: a phase's buffer is dense in that
	 * order, and the copy into out runs along out's minor dim */
	int rank = out->shape.rank, order[HLOI_MAX_RANK];
	for (int i = 0; i < rank; i++)
		order[i] = i;
	for (int i = 1; i < rank; i++)
		for (int k = i; k > 0 && os[order[k]] > os[order[k - 1]]; k--) {
			int t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	int64_t ph_len = g->nout * g->cout, ker_len = g->cout * g->cin_g;
	for (int i = 0; i < g->ns; i++) {
		int64_t ld = g->w[i].lhs_dilate;
		ph_len *= (g->osz[i] + ld - 1) / ld;
		ker_len *= (g->ksz[i] + ld - 1) / ld;
	}
	hloi_literal *ph = contract_scratch(e, ET_F32, ph_len);
	hloi_literal *ker = ph ? contract_scratch(e, ET_F32, ker_len) : NULL;
	int err = !ker;
	for (int64_t phase = 0; phase < nph && !err; phase++) {
		int64_t r[DNNL_CONV_MAX_SPATIAL], k0[DNNL_CONV_MAX_SPATIAL], kj[DNNL_CONV_MAX_SPATIAL];
		int64_t nq[DNNL_CONV_MAX_SPATIAL], q = phase, ktaps = 1, count = g->nout * g->cout;
		dnnl_conv c;
		memset(&c, 0, sizeof c);
		c.ns = g->ns;
		c.n = g->batch;
		c.c = g->cin;
		c.o = g->cout;
		c.g = g->fgc;
		const float *src = lhs->data;
		c.src_s[0] = ls[d->input_batch];
		c.src_s[1] = ls[d->input_feature];
		for (int i = g->ns - 1; i >= 0; i--) {
			const window_dim *w = &g->w[i];
			int64_t ld = w->lhs_dilate, plo = w->pad_lo, phi = w->pad_hi, isz = g->isz[i];
			r[i] = q % ld;
			q /= ld;
			if (ld == 1) {
				k0[i] = 0;
				kj[i] = g->ksz[i];
				nq[i] = g->osz[i];
				c.stride[i] = w->stride;
				c.dilate[i] = w->rhs_dilate;
			} else {
				/* taps k with r - pad_lo + k = 0 mod ld; the first reads input (r - pad_lo + k0) / ld */
				k0[i] = ((plo - r[i]) % ld + ld) % ld;
				kj[i] = k0[i] < g->ksz[i] ? (g->ksz[i] - k0[i] + ld - 1) / ld : 0;
				nq[i] = r[i] < g->osz[i] ? (g->osz[i] - r[i] + ld - 1) / ld : 0;
				plo = -((r[i] - plo + k0[i]) / ld);
				phi = nq[i] - 1 + kj[i] - isz - plo;
				c.stride[i] = 1;
				c.dilate[i] = 1;
			}
			int64_t sp = ls[d->input_spatial[i]];
			if (plo < 0) {
				src += -plo * sp;
				isz += plo;
				plo = 0;
			}
			if (phi < 0) {
				isz += phi;
				phi = 0;
			}
			c.isz[i] = isz;
			c.ksz[i] = kj[i];
			c.osz[i] = nq[i];
			c.pad_lo[i] = plo;
			c.pad_hi[i] = phi;
			c.src_s[2 + i] = sp;
			ktaps *= kj[i];
			count *= nq[i];
		}
		if (count == 0)
			continue;
		/* the phase's results in out: from r, every ld-th */
		int64_t dims[HLOI_MAX_RANK], dst_s[HLOI_MAX_RANK], buf_s[HLOI_MAX_RANK], pos[HLOI_MAX_RANK];
		int64_t base = 0;
		dims[d->output_batch] = g->nout;
		dims[d->output_feature] = g->cout;
		for (int i = 0; i < rank; i++)
			dst_s[i] = os[i];
		for (int i = 0; i < g->ns; i++) {
			dims[d->output_spatial[i]] = nq[i];
			dst_s[d->output_spatial[i]] = os[d->output_spatial[i]] * g->w[i].lhs_dilate;
			base += r[i] * os[d->output_spatial[i]];
		}
		int64_t st = 1;
		for (int k = rank - 1; k >= 0; k--) {
			buf_s[order[k]] = st;
			st *= dims[order[k]];
		}
		float *dst = (float *)out->data + base;
		int bad = 0;
		for (int i = 0; i < g->ns; i++)
			bad |= c.isz[i] < 1;
		if (ktaps == 0 || bad) {
			/* no tap reaches the input: sums of nothing, +0 */
			static const float zero = 0;
			int64_t zs[HLOI_MAX_RANK] = { 0 }, zd[HLOI_MAX_RANK];
			for (int k = 0; k < rank; k++) {
				pos[k] = dims[order[k]];
				zd[k] = dst_s[order[k]];
			}
			contract_copy(dst, ET_F32, zd, &zero, ET_F32, zs, ET_F32, rank, pos);
			continue;
		}
		/* the sub-kernel, dense [O][cin_g][kj...] */
		float *kp = (float *)ker->data;
		int64_t kidx[HLOI_MAX_RANK];
		for (int64_t o = 0; o < g->cout; o++)
			for (int64_t f = 0; f < g->cin_g; f++) {
				for (int i = 0; i < g->ns; i++)
					kidx[i] = 0;
				do {
					int64_t off = o * ks[d->kernel_output_feature] + f * ks[d->kernel_input_feature];
					for (int i = 0; i < g->ns; i++) {
						int64_t k = k0[i] + kidx[i] * g->w[i].lhs_dilate;
						if (g->w[i].reversal)
							k = g->ksz[i] - 1 - k;
						off += k * ks[d->kernel_spatial[i]];
					}
					*kp++ = ((const float *)rhs->data)[off];
				} while (index_next(g->ns, kj, kidx));
			}
		int64_t kst = 1;
		for (int i = g->ns - 1; i >= 0; i--) {
			c.wei_s[3 + i] = kst;
			kst *= kj[i];
		}
		c.wei_s[2] = kst;
		c.wei_s[1] = kst * g->cin_g;
		c.wei_s[0] = kst * g->cin_g * g->cout_g;
		c.dst_s[0] = buf_s[d->output_batch];
		c.dst_s[1] = buf_s[d->output_feature];
		for (int i = 0; i < g->ns; i++)
			c.dst_s[2 + i] = buf_s[d->output_spatial[i]];
		c.src = src;
		c.wei = ker->data;
		c.dst = ph->data;
		err = dnnl_run(e, &c);
		if (!err) {
			int64_t pd[HLOI_MAX_RANK], ds[HLOI_MAX_RANK], ss[HLOI_MAX_RANK];
			for (int k = 0; k < rank; k++) {
				int a = order[k];
				pd[k] = dims[a];
				ds[k] = dst_s[a];
				ss[k] = buf_s[a];
			}
			contract_copy(dst, ET_F32, ds, ph->data, ET_F32, ss, ET_F32, rank, pd);
		}
	}
	value_drop(e, ker);
	value_drop(e, ph);
	return err;
}

/* Nonzero when it does not cover the case (the reference then runs). */
static int fast_conv(engine *e, const instr *in, hloi_literal *out, const hloi_literal *lhs, const hloi_literal *rhs)
{
	int64_t n;
	if (shape_element_count(&out->shape, &n))
		return 1;
	if (n == 0)
		return 0;
	conv_geom g;
	conv_geometry(in, &lhs->shape, &rhs->shape, &out->shape, &g);
	etype rt = out->shape.type, at = contract_acc_type(rt);
	int blas = contract_blas_type(rt);
	int64_t cols = g.W * g.cin_g, rows = g.nout * g.S, kcount, rc, pcount;
	int aw = etype_byte_width(at);
	if (cols == 0 || checked_mul_i64(cols, g.cout_g, &kcount))
		return 1;  /* empty sums: the reference writes the zeros */
	rc = CONV_CHUNK_BYTES / (cols * aw);
	rc = rc < 1 ? 1 : rc > rows ? rows : rc;
	if (checked_mul_i64(rc, cols, &pcount))
		return 1;
	conv_job j;
	memset(&j, 0, sizeof j);
	j.g = &g;
	j.rt = rt;
	j.at = at;
	j.lt = lhs->shape.type;
	j.lhs = lhs->data;
	j.out = out;
	index_strides(&lhs->shape, j.ls);
	index_strides(&out->shape, j.os);
	int dw = depthwise_conv(e, &g, out, lhs, rhs);
	if (dw <= 0)
		return -dw;
	if (depthwise_weight_grad(e, &g, out, lhs, rhs) == 0 || whole_window_gemm(e, &g, out, lhs, rhs) == 0 ||
	    pointwise_gemm(e, &g, out, lhs, rhs) == 0 ||
	    dnnl_convolution(e, &g, out, lhs, rhs) == 0 ||
	    dnnl_lhs_dilated(e, &g, out, lhs, rhs) == 0)
		return 0;
	/* features far apart in the input (a weight gradient's lhs, whose
	 * features are the batch; NCHW): one copy with the features innermost
	 * first, so that im2col copies a group's features with one memcpy
	 * instead of one element at a time */
	hloi_literal *relaid = NULL;
	int64_t lcount;
	if (j.ls[g.d->input_feature] != 1 && g.cin_g >= 4 && !shape_element_count(&lhs->shape, &lcount) &&
	    (relaid = contract_scratch(e, j.lt, lcount)) != NULL) {
		int64_t dims[HLOI_MAX_RANK], ds[HLOI_MAX_RANK], ss[HLOI_MAX_RANK], st = 1;
		int64_t ax[HLOI_MAX_RANK];
		int na = 0, rank = lhs->shape.rank;
		ax[na++] = g.d->input_batch;
		for (int i = 0; i < g.ns; i++)
			ax[na++] = g.d->input_spatial[i];
		ax[na++] = g.d->input_feature;
		int64_t nls[HLOI_MAX_RANK];
		for (int k = rank - 1; k >= 0; k--) {
			nls[ax[k]] = st;
			st *= lhs->shape.dims[ax[k]];
		}
		for (int k = 0; k < rank; k++) {
			dims[k] = lhs->shape.dims[ax[k]];
			ds[k] = nls[ax[k]];
			ss[k] = j.ls[ax[k]];
		}
		contract_copy(relaid->data, j.lt, ds, lhs->data, j.lt, ss, j.lt, rank, dims);
		memcpy(j.ls, nls, sizeof nls);
		j.lhs = relaid->data;
	}
	hloi_literal *kmat = contract_scratch(e, at, kcount);
	hloi_literal *patch = kmat ? contract_scratch(e, at, pcount) : NULL;
	hloi_literal *prod = patch && blas ? contract_scratch(e, rt, rc * g.cout_g) : NULL;
	int err = 1;
	if (!patch || (blas && !prod))
		goto done;
	j.patch = patch->data;
	j.prod = prod ? prod->data : NULL;
	for (int64_t grp = 0; grp < g.G; grp++) {
		pack_kernel(&g, rhs, grp, at, rt, kmat->data);
		if (any_nonfinite(at, kmat->data, kcount))
			goto done;
		j.group = grp;
		for (int64_t r0 = 0; r0 < rows; r0 += rc) {
			int64_t nr = rows - r0 < rc ? rows - r0 : rc;
			j.row0 = r0;
			contract_parallel(e->threads, nr, 64, im2col, &j);
			if (blas) {
				if (contract_blas(rt, nr, g.cout_g, cols, j.patch, cols, 1, kmat->data, g.cout_g, 1, prod->data,
						  g.cout_g, 1, e->threads))
					goto done;
				contract_parallel(e->threads, nr, 256, scatter_rows, &j);
			} else if (contract_exact(at, 1, nr, g.cout_g, cols, j.patch, kmat->data, conv_row, &j, e->threads)) {
				goto done;
			}
		}
	}
	err = 0;
done:
	value_drop(e, prod);
	value_drop(e, patch);
	value_drop(e, kmat);
	value_drop(e, relaid);
	return err;
}

static void fill_conv(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	if (!e->fast || fast_conv(e, in, out, ops[0], ops[1]) != 0)
		ref_conv(in, out, ops[0], ops[1]);
}

/* A sparse operand (a (values, metadata) tuple under a side of
 * sparsity_config, or values whose metadata is operand idx) is first
 * expanded into the dense one it stands for (eval/kernels/sparse.c), the same way
 * for both engines; the convolution then runs on the dense operands. An
 * array operand under a side without idx is already dense. */
hloi_status kernel_convolution(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	const attr *spa = instr_attr(in, ATTR_SPARSITY_CONFIG);
	if (!spa || spa->kind != AK_SPARSITY)
		return kernel_array(e, f, in, ops, dest, 0, fill_conv);
	hloi_literal *dense[2] = { NULL, NULL }, *use[2] = { ops[0], ops[1] };
	hloi_status st = HLOI_OK;
	for (int k = 0; k < 2 && st == HLOI_OK; k++) {
		const sparsity_side *sd = &spa->u.sp->side[k];
		if (sd->present && sd->idx >= 0 && sd->idx < in->nops)
			st = eval_sparse_dense(e, in, k, sd, ops[k], ops[sd->idx], &dense[k]);
		else if (sd->present && shape_is_tuple(&ops[k]->shape) && ops[k]->nelems == 2)
			st = eval_sparse_dense(e, in, k, sd, ops[k]->elems[0], ops[k]->elems[1], &dense[k]);
		else
			continue;
		if (st == HLOI_OK)
			use[k] = dense[k];
	}
	if (st == HLOI_OK)
		st = kernel_array(e, f, in, use, dest, 0, fill_conv);
	for (int k = 0; k < 2; k++)
		if (dense[k])
			value_drop(e, dense[k]);
	return st;
}
