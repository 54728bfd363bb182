/* Shape rules of the linear-algebra, normalisation and window-scatter ops
 * hloi type-checks and prints but does not evaluate yet (XLA's
 * shape_inference.cc): fft, cholesky, triangular-solve, the three
 * batch-norm ops, select-and-scatter, set-dimension-size and domain. With
 * them a program may leave these results' shapes out, as XLA's parser
 * allows, and a written shape is checked against the rule. */
#include <stdio.h>
#include <string.h>

#include "check/check_internal.h"

/* An array operand k, or 0 after reporting "Expected array argument". */
static const shape *array_operand(checker *c, const instr *in, int k, const char *what)
{
	char a[CK_SHAPE_TEXT];
	const shape *s = in->ops[k].def->result;
	if (shape_is_tuple(s)) {
		ck_error(c, in->ops[k].at, "Expected array argument for %s, but got %s.", what, ck_shape(a, s));
		return NULL;
	}
	return s;
}

/* --- fft ------------------------------------------------------------------- */

/* fft(x), fft_type=FFT|IFFT|RFFT|IRFFT, fft_length={n...} (1 to 3 entries,
 * the innermost dims): FFT/IFFT keep a complex shape; RFFT takes f32/f64 to
 * c64/c128 with n/2+1 in the last dim; IRFFT the inverse. */
int infer_fft(checker *c, instr *in, shape *inf)
{
	char up[32];
	const shape *x = array_operand(c, in, 0, "operand of fft");
	if (!x)
		return 1;
	const char *type = instr_text(in, ATTR_FFT_TYPE);
	const int_list *len = instr_ints(in, ATTR_FFT_LENGTH);
	if (!type) {
		ck_error(c, in->op_at, "attribute fft_type is expected but not seen");
		return 1;
	}
	if (!len) {
		ck_error(c, in->op_at, "attribute fft_length is expected but not seen");
		return 1;
	}
	int rfft = strcmp(type, "RFFT") == 0, irfft = strcmp(type, "IRFFT") == 0;
	if (!rfft && !irfft && strcmp(type, "FFT") != 0 && strcmp(type, "IFFT") != 0) {
		ck_error(c, ck_attr_at(c, in, ATTR_FFT_TYPE), "expects fft_type but sees: %s", type);
		return 1;
	}
	int n = len->n;
	loc lat = ck_attr_at(c, in, ATTR_FFT_LENGTH);
	if (n < 1 || n > 3) {
		ck_error(c, lat, "FFT only supports ranks 1-3; got %d.", n);
		return 1;
	}
	int complex_in = etype_get_kind(x->type) == KIND_COMPLEX;
	if (rfft ? x->type != ET_F32 && x->type != ET_F64 : !complex_in) {
		if (rfft)
			ck_error(c, in->op_at, "RFFT requires F32 or F64 input type, found %s.",
				 ck_type_upper(up, sizeof up, x->type));
		else
			ck_error(c, in->op_at, "%s requires complex input type, found %s.", type,
				 ck_type_upper(up, sizeof up, x->type));
		return 1;
	}
	if (x->rank < n) {
		ck_error(c, lat, "FFT of rank %d requires input of at least same rank; got input of rank %d", n,
			 x->rank);
		return 1;
	}
	int64_t d[HLOI_MAX_RANK];
	memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
	etype t = x->type;
	int last = x->rank - 1;
	if (rfft) {
		for (int i = 0; i < n; i++) {
			int k = x->rank - n + i;
			if (x->dims[k] != len->v[i]) {
				ck_error(c, lat,
					 "RFFT requires innermost dimensions match fft_length but dimension %d is %lld and should be %lld.",
					 k, (long long)x->dims[k], (long long)len->v[i]);
				return 1;
			}
		}
		t = x->type == ET_F32 ? ET_C64 : ET_C128;
		if (len->v[n - 1] != 0)
			d[last] = len->v[n - 1] / 2 + 1;
	} else if (irfft) {
		for (int i = 0; i + 1 < n; i++) {
			int k = x->rank - n + i;
			if (x->dims[k] != len->v[i]) {
				ck_error(c, lat,
					 "IRFFT requires all but one innermost dimensions match fft_length, but dimension %d is %lld and should be %lld.",
					 k, (long long)x->dims[k], (long long)len->v[i]);
				return 1;
			}
		}
		int64_t want = len->v[n - 1] / 2 + 1;
		if ((x->dims[last] != 0 || len->v[n - 1] != 0) && x->dims[last] != want) {
			ck_error(c, lat,
				 "IRFFT requires innermost dimension matches fft_length/2+1, but dimension %d is %lld and should be %lld.",
				 last, (long long)x->dims[last], (long long)want);
			return 1;
		}
		t = x->type == ET_C64 ? ET_F32 : ET_F64;
		d[last] = len->v[n - 1];
	}
	shape_make_array(inf, t, x->rank, d);
	return 0;
}

