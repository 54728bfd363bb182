/* Shape rules of the contractions (XLA's shape_inference.cc): dot
 * (InferDotOpShape with ValidateDotDimensionNumbers and
 * CheckDotDimensionConstraints) and convolution (InferConvolveShape with
 * InferWindowOutputShape), plus the precision words both carry (the
 * parser's ParsePrecisionList and ParseAlgorithm). The messages are XLA's;
 * where XLA prints a proto's DebugString, the same fields are printed on
 * one line (its ShortDebugString), and a window is printed as HLO text
 * writes it. */
#include <string.h>
#include <strings.h>

#include "check/check_internal.h"
#include "text/attr_text.h"
#include "util/checked.h"
#include "util/strbuf.h"

/* --- result element type ------------------------------------------------------ */

/* The result type: the written one (XLA's verifier passes it as the
 * preferred element type, which then is the result's whatever the operand
 * types), else the operands' higher-precision type. */
static etype result_type(const instr *in, etype lhs, etype rhs)
{
	return in->has_shape && !shape_is_tuple(in->shape) ? in->shape->type : etype_higher_precision(lhs, rhs);
}

/* --- operand_precision= and algorithm= ------------------------------------------ */

static const char *const precisions[] = { "default", "high", "highest" };
/* PrecisionConfig.Algorithm without ALG_, lower case (AlgorithmToString). */
static const char *const algorithms[] = {
	"unset", "dot_any_f8_any_f8_f32", "dot_any_f8_any_f8_f32_fast_accum", "dot_f16_f16_f16",
	"dot_f16_f16_f32", "dot_bf16_bf16_bf16", "dot_bf16_bf16_f32", "dot_bf16_bf16_f32_x3",
	"dot_bf16_bf16_f32_x6", "dot_tf32_tf32_f32", "dot_tf32_tf32_f32_x3", "dot_f32_f32_f32",
	"dot_f64_f64_f64", "dot_bf16_bf16_f32_x9",
};

static int known_word(const char *w, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(w, names[i]) == 0)
			return 1;
	return 0;
}

/* The words XLA's parser accepts (case-insensitively, as StringToEnum).
 * They are recorded and printed back; they do not change hloi's values. */
static int check_precision(checker *c, const instr *in)
{
	int bad = 0;
	const attr *p = instr_attr(in, ATTR_OPERAND_PRECISION);
	if (p && p->kind == AK_PRECISION)
		for (int i = 0; i < p->u.words.n; i++)
			if (!known_word(p->u.words.v[i], precisions, sizeof precisions / sizeof precisions[0])) {
				ck_error(c, attr_word_loc(p, i), "expects precision but sees: %s, error: Unknown precision",
					 p->u.words.v[i]);
				bad = 1;
			}
	const attr *a = instr_attr(in, ATTR_ALGORITHM);
	if (a && a->kind == AK_WORD && !known_word(a->u.s, algorithms, sizeof algorithms / sizeof algorithms[0])) {
		ck_error(c, a->vat, "expects algorithm but sees: %s, error: Unknown algorithm", a->u.s);
		bad = 1;
	}
	return bad;
}

/* --- dot ---------------------------------------------------------------------- */

static void put_field(strbuf *b, const char *name, const int_list *l)
{
	for (int i = 0; i < l->n; i++)
		sb_printf(b, "%s%s: %lld", b->len ? " " : "", name, (long long)l->v[i]);
}

/* DotDimensionNumbers as XLA's ShortDebugString prints it (field order). */
static void dot_dnums_text(strbuf *b, const instr *in)
{
	put_field(b, "lhs_contracting_dimensions", ck_ints(in, ATTR_LHS_CONTRACTING_DIMS));
	put_field(b, "rhs_contracting_dimensions", ck_ints(in, ATTR_RHS_CONTRACTING_DIMS));
	put_field(b, "lhs_batch_dimensions", ck_ints(in, ATTR_LHS_BATCH_DIMS));
	put_field(b, "rhs_batch_dimensions", ck_ints(in, ATTR_RHS_BATCH_DIMS));
}

static loc ints_loc(checker *c, const instr *in, attr_id id)
{
	const int_list *l = instr_ints(in, id);
	return l ? ck_attr_loc(c, l->at, attr_name(id)) : in->op_at;
}

static int in_range(const int_list *l, int rank)
{
	for (int i = 0; i < l->n; i++)
		if (l->v[i] < 0 || l->v[i] >= rank)
			return 0;
	return 1;
}

