/* Shape rules of the data-movement ops (XLA's shape_inference.cc):
 * broadcast, iota, reshape, transpose. (The rule of the opcodes whose
 * result is the written shape, infer_declared, is in common.c.) */
#include <stdint.h>
#include <string.h>

#include "check/check_internal.h"
#include "util/strbuf.h"

int infer_broadcast(checker *c, instr *in, shape *inf)
{
	if (!in->has_shape) {
		ck_error(c, in->op_at, "cannot infer shape for opcode: broadcast");
		return 1;
	}
	*inf = *in->shape;
	inf->type = in->ops[0].def->result->type;
	return check_broadcast_shapes(c, in, in->ops[0].def->result, in->shape);
}

/* iota: the written shape; iota_dimension= in range. */
int infer_iota(checker *c, instr *in, shape *inf)
{
	if (!ck_needs_shape(c, in))
		return 1;
	int64_t dim;
	if (!instr_int(in, ATTR_IOTA_DIMENSION, &dim)) {
		ck_error(c, in->op_at, "attribute iota_dimension is expected but not seen");
		return 1;
	}
	if (in->shape->rank == 0) {
		ck_error(c, in->op_at, "Iota does not support scalars.");
		return 1;
	}
	if (in->shape->type == ET_PRED) {
		ck_error(c, in->op_at, "Iota does not support PRED.");
		return 1;
	}
	if (dim < 0 || dim >= in->shape->rank) {
		ck_error(c, in->op_at,
			 "The iota dimension cannot go beyond the operation rank or be negative: iota_dimension=%lld, rank %d.",
			 (long long)dim, in->shape->rank);
		return 1;
	}
	*inf = *in->shape;
	return 0;
}

/* A reshape of an operand with `<=N` dimensions whose written shape says
 * nothing: the dimensions split into the runs whose element counts agree
 * (operand dimensions [i, j) hold what result dimensions [k, l) hold), and
 * in a run holding a `<=N` operand dimension the result's major-most
 * dimension of more than one element becomes `<=N`, as XLA's dynamic
 * dimension inference marks the output dimension that carries the size
 * (its dynamic_padder_test: s32[18] from two dynamic dimensions of
 * s32[2,3,3], s32[2,5] from s32[1,2,<=5,1]). */
static void reshape_dynamic_groups(const shape *op, shape *inf)
{
	int i = 0, k = 0;
	while (i < op->rank || k < inf->rank) {
		int64_t a = 1, b = 1;
		int i0 = i, k0 = k;
		if (i < op->rank)
			a *= op->dims[i++];
		if (k < inf->rank)
			b *= inf->dims[k++];
		while (a != b && a > 0 && b > 0) {
			if (a < b && i < op->rank)
				a *= op->dims[i++];
			else if (b < a && k < inf->rank)
				b *= inf->dims[k++];
			else
				break;
		}
		/* trailing dimensions of one element join this run */
		while (i < op->rank && op->dims[i] == 1 && (k >= inf->rank || inf->dims[k] != 1))
			i++;
		int dynamic = 0;
		for (int d = i0; d < i; d++)
			dynamic |= op->dim_kind[d] == DIM_BOUNDED;
		for (int d = k0; dynamic && d < k; d++) {
			if (inf->dims[d] > 1) {
				inf->dim_kind[d] = DIM_BOUNDED;
				break;
			}
		}
		if (a != b || a == 0)
			break;
	}
}

/* A reshape with `?` dimensions, as XLA's InferReshapeShape: the result
 * must be static (its sizes are the element count's only account), an
 * operand must not mix `?` and `<=N`; the element counts are compared when
 * the sizes are known (at run time: a module runs with each `?` given its
 * input's size). */