/* --- cholesky and triangular-solve ----------------------------------------- */

static int float_or_complex(etype t)
{
	return etype_is_float(t) || etype_get_kind(t) == KIND_COMPLEX;
}

/* cholesky(a), lower=: a's shape, [..., n, n] of a float or complex type. */
int infer_cholesky(checker *c, instr *in, shape *inf)
{
	char up[32], a[CK_SHAPE_TEXT];
	const shape *x = array_operand(c, in, 0, "operand of cholesky");
	if (!x)
		return 1;
	if (!float_or_complex(x->type)) {
		ck_error(c, in->op_at, "Expected element type in shape to be floating or complex for Cholesky; got %s.",
			 ck_type_upper(up, sizeof up, x->type));
		return 1;
	}
	if (x->rank < 2) {
		ck_error(c, in->op_at, "The 'a' argument to Cholesky must have rank >= 2, got shape %s",
			 ck_shape(a, x));
		return 1;
	}
	if (x->dims[x->rank - 2] != x->dims[x->rank - 1]) {
		ck_error(c, in->op_at, "The two minor dimensions of 'a' must have compatible size, got %s.",
			 ck_shape(a, x));
		return 1;
	}
	shape_make_array(inf, x->type, x->rank, x->dims);
	return 0;
}

/* triangular-solve(a, b), left_side=, lower=, unit_diagonal=,
 * transpose_a=NO_TRANSPOSE|TRANSPOSE|ADJOINT: b's shape. a is [..., m, m];
 * b is [..., m, n] (left_side) or [..., n, m]; same batch dims, same type. */
int infer_triangular_solve(checker *c, instr *in, shape *inf)
{
	char up[32], up2[32], a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	const shape *x = array_operand(c, in, 0, "'a' of triangular-solve");
	const shape *y = x ? array_operand(c, in, 1, "'b' of triangular-solve") : NULL;
	if (!y)
		return 1;
	if (!float_or_complex(x->type) || x->type != y->type) {
		ck_error(c, in->op_at,
			 "Expected element types in shape to be floating or complex and identical for TriangularSolve; got %s and %s.",
			 ck_type_upper(up, sizeof up, x->type), ck_type_upper(up2, sizeof up2, y->type));
		return 1;
	}
	if (x->rank < 2) {
		ck_error(c, in->op_at, "The 'a' argument to TriangularSolve must have rank >= 2, got shape %s",
			 ck_shape(a, x));
		return 1;
	}
	if (y->rank != x->rank) {
		ck_error(c, in->op_at, "Arguments to triangular solve must have equal rank; got %s and %s.",
			 ck_shape(b, y), ck_shape(a, x));
		return 1;
	}
	int r = x->rank;
	if (x->dims[r - 2] != x->dims[r - 1]) {
		ck_error(c, in->op_at, "The two minor dimensions of 'a' must have equal size, got %s.", ck_shape(a, x));
		return 1;
	}
	int left = instr_bool(in, ATTR_LEFT_SIDE, 0);
	if (x->dims[r - 1] != y->dims[r - (left ? 2 : 1)]) {
		ck_error(c, in->op_at, "The shared dimension of 'a' and 'b' does not match, got shapes %s and %s",
			 ck_shape(a, x), ck_shape(b, y));
		return 1;
	}
	for (int i = 0; i + 2 < r; i++)
		if (x->dims[i] != y->dims[i]) {
			ck_error(c, in->op_at,
				 "The leading batch dimensions of the arguments to triangular solve must be equal; got %s and %s.",
				 ck_shape(b, y), ck_shape(a, x));
			return 1;
		}
	const char *tr = instr_text(in, ATTR_TRANSPOSE_A);
	if (tr && strcmp(tr, "NO_TRANSPOSE") != 0 && strcmp(tr, "TRANSPOSE") != 0 && strcmp(tr, "ADJOINT") != 0) {
		ck_error(c, ck_attr_at(c, in, ATTR_TRANSPOSE_A), "Invalid transpose option value for triangular solve (%s).",
			 tr);
		return 1;
	}
	shape_make_array(inf, y->type, y->rank, y->dims);
	return 0;
}

