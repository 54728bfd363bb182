/* Dynamic dimensions (`<=N`): the kernels of the ops that make them
 * (set-dimension-size, dynamic-reshape, XLA's SliceToDynamic and
 * PadToStatic custom-calls) and how their sizes flow through the ops that
 * take them (eval_dynamic). One kernel serves both engines.
 *
 * A value with a `<=N` dimension is a buffer of the bound's shape and the
 * dimension's size at run time (hloi_literal.dynamic_size), as XLA's
 * Literal holds it: the elements within the sizes sit at their own
 * indices, those past a size are padding, whose value XLA leaves to its
 * producer (xla/service/dynamic_padder.h: "whose value can be anything").
 * So an elementwise op, broadcast, transpose or slice computes the whole
 * buffer and its result takes its operands' sizes; a reduce first sets the
 * padding to its init value and a dot its operands' padding to zero (as
 * XLA's dynamic padder does); a reshape lays the elements within the
 * sizes out anew, as dynamic-reshape does. The checker says which ops take
 * such a value
 * (check/check.c: takes_dynamic). */
#include <string.h>

#include "core/index.h"
#include "eval/engine.h"
#include "eval/plan.h"

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

/* The elements of x within its sizes, in row-major order, laid out
 * row-major within the sizes `to` of a new value of in->result's shape
 * (the first ones when `to` holds fewer); its padding holds zeros. */