static int reshape_unbounded(checker *c, const instr *in, const shape *op, shape *inf)
{
	int bounded = 0;
	for (int d = 0; d < op->rank; d++)
		bounded |= op->dim_kind[d] == DIM_BOUNDED;
	if (shape_has_unbounded(in->shape) || !shape_is_static(in->shape)) {
		ck_error(c, in->op_at, "Reshaping with unbounded result shape is not supported.");
		return 1;
	}
	if (bounded) {
		ck_error(c, in->op_at, "Reshape operand with bounded and unbounded dynamism not supported.");
		return 1;
	}
	shape_make_array(inf, op->type, in->shape->rank, in->shape->dims);
	return 0;
}

int infer_reshape(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (!ck_needs_shape(c, in) || !ck_array_operand(c, in, 0))
		return 1;
	const shape *op = in->ops[0].def->result;
	if (shape_has_unbounded(op) || shape_has_unbounded(in->shape))
		return reshape_unbounded(c, in, op, inf);
	int64_t from = 0, to = 0;
	if (shape_element_count(op, &from) || shape_element_count(in->shape, &to) || from != to) {
		shape want = *in->shape;
		want.type = op->type;
		ck_error(c, in->op_at, "Reshape operation has mismatched element counts: from=%lld (%s) to=%lld (%s).",
			 (long long)from, ck_shape(a, op), (long long)to, ck_shape(b, &want));
		return 1;
	}
	shape_make_array(inf, op->type, in->shape->rank, in->shape->dims);
	/* an operand with `<=N` dimensions: inferred_dimension names the
	 * result's dynamic one, whatever the written shape says (XLA's dynamic
	 * dimension inference) */
	int64_t k = -1;
	if (!shape_is_static(op) && instr_int(in, ATTR_INFERRED_DIMENSION, &k)) {
		if (k >= 0 && k < inf->rank)
			inf->dim_kind[k] = DIM_BOUNDED;
	} else if (!shape_is_static(op) && shape_is_static(in->shape)) {
		reshape_dynamic_groups(op, inf);
	}
	return 0;
}

/* The size a dynamic-reshape's size operand sz holds when the sized check
 * knows it: a constant's value, or get-dimension-size of a static
 * dimension; 0 when it does not (a value computed at run time). */
static int known_size(const instr *sz, int64_t *out)
{
	if (sz->op == OP_CONSTANT && sz->value && sz->value->data && sz->value->nbytes >= sizeof(int32_t)) {
		int32_t v;
		memcpy(&v, sz->value->data, sizeof v);
		*out = v;
		return 1;
	}
	const int_list *dl = sz->op == OP_GET_DIMENSION_SIZE ? instr_ints(sz, ATTR_DIMENSIONS) : NULL;
	const shape *x = dl && dl->n == 1 && sz->nops == 1 && sz->ops[0].def ? sz->ops[0].def->result : NULL;
	if (!x || !shape_is_array(x) || dl->v[0] < 0 || dl->v[0] >= x->rank || x->dim_kind[dl->v[0]] != DIM_STATIC)
		return 0;
	*out = x->dims[dl->v[0]];
	return 1;
}

/* dynamic-reshape(x, size...): the written shape's bounds, the operand's
 * type, one s32 scalar size per result dimension (XLA's
 * InferDynamicReshapeShape, which asks S32 or scalar; a size is both
 * here, as the kernel reads one). A `?` (XLA's shape rule has no count to
 * compare): the counts are compared once both are known; in a run
 * (check_module_sized) a `?` result dimension takes the size its operand
 * holds when that is known (known_size), else it is `<=E`, E the
 * operand's element count, its size read when the op runs, which then
 * asks the sizes to hold exactly the operand's elements. */