/* No dimension twice across the contracting and batch lists of one side. */
static int unique(const int_list *a, const int_list *b)
{
	unsigned seen = 0;
	const int_list *ls[2] = { a, b };
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < ls[k]->n; i++) {
			unsigned bit = 1u << ls[k]->v[i];
			if (seen & bit)
				return 0;
			seen |= bit;
		}
	return 1;
}

/* The checks dot and ragged-dot share (XLA's ValidateDotDimensionNumbers
 * and CheckDotDimensionConstraints; `what` is "dot" or "ragged dot"), and
 * the result dims in XLA's order: batch dims (lhs_batch_dims order), lhs
 * free dims, rhs free dims (ascending) but those in `rhs_skip` (ragged-dot's
 * group dimension), appended to dims[*n]. 0 when fine. */
static int dot_dims(checker *c, instr *in, const char *what, unsigned rhs_skip, int64_t *dims, int *n_io)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	for (int k = 0; k < 2; k++)
		if (shape_is_tuple(in->ops[k].def->result)) {
			ck_error(c, in->ops[k].at, "Expected array argument for %s of %s, but got %s.", k ? "rhs" : "lhs",
				 what, ck_shape(a, in->ops[k].def->result));
			return 1;
		}
	if (check_precision(c, in))
		return 1;
	const shape *lhs = in->ops[0].def->result, *rhs = in->ops[1].def->result;
	const int_list *lc = ck_ints(in, ATTR_LHS_CONTRACTING_DIMS), *rc = ck_ints(in, ATTR_RHS_CONTRACTING_DIMS);
	const int_list *lb = ck_ints(in, ATTR_LHS_BATCH_DIMS), *rb = ck_ints(in, ATTR_RHS_BATCH_DIMS);
	strbuf dn = STRBUF_INIT;
	int err = 1;
	dot_dnums_text(&dn, in);
	if (dn.oom) {
		c->oom = 1;
		goto done;
	}
	if (!in_range(lc, lhs->rank) || !in_range(lb, lhs->rank) || !in_range(rc, rhs->rank) ||
	    !in_range(rb, rhs->rank)) {
		attr_id at = !in_range(lc, lhs->rank)	? ATTR_LHS_CONTRACTING_DIMS
			     : !in_range(lb, lhs->rank) ? ATTR_LHS_BATCH_DIMS
			     : !in_range(rc, rhs->rank) ? ATTR_RHS_CONTRACTING_DIMS
							: ATTR_RHS_BATCH_DIMS;
		ck_error(c, ints_loc(c, in, at), "A dimension number is out of range in Dot: %s. %s %s", sb_str(&dn),
			 ck_shape(a, lhs), ck_shape(b, rhs));
		goto done;
	}
	if (!unique(lc, lb) || !unique(rc, rb)) {
		ck_error(c, ints_loc(c, in, !unique(lc, lb) ? ATTR_LHS_CONTRACTING_DIMS : ATTR_RHS_CONTRACTING_DIMS),
			 "A dimension number is not unique in Dot: %s.", sb_str(&dn));
		goto done;
	}
	const char *why = NULL;
	attr_id wat = ATTR_LHS_CONTRACTING_DIMS;
	if (lc->n != rc->n) {
		why = "Must specify the same number of contracting dimensions for lhs and rhs.";
	} else {
		for (int i = 0; i < lc->n && !why; i++)
			if (!shape_dim_compatible(lhs, (int)lc->v[i], rhs, (int)rc->v[i]))
				why = "Contracting dimension sizes are not compatible.";
	}
	if (!why && lb->n != rb->n) {
		why = "Must the same number of batch dimensions for lhs and rhs.";
		wat = ATTR_LHS_BATCH_DIMS;
	}
	for (int i = 0; i < lb->n && !why; i++)
		if (!shape_dim_compatible(lhs, (int)lb->v[i], rhs, (int)rb->v[i])) {
			why = "Batch dimension sizes are not compatible.";
			wat = ATTR_LHS_BATCH_DIMS;
		}
	if (why) {
		loc at = instr_ints(in, wat) ? ints_loc(c, in, wat) : in->op_at;
		ck_error(c, at, "Cannot infer shape for %s operation: %s <%s> %s. %s", what, ck_shape(a, lhs),
			 strcmp(what, "dot") ? "ragged_dot" : "dot", ck_shape(b, rhs), why);
		goto done;
	}
	int n = *n_io;
	for (int i = 0; i < lb->n; i++)
		dims[n++] = lhs->dims[lb->v[i]];
	unsigned lused = 0, rused = 0;
	for (int i = 0; i < lc->n; i++)
		lused |= 1u << lc->v[i];
	for (int i = 0; i < lb->n; i++)
		lused |= 1u << lb->v[i];
	for (int i = 0; i < rc->n; i++)
		rused |= 1u << rc->v[i];
	for (int i = 0; i < rb->n; i++)
		rused |= 1u << rb->v[i];
	for (int d = 0; d < lhs->rank; d++)
		if (!(lused & (1u << d)))
			dims[n++] = lhs->dims[d];
	for (int d = 0; d < rhs->rank; d++)
		if (!(rused & (1u << d)) && !(rhs_skip & (1u << d)))
			dims[n++] = rhs->dims[d];
	if (n > HLOI_MAX_RANK) {
		ck_error(c, in->op_at, "the result of %s has %d dimensions; hloi supports at most %d", what, n,
			 HLOI_MAX_RANK);
		goto done;
	}
	*n_io = n;
	err = 0;