static hloi_status relayout(engine *e, frame *f, const instr *in, const hloi_literal *x, const int64_t *to)
{
	const shape *rs = in->result;
	int64_t from[HLOI_MAX_RANK], nto = 1;
	literal_sizes(x, from);
	for (int d = 0; d < rs->rank; d++)
		nto *= to[d];
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

/* Reads the sizes ops[first..] give in->result's dimensions into `to`: a
 * `<=N` dimension's within [0, N], a static one's the dimension itself
 * (a located error names `what` otherwise). */
static hloi_status read_sizes(engine *e, const instr *in, hloi_literal *const *ops, int first, const char *what,
			      int64_t *to)
{
	const shape *rs = in->result;
	for (int d = 0; d < rs->rank; d++) {
		int32_t size = read_s32(ops[d + first]);
		int dynamic = rs->dim_kind[d] == DIM_BOUNDED;
		if (size < 0 || size > rs->dims[d] || (!dynamic && size != rs->dims[d])) {
			if (dynamic)
				diag_error(e->ctx, e->m->src, in->ops[d + first].at,
					   "%s: size %d of dimension %d is outside [0, %lld] (instruction '%s')", what,
					   (int)size, d, (long long)rs->dims[d], in->name);
			else
				diag_error(e->ctx, e->m->src, in->ops[d + first].at,
					   "%s: size %d of static dimension %d is not %lld (instruction '%s')", what,
					   (int)size, d, (long long)rs->dims[d], in->name);
			return HLOI_EINVAL;
		}
		to[d] = size;
	}
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
	hloi_status st = read_sizes(e, in, ops, 1, "dynamic-reshape", to);
	if (st != HLOI_OK)
		return st;
	for (int d = 0; d < rs->rank; d++)
		nto *= to[d];
	if (nto > nfrom) {
		diag_error(e->ctx, e->m->src, in->op_at,
			   "dynamic-reshape: the sizes given hold %lld elements, more than the %lld the operand holds within its sizes (instruction '%s')",
			   (long long)nto, (long long)nfrom, in->name);
		return HLOI_EINVAL;
	}
	return relayout(e, f, in, x, to);
}

/* SliceToDynamic(x, size...) (XLA's custom-call, which its dynamic padder
 * writes): x with the sizes given, one s32 scalar per dimension (a static
 * dimension's must be the dimension); the elements keep their indices. */
hloi_status eval_slice_to_dynamic(engine *e, frame *f, const instr *in, hloi_literal *const *ops)
{
	int64_t to[HLOI_MAX_RANK];
	hloi_status st = read_sizes(e, in, ops, 1, "SliceToDynamic", to);
	if (st != HLOI_OK)
		return st;
	hloi_literal *res = NULL;
	st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	value_copy(res, ops[0]);
	memcpy(res->dynamic_size, to, sizeof to[0] * (size_t)in->result->rank);
	f->vals[in->position] = res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}

/* PadToStatic(x) (XLA's custom-call, the inverse): the tuple of x as a
 * static array of its bounds (the elements past a size are x's padding)
 * and each dimension's size as an s32 scalar. */
hloi_status eval_pad_to_static(engine *e, frame *f, const instr *in, hloi_literal *const *ops)
{
	const hloi_literal *x = ops[0];
	hloi_literal *res = NULL;
	hloi_status st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	value_copy(res->elems[0], x);
	int64_t sizes[HLOI_MAX_RANK];
	literal_sizes(x, sizes);
	for (int d = 0; d < x->shape.rank; d++) {
		int32_t size = (int32_t)sizes[d];
		if (res->elems[d + 1]->data)
			memcpy(res->elems[d + 1]->data, &size, sizeof size);
	}
	f->vals[in->position] = res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}

/* --- sizes through the ops that take them ------------------------------------ */

/* Whether evaluating `in` involves dynamic sizes: a `<=N` result, or an
 * operand whose value has one. */
int eval_is_dynamic(const instr *in, hloi_literal *const *ops)
{
	if (shape_is_array(in->result) && !shape_is_static(in->result))
		return 1;
	for (int i = 0; i < in->nops; i++)
		if (ops[i] && literal_is_dynamic(ops[i]))
			return 1;
	return 0;
}

/* Sets size *to of a result dimension from an operand's dimension of size
 * `size`; two operands giving the same dimension different sizes is an
 * error (XLA's dynamic dimension inference takes them to agree and leaves
 * the result undefined when they do not). */
static hloi_status take_size(engine *e, const instr *in, int k, int d, int64_t size, int64_t *to, int *from)
{
	if (*from >= 0 && *to != size) {
		diag_error(e->ctx, e->m->src, in->ops[k].at,
			   "%s: operand %d's dimension %d has size %lld, operand %d's %lld (instruction '%s')",
			   opcode_name(in->op), k, d, (long long)size, *from, (long long)*to, in->name);
		return HLOI_EINVAL;
	}
	*to = size;
	*from = k;
	return HLOI_OK;
}

/* The sizes of `in`'s result from its operands' (the result's bounds where
 * no operand gives one). */
static hloi_status result_sizes(engine *e, const instr *in, hloi_literal *const *ops, int64_t *to)
{
	const shape *rs = in->result;
	int from[HLOI_MAX_RANK];
	for (int d = 0; d < rs->rank; d++) {
		to[d] = rs->dims[d];
		from[d] = -1;
	}
	const int_list *dims = instr_ints(in, ATTR_DIMENSIONS);
	int64_t sz[HLOI_MAX_RANK];
	switch (in->op) {
	case OP_BROADCAST:
		/* operand dimension i is the result's dimensions[i] */
		literal_sizes(ops[0], sz);
		for (int i = 0; dims && i < ops[0]->shape.rank; i++)
			to[dims->v[i]] = sz[i];
		return HLOI_OK;
	case OP_TRANSPOSE:
		/* the result's dimension i is the operand's dimensions[i] */
		literal_sizes(ops[0], sz);
		for (int i = 0; dims && i < rs->rank; i++)
			to[i] = sz[dims->v[i]];
		return HLOI_OK;
	case OP_REDUCE: {
		/* the dimensions not reduced, in order */
		literal_sizes(ops[0], sz);
		int r = 0;
		for (int i = 0; i < ops[0]->shape.rank && r < rs->rank; i++) {
			int reduced = 0;
			for (int j = 0; dims && j < dims->n; j++)
				reduced |= dims->v[j] == i;
			if (!reduced)
				to[r++] = sz[i];
		}
		return HLOI_OK;
	}
	case OP_SLICE:
		/* a `<=N` result dimension is an operand's taken whole */
		literal_sizes(ops[0], sz);
		for (int d = 0; d < rs->rank; d++)
			to[d] = sz[d];
		return HLOI_OK;
	case OP_DOT: {
		int from_op[HLOI_MAX_RANK], from_dim[HLOI_MAX_RANK];
		int64_t szs[2][HLOI_MAX_RANK];
		literal_sizes(ops[0], szs[0]);
		literal_sizes(ops[1], szs[1]);
		int n = dot_result_sources(in, ops[0]->shape.rank, ops[1]->shape.rank, from_op, from_dim);
		for (int d = 0; d < n && d < rs->rank; d++)
			to[d] = szs[from_op[d]][from_dim[d]];
		return HLOI_OK;
	}
	default:
		/* elementwise: each operand of the result's rank, position by
		 * position (scalars of select and clamp broadcast) */
		for (int k = 0; k < in->nops; k++) {
			if (!shape_is_array(&ops[k]->shape) || ops[k]->shape.rank != rs->rank)
				continue;
			for (int d = 0; d < rs->rank; d++) {
				if (ops[k]->shape.dim_kind[d] != DIM_BOUNDED)
					continue;
				hloi_status st = take_size(e, in, k, d, ops[k]->dynamic_size[d], &to[d], &from[d]);
				if (st != HLOI_OK)
					return st;
			}
		}
		return HLOI_OK;
	}
}

/* A copy of x whose elements past its sizes are the element `fill` (the
 * padding a reduce or dot must not see, set to the init value or zero). */
static hloi_status masked(engine *e, const hloi_literal *x, const void *fill, hloi_literal **out)
{
	hloi_status st = value_clone(e, x, out);
	if (st != HLOI_OK)
		return st;
	const shape *s = &x->shape;
	int64_t n, idx[HLOI_MAX_RANK] = { 0 };
	if (shape_element_count(s, &n) || n == 0 || !(*out)->data || !fill)
		return HLOI_OK;
	size_t w = (size_t)etype_byte_width(s->type);
	do {
		int pad = 0;
		for (int d = 0; d < s->rank; d++)
			pad |= idx[d] >= x->dynamic_size[d];
		if (pad)
			memcpy(literal_element(*out, idx), fill, w);
	} while (index_next(s->rank, s->dims, idx));
	return HLOI_OK;
}

hloi_status eval_dynamic(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *const *args,
			 hloi_literal *dest, kernel_fn k)
{
	const shape *rs = in->result;
	int64_t to[HLOI_MAX_RANK];
	hloi_status st;
	if (in->op == OP_RESHAPE && literal_is_dynamic(ops[0])) {
		/* the elements within the sizes, row-major, into the result's
		 * bounds, whose one `<=N` dimension takes what the others leave */
		int64_t from[HLOI_MAX_RANK], n = 1, rest = 1;
		int dyn = -1, ndyn = 0;
		literal_sizes(ops[0], from);
		for (int d = 0; d < ops[0]->shape.rank; d++)
			n *= from[d];
		for (int d = 0; d < rs->rank; d++) {
			to[d] = rs->dims[d];
			if (rs->dim_kind[d] == DIM_BOUNDED) {
				dyn = d;
				ndyn++;
			} else {
				rest *= rs->dims[d];
			}
		}
		if (ndyn == 1 && rest > 0 && n % rest == 0 && n / rest <= rs->dims[dyn])
			to[dyn] = n / rest;
		else if (!(ndyn == 0 && n == rest)) {
			diag_error(e->ctx, e->m->src, in->op_at,
				   "reshape: the %lld elements within the operand's sizes do not fit the result's bounds, %lld elements per index of its one dynamic dimension (instruction '%s')",
				   (long long)n, (long long)rest, in->name);
			return HLOI_EINVAL;
		}
		return relayout(e, f, in, ops[0], to);
	}
	if (in->op == OP_REDUCE && literal_is_dynamic(ops[0])) {
		hloi_literal *m = NULL, *mops[2] = { NULL, ops[1] };
		st = masked(e, ops[0], ops[1]->data, &m);
		if (st != HLOI_OK)
			return st;
		mops[0] = m;
		st = k(e, f, in, mops, args, dest);
		value_drop(e, m);
	} else if (in->op == OP_DOT) {
		/* the padding of a contracted dimension must add nothing: zeros
		 * there, as XLA's dynamic padder pads a dot's operands */
		static const unsigned char zero[16];
		hloi_literal *mops[2] = { ops[0], ops[1] };
		st = HLOI_OK;
		for (int i = 0; i < 2 && st == HLOI_OK; i++)
			if (literal_is_dynamic(ops[i]))
				st = masked(e, ops[i], zero, &mops[i]);
		if (st == HLOI_OK)
			st = k(e, f, in, mops, args, dest);
		for (int i = 0; i < 2; i++)
			if (mops[i] != ops[i])
				value_drop(e, mops[i]);
	} else {
		st = k(e, f, in, ops, args, dest);
	}
	/* the ops that make sizes (set-dimension-size, dynamic-reshape,
	 * SliceToDynamic) set them themselves */
	if (st != HLOI_OK || !shape_is_array(rs) || shape_is_static(rs) ||
	    !(in->op == OP_REDUCE || in->op == OP_SLICE || in->op == OP_DOT || eval_is_elementwise(in->op)))
		return st;
	st = result_sizes(e, in, ops, to);
	if (st != HLOI_OK)
		return st;
	hloi_literal *res = f->vals[in->position];
	for (int d = 0; d < rs->rank; d++)
		res->dynamic_size[d] = rs->dim_kind[d] == DIM_BOUNDED ? to[d] : rs->dims[d];
	return HLOI_OK;
}