/* --- batch norm -------------------------------------------------------------- */

/* The operands of a batch-norm op: operand (rank >= 1, floating point),
 * then rank-1 per-feature inputs of the operand's size at feature_index, of
 * a floating type; batch-norm-grad's last operand is like the operand. */
typedef struct bn_operand {
	const char *name;  /* as XLA's messages say it */
	int per_feature;   /* rank 1, feature count */
} bn_operand;

static int batch_norm(checker *c, instr *in, const char *op, const bn_operand *ops, int nops, shape *inf,
		      int tuple)
{
	char up[32], up2[32];
	for (int k = 0; k < nops; k++) {
		char what[64];
		snprintf(what, sizeof what, "%s of %s", ops[k].name, op);
		if (!array_operand(c, in, k, what))
			return 1;
	}
	const shape *x = in->ops[0].def->result;
	int64_t fi;
	if (!instr_int(in, ATTR_FEATURE_INDEX, &fi)) {
		ck_error(c, in->op_at, "attribute feature_index is expected but not seen");
		return 1;
	}
	if (!instr_attr(in, ATTR_EPSILON)) {
		ck_error(c, in->op_at, "attribute epsilon is expected but not seen");
		return 1;
	}
	loc fat = ck_attr_at(c, in, ATTR_FEATURE_INDEX);
	if (fi >= x->rank) {
		ck_error(c, fat,
			 "Expected feature_index of %s to be smaller than the rank of operand_shape; got feature_index %lld, and rank %d.",
			 op, (long long)fi, x->rank);
		return 1;
	}
	if (fi < 0) {
		ck_error(c, fat, "Expected feature_index of %s to be a non-negative number, got %lld.", op, (long long)fi);
		return 1;
	}
	if (!etype_is_float(x->type)) {
		ck_error(c, in->ops[0].at,
			 "The operand to %s must have a floating point element type, but the shape is %s.", op,
			 ck_type_upper(up, sizeof up, x->type));
		return 1;
	}
	int64_t features = x->dims[fi];
	for (int k = 1; k < nops; k++) {
		const shape *s = in->ops[k].def->result;
		if (ops[k].per_feature && s->rank != 1) {
			ck_error(c, in->ops[k].at, "%c%s input of %s must have rank 1, but has rank %d.",
				 ops[k].name[0] - 'a' + 'A', ops[k].name + 1, op, s->rank);
			return 1;
		}
		if (!ops[k].per_feature && s->rank != x->rank) {
			ck_error(c, in->ops[k].at,
				 "Expected operand_shape of %s to have the same rank as %s_shape; got rank(operand_shape) %d, and rank(%s_shape) %d.",
				 op, ops[k].name, x->rank, ops[k].name, s->rank);
			return 1;
		}
		if (!etype_same_ignoring_fp(s->type, x->type)) {
			ck_error(c, in->ops[k].at,
				 "The inputs should have the same element type for %s, but the element type of %s is %s and the element type of operand is %s.",
				 op, ops[k].name, ck_type_upper(up, sizeof up, s->type),
				 ck_type_upper(up2, sizeof up2, x->type));
			return 1;
		}
		if (ops[k].per_feature && s->dims[0] != features) {
			ck_error(c, in->ops[k].at,
				 "The size of %s should be compatible with feature count, but the size of %s is %lld and the feature count is %lld.",
				 ops[k].name, ops[k].name, (long long)s->dims[0], (long long)features);
			return 1;
		}
		if (!ops[k].per_feature && !shape_same_dims(s, x)) {
			char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
			ck_error(c, in->ops[k].at, "Expected %s_shape of %s to have the same dimensions as operand_shape; got %s and %s.",
				 ops[k].name, op, ck_shape(a, s), ck_shape(b, x));
			return 1;
		}
	}
	if (!tuple) {
		shape_make_array(inf, x->type, x->rank, x->dims);
		return 0;
	}
	/* (operand-shaped, [features], [features]) */
	shape *el = arena_array(&c->m->arena, 3, sizeof *el);
	if (!el) {
		c->oom = 1;
		return 1;
	}
	shape_make_array(&el[0], x->type, x->rank, x->dims);
	shape_make_array(&el[1], x->type, 1, &features);
	shape_make_array(&el[2], x->type, 1, &features);
	for (int j = 0; j < 3; j++)
		if (in->has_shape && shape_is_tuple(in->shape) && j < in->shape->ntuple) {
			const shape *w = &in->shape->tuple[j];
			if (!shape_is_tuple(w) && w->has_layout && w->rank == el[j].rank)
				el[j].layout = w->layout;
		}
	memset(inf, 0, sizeof *inf);
	inf->type = ET_TUPLE;
	inf->ntuple = 3;
	inf->tuple = el;
	c->keep_layout = 1;
	return 0;
}

