/* Shape rules of the data-movement ops (XLA's shape_inference.cc and
 * hlo_verifier.cc, with their messages): slice, concatenate, pad, reverse,
 * shuffle, dynamic-slice, dynamic-update-slice, bitcast, get-dimension-size
 * and opt-barrier. Every rule infers the result from the operands, so the
 * result shape may be left out in the text (but for bitcast, whose result
 * is whatever the program says it reinterprets the bytes as). */
#include <stdio.h>
#include <string.h>

#include "check/check_internal.h"
#include "core/index.h"
#include "util/checked.h"

/* --- slice ---------------------------------------------------------------------- */

int infer_slice(checker *c, instr *in, shape *inf)
{
	const attr *sa = instr_attr(in, ATTR_SLICE);
	if (!sa) {
		ck_error(c, in->op_at, "attribute slice is expected but not seen");
		return 1;
	}
	if (ck_expect_array(c, in, 0, "operand of slice"))
		return 1;
	const shape *op = in->ops[0].def->result;
	const slice_dims *sd = &sa->u.slice;
	loc at = ck_attr_at(c, in, ATTR_SLICE);
	if (sd->n != op->rank) {
		ck_error(c, at, "Slice index count does not match argument rank: %d vs %d.", sd->n, op->rank);
		return 1;
	}
	int64_t dims[HLOI_MAX_RANK];
	for (int d = 0; d < sd->n; d++) {
		int64_t start = sd->start[d], limit = sd->limit[d], stride = sd->stride[d];
		const char *why = NULL;
		char text[160];
		if (start < 0) {
			ck_error(c, at, "Negative start index to slice: %lld.", (long long)start);
			return 1;
		}
		/* a `?` dimension takes any limit (XLA's InferSliceShape) */
		if (limit > op->dims[d] && op->dim_kind[d] != DIM_UNBOUNDED) {
			snprintf(text, sizeof text, "limit index (%lld) must be less than or equal to dimension size (%lld)",
				 (long long)limit, (long long)op->dims[d]);
			why = text;
		} else if (start > limit) {
			snprintf(text, sizeof text,
				 "limit index (%lld) must be greater or equal to start index (%lld) in slice with positive stride",
				 (long long)limit, (long long)start);
			why = text;
		}
		if (why) {
			char a[CK_SHAPE_TEXT];
			strbuf m = STRBUF_INIT;
			sb_printf(&m, "%s in slice operation; argument shape: %s; starts: {", why, ck_shape(a, op));
			ck_join_ints(&m, sd->start, sd->n, ",");
			sb_puts(&m, "}; limits: {");
			ck_join_ints(&m, sd->limit, sd->n, ",");
			sb_puts(&m, "}; strides: {");
			ck_join_ints(&m, sd->stride, sd->n, ",");
			sb_puts(&m, "}.");
			return ck_report(c, at, &m);
		}
		if (stride <= 0) {
			ck_error(c, at, "Stride (%lld) must be positive.", (long long)stride);
			return 1;
		}
		/* (limit - start + stride - 1) / stride without overflow */
		dims[d] = (limit - start) / stride + ((limit - start) % stride != 0);
	}
	shape_make_array(inf, op->type, op->rank, dims);
	/* a `<=N` dimension taken whole keeps its size; a part of one is
	 * static (XLA's dynamic dimension inference: "slicing a partial
	 * element out eliminates the dynamic dimension") */
	for (int d = 0; d < op->rank; d++)
		if (op->dim_kind[d] == DIM_BOUNDED && sd->start[d] == 0 && sd->stride[d] == 1 &&
		    sd->limit[d] == op->dims[d])
			inf->dim_kind[d] = DIM_BOUNDED;
	return 0;
}

/* --- concatenate ------------------------------------------------------------------ */