done:
	sb_free(&dn);
	return err;
}

int infer_dot(checker *c, instr *in, shape *inf)
{
	int64_t dims[3 * HLOI_MAX_RANK];
	int n = 0;
	if (dot_dims(c, in, "dot", 0, dims, &n))
		return 1;
	const shape *lhs = in->ops[0].def->result, *rhs = in->ops[1].def->result;
	shape_make_array(inf, result_type(in, lhs->type, rhs->type), n, dims);
	/* a result dimension from a `<=N` one is `<=N` (XLA's InferDotOpShape) */
	int from_op[HLOI_MAX_RANK], from_dim[HLOI_MAX_RANK];
	const shape *src[2] = { lhs, rhs };
	if (!shape_is_static(lhs) || !shape_is_static(rhs))
		for (int r = 0, nr = dot_result_sources(in, lhs->rank, rhs->rank, from_op, from_dim); r < nr && r < n; r++)
			inf->dim_kind[r] = src[from_op[r]]->dim_kind[from_dim[r]];
	return 0;
}

static int has(const int_list *l, int64_t d)
{
	for (int i = 0; i < l->n; i++)
		if (l->v[i] == d)
			return 1;
	return 0;
}

/* ragged-dot(lhs, rhs, group_sizes) with dot's dimension numbers plus
 * lhs_ragged_dims={r} and rhs_group_dims (XLA's InferRaggedDotOpShape):
 * r non-contracting: [b,m,k] x [g,b,k,n] -> [b,m,n], one rhs group dim;
 * r contracting:     [b,m,k] x [b,k,n]   -> [g,b,m,n], no group dim;
 * r batch:           [b,m,k] x [b,k,n]   -> [b,m,n], no group dim.
 * group_sizes is [g], or [lhs dims before r in that role..., g]. */
