/* Shape rules of the ops that apply a computation to elements (XLA's
 * shape_inference.cc at openxla/xla 841f8d2d: VerifyReducerShape,
 * InferReduceShape, InferReduceWindowShape, InferWindowOutputShape,
 * InferMapShape): reduce, reduce-window, map. The messages are XLA's.
 * VerifyReducerShape and InferWindowOutputShape, which the collectives,
 * scatter and select-and-scatter share, are in common.c. */
#include <string.h>

#include "check/check_internal.h"
#include "text/attr_text.h"
#include "util/checked.h"
#include "util/strbuf.h"

/* The computation of to_apply=, checked; NULL (reported) when missing or
 * unusable. */
static computation *reducer(checker *c, instr *in)
{
	if (!instr_attr(in, ATTR_TO_APPLY)) {
		ck_error(c, in->op_at, "attribute to_apply is expected but not seen");
		return NULL;
	}
	computation *f = instr_called(in, ATTR_TO_APPLY, 0);
	if (!f || ck_ensure_checked(c, in, f, ck_to_apply_loc(c, in)))
		return NULL;
	return f;
}

/* XLA's verifier without allow_mixed_precision (hlo_verifier.cc,
 * SameElementTypesForOperandsAndToApplyParameters): parameter k of f has
 * operand k's element type, for the first n operands. For reduce and
 * reduce-window this pairs the accumulators with the inputs and the
 * elements with the init values, as XLA does; with the reducer's own
 * checks it asks one float type of them all. */
int ck_to_apply_types(checker *c, const instr *in, const computation *f, int n)
{
	/* the verifier's custom-call rule does not look at the computations of
	 * DynamicReduceWindowSamePadding */
	if (c->mixed || in->op == OP_CUSTOM_CALL)
		return 0;
	for (int k = 0; k < n && k < f->nparams; k++) {
		const shape *p = f->params[k]->result, *o = in->ops[k].def->result;
		etype pt = shape_is_tuple(p) ? ET_TUPLE : p->type, ot = shape_is_tuple(o) ? ET_TUPLE : o->type;
		if (pt == ot)
			continue;
		strbuf m = STRBUF_INIT;
		sb_printf(&m, "Shape mismatch between to_apply computation parameter and operand %d in ", k);
		ck_instr_text(&m, in);
		sb_puts(&m, ".");
		return ck_report(c, ck_to_apply_loc(c, in), &m);
	}
	return 0;
}

/* The result of a reduction: one array of dims (rank, dims) per output,
 * typed as the reducer's result (a tuple for several), with the written
 * layouts where the instruction has them. */
static int reduction_result(checker *c, instr *in, const computation *f, int rank, const int64_t *dims, int n,
			    shape *inf)
{
	const shape *acc = f->root->result;
	if (!shape_is_tuple(acc)) {
		shape_make_array(inf, acc->type, rank, dims);
		return 0;
	}
	shape *el = arena_array(&c->m->arena, (size_t)n, sizeof *el);
	if (!el) {
		c->oom = 1;
		return 1;
	}
	for (int i = 0; i < n; i++) {
		shape_make_array(&el[i], acc->tuple[i].type, rank, dims);
		if (in->has_shape && shape_is_tuple(in->shape) && i < in->shape->ntuple) {
			const shape *w = &in->shape->tuple[i];
			if (!shape_is_tuple(w) && w->has_layout && w->rank == rank)
				el[i].layout = w->layout;
		}
	}
	memset(inf, 0, sizeof *inf);
	inf->type = ET_TUPLE;
	inf->ntuple = n;
	inf->tuple = el;
	c->keep_layout = 1;
	return 0;
}