/* concatenate with `?` dimensions (XLA's unbounded concatenate cases): the
 * concatenated dimension is `?` when an operand's is; any other takes the
 * operands' size or bound, `?` where all are `?`, two that differ being
 * XLA's "Mismatched dimension sizes" (or bound sizes). */
static int concat_unbounded(checker *c, instr *in, int dim, shape *inf)
{
	int any = 0;
	for (int k = 0; k < in->nops; k++)
		any |= shape_has_unbounded(in->ops[k].def->result);
	if (!any)
		return 0;
	for (int d = 0; d < inf->rank; d++) {
		const shape *have = NULL;
		int unbounded = 0;
		for (int k = 0; k < in->nops; k++) {
			const shape *s = in->ops[k].def->result;
			if (s->dim_kind[d] == DIM_UNBOUNDED) {
				unbounded = 1;
				continue;
			}
			if (d == dim)
				continue;
			if (have && (have->dims[d] != s->dims[d] || have->dim_kind[d] != s->dim_kind[d])) {
				ck_error(c, in->ops[k].at, "Mismatched %s sizes %lld and %lld in dimension %d",
					 s->dim_kind[d] == DIM_BOUNDED ? "bound" : "dimension", (long long)have->dims[d],
					 (long long)s->dims[d], d);
				return 1;
			}
			if (!have)
				have = s;
		}
		if (d == dim ? unbounded : !have) {
			inf->dims[d] = -1;
			inf->dim_kind[d] = DIM_UNBOUNDED;
		} else if (d != dim) {
			inf->dims[d] = have->dims[d];
			inf->dim_kind[d] = have->dim_kind[d];
		}
	}
	return 0;
}

int infer_concatenate(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT], ta[32], tb[32];
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	if (!dl) {
		ck_error(c, in->op_at, "attribute dimensions is expected but not seen");
		return 1;
	}
	loc at = ck_attr_at(c, in, ATTR_DIMENSIONS);
	if (dl->n != 1) {
		ck_error(c, at, "concatenate expects exactly one dimension in dimensions=, but has %d", dl->n);
		return 1;
	}
	if (in->nops == 0) {
		ck_error(c, in->op_at, "Concatenate expects at least one argument.");
		return 1;
	}
	int64_t dim = dl->v[0];
	const shape *first = in->ops[0].def->result;
	if (!shape_is_tuple(first) && (dim < 0 || dim >= first->rank)) {
		ck_error(c, at, "Concatenate dimension out of bounds: %lld.", (long long)dim);
		return 1;
	}
	int64_t total = 0;
	for (int k = 0; k < in->nops; k++) {
		if (ck_expect_array(c, in, k, "operand of concatenation"))
			return 1;
		const shape *s = in->ops[k].def->result;
		if (s->rank != first->rank) {
			ck_error(c, in->ops[k].at, "Cannot concatenate arrays with different ranks: %d (%s) vs %d (%s).",
				 first->rank, ck_shape(a, first), s->rank, ck_shape(b, s));
			return 1;
		}
		if (!etype_same_ignoring_fp(first->type, s->type)) {
			ck_error(c, in->ops[k].at, "Cannot concatenate arrays with different element types: %s vs %s.",
				 ck_type_upper(ta, sizeof ta, first->type), ck_type_upper(tb, sizeof tb, s->type));
			return 1;
		}
		for (int d = 0; d < first->rank; d++) {
			if (d == dim || shape_dim_compatible(s, d, first, d))
				continue;
			ck_error(c, in->ops[k].at,
				 "Cannot concatenate arrays that differ in dimensions other than the one being concatenated. Dimension %d in both shapes must be equal (or compatible): %s vs %s.",
				 d, ck_shape(a, first), ck_shape(b, s));
			return 1;
		}
		if (s->dim_kind[dim] == DIM_UNBOUNDED)
			continue;
		if (checked_add_i64(total, s->dims[dim], &total)) {
			ck_error(c, in->op_at, "concatenate: the size of dimension %lld overflows", (long long)dim);
			return 1;
		}
	}
	if (ck_mixed_precision(c, in))
		return 1;
	int64_t dims[HLOI_MAX_RANK];
	memcpy(dims, first->dims, sizeof dims);
	dims[dim] = total;
	shape_make_array(inf, first->type, first->rank, dims);
	return concat_unbounded(c, in, (int)dim, inf);
}