/* batch-norm-training(operand, scale, offset), epsilon=, feature_index=:
 * (normalized, batch mean, batch variance). */
int infer_batch_norm_training(checker *c, instr *in, shape *inf)
{
	static const bn_operand ops[] = { { "operand", 0 }, { "scale factor", 1 }, { "offset factor", 1 } };
	return batch_norm(c, in, "batch-norm-training", ops, 3, inf, 1);
}

/* batch-norm-inference(operand, scale, offset, mean, variance): normalized. */
int infer_batch_norm_inference(checker *c, instr *in, shape *inf)
{
	static const bn_operand ops[] = { { "operand", 0 },
					  { "scale factor", 1 },
					  { "offset factor", 1 },
					  { "mean", 1 },
					  { "variance", 1 } };
	return batch_norm(c, in, "batch-norm-inference", ops, 5, inf, 0);
}

/* batch-norm-grad(operand, scale, mean, variance, grad_output):
 * (grad operand, grad scale, grad offset). */
int infer_batch_norm_grad(checker *c, instr *in, shape *inf)
{
	static const bn_operand ops[] = {
		{ "operand", 0 }, { "scale factor", 1 }, { "mean", 1 }, { "variance", 1 }, { "output_grad", 0 }
	};
	return batch_norm(c, in, "batch-norm-grad", ops, 5, inf, 1);
}

/* --- select-and-scatter ------------------------------------------------------- */

/* select-and-scatter(operand, source, init), window=, select=(T,T)->pred,
 * scatter=(S,S)->S: the operand's shape; source is the window-reduced
 * operand's shape. */