int infer_ragged_dot(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	for (int k = 0; k < 3; k++)
		if (shape_is_tuple(in->ops[k].def->result)) {
			static const char *const names[] = { "lhs", "rhs", "group_sizes" };
			ck_error(c, in->ops[k].at, "Expected array argument for %s of ragged dot, but got %s.", names[k],
				 ck_shape(a, in->ops[k].def->result));
			return 1;
		}
	/* dot's dimension numbers first, as XLA checks them */
	int64_t dims[3 * HLOI_MAX_RANK];
	int n = 0;
	if (dot_dims(c, in, "ragged dot", 0, dims, &n))
		return 1;
	const shape *lhs = in->ops[0].def->result, *rhs = in->ops[1].def->result;
	const shape *gs = in->ops[2].def->result;
	const int_list *lc = ck_ints(in, ATTR_LHS_CONTRACTING_DIMS), *lb = ck_ints(in, ATTR_LHS_BATCH_DIMS);
	const int_list *rc = ck_ints(in, ATTR_RHS_CONTRACTING_DIMS), *rb = ck_ints(in, ATTR_RHS_BATCH_DIMS);
	const int_list *lr = ck_ints(in, ATTR_LHS_RAGGED_DIMS), *rg = ck_ints(in, ATTR_RHS_GROUP_DIMS);
	strbuf m = STRBUF_INIT;
	sb_printf(&m, "Cannot infer shape for ragged dot operation: %s <ragged_dot> %s. ", ck_shape(a, lhs),
		  ck_shape(b, rhs));
	loc at = in->op_at;
	int bad = 1;
	if (lr->n != 1) {
		sb_puts(&m, "There must be exactly one ragged dimension in the lhs.");
		at = ints_loc(c, in, ATTR_LHS_RAGGED_DIMS);
		goto fail;
	}
	int64_t r = lr->v[0];
	if (r < 0 || r >= lhs->rank) {
		sb_printf(&m, "lhs ragged dimension %lld is out of range [0, %d)", (long long)r, lhs->rank);
		at = ints_loc(c, in, ATTR_LHS_RAGGED_DIMS);
		goto fail;
	}
	for (int i = 0; i < rg->n; i++) {
		at = ints_loc(c, in, ATTR_RHS_GROUP_DIMS);
		if (rg->v[i] < 0 || rg->v[i] >= rhs->rank) {
			sb_printf(&m, "rhs group dimension %lld is out of range [0, %d)", (long long)rg->v[i], rhs->rank);
			goto fail;
		}
		if (has(rb, rg->v[i]) || has(rc, rg->v[i])) {
			sb_puts(&m, "rhs group dimension cannot be a batch or contracting dimension");
			goto fail;
		}
	}
	enum { NON_CONTRACTING, CONTRACTING, BATCH } mode =
		has(lb, r) ? BATCH : has(lc, r) ? CONTRACTING : NON_CONTRACTING;
	/* the expected prefix of group_sizes: the lhs dims of r's role before r */
	int64_t prefix[HLOI_MAX_RANK];
	int np = 0;
	for (int i = 0; i < lb->n && !(mode == BATCH && lb->v[i] == r); i++)
		prefix[np++] = lb->v[i];
	if (mode == CONTRACTING)
		for (int i = 0; i < lc->n && lc->v[i] != r; i++)
			prefix[np++] = lc->v[i];
	if (mode == NON_CONTRACTING)
		for (int64_t d = 0; d < r; d++)
			if (!has(lc, d) && !has(lb, d))
				prefix[np++] = d;
	if (gs->rank == 0) {
		sb_printf(&m, "expected group_sizes to have rank %d, got 0", np + 1);
		at = in->ops[2].at;
		goto fail;
	}
	if (gs->rank != 1) {
		at = in->ops[2].at;
		if (gs->rank != np + 1) {
			sb_printf(&m, "expected group_sizes to have rank %d, got %d", np + 1, gs->rank);
			goto fail;
		}
		int same = 1;
		for (int i = 0; i < np; i++)
			same &= lhs->dims[prefix[i]] == gs->dims[i];
		if (!same) {
			sb_puts(&m, "group_sizes is expected to have shape [");
			for (int i = 0; i < np; i++)
				sb_printf(&m, "%s%lld", i ? ", " : "", (long long)lhs->dims[prefix[i]]);
			sb_printf(&m, ", %lld], got [", (long long)gs->dims[gs->rank - 1]);
			for (int i = 0; i < gs->rank; i++)
				sb_printf(&m, "%s%lld", i ? ", " : "", (long long)gs->dims[i]);
			sb_puts(&m, "]");
			goto fail;
		}
	}
	int64_t groups = gs->dims[gs->rank - 1];
	unsigned skip = 0;
	if (mode != NON_CONTRACTING && rg->n) {
		sb_puts(&m, "There must be zero group dimensions in the rhs when the ragged dimension is batch or "
			    "contracting.");
		at = ints_loc(c, in, ATTR_RHS_GROUP_DIMS);
		goto fail;
	}
	if (mode == NON_CONTRACTING) {
		at = instr_ints(in, ATTR_RHS_GROUP_DIMS) ? ints_loc(c, in, ATTR_RHS_GROUP_DIMS) : in->op_at;
		if (rg->n != 1) {
			sb_puts(&m, "There must be exactly one group dimension in the rhs when the lhs ragged dimension "
				    "is non-contracting.");
			goto fail;
		}
		if (rhs->dims[rg->v[0]] != groups) {
			sb_printf(&m, "rhs group dimension is expected to have size=%lld, got %lld", (long long)groups,
				  (long long)rhs->dims[rg->v[0]]);
			goto fail;
		}
		skip = 1u << rg->v[0];
	}
	bad = 0;
fail:
	if (m.oom)
		c->oom = 1;
	else if (bad)
		ck_error(c, at, "%s", sb_str(&m));
	sb_free(&m);
	if (bad || c->oom)
		return 1;
	n = 0;
	if (mode == CONTRACTING)
		dims[n++] = groups;
	if (dot_dims(c, in, "ragged dot", skip, dims, &n))
		return 1;
	shape_make_array(inf, result_type(in, lhs->type, rhs->type), n, dims);
	return 0;
}

/* --- convolution --------------------------------------------------------------- */

static void put_one(strbuf *b, const char *name, int64_t v)
{
	if (v != 0) /* proto3 leaves zero scalars out */
		sb_printf(b, "%s%s: %lld", b->len ? " " : "", name, (long long)v);
}