/* --- pad ------------------------------------------------------------------------------- */

/* protobuf's ShortDebugString of a PaddingConfig (proto3: zero fields are
 * left out). */
static void padding_text(strbuf *m, const pad_dims *p)
{
	for (int i = 0; i < p->n; i++) {
		sb_puts(m, i ? " dimensions {" : "dimensions {");
		if (p->lo[i])
			sb_printf(m, " edge_padding_low: %lld", (long long)p->lo[i]);
		if (p->hi[i])
			sb_printf(m, " edge_padding_high: %lld", (long long)p->hi[i]);
		if (p->interior[i])
			sb_printf(m, " interior_padding: %lld", (long long)p->interior[i]);
		sb_puts(m, " }");
	}
}

int infer_pad(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	const attr *pa = instr_attr(in, ATTR_PADDING);
	if (!pa) {
		ck_error(c, in->op_at, "attribute padding is expected but not seen");
		return 1;
	}
	loc at = ck_attr_at(c, in, ATTR_PADDING);
	const shape *op = in->ops[0].def->result, *pv = in->ops[1].def->result;
	const pad_dims *p = &pa->u.pad;
	if (shape_is_tuple(op)) {
		ck_error(c, in->ops[0].at, "Pad operation does not support tuple-shape operands.");
		return 1;
	}
	if (shape_is_tuple(pv) || pv->rank != 0) {
		ck_error(c, in->ops[1].at, "Pad operation does not support non-scalar padding values.");
		return 1;
	}
	if (op->rank != p->n) {
		strbuf m = STRBUF_INIT;
		sb_printf(&m, "The rank of the operand and the padding configuration do not match: %s vs ",
			  ck_shape(a, op));
		padding_text(&m, p);
		sb_puts(&m, ".");
		return ck_report(c, at, &m);
	}
	if (!etype_same_ignoring_fp(op->type, pv->type)) {
		ck_error(c, in->op_at, "The element types of the operands to Pad do not match.");
		return 1;
	}
	for (int i = 0; i < p->n; i++) {
		if (p->interior[i] < 0) {
			strbuf m = STRBUF_INIT;
			sb_puts(&m, "Interior padding cannot be negative: ");
			padding_text(&m, p);
			return ck_report(c, at, &m);
		}
	}
	int64_t dims[HLOI_MAX_RANK];
	for (int i = 0; i < p->n; i++) {
		int64_t n = op->dims[i], prod, size;
		if (op->dim_kind[i] == DIM_UNBOUNDED) {
			dims[i] = -1;  /* a `?` stays `?` (XLA's InferPadShape) */
			continue;
		}
		if (checked_mul_i64(n > 0 ? n - 1 : 0, p->interior[i], &prod)) {
			ck_error(c, at, "Padding computation overflows: dim=%lld, interior_padding=%lld", (long long)n,
				 (long long)p->interior[i]);
			return 1;
		}
		if (checked_add_i64(n, p->lo[i], &size) || checked_add_i64(size, p->hi[i], &size) ||
		    checked_add_i64(size, prod, &size)) {
			ck_error(c, at, "Padding computation overflows: dim=%lld, interior_padding=%lld", (long long)n,
				 (long long)p->interior[i]);
			return 1;
		}
		if (size < 0) {
			ck_error(c, at, "Padding result in negative size for dimension %d", i);
			return 1;
		}
		dims[i] = size;
	}
	if (ck_mixed_precision(c, in))
		return 1;
	shape_make_array(inf, op->type, op->rank, dims);
	for (int i = 0; i < op->rank; i++)
		if (op->dim_kind[i] == DIM_UNBOUNDED)
			inf->dim_kind[i] = DIM_UNBOUNDED;
	return 0;
}

