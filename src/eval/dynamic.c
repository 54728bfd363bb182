/* Kernels of the ops that make dynamic dimensions (`<=N`):
 * set-dimension-size and dynamic-reshape. One kernel serves both engines.
 *
 * A value with a `<=N` dimension is a buffer of the bound's shape and the
 * dimension's size at run time (hloi_literal.dynamic_size), as XLA's
 * Literal holds it: the elements within the sizes sit at their own
 * indices, those past a size are padding. The checker lets only these two
 * ops and get-dimension-size take such a value (check/check.c). */
#include <string.h>

#include "core/index.h"
#include "eval/engine.h"

/* Reads an s32 scalar operand. */
static int32_t read_s32(const hloi_literal *v)
{
	int32_t x = 0;
	if (v->data)
		memcpy(&x, v->data, sizeof x);
	return x;
}

/* set-dimension-size(x, size), dimensions={d}: x's elements with dimension
 * d's size set; the size must lie in [0, bound] (XLA leaves a size past the
 * bound undefined; here it is an error). */
hloi_status kernel_set_dimension_size(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
				      hloi_literal *const *args, hloi_literal *dest)
{
	(void)args;
	(void)dest;
	int64_t d = instr_ints(in, ATTR_DIMENSIONS)->v[0];
	int32_t size = read_s32(ops[1]);
	int64_t bound = in->result->dims[d];
	if (size < 0 || size > bound) {
		diag_error(e->ctx, e->m->src, in->ops[1].at,
			   "set-dimension-size: size %d of dimension %lld is outside [0, %lld] (instruction '%s')",
			   (int)size, (long long)d, (long long)bound, in->name);
		return HLOI_EINVAL;
	}
	hloi_literal *res = NULL;
	hloi_status st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	value_copy(res, ops[0]);
	res->dynamic_size[d] = size;
	f->vals[in->position] = res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}

/* dynamic-reshape(x, size...): the elements of x within its sizes, in
 * row-major order, laid out row-major within the sizes the operands give
 * (a static dimension's size must be the dimension). Sizes holding fewer
 * elements than x take the first ones, as XLA's DynamicReshapeTest
 * SingleDynamicDimension expects; more is an error (they would be
 * undefined). The result's padding holds zeros. */
hloi_status kernel_dynamic_reshape(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
				   hloi_literal *const *args, hloi_literal *dest)
{
	(void)args;
	(void)dest;
	const shape *rs = in->result;
	const hloi_literal *x = ops[0];
	int64_t from[HLOI_MAX_RANK], to[HLOI_MAX_RANK], nfrom = 1, nto = 1;
	literal_sizes(x, from);
	for (int d = 0; d < x->shape.rank; d++)
		nfrom *= from[d];
	for (int d = 0; d < rs->rank; d++) {
		int32_t size = read_s32(ops[d + 1]);
		int dynamic = rs->dim_kind[d] == DIM_BOUNDED;
		if (size < 0 || size > rs->dims[d] || (!dynamic && size != rs->dims[d])) {
			if (dynamic)
				diag_error(e->ctx, e->m->src, in->ops[d + 1].at,
					   "dynamic-reshape: size %d of dimension %d is outside [0, %lld] (instruction '%s')",
					   (int)size, d, (long long)rs->dims[d], in->name);
			else
				diag_error(e->ctx, e->m->src, in->ops[d + 1].at,
					   "dynamic-reshape: size %d of static dimension %d is not %lld (instruction '%s')",
					   (int)size, d, (long long)rs->dims[d], in->name);
			return HLOI_EINVAL;
		}
		to[d] = size;
		nto *= size;
	}
	if (nto > nfrom) {
		diag_error(e->ctx, e->m->src, in->op_at,
			   "dynamic-reshape: the sizes given hold %lld elements, more than the %lld the operand holds within its sizes (instruction '%s')",
			   (long long)nto, (long long)nfrom, in->name);
		return HLOI_EINVAL;
	}
	hloi_literal *res = NULL;
	hloi_status st = value_new(e, rs, &res);
	if (st != HLOI_OK)
		return st;
	if (res->data) {
		memset(res->data, 0, res->nbytes);
		literal_fill_padding(res);
	}
	memcpy(res->dynamic_size, to, sizeof to[0] * (size_t)rs->rank);
	if (nto > 0 && x->data && res->data) {
		size_t w = (size_t)etype_byte_width(rs->type);
		int64_t si[HLOI_MAX_RANK] = { 0 }, di[HLOI_MAX_RANK] = { 0 };
		do
			memcpy(literal_element(res, di), literal_element(x, si), w);
		while (index_next(rs->rank, to, di) && index_next(x->shape.rank, from, si));
	}
	f->vals[in->position] = res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}