static void put_many(strbuf *b, const char *name, const int64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		sb_printf(b, "%s%s: %lld", b->len ? " " : "", name, (long long)v[i]);
}

/* ConvolutionDimensionNumbers as ShortDebugString prints it (field-number
 * order). */
static void conv_dnums_text(strbuf *b, const conv_dims *d)
{
	put_one(b, "kernel_input_feature_dimension", d->kernel_input_feature);
	put_one(b, "kernel_output_feature_dimension", d->kernel_output_feature);
	put_many(b, "kernel_spatial_dimensions", d->kernel_spatial, d->nspatial);
	put_one(b, "input_batch_dimension", d->input_batch);
	put_one(b, "input_feature_dimension", d->input_feature);
	put_one(b, "output_batch_dimension", d->output_batch);
	put_one(b, "output_feature_dimension", d->output_feature);
	put_many(b, "input_spatial_dimensions", d->input_spatial, d->nspatial);
	put_many(b, "output_spatial_dimensions", d->output_spatial, d->nspatial);
}

/* InferWindowOutputShape over the input's spatial dims. */
static int window_output(checker *c, const instr *in, const window *w, const int64_t *base, int n, int64_t *out)
{
	strbuf wt = STRBUF_INIT;
	attr_print_window(&wt, w);
	const char *ws = wt.oom ? "{...}" : sb_str(&wt);
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	loc at = wa ? wa->at : in->op_at;
	int err = 1;
	for (int i = 0; i < n; i++) {
		const window_dim *d = &w->d[i];
		if (ck_window_dim_invalid(c, at, d, ws))
			goto done;
		int64_t bd = ck_dilated_bound(base[i], d->lhs_dilate), wd = ck_dilated_bound(d->size, d->rhs_dilate), padded;
		if (bd < 0 || wd < 0 || checked_add_i64(bd, d->pad_lo, &padded) || checked_add_i64(padded, d->pad_hi, &padded)) {
			ck_error(c, at, "Window %s is too large for spatial dimension %d of size %lld.", ws, i,
				 (long long)base[i]);
			goto done;
		}
		/* XLA stops on a CHECK here (StridedBound of a negative bound) */
		if (padded < 0) {
			ck_error(c, at, "Window %s pads spatial dimension %d of size %lld to a negative size (%lld).", ws,
				 i, (long long)base[i], (long long)padded);
			goto done;
		}
		out[i] = padded == 0 || wd > padded ? 0 : (padded - wd) / d->stride + 1;
	}
	err = 0;
done:
	sb_free(&wt);
	return err;
}

/* Each of the n numbers in 0..n-1 exactly once. */
static int is_permutation(const int64_t *v, int n)
{
	unsigned seen = 0;
	for (int i = 0; i < n; i++) {
		if (v[i] < 0 || v[i] >= n || (seen & (1u << v[i])))
			return 0;
		seen |= 1u << v[i];
	}
	return 1;
}

/* The dense shape a sparse operand of a convolution stands for under its
 * side of sparsity_config: a (values, metadata) tuple, or values whose
 * metadata is operand `idx` (XLA's newer form); the values' shape with
 * dimension `dim` grown from n to n / nnz * block (doc/semantics.md, Sparse
 * convolution). 0 with *dense set, else 1 after an error. */