/* --- reverse ------------------------------------------------------------------------------ */

int infer_reverse(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	if (!dl) {
		ck_error(c, in->op_at, "attribute dimensions is expected but not seen");
		return 1;
	}
	if (ck_expect_array(c, in, 0, "operand of reverse"))
		return 1;
	const shape *op = in->ops[0].def->result;
	loc at = ck_attr_at(c, in, ATTR_DIMENSIONS);
	for (int i = 0; i < dl->n; i++)
		for (int j = 0; j < i; j++)
			if (dl->v[i] == dl->v[j]) {
				ck_error(c, at, "a dimension number is duplicated in reverse");
				return 1;
			}
	for (int i = 0; i < dl->n; i++)
		if (dl->v[i] < 0 || dl->v[i] >= op->rank) {
			ck_error(c, at, "One of the reverse dimensions (%lld) is out-of-bounds in shape %s.",
				 (long long)dl->v[i], ck_shape(a, op));
			return 1;
		}
	shape_make_array(inf, op->type, op->rank, op->dims);
	return 0;
}

/* --- shuffle ---------------------------------------------------------------------------------- */

/* The typed value of shuffle's indices= (converted once, kept with the
 * module); NULL after an error. */
static const hloi_literal *shuffle_indices(checker *c, const instr *in, const attr *a)
{
	attr_literal *l = (attr_literal *)&a->u.lit;
	if (l->value)
		return l->value;
	if (!l->tree || !l->shp) {
		ck_error(c, a->at, "shuffle's indices= has no value");
		return NULL;
	}
	shape s = *l->shp;
	if (!s.has_layout)
		layout_set_default(&s);
	hloi_literal *lit = NULL;
	hloi_status st = literal_from_tree(&lit, c->ctx, c->text ? c->m->src : -1, l->tree, &s);
	if (st == HLOI_ENOMEM)
		c->oom = 1;
	else if (st != HLOI_OK)
		c->nerrors++;
	if (st != HLOI_OK)
		return NULL;
	if (ck_store_value(c, lit)) {
		literal_destroy(lit);
		c->oom = 1;
		return NULL;
	}
	(void)in;
	return l->value = lit;
}

/* shuffle's indices= against the operand: rank r (one shuffled dimension)
 * or r + 1 with the shuffled dimensions' coordinates innermost, each of the
 * first r dimensions the operand's or 1 (shared along it), integers within
 * the dimension each coordinate indexes (XLA's ShuffleExpander). */
static int check_permute_indices(checker *c, const instr *in, const shape *op, const int_list *dl)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	const attr *ia = instr_attr(in, ATTR_INDICES);
	if (!ia || ia->kind != AK_LITERAL) {
		ck_error(c, in->op_at, "attribute indices is expected but not seen (shuffle mode=permute)");
		return 1;
	}
	loc at = ck_attr_at(c, in, ATTR_INDICES);
	const hloi_literal *ind = shuffle_indices(c, in, ia);
	if (!ind)
		return 1;
	const shape *is = &ind->shape;
	int r = op->rank, k = dl->n;
	int ok = etype_is_integer(is->type) && etype_bit_width(is->type) >= 8 && (is->rank == r + 1 ? is->dims[r] == k : is->rank == r && k == 1);
	for (int d = 0; ok && d < r; d++)
		ok = is->dims[d] == op->dims[d] || is->dims[d] == 1;
	if (!ok) {
		ck_error(c, at,
			 "shuffle indices %s do not fit the operand %s: integers of the operand's dimensions (each may be 1) and, innermost, the coordinates of its %d shuffled dimension%s",
			 ck_shape(a, is), ck_shape(b, op), k, k == 1 ? "" : "s");
		return 1;
	}
	int64_t n = 0, idx[HLOI_MAX_RANK + 1] = { 0 };
	if (shape_element_count(is, &n) || n == 0)
		return 0;
	do {
		int coord = is->rank == r + 1 ? (int)idx[r] : 0;
		int64_t v = etype_read_int(is->type, literal_element(ind, idx));
		int64_t size = op->dims[dl->v[coord]];
		if (v < 0 || v >= size) {
			ck_error(c, at, "shuffle index %lld of dimension %lld is out of range [0, %lld)", (long long)v,
				 (long long)dl->v[coord], (long long)size);
			return 1;
		}
	} while (index_next(is->rank, is->dims, idx));
	return 0;
}