/* reduce(inputs..., inits...), dimensions={...}, to_apply=f */
int infer_reduce(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	computation *f = reducer(c, in);
	if (!f)
		return 1;
	const int_list *dims = instr_ints(in, ATTR_DIMENSIONS);
	if (!dims) {
		ck_error(c, in->op_at, "attribute dimensions is expected but not seen");
		return 1;
	}
	if (in->nops == 0) {
		ck_error(c, in->op_at, "Reduce must have at least 2 arguments, has 0");
		return 1;
	}
	if (in->nops % 2) {
		ck_error(c, in->op_at, "Reduce must have an even number of arguments, has %d", in->nops);
		return 1;
	}
	for (int k = 0; k < in->nops; k++)
		if (!ck_array_operand(c, in, k))
			return 1;
	int n = in->nops / 2;
	const shape *arg = in->ops[0].def->result;
	/* `?` dimensions: the operands agree, `?` matching anything, and the
	 * kept dimensions are the most specific (XLA's UnboundedReduce) */
	shape merged = *arg;
	int unbounded = 0;
	for (int i = 0; i < n; i++)
		unbounded |= shape_has_unbounded(in->ops[i].def->result);
	for (int i = 1; i < n; i++) {
		const shape *s = in->ops[i].def->result;
		if (unbounded ? ck_unbounded_merge(&merged, s) : !shape_same_dims(arg, s)) {
			ck_error(c, in->ops[i].at,
				 "All reduced tensors must have compatible dimension. Tensor at index 0 has shape %s, and tensor at index %d has shape %s.",
				 ck_shape(a, arg), i, ck_shape(b, s));
			return 1;
		}
	}
	loc dat = ck_attr_loc(c, dims->at, "dimensions");
	for (int j = 0; j < dims->n; j++) {
		if (dims->v[j] < 0 || dims->v[j] >= arg->rank) {
			ck_error(c, dat, "Reducing out-of-bounds dimension %lld in shape %s.", (long long)dims->v[j],
				 ck_shape(a, arg));
			return 1;
		}
	}
	const shape **inits = arena_array(&c->m->arena, (size_t)n, sizeof *inits);
	etype *types = arena_array(&c->m->arena, (size_t)n, sizeof *types);
	if (!inits || !types) {
		c->oom = 1;
		return 1;
	}
	for (int i = 0; i < n; i++) {
		inits[i] = in->ops[n + i].def->result;
		types[i] = in->ops[i].def->result->type;
	}
	if (ck_verify_reducer(c, in, f, inits, types, n) || ck_mixed_precision(c, in) ||
	    ck_to_apply_types(c, in, f, in->nops))
		return 1;
	int reduced[HLOI_MAX_RANK] = { 0 };
	for (int j = 0; j < dims->n; j++) {
		if (reduced[dims->v[j]]) {
			ck_error(c, dat, "Duplicate reduction dimension: %lld", (long long)dims->v[j]);
			return 1;
		}
		reduced[dims->v[j]] = 1;
	}
	int64_t out[HLOI_MAX_RANK];
	uint8_t kind[HLOI_MAX_RANK];
	int rank = 0;
	for (int d = 0; d < arg->rank; d++)
		if (!reduced[d]) {
			kind[rank] = merged.dim_kind[d];
			out[rank++] = merged.dims[d];
		}
	int err = reduction_result(c, in, f, rank, out, n, inf);
	for (int i = 0; unbounded && !err && i < (shape_is_tuple(inf) ? inf->ntuple : 1); i++) {
		shape *r = shape_is_tuple(inf) ? &inf->tuple[i] : inf;
		for (int d = 0; d < r->rank && d < rank; d++)
			if (kind[d] == DIM_UNBOUNDED)
				r->dim_kind[d] = DIM_UNBOUNDED;
	}
	return err;
}

/* reduce-window(inputs..., inits...), window={...}, to_apply=f */
int infer_reduce_window(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	computation *f = reducer(c, in);
	if (!f)
		return 1;
	if (in->nops % 2) {
		ck_error(c, in->op_at, "expects an even number of operands, but has %d operands", in->nops);
		return 1;
	}
	if (in->nops == 0) {
		ck_error(c, in->op_at, "reduce-window expects at least one input and init operand");
		return 1;
	}
	for (int k = 0; k < in->nops; k++) {
		const shape *s = in->ops[k].def->result;
		if (shape_is_tuple(s)) {
			ck_error(c, in->ops[k].at, "Expected array argument for operand of reduce-window, but got %s.",
				 ck_shape(a, s));
			return 1;
		}
	}
	int n = in->nops / 2;
	const shape *arg = in->ops[0].def->result;
	for (int i = 1; i < n; i++) {
		const shape *s = in->ops[i].def->result;
		if (!shape_same_dims(arg, s)) {
			ck_error(c, in->ops[i].at,
				 "All reduced tensors must have the same dimension. Tensor 0 has shape %s, Tensor %d has shape %s",
				 ck_shape(a, arg), i, ck_shape(b, s));
			return 1;
		}
	}
	const shape **inits = arena_array(&c->m->arena, (size_t)n, sizeof *inits);
	etype *types = arena_array(&c->m->arena, (size_t)n, sizeof *types);
	if (!inits || !types) {
		c->oom = 1;
		return 1;
	}
	for (int i = 0; i < n; i++) {
		inits[i] = in->ops[n + i].def->result;
		types[i] = in->ops[i].def->result->type;
	}
	/* reduce-window is on the verifier's list of ops whose operands may
	 * mix float types; its computation's parameters may not */
	if (ck_verify_reducer(c, in, f, inits, types, n) || ck_to_apply_types(c, in, f, in->nops))
		return 1;
	static const window none = { 0, NULL };
	const attr *wa = instr_attr(in, ATTR_WINDOW);
	const window *w = wa && wa->kind == AK_WINDOW ? &wa->u.win : &none;
	int64_t out[HLOI_MAX_RANK];
	if (ck_window_output(c, in, w, arg, out))
		return 1;
	/* each output has its init value's element type */
	if (n == 1 && !shape_is_tuple(f->root->result)) {
		shape_make_array(inf, inits[0]->type, arg->rank, out);
		return 0;
	}
	if (reduction_result(c, in, f, arg->rank, out, n, inf))
		return 1;
	for (int i = 0; i < n; i++)
		inf->tuple[i].type = inits[i]->type;
	return 0;
}