static int sparse_operand(checker *c, const instr *in, int k, const sparsity_side *sd, shape *dense)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	const char *side = k ? "rhs" : "lhs";
	const shape *t = in->ops[k].def->result, *v = t, *m;
	loc sat = instr_attr_loc(in, ATTR_SPARSITY_CONFIG), mat = in->ops[k].at;
	if (sd->idx >= 0) {
		m = in->ops[sd->idx].def->result;
		mat = in->ops[sd->idx].at;
		if (!shape_is_array(v) || !shape_is_array(m)) {
			ck_error(c, shape_is_array(v) ? mat : in->ops[k].at,
				 "Expected array arguments for the sparse %s of convolution and its metadata (operand %lld), but got %s and %s.",
				 side, (long long)sd->idx, ck_shape(a, v), ck_shape(b, m));
			return 1;
		}
	} else if (t->ntuple != 2 || !shape_is_array(&t->tuple[0]) || !shape_is_array(&t->tuple[1])) {
		ck_error(c, in->ops[k].at, "%s of convolution, if a tuple, must have 2 elements for sparsity; got %s.",
			 side, ck_shape(a, t));
		return 1;
	} else {
		v = &t->tuple[0];
		m = &t->tuple[1];
	}
	if (!etype_is_integer(m->type)) {
		ck_error(c, mat, "Sparsity metadata of the %s of convolution must be integral, but got %s.",
			 side, ck_shape(a, m));
		return 1;
	}
	if (!shape_same_dims(v, m) || !shape_is_static(v) || !shape_is_static(m)) {
		ck_error(c, mat,
			 "Sparsity metadata of the %s of convolution must have the shape of its values: %s vs %s.", side,
			 ck_shape(a, m), ck_shape(b, v));
		return 1;
	}
	if (sd->nnz <= 0 || sd->block <= 0 || sd->nnz > sd->block) {
		ck_error(c, sat,
			 "Invalid sparsity %lldx%lld for the %s of convolution: 1 <= values kept <= block size is required.",
			 (long long)sd->nnz, (long long)sd->block, side);
		return 1;
	}
	if (sd->dim < 0 || sd->dim >= v->rank) {
		ck_error(c, sat, "Sparsity dimension %lld of the %s of convolution is out of range for %s.",
			 (long long)sd->dim, side, ck_shape(a, v));
		return 1;
	}
	if (sd->stride <= 0) {
		ck_error(c, sat, "Sparsity stride %lld of the %s of convolution must be positive.", (long long)sd->stride,
			 side);
		return 1;
	}
	int64_t n = v->dims[sd->dim], nblocks = n / sd->nnz, dn;
	if (n % sd->nnz != 0) {
		ck_error(c, in->ops[k].at,
			 "Dimension %lld of the sparse %s of convolution (size %lld) is not a multiple of the %lld values kept per block; values: %s.",
			 (long long)sd->dim, side, (long long)n, (long long)sd->nnz, ck_shape(a, v));
		return 1;
	}
	if (nblocks % sd->stride != 0) {
		ck_error(c, in->ops[k].at,
			 "The %lld blocks along dimension %lld of the sparse %s of convolution are not a multiple of the sparsity stride %lld.",
			 (long long)nblocks, (long long)sd->dim, side, (long long)sd->stride);
		return 1;
	}
	if (checked_mul_i64(nblocks, sd->block, &dn)) {
		ck_error(c, sat, "The dense size of dimension %lld of the sparse %s of convolution overflows.",
			 (long long)sd->dim, side);
		return 1;
	}
	int64_t dims[HLOI_MAX_RANK];
	memcpy(dims, v->dims, sizeof dims);
	dims[sd->dim] = dn;
	shape_make_array(dense, v->type, v->rank, dims);
	return 0;
}