/* shuffle(x), dimensions={...}, mode=rotate, shifts={...}: each listed
 * dimension rotated by its shift (result[i] = x[(i + shift) mod n]);
 * mode=permute, indices=...: each element of the result takes the
 * element of x at the coordinates indices holds for it along the listed
 * dimensions. The result is the operand's shape. */
int infer_shuffle(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	if (!dl) {
		ck_error(c, in->op_at, "attribute dimensions is expected but not seen");
		return 1;
	}
	const char *mode = instr_text(in, ATTR_MODE);
	if (!mode) {
		ck_error(c, in->op_at, "attribute mode is expected but not seen");
		return 1;
	}
	if (ck_expect_array(c, in, 0, "operand of shuffle"))
		return 1;
	const shape *op = in->ops[0].def->result;
	loc at = ck_attr_at(c, in, ATTR_DIMENSIONS);
	for (int i = 0; i < dl->n; i++) {
		if (dl->v[i] < 0 || dl->v[i] >= op->rank) {
			ck_error(c, at, "shuffle dimension %lld is out of bounds in shape %s", (long long)dl->v[i],
				 ck_shape(a, op));
			return 1;
		}
		for (int j = 0; j < i; j++)
			if (dl->v[i] == dl->v[j]) {
				ck_error(c, at, "shuffle dimension %lld is listed twice", (long long)dl->v[i]);
				return 1;
			}
	}
	if (!strcmp(mode, "rotate")) {
		const int_list *sl = instr_ints(in, ATTR_SHIFTS);
		if (!sl) {
			ck_error(c, in->op_at, "attribute shifts is expected but not seen (shuffle mode=rotate)");
			return 1;
		}
		if (sl->n != dl->n) {
			ck_error(c, ck_attr_at(c, in, ATTR_SHIFTS),
				 "shuffle mode=rotate expects a shift for each of its %d dimension%s, got %d", dl->n,
				 dl->n == 1 ? "" : "s", sl->n);
			return 1;
		}
	} else if (!strcmp(mode, "permute")) {
		if (check_permute_indices(c, in, op, dl))
			return 1;
	} else {
		ck_error(c, ck_attr_at(c, in, ATTR_MODE), "unknown shuffle mode '%s' (expects rotate or permute)", mode);
		return 1;
	}
	shape_make_array(inf, op->type, op->rank, op->dims);
	return 0;
}

/* --- dynamic-slice and dynamic-update-slice ------------------------------------------------- */

/* The start indices of a dynamic-slice (first = 1) or dynamic-update-slice
 * (first = 2): scalars of one integral type, one per operand dimension, or
 * (XLA's older form) a single rank-1 array of them. XLA's messages, with
 * `what` = "Dynamic slice" / "Dynamic update slice". */