int infer_dynamic_reshape(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (!ck_needs_shape(c, in) || !ck_array_operand(c, in, 0))
		return 1;
	const shape *op = in->ops[0].def->result;
	if (shape_is_tuple(in->shape) || in->nops != in->shape->rank + 1) {
		ck_error(c, in->op_at,
			 "dynamic-reshape to %s expects %d operands (the operand and one size per dimension), but has %d operands",
			 ck_shape(a, in->shape), shape_is_tuple(in->shape) ? 1 : in->shape->rank + 1, in->nops);
		return 1;
	}
	for (int i = 1; i < in->nops; i++) {
		const shape *v = in->ops[i].def->result;
		if (shape_is_tuple(v) || v->type != ET_S32 || v->rank != 0) {
			ck_error(c, in->ops[i].at, "DynamicReshape's dim size has to be scalar S32, got (%s): ",
				 ck_shape(a, v));
			return 1;
		}
	}
	shape_make_array(inf, op->type, in->shape->rank, in->shape->dims);
	memcpy(inf->dim_kind, in->shape->dim_kind, sizeof inf->dim_kind);
	int64_t from = 0, to = 0;
	if (c->input_shapes && !shape_has_unbounded(op) && shape_has_unbounded(inf)) {
		/* the bound: the operand's elements over the known dimensions' */
		int64_t known = 1, v;
		if (shape_element_count(op, &from))
			from = INT64_MAX;
		for (int d = 0; d < inf->rank; d++)
			if (inf->dim_kind[d] == DIM_UNBOUNDED ? known_size(in->ops[1 + d].def, &v) && v > 0
							      : inf->dims[d] > 0)
				known *= inf->dim_kind[d] == DIM_UNBOUNDED ? v : inf->dims[d];
		for (int d = 0; d < inf->rank; d++) {
			if (inf->dim_kind[d] != DIM_UNBOUNDED)
				continue;
			if (!known_size(in->ops[1 + d].def, &v)) {
				inf->dims[d] = known > 0 ? from / known : from;
				inf->dim_kind[d] = DIM_BOUNDED;
			} else if (v < 0) {
				ck_error(c, in->ops[1 + d].at, "dynamic-reshape: size %lld of dimension %d is negative",
					 (long long)v, d);
				return 1;
			} else {
				inf->dims[d] = v;
				inf->dim_kind[d] = DIM_STATIC;
			}
		}
		if (!shape_is_static(inf))
			return 0;
	}
	if (shape_has_unbounded(op) || shape_has_unbounded(inf))
		return 0;
	if (shape_element_count(op, &from) || shape_element_count(inf, &to) || from != to) {
		ck_error(c, in->op_at, "Reshape operation has mismatched element counts: from=%lld (%s) to=%lld (%s).",
			 (long long)from, ck_shape(a, op), (long long)to, ck_shape(b, inf));
		return 1;
	}
	return 0;
}

int infer_transpose(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	if (!ck_array_operand(c, in, 0))
		return 1;
	const shape *op = in->ops[0].def->result;
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	if (!dl) {
		ck_error(c, in->op_at, "attribute dimensions is expected but not seen");
		return 1;
	}
	int ok = dl->n == op->rank;
	unsigned seen = 0;
	for (int i = 0; ok && i < dl->n; i++) {
		if (dl->v[i] < 0 || dl->v[i] >= op->rank || (seen & (1u << dl->v[i])))
			ok = 0;
		else
			seen |= 1u << dl->v[i];
	}
	if (!ok) {
		strbuf m = STRBUF_INIT;
		sb_puts(&m, "Transpose dimensions [");
		for (int i = 0; i < dl->n; i++)
			sb_printf(&m, i ? ",%lld" : "%lld", (long long)dl->v[i]);
		sb_printf(&m, "] are not a permutation of the operand dimensions (operand shape is %s).",
			  ck_shape(a, op));
		if (m.oom)
			c->oom = 1;
		else
			ck_error(c, ck_attr_loc(c, dl->at, "dimensions"), "%s", sb_str(&m));
		sb_free(&m);
		return 1;
	}
	int64_t dims[HLOI_MAX_RANK];
	for (int i = 0; i < op->rank; i++)
		dims[i] = op->dims[dl->v[i]];
	shape_make_array(inf, op->type, op->rank, dims);
	for (int i = 0; i < op->rank; i++)
		inf->dim_kind[i] = op->dim_kind[dl->v[i]];
	return 0;
}

