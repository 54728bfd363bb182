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
#include "eval/kernels/kernel.h"
#include "eval/plan/plan.h"
#include "util/alloc.h"

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
hloi_status kernel_set_dimension_size(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
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
 * undefined), and so is fewer for a result written with `?` (the sized
 * check made it `<=N`). The result's padding holds zeros. */
hloi_status kernel_dynamic_reshape(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
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
	if (nto != nfrom && in->has_shape && shape_has_unbounded(in->shape)) {
		/* a `?` result: the sizes are its only account of the elements */
		diag_error(e->ctx, e->m->src, in->op_at,
			   "dynamic-reshape: the sizes given hold %lld elements, not the %lld of its operand (instruction '%s')",
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
	/* op-specific: each op's own size rule */
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
	case OP_GATHER: {
		/* an operand dimension taken whole goes to its offset
		 * dimension; an indices batch dimension to its result batch
		 * dimension (XLA's HandleGather; the checker refuses the rest) */
		int from_op[HLOI_MAX_RANK], from_dim[HLOI_MAX_RANK];
		int64_t szs[2][HLOI_MAX_RANK];
		literal_sizes(ops[0], szs[0]);
		literal_sizes(ops[1], szs[1]);
		gather_result_sources(in, ops[0]->shape.dims, ops[0]->shape.rank, ops[1]->shape.rank, rs->rank, from_op,
				      from_dim);
		for (int r = 0; r < rs->rank; r++)
			if (from_op[r] >= 0)
				to[r] = szs[from_op[r]][from_dim[r]];
		return HLOI_OK;
	}
	case OP_DYNAMIC_SLICE:
		/* a dimension taken whole keeps its size */
		literal_sizes(ops[0], sz);
		for (int d = 0; d < rs->rank; d++)
			if (rs->dims[d] == ops[0]->shape.dims[d])
				to[d] = sz[d];
		return HLOI_OK;
	case OP_DYNAMIC_UPDATE_SLICE: {
		/* the operand's sizes, or an update's that spans a dimension */
		int64_t us[HLOI_MAX_RANK];
		literal_sizes(ops[0], sz);
		literal_sizes(ops[1], us);
		for (int d = 0; d < rs->rank; d++)
			to[d] = ops[1]->shape.dim_kind[d] == DIM_BOUNDED && ops[1]->shape.dims[d] == rs->dims[d] ? us[d]
															 : sz[d];
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

/* a zero of any element type */
static const unsigned char zero_element[16];

/* Sets the elements of x past its sizes to the element `fill`. */
static void fill_padding(hloi_literal *x, const void *fill)
{
	const shape *s = &x->shape;
	int64_t n, idx[HLOI_MAX_RANK] = { 0 };
	if (shape_element_count(s, &n) || n == 0 || !x->data || !fill)
		return;
	size_t w = (size_t)etype_byte_width(s->type);
	do {
		int pad = 0;
		for (int d = 0; d < s->rank; d++)
			pad |= idx[d] >= x->dynamic_size[d];
		if (pad)
			memcpy(literal_element(x, idx), fill, w);
	} while (index_next(s->rank, s->dims, idx));
}

/* A copy of x whose elements past its sizes are the element `fill` (the
 * padding a reduce or dot must not see, set to the init value or zero). */
static hloi_status masked(engine *e, const hloi_literal *x, const void *fill, hloi_literal **out)
{
	hloi_status st = value_clone(e, x, out);
	if (st == HLOI_OK)
		fill_padding(*out, fill);
	return st;
}

static hloi_status eval_sized(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			      hloi_literal *const *args, kernel_fn k, opcode as, const window *win);

static hloi_status eval_scatter_sized(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
				      hloi_literal *const *args, kernel_fn k);

hloi_status eval_dynamic(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *const *args,
			 hloi_literal *dest, kernel_fn k)
{
	if (opcode_dynamic_on_sizes(in))
		return eval_sized(e, f, in, ops, args, k, in->op, NULL);
	if (in->op == OP_SCATTER)
		return eval_scatter_sized(e, f, in, ops, args, k);
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
		st = k(&(kernel_ctx){ e, f, in, mops, args, dest });
		value_drop(e, m);
	} else if (in->op == OP_DOT) {
		/* the padding of a contracted dimension must add nothing: zeros
		 * there, as XLA's dynamic padder pads a dot's operands */
		hloi_literal *mops[2] = { ops[0], ops[1] };
		st = HLOI_OK;
		for (int i = 0; i < 2 && st == HLOI_OK; i++)
			if (literal_is_dynamic(ops[i]))
				st = masked(e, ops[i], zero_element, &mops[i]);
		if (st == HLOI_OK)
			st = k(&(kernel_ctx){ e, f, in, mops, args, dest });
		for (int i = 0; i < 2; i++)
			if (mops[i] != ops[i])
				value_drop(e, mops[i]);
	} else {
		st = k(&(kernel_ctx){ e, f, in, ops, args, dest });
	}
	/* the ops that make sizes (set-dimension-size, dynamic-reshape,
	 * SliceToDynamic) set them themselves */
	if (st != HLOI_OK || !shape_is_array(rs) || shape_is_static(rs) ||
	    !(in->op == OP_REDUCE || in->op == OP_SLICE || in->op == OP_DOT || in->op == OP_GATHER ||
	      in->op == OP_DYNAMIC_SLICE || in->op == OP_DYNAMIC_UPDATE_SLICE || in->op == OP_MAP ||
	      in->op == OP_REDUCE_PRECISION || in->op == OP_ALL_REDUCE || eval_is_elementwise(in->op)))
		return st;
	st = result_sizes(e, in, ops, to);
	if (st != HLOI_OK)
		return st;
	hloi_literal *res = f->vals[in->position];
	for (int d = 0; d < rs->rank; d++)
		res->dynamic_size[d] = rs->dim_kind[d] == DIM_BOUNDED ? to[d] : rs->dims[d];
	return HLOI_OK;
}

/* --- ops computed on the elements within the sizes --------------------------- */

/* Copies the elements of src at the indices within `sizes` to the same
 * indices of dst. */
static void copy_box(hloi_literal *dst, const hloi_literal *src, int rank, const int64_t *sizes)
{
	int64_t n = 1, idx[HLOI_MAX_RANK] = { 0 };
	for (int d = 0; d < rank; d++)
		n *= sizes[d];
	if (n == 0 || !dst->data || !src->data)
		return;
	size_t w = (size_t)etype_byte_width(dst->shape.type);
	do
		memcpy(literal_element(dst, idx), literal_element(src, idx), w);
	while (index_next(rank, sizes, idx));
}

/* s as a static shape of the sizes given (its layout kept). */
static shape sized_shape(const shape *s, const int64_t *sizes)
{
	shape c = *s;
	for (int d = 0; d < s->rank; d++) {
		c.dims[d] = sizes[d];
		c.dim_kind[d] = DIM_STATIC;
	}
	return c;
}

/* A static copy of array x holding its elements within sizes sz (at most
 * its own). */
static hloi_status compact(engine *e, const hloi_literal *x, const int64_t *sz, hloi_literal **out)
{
	shape c = sized_shape(&x->shape, sz);
	hloi_status st = value_new(e, &c, out);
	if (st == HLOI_OK)
		copy_box(*out, x, c.rank, sz);
	return st;
}

/* Result array r of in->result's element shape s, computed at the sizes of
 * its own dims, as a value of s whose sizes those are (padding zero). */
static hloi_status expand_into(const instr *in, engine *e, const shape *s, const hloi_literal *r, hloi_literal *out)
{
	(void)e;
	if (out->data) {
		memset(out->data, 0, out->nbytes);
		literal_fill_padding(out);
	}
	for (int d = 0; d < s->rank; d++) {
		if (r->shape.dims[d] > s->dims[d] || (s->dim_kind[d] != DIM_BOUNDED && r->shape.dims[d] != s->dims[d])) {
			diag_error(e->ctx, e->m->src, in->op_at,
				   "%s: dimension %d of the result has size %lld at the operands' sizes, but the result is declared %s%lld (instruction '%s')",
				   opcode_name(in->op), d, (long long)r->shape.dims[d],
				   s->dim_kind[d] == DIM_BOUNDED ? "<=" : "", (long long)s->dims[d], in->name);
			return HLOI_EINVAL;
		}
		out->dynamic_size[d] = r->shape.dims[d];
	}
	copy_box(out, r, s->rank, r->shape.dims);
	return HLOI_OK;
}

/* The windowed output size of an input of size n (XLA's
 * GetWindowedOutputSize, base dilation and padding included); -1 when it
 * would be negative. */
static int64_t windowed(int64_t n, const window_dim *w)
{
	int64_t in = n == 0 ? 0 : (n - 1) * w->lhs_dilate + 1;
	int64_t span = (w->size - 1) * w->rhs_dilate + 1;
	int64_t padded = in + w->pad_lo + w->pad_hi;
	if (padded < span)
		return padded >= 0 ? 0 : -1;
	return (padded - span) / w->stride + 1;
}

/* A located error for a result size the operands' sizes make negative. */
static hloi_status negative_size(engine *e, const instr *in, int d, int64_t size)
{
	diag_error(e->ctx, e->m->src, in->op_at,
		   "%s: dimension %d of the result would have size %lld at the operands' sizes (instruction '%s')",
		   opcode_name(in->op), d, (long long)size, in->name);
	return HLOI_EINVAL;
}

/* The sizes of the result (of its first element, for a tuple: the ops here
 * give all elements the same dimensions) of `in` computed on operands of
 * sizes sz[k], as XLA's dynamic dimension inference follows them: a
 * concatenate's dimension is the sum of its operands', a pad's lo + size
 * + hi + interior * (size - 1), a reduce keeps the dimensions not
 * reduced, a reduce-window and a convolution take the windowed size, a
 * sort, reverse, gather of whole dimensions and the rest keep them. */
static hloi_status sized_result(engine *e, const instr *in, const window *win, int64_t (*sz)[HLOI_MAX_RANK],
				int64_t *to)
{
	const shape *rs = shape_is_tuple(in->result) ? &in->result->tuple[0] : in->result;
	const int_list *dims = instr_ints(in, ATTR_DIMENSIONS);
	int from[HLOI_MAX_RANK];
	for (int d = 0; d < rs->rank; d++) {
		to[d] = rs->dims[d];
		from[d] = -1;
	}
	/* op-specific: each op's own size rule */
	switch (in->op) {
	case OP_CONCATENATE: {
		int64_t cd = dims && dims->n ? dims->v[0] : 0;
		for (int d = 0; d < rs->rank; d++) {
			if (d == cd) {
				to[d] = 0;
				for (int k = 0; k < in->nops; k++)
					to[d] += sz[k][d];
				continue;
			}
			for (int k = 0; k < in->nops; k++) {
				hloi_status st = take_size(e, in, k, d, sz[k][d], &to[d], &from[d]);
				if (st != HLOI_OK)
					return st;
			}
		}
		return HLOI_OK;
	}
	case OP_PAD: {
		const attr *pa = instr_attr(in, ATTR_PADDING);
		for (int d = 0; d < rs->rank; d++) {
			int64_t n = sz[0][d];
			if (pa && pa->kind == AK_PADDING && d < pa->u.pad.n)
				n = pa->u.pad.lo[d] + pa->u.pad.hi[d] + n + (n > 0 ? (n - 1) * pa->u.pad.interior[d] : 0);
			if (n < 0)
				return negative_size(e, in, d, n);
			to[d] = n;
		}
		return HLOI_OK;
	}
	case OP_REDUCE: {
		int r = 0, ninputs = in->nops / 2;
		for (int i = 0; i < in->ops[0].def->result->rank && r < rs->rank; i++) {
			int reduced = 0;
			for (int j = 0; dims && j < dims->n; j++)
				reduced |= dims->v[j] == i;
			if (reduced)
				continue;
			for (int k = 0; k < ninputs; k++) {
				hloi_status st = take_size(e, in, k, i, sz[k][i], &to[r], &from[r]);
				if (st != HLOI_OK)
					return st;
			}
			r++;
		}
		return HLOI_OK;
	}
	case OP_REDUCE_WINDOW:
		for (int d = 0; d < rs->rank; d++) {
			to[d] = win && d < win->n ? windowed(sz[0][d], &win->d[d]) : sz[0][d];
			if (to[d] < 0)
				return negative_size(e, in, d, to[d]);
		}
		return HLOI_OK;
	case OP_CONVOLUTION: {
		const attr *la = instr_attr(in, ATTR_DIM_LABELS);
		const conv_dims *cd = la->conv;
		to[cd->output_batch] = sz[0][cd->input_batch];
		to[cd->output_feature] = sz[1][cd->kernel_output_feature];
		for (int i = 0; i < cd->nspatial; i++) {
			int64_t n = win && i < win->n ? windowed(sz[0][cd->input_spatial[i]], &win->d[i])
						      : sz[0][cd->input_spatial[i]];
			if (n < 0)
				return negative_size(e, in, (int)cd->output_spatial[i], n);
			to[cd->output_spatial[i]] = n;
		}
		return HLOI_OK;
	}
	case OP_SELECT_AND_SCATTER:
		/* the operand's sizes (the source was cut to its windows) */
		for (int d = 0; d < rs->rank; d++)
			to[d] = sz[0][d];
		return HLOI_OK;
	default:
		/* sort, reverse: the operands' sizes, which must agree */
		for (int k = 0; k < in->nops; k++)
			for (int d = 0; d < rs->rank && d < in->ops[k].def->result->rank; d++) {
				hloi_status st = take_size(e, in, k, d, sz[k][d], &to[d], &from[d]);
				if (st != HLOI_OK)
					return st;
			}
		return HLOI_OK;
	}
}

/* `in` computed by kernel k on static copies of its operands that hold
 * their elements within their sizes (a convolution's input features and
 * its kernel's cut to the smaller of their sizes: XLA's dynamic padder
 * zeroes the padding of both),
 * into a result of those sizes, placed in a value of in->result's bounds
 * whose sizes they are: the padding takes no part, as XLA's dynamic padder
 * makes sure (a concatenate places each operand right after the previous
 * one's size, a sort sorts the elements within the size). `win`, when
 * given, is the window to compute with (DynamicConvolutionForward's,
 * padded for its input sizes). */
/* Gives copy (a copy of an instruction) attributes of its own, *attrs
 * (hloi_free them after), with window `win` to compute with in place of
 * the written one. */
static hloi_status with_window(engine *e, instr *copy, const window *win, attr **attrs)
{
	*attrs = hloi_calloc((size_t)copy->nattrs, sizeof **attrs);
	if (!*attrs)
		return value_oom(e, (int64_t)copy->nattrs * (int64_t)sizeof **attrs);
	for (int i = 0; i < copy->nattrs; i++) {
		(*attrs)[i] = copy->attrs[i];
		if ((*attrs)[i].id == ATTR_WINDOW && (*attrs)[i].kind == AK_WINDOW)
			(*attrs)[i].u.win = *win;
	}
	copy->attrs = *attrs;
	return HLOI_OK;
}

static hloi_status eval_sized(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			      hloi_literal *const *args, kernel_fn k, opcode as, const window *win)
{
	enum { MAX_SIZED = 16 };
	if (in->nops > MAX_SIZED) {
		diag_error(e->ctx, e->m->src, in->op_at,
			   "%s of %d operands with dynamic sizes: at most %d are supported (instruction '%s')",
			   opcode_name(in->op), in->nops, MAX_SIZED, in->name);
		return HLOI_EUNSUPPORTED;
	}
	hloi_literal *cops[MAX_SIZED];
	uint8_t saved[MAX_SIZED];
	int64_t sz[MAX_SIZED][HLOI_MAX_RANK];
	hloi_status st = HLOI_OK;
	int pos = in->position;
	for (int i = 0; i < in->nops; i++) {
		cops[i] = ops[i];
		if (shape_is_array(&ops[i]->shape))
			literal_sizes(ops[i], sz[i]);
	}
	if (!win) {
		const attr *wa = instr_attr(in, ATTR_WINDOW);
		win = wa && wa->kind == AK_WINDOW ? &wa->u.win : NULL;
	}
	instr copy = *in;
	copy.op = as;
	if (as == OP_CONVOLUTION) {
		const conv_dims *cd = instr_attr(in, ATTR_DIM_LABELS)->conv;
		int64_t fgc = 1, *fi = &sz[0][cd->input_feature], *fk = &sz[1][cd->kernel_input_feature];
		instr_int(in, ATTR_FEATURE_GROUP_COUNT, &fgc);
		if (fgc != 1 && (*fi != ops[0]->shape.dims[cd->input_feature] ||
				 *fk != ops[1]->shape.dims[cd->kernel_input_feature])) {
			diag_error(e->ctx, e->m->src, in->op_at,
				   "convolution: a dynamic input feature dimension with feature_group_count=%lld is not supported (instruction '%s')",
				   (long long)fgc, in->name);
			return HLOI_EUNSUPPORTED;
		}
		/* the input features past either size meet zeros (XLA pads
		 * both with zeros): both cut to the smaller size */
		if (*fi < *fk)
			*fk = *fi;
		else
			*fi = *fk;
	}
	if (as == OP_SORT || as == OP_REDUCE || as == OP_REDUCE_WINDOW || as == OP_CONCATENATE) {
		/* inputs of one shape (but a concatenate's dimension): a `<=N`
		 * input's size is all of theirs, a static input cut to it, as
		 * XLA's dynamic dimension inference gives the result the
		 * dynamic input's size */
		int ninputs = as == OP_SORT || as == OP_CONCATENATE ? in->nops : in->nops / 2;
		const int_list *cd = instr_ints(in, ATTR_DIMENSIONS);
		for (int d = 0; d < ops[0]->shape.rank; d++) {
			if (as == OP_CONCATENATE && cd && cd->n && cd->v[0] == d)
				continue;
			int from = -1;
			int64_t size = 0;
			for (int i = 0; i < ninputs; i++) {
				if (ops[i]->shape.dim_kind[d] != DIM_BOUNDED)
					continue;
				st = take_size(e, in, i, d, sz[i][d], &size, &from);
				if (st != HLOI_OK)
					return st;
			}
			for (int i = 0; from >= 0 && i < ninputs; i++)
				sz[i][d] = size;
		}
	}
	if (as == OP_SELECT_AND_SCATTER && win) {
		/* the source holds one element per window over the operand's
		 * elements within its sizes: cut to them (XLA's dynamic
		 * dimension inference ignores the source's own sizes: the
		 * operand's give the result's) */
		for (int d = 0; d < ops[0]->shape.rank && d < win->n; d++) {
			int64_t n = windowed(sz[0][d], &win->d[d]);
			if (n < 0)
				return negative_size(e, in, d, n);
			sz[1][d] = n < ops[1]->shape.dims[d] ? n : ops[1]->shape.dims[d];
		}
	}
	int64_t to[HLOI_MAX_RANK];
	st = sized_result(e, &copy, win, sz, to);
	if (st != HLOI_OK)
		return st;
	for (int i = 0; i < in->nops && st == HLOI_OK; i++) {
		int whole = 1;
		for (int d = 0; shape_is_array(&ops[i]->shape) && d < ops[i]->shape.rank; d++)
			whole &= sz[i][d] == ops[i]->shape.dims[d];
		if (!whole)
			st = compact(e, ops[i], sz[i], &cops[i]);
	}
	const shape *rs = in->result;
	shape res_shape = *rs, elems[MAX_SIZED];
	if (shape_is_tuple(rs)) {
		for (int i = 0; i < rs->ntuple && i < MAX_SIZED; i++)
			elems[i] = sized_shape(&rs->tuple[i], to);
		res_shape.tuple = elems;
	} else {
		res_shape = sized_shape(rs, to);
	}
	copy.result = &res_shape;
	attr *attrs = NULL;
	if (st == HLOI_OK && win)
		st = with_window(e, &copy, win, &attrs);
	/* the copies are not the frame's values: no kernel may take one over
	 * as its result */
	for (int i = 0; i < in->nops; i++)
		saved[i] = f->owned[in->ops[i].def->position];
	for (int i = 0; i < in->nops; i++)
		if (cops[i] != ops[i])
			f->owned[in->ops[i].def->position] = VAL_BORROWED;
	/* (an operand passed as it is may still become the result) */
	if (st == HLOI_OK)
		st = k(&(kernel_ctx){ e, f, &copy, cops, args, NULL });
	for (int i = in->nops - 1; i >= 0; i--)
		if (cops[i] != ops[i])
			f->owned[in->ops[i].def->position] = saved[i];
	hloi_free(attrs);
	for (int i = 0; i < in->nops; i++)
		if (cops[i] != ops[i])
			value_drop(e, cops[i]);
	if (st != HLOI_OK)
		return st;
	hloi_literal *r = f->vals[pos], *out = NULL;
	st = value_new(e, rs, &out);
	if (st == HLOI_OK && shape_is_tuple(rs)) {
		for (int i = 0; i < rs->ntuple && st == HLOI_OK; i++)
			st = expand_into(in, e, &rs->tuple[i], r->elems[i], out->elems[i]);
	} else if (st == HLOI_OK) {
		st = expand_into(in, e, rs, r, out);
	}
	value_release(e, f, pos);
	if (st != HLOI_OK) {
		value_drop(e, out);
		return st;
	}
	f->vals[pos] = out;
	f->owned[pos] = VAL_OWNED;
	return HLOI_OK;
}

/* The padding PADDING_SAME gives n elements for a window spanning `span`
 * with stride `stride`: ceil(n / stride) outputs (XLA's
 * GetWindowedOutputSize), the smaller half of it before. */
static int64_t same_total(int64_t n, int64_t span, int64_t stride)
{
	if (stride < 1)
		stride = 1;
	int64_t outn = (n + stride - 1) / stride;
	int64_t total = (outn - 1) * stride + span - n;
	return total < 0 ? 0 : total;
}

/* XLA's padding_type: PADDING_SAME pads the input so that the output has
 * ceil(size / stride) positions, the padding split with the smaller half
 * before (XLA's GetWindowedOutputSize); PADDING_VALID pads nothing. The
 * window of `in` with that padding for its input of sizes sz along the
 * dimensions dim(i) into w (n dimensions, those of size 1 stride 1 left as
 * written when `skip_trivial`); the dimensions of xs that are not `<=N`
 * keep their written padding. */
static void same_padding(const window *src, const shape *xs, const int64_t *sz, const int64_t *dim, int same,
			 int skip_trivial, window_dim *w, window *out)
{
	out->n = src->n;
	out->d = w;
	for (int i = 0; i < src->n; i++) {
		w[i] = src->d[i];
		int64_t x = dim ? dim[i] : i;
		if (x >= xs->rank || xs->dim_kind[x] != DIM_BOUNDED)
			continue;
		if (skip_trivial && w[i].size == 1 && w[i].stride == 1 && w[i].pad_lo == 0 && w[i].pad_hi == 0 &&
		    w[i].lhs_dilate == 1 && w[i].rhs_dilate == 1)
			continue;
		int64_t n = sz[x], span = (w[i].size - 1) * w[i].rhs_dilate + 1;
		w[i].pad_lo = w[i].pad_hi = 0;
		if (!same)
			continue;
		int64_t total = same_total(n, span, w[i].stride);
		w[i].pad_lo = total / 2;
		w[i].pad_hi = total - total / 2;
	}
}

/* Whether `in`'s padding_type is PADDING_SAME. */
static int padding_same(const instr *in)
{
	const char *t = instr_text(in, ATTR_PADDING_TYPE);
	return t && strcmp(t, "PADDING_SAME") == 0;
}

/* XLA's DynamicConvolutionForward (input, kernel): the convolution of its
 * window and dim_labels over the elements within the input's sizes, the
 * window's padding recomputed from them for its padding_type (XLA's
 * dynamic padder, RewriteDynamicConvolutionForward). */
hloi_status eval_dynamic_conv_forward(engine *e, frame *f, const instr *in, hloi_literal *const *ops)
{
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	const attr *la = instr_attr(in, ATTR_DIM_LABELS);
	window_dim w[HLOI_MAX_RANK];
	window win = { 0, NULL };
	int64_t sz[HLOI_MAX_RANK];
	literal_sizes(ops[0], sz);
	if (wa && wa->kind == AK_WINDOW && la && la->conv)
		same_padding(&wa->u.win, &ops[0]->shape, sz, la->conv->input_spatial, padding_same(in), 0, w, &win);
	return eval_sized(e, f, in, ops, NULL, kernel_convolution, OP_CONVOLUTION, win.d ? &win : NULL);
}

/* `in` computed as op `as` by kernel k over the elements within its first
 * operand's sizes, each dimension whose window is not trivial padded for
 * SAME from its size. */
static hloi_status eval_same_padded(engine *e, frame *f, const instr *in, hloi_literal *const *ops, kernel_fn k,
				    opcode as)
{
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	window_dim w[HLOI_MAX_RANK];
	window win = { 0, NULL };
	int64_t sz[HLOI_MAX_RANK];
	literal_sizes(ops[0], sz);
	if (wa && wa->kind == AK_WINDOW)
		same_padding(&wa->u.win, &ops[0]->shape, sz, NULL, 1, 1, w, &win);
	return eval_sized(e, f, in, ops, NULL, k, as, win.d ? &win : NULL);
}

/* XLA's DynamicReduceWindowSamePadding (input, init): reduce-window with
 * to_apply over the elements within the input's sizes, each dimension
 * whose window is not trivial padded for SAME from its size (XLA's
 * dynamic padder, RewriteDynamicReduceWindowSamePadding). */
hloi_status eval_dynamic_reduce_window_same(engine *e, frame *f, const instr *in, hloi_literal *const *ops)
{
	return eval_same_padded(e, f, in, ops, kernel_reduce_window, OP_REDUCE_WINDOW);
}

/* XLA's DynamicSelectAndScatterSamePadding (operand, source, init),
 * called_computations={select, scatter}: select-and-scatter over the
 * operand's elements within its sizes, padded for SAME the same way, the
 * source cut to the windows of those elements; the result has the
 * operand's sizes (XLA's dynamic padder,
 * RewriteDynamicSelectAndScatterSamePadding). */
hloi_status eval_dynamic_select_and_scatter_same(engine *e, frame *f, const instr *in, hloi_literal *const *ops)
{
	return eval_same_padded(e, f, in, ops, kernel_select_and_scatter, OP_SELECT_AND_SCATTER);
}

/* XLA's DynamicConvolutionInputGrad (input sizes, output gradient, kernel)
 * and DynamicConvolutionKernelGrad (activations, output gradient): the
 * convolution of the last two operands with the window and dim_labels
 * written, as XLA's dynamic padder rewrites them
 * (RewriteDynamicConvolutionInputGrad, RewriteDynamicConvolutionKernelGrad).
 * The operands' padding is zero, so nothing past a size adds to the
 * result. For PADDING_SAME, each spatial dimension whose lhs is `<=N` has
 * its padding before recomputed: the input gradient's is the forward
 * window's span less 1 less the forward padding before for the input size
 * the first operand gives (GetWindowedInputGradSize; the forward stride
 * is the window's base dilation), the kernel gradient's the forward
 * padding before for the activations' size (the forward window is the
 * result's kernel size dilated by the window's stride, the forward stride
 * the window's dilation); the padding after keeps the written total, so
 * the result keeps its bounds (XLA pads and slices the lhs to the same
 * effect; its slice's start is clamped, so the padding before is at most
 * the written window's dilated size, at least 0). The input gradient's `<=N` dimension d takes the first
 * operand's element d (XLA's dynamic dimension inference), the kernel
 * gradient is static; the result's padding holds zeros. */
static hloi_status eval_conv_grad(engine *e, frame *f, const instr *in, hloi_literal *const *ops, int input_grad)
{
	const char *what = input_grad ? "DynamicConvolutionInputGrad" : "DynamicConvolutionKernelGrad";
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	const conv_dims *cd = instr_attr(in, ATTR_DIM_LABELS)->conv;
	const shape *rs = in->result;
	int first = input_grad ? 1 : 0;
	const hloi_literal *lhs = ops[first];
	int64_t lsz[HLOI_MAX_RANK], given[HLOI_MAX_RANK], to[HLOI_MAX_RANK];
	literal_sizes(lhs, lsz);
	for (int d = 0; d < rs->rank; d++) {
		to[d] = given[d] = rs->dims[d];
		if (!input_grad || (rs->dim_kind[d] != DIM_BOUNDED && lhs->shape.dim_kind[d] != DIM_BOUNDED))
			continue;
		int64_t i = d;
		int32_t n = 0;
		if (ops[0]->data)
			memcpy(&n, literal_element(ops[0], &i), sizeof n);
		if (n < 0 || n > rs->dims[d]) {
			diag_error(e->ctx, e->m->src, in->ops[0].at,
				   "%s: input size %d of dimension %d is outside [0, %lld] (instruction '%s')", what, (int)n,
				   d, (long long)rs->dims[d], in->name);
			return HLOI_EINVAL;
		}
		given[d] = n;
		if (rs->dim_kind[d] == DIM_BOUNDED)
			to[d] = n;
	}
	window_dim w[HLOI_MAX_RANK];
	window win = { 0, w };
	if (wa && wa->kind == AK_WINDOW) {
		win.n = wa->u.win.n;
		memcpy(w, wa->u.win.d, sizeof w[0] * (size_t)win.n);
	}
	for (int i = 0; padding_same(in) && i < win.n && i < cd->nspatial; i++) {
		int64_t x = cd->input_spatial[i], before;
		if (lhs->shape.dim_kind[x] != DIM_BOUNDED)
			continue;
		if (input_grad) {
			int64_t span = (w[i].size - 1) * w[i].rhs_dilate + 1;
			before = span - 1 - same_total(given[x], span, w[i].lhs_dilate) / 2;
		} else {
			int64_t span = (rs->dims[cd->output_spatial[i]] - 1) * w[i].stride + 1;
			before = same_total(lsz[x], span, w[i].rhs_dilate) / 2;
		}
		/* XLA pads the lhs by the dilated window before it and takes a
		 * dynamic-slice from that less `before`, whose start is clamped:
		 * the padding before stays within [0, the dilated window] */
		int64_t dws = (w[i].size - 1) * w[i].rhs_dilate + 1;
		before = before < 0 ? 0 : before > dws ? dws : before;
		w[i].pad_hi += w[i].pad_lo - before;
		w[i].pad_lo = before;
	}
	hloi_literal *mops[2] = { ops[first], ops[first + 1] };
	hloi_status st = HLOI_OK;
	for (int i = 0; i < 2 && st == HLOI_OK; i++)
		if (literal_is_dynamic(ops[first + i]))
			st = masked(e, ops[first + i], zero_element, &mops[i]);
	instr copy = *in;
	copy.op = OP_CONVOLUTION;
	copy.ops = in->ops + first;
	copy.nops = 2;
	attr *attrs = NULL;
	if (st == HLOI_OK && win.n)
		st = with_window(e, &copy, &win, &attrs);
	if (st == HLOI_OK)
		st = kernel_convolution(&(kernel_ctx){ e, f, &copy, mops, NULL, NULL });
	hloi_free(attrs);
	for (int i = 0; i < 2; i++)
		if (mops[i] != ops[first + i])
			value_drop(e, mops[i]);
	if (st != HLOI_OK)
		return st;
	hloi_literal *res = f->vals[in->position];
	memcpy(res->dynamic_size, to, sizeof to[0] * (size_t)rs->rank);
	fill_padding(res, zero_element);
	return HLOI_OK;
}

hloi_status eval_dynamic_conv_input_grad(engine *e, frame *f, const instr *in, hloi_literal *const *ops)
{
	return eval_conv_grad(e, f, in, ops, 1);
}

hloi_status eval_dynamic_conv_kernel_grad(engine *e, frame *f, const instr *in, hloi_literal *const *ops)
{
	return eval_conv_grad(e, f, in, ops, 0);
}

/* scatter with `<=N` values, as XLA's dynamic dimension inference and
 * padder define it (HandleScatter; ChooseIdentityValue pads the indices
 * with their type's largest value, out of bounds, so padded updates are
 * skipped): the result has the operands' sizes; only the indices and
 * updates within their sizes scatter (an index's batch dimension and the
 * update's scatter dimension it gives are cut to the smaller of their
 * sizes); an update window dimension that is `<=N` spans its operand's
 * dimension (the checker refuses another) and must have its size; an
 * index vector dimension cut short leaves every index out of bounds, so
 * nothing scatters. The operands are computed whole (their padding is
 * the result's). */
static hloi_status eval_scatter_sized(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
				      hloi_literal *const *args, kernel_fn k)
{
	enum { MAX_SCATTER = 16 };
	int n = in->nops / 2;
	if (in->nops > MAX_SCATTER) {
		diag_error(e->ctx, e->m->src, in->op_at,
			   "scatter of %d operands with dynamic sizes: at most %d are supported (instruction '%s')",
			   in->nops, MAX_SCATTER, in->name);
		return HLOI_EUNSUPPORTED;
	}
	const hloi_literal *ix = ops[n];
	const int_list *uwd = instr_ints(in, ATTR_UPDATE_WINDOW_DIMS), *iwd = instr_ints(in, ATTR_INSERTED_WINDOW_DIMS);
	const int_list *ibd = instr_ints(in, ATTR_INPUT_BATCHING_DIMS);
	int64_t ivd = ix->shape.rank;
	instr_int(in, ATTR_INDEX_VECTOR_DIM, &ivd);
	int64_t szi[HLOI_MAX_RANK], szu[MAX_SCATTER][HLOI_MAX_RANK], szo[HLOI_MAX_RANK];
	literal_sizes(ix, szi);
	literal_sizes(ops[0], szo);
	for (int i = 0; i < n; i++)
		literal_sizes(ops[n + 1 + i], szu[i]);
	const shape *us = &ops[n + 1]->shape;
	int none = ivd < ix->shape.rank && szi[ivd] != ix->shape.dims[ivd];
	/* update window dimension j is the j-th operand dimension neither
	 * inserted nor batched */
	int od = 0, j = 0;
	for (int d = 0; d < us->rank; d++) {
		if (!int_list_has(uwd, d))
			continue;
		while (od < ops[0]->shape.rank && (int_list_has(iwd, od) || int_list_has(ibd, od)))
			od++;
		for (int i = 0; i < n && od < ops[0]->shape.rank; i++)
			if (ops[n + 1 + i]->shape.dim_kind[d] == DIM_BOUNDED && szu[i][d] != szo[od]) {
				diag_error(e->ctx, e->m->src, in->ops[n + 1 + i].at,
					   "scatter: update window dimension %d has size %lld, but operand dimension %d, which it spans, has %lld (instruction '%s')",
					   d, (long long)szu[i][d], od, (long long)szo[od], in->name);
				return HLOI_EINVAL;
			}
		od++;
		j++;
	}
	/* the j-th indices dimension but the index vector one is the j-th
	 * update dimension not in the window */
	int bi = 0;
	for (int d = 0; d < us->rank; d++) {
		if (int_list_has(uwd, d))
			continue;
		if (bi == ivd)
			bi++;
		int64_t c = bi < ix->shape.rank ? szi[bi] : 1;
		for (int i = 0; i < n; i++)
			if (szu[i][d] < c)
				c = szu[i][d];
		if (bi < ix->shape.rank)
			szi[bi] = c;
		for (int i = 0; i < n; i++)
			szu[i][d] = c;
		bi++;
	}
	for (int d = 0; d < us->rank; d++)
		if (int_list_has(uwd, d))
			for (int i = 0; i < n; i++)
				szu[i][d] = ops[n + 1 + i]->shape.dims[d];
	hloi_literal *cops[MAX_SCATTER];
	uint8_t saved[MAX_SCATTER];
	hloi_status st = HLOI_OK;
	for (int i = 0; i < in->nops; i++) {
		cops[i] = ops[i];
		saved[i] = f->owned[in->ops[i].def->position];
	}
	for (int i = n; i < in->nops && st == HLOI_OK && !none; i++) {
		const int64_t *want = i == n ? szi : szu[i - n - 1];
		int whole = 1;
		for (int d = 0; d < ops[i]->shape.rank; d++)
			whole &= want[d] == ops[i]->shape.dims[d];
		if (!whole)
			st = compact(e, ops[i], want, &cops[i]);
	}
	/* the copies are not the frame's values: no kernel may take one over */
	for (int i = 0; i < in->nops; i++)
		if (cops[i] != ops[i])
			f->owned[in->ops[i].def->position] = VAL_BORROWED;
	if (st == HLOI_OK && none) {
		/* nothing scatters: the operands as they are */
		hloi_literal *res = NULL;
		st = value_new(e, in->result, &res);
		for (int i = 0; st == HLOI_OK && i < n; i++)
			value_copy(n == 1 ? res : res->elems[i], ops[i]);
		if (st == HLOI_OK) {
			f->vals[in->position] = res;
			f->owned[in->position] = VAL_OWNED;
		}
	} else if (st == HLOI_OK) {
		st = k(&(kernel_ctx){ e, f, in, cops, args, NULL });
	}
	for (int i = in->nops - 1; i >= 0; i--)
		if (cops[i] != ops[i]) {
			f->owned[in->ops[i].def->position] = saved[i];
			value_drop(e, cops[i]);
		}
	if (st != HLOI_OK)
		return st;
	hloi_literal *res = f->vals[in->position];
	for (int i = 0; i < n; i++) {
		hloi_literal *r = n == 1 ? res : res->elems[i];
		int64_t sz[HLOI_MAX_RANK];
		literal_sizes(ops[i], sz);
		for (int d = 0; d < r->shape.rank; d++)
			r->dynamic_size[d] = r->shape.dim_kind[d] == DIM_BOUNDED ? sz[d] : r->shape.dims[d];
	}
	return HLOI_OK;
}