static int check_start_indices(checker *c, const instr *in, int first, const char *what)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	const shape *op = in->ops[0].def->result;
	int n = in->nops - first;
	const shape *s0 = n >= 1 ? in->ops[first].def->result : NULL;
	if (n >= 1 && !shape_is_tuple(s0) && s0->rank == 1) {
		if (n != 1) {
			ck_error(c, in->op_at, "%s should have exactly 1 index operand, has %d.", what, n);
			return 1;
		}
		if (!etype_is_integer(s0->type)) {
			ck_error(c, in->ops[first].at, "%s start indices must be of integral type.", what);
			return 1;
		}
		if (s0->dims[0] != op->rank) {
			ck_error(c, in->ops[first].at,
				 "%s start number of dimensions %lld (%s) must match rank %d of slice input (%s).", what,
				 (long long)s0->dims[0], ck_shape(a, s0), op->rank, ck_shape(b, op));
			return 1;
		}
		return 0;
	}
	if (op->rank != n) {
		ck_error(c, in->op_at, "%s start number of dimensions %d must match rank %d of slice input (%s).", what,
			 n, op->rank, ck_shape(a, op));
		return 1;
	}
	if (n == 0)
		return 0;
	if (shape_is_tuple(s0) || s0->rank != 0) {
		ck_error(c, in->ops[first].at, "%s indices must be scalar, not %s.", what, ck_shape(a, s0));
		return 1;
	}
	if (!etype_is_integer(s0->type)) {
		ck_error(c, in->ops[first].at, "%s start indices must be of integral type.", what);
		return 1;
	}
	for (int k = first + 1; k < in->nops; k++) {
		const shape *s = in->ops[k].def->result;
		if (!shape_compatible(s0, s)) {
			ck_error(c, in->ops[k].at,
				 "%s start indices must all have the same shape, got mismatching indices with shapes %s and %s.",
				 what, ck_shape(a, s0), ck_shape(b, s));
			return 1;
		}
	}
	return 0;
}

int infer_dynamic_slice(checker *c, instr *in, shape *inf)
{
	const int_list *sl = instr_ints(in, ATTR_DYNAMIC_SLICE_SIZES);
	if (!sl) {
		ck_error(c, in->op_at, "attribute dynamic_slice_sizes is expected but not seen");
		return 1;
	}
	if (in->nops < 1) {
		ck_error(c, in->op_at, "Expected at least one operand.");
		return 1;
	}
	if (ck_expect_array(c, in, 0, "operand of dynamic slice"))
		return 1;
	const shape *op = in->ops[0].def->result;
	if (check_start_indices(c, in, 1, "Dynamic slice"))
		return 1;
	loc at = ck_attr_at(c, in, ATTR_DYNAMIC_SLICE_SIZES);
	if (sl->n != op->rank) {
		ck_error(c, at, "Dynamic slice index count does not match argument rank: %d vs %d.", sl->n, op->rank);
		return 1;
	}
	for (int d = 0; d < sl->n; d++) {
		if (sl->v[d] < 0) {
			ck_error(c, at, "Negative size index to dynamic slice: %lld.", (long long)sl->v[d]);
			return 1;
		}
		if (sl->v[d] > op->dims[d]) {
			ck_error(c, at, "Slice dim size %lld greater than dynamic slice dimension: %lld.",
				 (long long)sl->v[d], (long long)op->dims[d]);
			return 1;
		}
	}
	shape_make_array(inf, op->type, op->rank, sl->v);
	return 0;
}

