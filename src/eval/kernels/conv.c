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
 *
 * A sparse operand (sparsity_config) is expanded into its dense form first
 * (eval/kernels/sparse.c), one expansion for both engines. */
#include <math.h>

#include "core/index.h"
#include "eval/kernels/dot.h"
#include "eval/kernels/sparse.h"
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
				if (same && aw == 4)
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
	int64_t k[HLOI_MAX_RANK] = { 0 };
	do {
		int64_t off = grp * g->cout_g * ks[d->kernel_output_feature];
		for (int i = 0; i < g->ns; i++)
			off += (g->w[i].reversal ? g->ksz[i] - 1 - k[i] : k[i]) * ks[d->kernel_spatial[i]];
		for (int64_t f = 0; f < g->cin_g; f++)
			for (int64_t c = 0; c < g->cout_g; c++) {
				const char *src = (const char *)rhs->data +
						  (off + f * ks[d->kernel_input_feature] + c * ks[d->kernel_output_feature]) * kw;
				contract_convert(at, dst, rt, rhs->shape.type, src);
				dst += aw;
			}
	} while (index_next(g->ns, g->ksz, k));
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