int infer_convolution(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	const attr *spa = instr_attr(in, ATTR_SPARSITY_CONFIG);
	const sparsity_config *sp = spa && spa->kind == AK_SPARSITY ? spa->u.sp : NULL;
	/* the newer form's metadata operands follow lhs and rhs */
	int nmeta = 0;
	for (int k = 0; sp && k < 2; k++)
		nmeta += sp->side[k].present && sp->side[k].idx >= 0;
	if (in->nops != 2 + nmeta) {
		ck_error(c, in->op_at, "convolution expects %d operands, but has %d operands", 2 + nmeta, in->nops);
		return 1;
	}
	for (int k = 0; sp && k < 2; k++) {
		const sparsity_side *sd = &sp->side[k];
		if (sd->present && sd->idx >= 0 &&
		    (sd->idx < 2 || sd->idx >= in->nops || (k == 1 && sp->side[0].present && sp->side[0].idx == sd->idx))) {
			ck_error(c, spa->at, "Sparsity metadata operand %lld of the %s of convolution must be one of operands 2 to %d, each side its own.",
				 (long long)sd->idx, k ? "rhs" : "lhs", in->nops - 1);
			return 1;
		}
	}
	shape dense[2];
	const shape *opnd[2];
	for (int k = 0; k < 2; k++) {
		opnd[k] = in->ops[k].def->result;
		/* an array operand under a side of the config without idx is
		 * taken as the dense operand it is (XLA's parser tests write
		 * such modules) */
		if (sp && sp->side[k].present && (shape_is_tuple(opnd[k]) || sp->side[k].idx >= 0)) {
			if (sparse_operand(c, in, k, &sp->side[k], &dense[k]))
				return 1;
			opnd[k] = &dense[k];
		} else if (shape_is_tuple(opnd[k])) {
			ck_error(c, in->ops[k].at, "Expected array argument for %s of convolution, but got %s.",
				 k ? "rhs" : "lhs", ck_shape(a, opnd[k]));
			return 1;
		}
	}
	if (check_precision(c, in))
		return 1;
	const attr *la = instr_attr(in, ATTR_DIM_LABELS);
	if (!la || !la->conv) {
		ck_error(c, in->op_at, "attribute dim_labels is expected but not seen");
		return 1;
	}
	const conv_dims *d = la->conv;
	const shape *lhs = opnd[0], *rhs = opnd[1];
	int64_t fgc = 1, bgc = 1;
	instr_int(in, ATTR_FEATURE_GROUP_COUNT, &fgc);
	instr_int(in, ATTR_BATCH_GROUP_COUNT, &bgc);
	static const window none = { 0, NULL };
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	const window *w = wa && wa->kind == AK_WINDOW ? &wa->u.win : &none;
	strbuf dn = STRBUF_INIT;
	int err = 1;
	conv_dnums_text(&dn, d);
	if (dn.oom) {
		c->oom = 1;
		goto done;
	}
	const char *ds = sb_str(&dn);
	if (fgc <= 0) {
		ck_error(c, instr_attr_loc(in, ATTR_FEATURE_GROUP_COUNT),
			 "feature_group_count must be a positive number, got %lld", (long long)fgc);
		goto done;
	}
	if (bgc <= 0) {
		ck_error(c, instr_attr_loc(in, ATTR_BATCH_GROUP_COUNT),
			 "batch_group_count must be a positive number, got %lld", (long long)bgc);
		goto done;
	}
	if (bgc > 1 && fgc > 1) {
		ck_error(c, instr_attr_loc(in, ATTR_BATCH_GROUP_COUNT),
			 "both batch_group_count %lld and feature_group_count %lld cannot be greater than 1",
			 (long long)bgc, (long long)fgc);
		goto done;
	}
	int ns = d->nspatial, nd = ns + 2;
	if (w->n != ns) {
		strbuf wt = STRBUF_INIT;
		attr_print_window(&wt, w);
		ck_error(c, wa ? wa->at : la->at,
			 "Window must have same number of dimensions as dimension numbers. Window: %s Dimension numbers: %s.",
			 wt.oom ? "{...}" : sb_str(&wt), ds);
		sb_free(&wt);
		goto done;
	}
	if (lhs->rank != nd) {
		ck_error(c, in->ops[0].at, "The LHS argument to a convolution should have rank %d; lhs: %s.", nd,
			 ck_shape(a, lhs));
		goto done;
	}
	if (rhs->rank != nd) {
		ck_error(c, in->ops[1].at, "The RHS argument to a convolution should have rank %d; rhs: %s.", nd,
			 ck_shape(a, rhs));
		goto done;
	}
	int64_t inp[HLOI_MAX_RANK], ker[HLOI_MAX_RANK], outp[HLOI_MAX_RANK];
	inp[0] = d->input_batch;
	inp[1] = d->input_feature;
	ker[0] = d->kernel_input_feature;
	ker[1] = d->kernel_output_feature;
	outp[0] = d->output_batch;
	outp[1] = d->output_feature;
	for (int i = 0; i < ns; i++) {
		inp[2 + i] = d->input_spatial[i];
		ker[2 + i] = d->kernel_spatial[i];
		outp[2 + i] = d->output_spatial[i];
	}
	/* the parser accepts only permutations; a proto may bring anything */
	for (int i = 0; i < nd; i++)
		if (inp[i] < 0 || inp[i] >= nd || ker[i] < 0 || ker[i] >= nd || outp[i] < 0 || outp[i] >= nd) {
			ck_error(c, la->at, "A dimension number is out of range in convolution: %s.", ds);
			goto done;
		}
	if (!is_permutation(inp, nd)) {
		ck_error(c, la->at, "Input dimensions of convolution must contain each dimension exactly once: %s.", ds);
		goto done;
	}
	if (!is_permutation(ker, nd)) {
		ck_error(c, la->at, "Window dimensions of convolution must contain each dimension exactly once: %s.", ds);
		goto done;
	}
	if (!is_permutation(outp, nd)) {
		ck_error(c, la->at, "Output dimensions of convolution must contain each dimension exactly once: %s.", ds);
		goto done;
	}
	int64_t in_sp[HLOI_MAX_RANK];
	for (int i = 0; i < ns; i++)
		in_sp[i] = lhs->dims[d->input_spatial[i]];
	int64_t in_feat = lhs->dims[d->input_feature], in_batch = lhs->dims[d->input_batch];
	int64_t k_in = rhs->dims[d->kernel_input_feature], k_out = rhs->dims[d->kernel_output_feature];
	if (k_out % bgc != 0) {
		ck_error(c, in->op_at,
			 "Expected output feature dimension size (value %lld) to be a multiple of batch group count %lld; got <conv>(%s, %s) Dimension numbers: {%s}.",
			 (long long)k_out, (long long)bgc, ck_shape(a, lhs), ck_shape(b, rhs), ds);
		goto done;
	}
	if (k_out % fgc > 0) {
		ck_error(c, in->op_at,
			 "Expected output feature dimension (value %lld) to be divisible by feature_group_count (value %lld); got <conv>(%s, %s) Dimension numbers: {%s}.",
			 (long long)k_out, (long long)fgc, ck_shape(a, lhs), ck_shape(b, rhs), ds);
		goto done;
	}
	if (in_batch % bgc != 0) {
		ck_error(c, in->op_at,
			 "Expected input batch dimension (value %lld) to be divisible by batch_group_count (value %lld); got <conv>(%s, %s) Dimension numbers: {%s}.",
			 (long long)in_batch, (long long)bgc, ck_shape(a, lhs), ck_shape(b, rhs), ds);
		goto done;
	}
	if (in_feat % fgc != 0 || in_feat / fgc != k_in) {
		ck_error(c, in->op_at,
			 "Expected LHS feature dimension (value %lld) to be a multiple of feature_group_count (value %lld), and LHS feature dimension / feature_group_count = RHS feature dimension (value %lld); got <conv>(%s, %s) Dimension numbers: {%s}.",
			 (long long)in_feat, (long long)fgc, (long long)k_in, ck_shape(a, lhs), ck_shape(b, rhs), ds);
		goto done;
	}
	for (int i = 0; i < ns; i++)
		if (rhs->dims[d->kernel_spatial[i]] != w->d[i].size) {
			strbuf wt = STRBUF_INIT;
			attr_print_window(&wt, w);
			ck_error(c, wa ? wa->at : in->op_at,
				 "Window dimensions do not match RHS shape: RHS shape: %s Window: %s Dimension numbers: {%s}.",
				 ck_shape(a, rhs), wt.oom ? "..." : sb_str(&wt), ds);
			sb_free(&wt);
			goto done;
		}
	int64_t wout[HLOI_MAX_RANK];
	if (window_output(c, in, w, in_sp, ns, wout))
		goto done;
	int64_t dims[HLOI_MAX_RANK];
	dims[d->output_batch] = in_batch / bgc;
	dims[d->output_feature] = k_out;
	for (int i = 0; i < ns; i++)
		dims[d->output_spatial[i]] = wout[i];
	shape_make_array(inf, result_type(in, lhs->type, rhs->type), nd, dims);
	err = 0;
done:
	sb_free(&dn);
	return err;
}