int infer_dynamic_update_slice(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], ta[32], tb[32];
	if (in->nops < 2) {
		ck_error(c, in->op_at, "Expected at least two operands.");
		return 1;
	}
	const shape *op = in->ops[0].def->result, *up = in->ops[1].def->result;
	if (shape_is_tuple(op)) {
		ck_error(c, in->ops[0].at,
			 "Expected array or buffer argument for operand of dynamic update slice, but got %s.",
			 ck_shape(a, op));
		return 1;
	}
	if (ck_expect_array(c, in, 1, "update of dynamic update slice"))
		return 1;
	if (check_start_indices(c, in, 2, "Dynamic update slice"))
		return 1;
	if (up->rank != op->rank) {
		ck_error(c, in->ops[1].at, "Dynamic update slice update rank does not match argument rank: %d vs %d.",
			 up->rank, op->rank);
		return 1;
	}
	if (!etype_same_ignoring_fp(op->type, up->type)) {
		ck_error(c, in->ops[1].at,
			 "Dynamic update slice update element type does not match argument. operand.element_type: %s vs update.element_type: %s.",
			 ck_type_upper(ta, sizeof ta, op->type), ck_type_upper(tb, sizeof tb, up->type));
		return 1;
	}
	for (int d = 0; d < op->rank; d++) {
		if (up->dims[d] > op->dims[d]) {
			ck_error(c, in->ops[1].at, "Update dim size %lld greater than dynamic slice dimension: %lld.",
				 (long long)up->dims[d], (long long)op->dims[d]);
			return 1;
		}
	}
	if (ck_mixed_precision(c, in))
		return 1;
	shape_make_array(inf, op->type, op->rank, op->dims);
	/* the result is read where it is written for operand 0 only (in place) */
	for (int j = 0; j < op->rank; j++)
		in->ops[0].out_dim[j] = (int8_t)j;
	for (int k = 1; k < in->nops; k++)
		for (int j = 0; j < HLOI_MAX_RANK; j++)
			in->ops[k].out_dim[j] = -1;
	return 0;
}

/* --- bitcast -------------------------------------------------------------------------------- */

/* XLA's verifier: the same number of bytes (hloi: of the buffers, padding
 * included, since the bytes are what is reinterpreted). */
int infer_bitcast(checker *c, instr *in, shape *inf)
{
	if (!ck_needs_shape(c, in))
		return 1;
	if (ck_expect_array(c, in, 0, "operand of bitcast"))
		return 1;
	const shape *op = in->ops[0].def->result;
	shape r = *in->shape;
	if (!r.has_layout || r.layout.n_minor_to_major != r.rank)
		layout_set_default(&r);
	int64_t ob = 0, rb = 0;
	if (shape_byte_size(op, &ob) || shape_byte_size(&r, &rb) || ob != rb) {
		strbuf m = STRBUF_INIT;
		ck_instr_text(&m, in);
		sb_printf(&m, ": Bitcast cannot have different shape sizes of output (%lld) and operand (%lld) (",
			  (long long)rb, (long long)ob);
		shape_print(&m, &r, 1);
		sb_puts(&m, ") (");
		shape_print(&m, op, 1);
		sb_puts(&m, ")");
		return ck_report(c, in->op_at, &m);
	}
	*inf = r;
	c->keep_layout = 1;
	return 0;
}

/* --- get-dimension-size and opt-barrier ----------------------------------------------------- */

int infer_get_dimension_size(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	if (!dl) {
		ck_error(c, in->op_at, "attribute dimensions is expected but not seen");
		return 1;
	}
	loc at = ck_attr_at(c, in, ATTR_DIMENSIONS);
	if (dl->n != 1) {
		ck_error(c, at, "get-dimension-size expects exactly one dimension in dimensions=, but has %d", dl->n);
		return 1;
	}
	const shape *op = in->ops[0].def->result;
	int64_t d = dl->v[0];
	int rank = shape_is_tuple(op) ? 0 : op->rank;
	if (d < 0 || d >= rank) {
		ck_error(c, at, "GetDimensionSize dimension out of bounds: %lld.", (long long)d);
		return 1;
	}
	if (op->dims[d] > INT32_MAX) {
		ck_error(c, in->op_at, "GetDimensionSize's input shape is %s, the %lldth dimension exceeds the INT_MAX limit.",
			 ck_shape(a, op), (long long)d);
		return 1;
	}
	shape_make_array(inf, ET_S32, 0, NULL);
	return 0;
}

/* XLA's verifier: the result is the operand's shape (any shape, usually a
 * tuple), layouts included. */
int infer_optimization_barrier(checker *c, instr *in, shape *inf)
{
	*inf = *in->ops[0].def->result;
	c->keep_layout = 1;
	return 0;
}