/* map(operands...), dimensions={0,...,rank-1}, to_apply=f */
int infer_map(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (!instr_attr(in, ATTR_TO_APPLY)) {
		ck_error(c, in->op_at, "attribute to_apply is expected but not seen");
		return 1;
	}
	computation *f = instr_called(in, ATTR_TO_APPLY, 0);
	loc fat = ck_to_apply_loc(c, in);
	if (!f || ck_ensure_checked(c, in, f, fat))
		return 1;
	if (in->nops == 0) {
		ck_error(c, in->op_at, "Map expects at least one argument.");
		return 1;
	}
	for (int k = 0; k < in->nops; k++)
		if (!ck_array_operand(c, in, k))
			return 1;
	const shape *arg = in->ops[0].def->result;
	for (int k = 1; k < in->nops; k++) {
		const shape *s = in->ops[k].def->result;
		if (shape_same_dims(s, arg))
			continue;
		if (etype_same_ignoring_fp(s->type, arg->type)) {
			if (s->rank == 0)
				continue;
			if (arg->rank == 0) {
				arg = s;
				continue;
			}
		}
		strbuf m = STRBUF_INIT;
		for (int j = 0; j < in->nops; j++)
			sb_printf(&m, "%s%s", j ? ", " : "", ck_shape(a, in->ops[j].def->result));
		if (m.oom)
			c->oom = 1;
		else
			ck_error(c, in->op_at, "Map operation requires all operands to have the same shape; got: %s.",
				 sb_str(&m));
		sb_free(&m);
		return 1;
	}
	const int_list *dims = instr_ints(in, ATTR_DIMENSIONS);
	if (dims) {
		loc dat = ck_attr_loc(c, dims->at, "dimensions");
		if (dims->n != arg->rank) {
			ck_error(c, dat,
				 "Map applied to a subset of dimensions currently not supported: arg_dimension_size: %d, requested_map_dimensions_size: %d.",
				 arg->rank, dims->n);
			return 1;
		}
		for (int i = 0; i < dims->n; i++) {
			if (dims->v[i] != i) {
				strbuf m = STRBUF_INIT;
				for (int j = 0; j < dims->n; j++)
					sb_printf(&m, "%s%lld", j ? ", " : "", (long long)dims->v[j]);
				if (m.oom)
					c->oom = 1;
				else
					ck_error(c, dat, "Map requires monotonically increasing dimension numbers; got: %s.",
						 sb_str(&m));
				sb_free(&m);
				return 1;
			}
		}
	}
	if (in->nops != f->nparams) {
		ck_error(c, fat, "Map applied function arity must match number of arguments; got: arity: %d, arguments: %d.",
			 f->nparams, in->nops);
		return 1;
	}
	const shape *res = f->root->result;
	if (shape_is_tuple(res) || res->rank != 0) {
		ck_error(c, fat, "Mapped computation's result has to be a scalar; got: %s.", ck_shape(a, res));
		return 1;
	}
	for (int i = 0; i < f->nparams; i++) {
		const shape *p = f->params[i]->result;
		if (shape_is_tuple(p) || p->rank != 0) {
			ck_error(c, fat, "Mapped computation's parameter has to be a scalar; got parameter %d shape: %s.", i,
				 ck_shape(a, p));
			return 1;
		}
		if (!etype_same_ignoring_fp(p->type, in->ops[i].def->result->type)) {
			ck_error(c, fat,
				 "Mapped computation's parameter type has to match argument element type; got parameter %d shape: %s, argument shape: %s.",
				 i, ck_shape(a, p), ck_shape(b, arg));
			return 1;
		}
	}
	if (ck_mixed_precision(c, in) || ck_to_apply_types(c, in, f, in->nops))
		return 1;
	shape_make_array(inf, res->type, arg->rank, arg->dims);
	return 0;
}