/* scaled-dot(lhs, rhs, lhs_scale, rhs_scale) with dot's dimension numbers:
 * the dot of each operand multiplied by its scale, each scale element
 * covering a block of the operand (XLA's ScaledDotRewriter). A scale has
 * the operand's rank and dimensions dividing the operand's, or is a
 * scalar; the result type is the written one. */
int infer_scaled_dot(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	if (!ck_needs_shape(c, in))
		return 1;
	for (int k = 2; k < 4; k++) {
		const char *side = k == 2 ? "LHS" : "RHS";
		const shape *x = in->ops[k - 2].def->result, *s = in->ops[k].def->result;
		if (shape_is_tuple(s) || shape_is_tuple(x)) {
			ck_error(c, in->ops[k].at, "Expected array argument for %s scale of scaled dot, but got %s.",
				 side, ck_shape(a, s));
			return 1;
		}
		if (s->rank == 0)
			continue;
		if (s->rank != x->rank) {
			ck_error(c, in->ops[k].at, "%s: operand and scale must have the same rank: %d vs %d", side,
				 x->rank, s->rank);
			return 1;
		}
		for (int i = 0; i < x->rank; i++)
			if (s->dims[i] == 0 ? x->dims[i] != 0 : x->dims[i] % s->dims[i] != 0) {
				ck_error(c, in->ops[k].at,
					 "%s: operand and scale dimensions must match or scale dimension must be divider of operand dimension: %lld vs %lld at index %d",
					 side, (long long)x->dims[i], (long long)s->dims[i], i);
				return 1;
			}
	}
	int64_t dims[3 * HLOI_MAX_RANK];
	int n = 0;
	if (dot_dims(c, in, "dot", 0, dims, &n))
		return 1;
	shape_make_array(inf, in->shape->type, n, dims);
	return 0;
}
