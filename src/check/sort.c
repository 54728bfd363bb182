/* Shape rules of sort and topk. The messages are XLA's (openxla/xla
 * 841f8d2d: shape_inference.cc InferVariadicOpShape for kSort and
 * InferTopKShape; hlo_verifier.cc ShapeVerifier::HandleSort for the
 * comparator and the sort dimension), except where XLA has none (noted). */
#include <string.h>

#include "check/check_internal.h"

/* sort(operands...), dimensions={d}, is_stable=..., to_apply=compare */
int infer_sort(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (in->nops < 1) {
		ck_error(c, in->op_at, "Expected at least 1 operand for sort instruction");
		return 1;
	}
	for (int k = 0; k < in->nops; k++)
		if (!ck_array_operand(c, in, k))
			return 1;
	const shape *s0 = in->ops[0].def->result;
	for (int k = 1; k < in->nops; k++) {
		const shape *s = in->ops[k].def->result;
		if (!shape_same_dims(s0, s)) {
			/* XLA breaks the line before ", Values" */
			ck_error(c, in->ops[k].at,
				 "Sort keys and values dimensions must match. Keys shape is: %s, Values shape (operand index %d) is: %s",
				 ck_shape(a, s0), k, ck_shape(b, s));
			return 1;
		}
	}
	const int_list *dims = instr_ints(in, ATTR_DIMENSIONS);
	if (!dims) {
		ck_error(c, in->op_at, "attribute dimensions is expected but not seen");
		return 1;
	}
	loc dat = ck_attr_loc(c, dims->at, "dimensions");
	if (dims->n != 1) {
		/* XLA's parser refuses this without a message of its own */
		ck_error(c, dat, "sort expects exactly one dimension in dimensions=, got %d", dims->n);
		return 1;
	}
	if (dims->v[0] < 0 || dims->v[0] >= s0->rank) {
		ck_error(c, dat, "Expected the sort_dimension %lld of sort to be smaller than the rank %d of the operand(s).",
			 (long long)dims->v[0], s0->rank);
		return 1;
	}
	if (!instr_attr(in, ATTR_TO_APPLY)) {
		ck_error(c, in->op_at, "attribute to_apply is expected but not seen");
		return 1;
	}
	computation *f = instr_called(in, ATTR_TO_APPLY, 0);
	loc fat = ck_to_apply_loc(c, in);
	if (!f || ck_ensure_checked(c, in, f, fat))
		return 1;
	const shape *r = f->root->result;
	if (shape_is_tuple(r) || r->rank != 0 || r->type != ET_PRED) {
		ck_error(c, fat, "The Sort compare computation shape does not lead to a scalar predicate shape: %s",
			 ck_shape(a, r));
		return 1;
	}
	if (f->nparams != 2 * in->nops) {
		ck_error(c, fat, "Expected computation %s called from %s to have %d parameters, has %d", f->name,
			 in->name ? in->name : "sort", 2 * in->nops, f->nparams);
		return 1;
	}
	for (int p = 0; p < f->nparams; p++) {
		const shape *ps = f->params[p]->result;
		etype want = in->ops[p / 2].def->result->type;
		if (shape_is_tuple(ps) || ps->rank != 0 || !etype_same_ignoring_fp(want, ps->type)) {
			shape e;
			shape_make_array(&e, want, 0, NULL);
			ck_error(c, fat, "Expected the %d-th parameter of the compare computation of sort to have shape %s, but got %s",
				 p, ck_shape(a, &e), ck_shape(b, ps));
			return 1;
		}
	}
	if (in->nops == 1) {
		*inf = *s0;
		c->keep_layout = 1;
		return 0;
	}
	shape *el = arena_array(&c->m->arena, (size_t)in->nops, sizeof *el);
	if (!el) {
		c->oom = 1;
		return 1;
	}
	for (int k = 0; k < in->nops; k++) {
		el[k] = *in->ops[k].def->result;
		if (in->has_shape && shape_is_tuple(in->shape) && k < in->shape->ntuple) {
			const shape *w = &in->shape->tuple[k];
			if (!shape_is_tuple(w) && w->has_layout && w->rank == el[k].rank)
				el[k].layout = w->layout;
		}
	}
	memset(inf, 0, sizeof *inf);
	inf->type = ET_TUPLE;
	inf->ntuple = in->nops;
	inf->tuple = el;
	c->keep_layout = 1;
	return 0;
}

/* topk(operand), k=K, largest=true|false: (values, s32 indices) */
int infer_topk(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	if (!ck_array_operand(c, in, 0))
		return 1;
	const shape *s = in->ops[0].def->result;
	int64_t k;
	if (!instr_int(in, ATTR_K, &k)) {
		ck_error(c, in->op_at, "attribute k is expected but not seen");
		return 1;
	}
	const attr *ka = instr_attr(in, ATTR_K);
	loc kat = ka ? ck_attr_loc(c, ka->vat, "k") : in->op_at;
	/* XLA's InferTopKShape assumes a rank of at least 1 and k >= 0 */
	if (s->rank < 1) {
		ck_error(c, in->op_at, "the operand of top-k operation must have at least one dimension; got %s",
			 ck_shape(a, s));
		return 1;
	}
	if (k < 0) {
		ck_error(c, kat, "k=%lld must not be negative", (long long)k);
		return 1;
	}
	if (s->dims[s->rank - 1] < k) {
		ck_error(c, kat, "k=%lld is larger than the last dimension of size=%lld", (long long)k,
			 (long long)s->dims[s->rank - 1]);
		return 1;
	}
	if (etype_get_kind(s->type) == KIND_COMPLEX) {
		/* XLA decomposes topk into a sort whose comparator is GtTotalOrder,
		 * which complex numbers do not have */
		ck_error(c, in->op_at, "top-k needs an ordered element type; got %s", ck_shape(a, s));
		return 1;
	}
	int64_t d[HLOI_MAX_RANK];
	memcpy(d, s->dims, sizeof(int64_t) * (size_t)s->rank);
	d[s->rank - 1] = k;
	shape *el = arena_array(&c->m->arena, 2, sizeof *el);
	if (!el) {
		c->oom = 1;
		return 1;
	}
	shape_make_array(&el[0], s->type, s->rank, d);
	shape_make_array(&el[1], ET_S32, s->rank, d);
	for (int j = 0; j < 2; j++) {
		if (in->has_shape && shape_is_tuple(in->shape) && j < in->shape->ntuple) {
			const shape *w = &in->shape->tuple[j];
			if (!shape_is_tuple(w) && w->has_layout && w->rank == el[j].rank)
				el[j].layout = w->layout;
		}
	}
	memset(inf, 0, sizeof *inf);
	inf->type = ET_TUPLE;
	inf->ntuple = 2;
	inf->tuple = el;
	c->keep_layout = 1;
	return 0;
}