int infer_select_and_scatter(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	const shape *x = array_operand(c, in, 0, "operand of select-and-scatter");
	if (!x)
		return 1;
	const shape *src = in->ops[1].def->result, *init = in->ops[2].def->result;
	computation *sel = instr_called(in, ATTR_SELECT, 0), *sc = instr_called(in, ATTR_SCATTER, 0);
	loc sat = ck_attr_at(c, in, ATTR_SELECT), scat = ck_attr_at(c, in, ATTR_SCATTER);
	if (in->op == OP_CUSTOM_CALL) {
		/* DynamicSelectAndScatterSamePadding: called_computations={select, scatter} */
		sel = instr_called(in, ATTR_CALLED_COMPUTATIONS, 0);
		sc = instr_called(in, ATTR_CALLED_COMPUTATIONS, 1);
		sat = scat = ck_attr_at(c, in, ATTR_CALLED_COMPUTATIONS);
		if (!sel || !sc) {
			ck_error(c, sat, "called_computations={select, scatter} is expected");
			return 1;
		}
	}
	if (!sel || !sc) {
		ck_error(c, in->op_at, "attribute %s is expected but not seen", sel ? "scatter" : "select");
		return 1;
	}
	if (ck_ensure_checked(c, in, sel, sat) || ck_ensure_checked(c, in, sc, scat))
		return 1;
	if (sel->nparams != 2) {
		ck_error(c, sat, "Select function must take 2 parameters, but takes %d parameter(s).", sel->nparams);
		return 1;
	}
	const shape *sr = sel->root->result;
	if (shape_is_tuple(sr) || sr->rank != 0 || sr->type != ET_PRED) {
		ck_error(c, sat, "Select function must have rank-0 PRED result.");
		return 1;
	}
	for (int k = 0; k < 2; k++) {
		const shape *p = sel->params[k]->result;
		if (shape_is_tuple(p) || p->rank != 0 || !etype_same_ignoring_fp(p->type, x->type)) {
			shape el;
			shape_make_array(&el, x->type, 0, NULL);
			ck_error(c, sat,
				 "Select function's %s parameter shape currently must match the operand element shape, but got %s vs %s.",
				 k ? "second" : "first", ck_shape(a, p), ck_shape(b, &el));
			return 1;
		}
	}
	if (shape_is_tuple(src)) {
		ck_error(c, in->ops[1].at, "Expected array argument for source of select-and-scatter, but got %s.",
			 ck_shape(a, src));
		return 1;
	}
	const shape *inits[1] = { init };
	etype types[1] = { src->type };
	if (ck_verify_reducer(c, in, sc, inits, types, 1))
		return 1;
	static const window none = { 0, NULL };
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	const window *w = wa && wa->kind == AK_WINDOW ? &wa->u.win : &none;
	int64_t out[HLOI_MAX_RANK];
	if (ck_window_output(c, in, w, x, out))
		return 1;
	shape reduced;
	shape_make_array(&reduced, x->type, x->rank, out);
	if (!etype_same_ignoring_fp(src->type, x->type) || !shape_same_dims(src, &reduced)) {
		ck_error(c, in->ops[1].at,
			 "Source shape does not match the shape of window-reduced operand: source(%s), window-reduced operand(%s).",
			 ck_shape(a, src), ck_shape(b, &reduced));
		return 1;
	}
	/* the verifier's mixed-precision rule covers the operands, not the
	 * computations (their precision may differ: the values are converted);
	 * custom-calls are on its list of exceptions */
	if (in->op != OP_CUSTOM_CALL && ck_mixed_precision(c, in))
		return 1;
	shape_make_array(inf, x->type, x->rank, x->dims);
	return 0;
}

/* --- set-dimension-size and domain ------------------------------------------- */

/* set-dimension-size(operand, s32[] size), dimensions={d}: the operand's
 * shape with dimension d dynamic (`<=N`), whatever the written shape says. */
int infer_set_dimension_size(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	const shape *x = array_operand(c, in, 0, "operand of set-dimension-size");
	if (!x)
		return 1;
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	if (!dl || dl->n != 1) {
		ck_error(c, dl ? ck_attr_at(c, in, ATTR_DIMENSIONS) : in->op_at,
			 "set-dimension-size expects one dimension in dimensions={d}");
		return 1;
	}
	int64_t d = dl->v[0];
	if (d < 0 || d >= x->rank) {
		ck_error(c, ck_attr_at(c, in, ATTR_DIMENSIONS), "SetDimensionSize dimension out of bounds: %lld.",
			 (long long)d);
		return 1;
	}
	const shape *v = in->ops[1].def->result;
	if (shape_is_tuple(v) || v->rank != 0 || v->type != ET_S32) {
		ck_error(c, in->ops[1].at, "SetDimensionSize's value has to be S32 scalar, got %s", ck_shape(a, v));
		return 1;
	}
	if (x->dims[d] > INT32_MAX) {
		ck_error(c, in->op_at, "SetDimensionSize's input shape is %s, the %lldth dimension exceeds the INT_MAX limit.",
			 ck_shape(a, x), (long long)d);
		return 1;
	}
	shape_make_array(inf, x->type, x->rank, x->dims);
	memcpy(inf->dim_kind, x->dim_kind, sizeof inf->dim_kind);
	inf->dim_kind[d] = DIM_BOUNDED;
	/* a written static dimension d is accepted (XLA's verifier compares
	 * shapes ignoring dynamism) and the result keeps it `<=N`, as XLA's
	 * dynamic-dimension inference follows the size (check.c:
	 * dynamic_kinds) */
	return 0;
}

/* domain(x), domain={kind=...}: x's shape, layouts included. */
int infer_domain(checker *c, instr *in, shape *inf)
{
	*inf = *in->ops[0].def->result;
	c->keep_layout = 1;
	return 0;
}
