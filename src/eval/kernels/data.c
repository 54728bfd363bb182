/* Kernels of the data-movement ops outside fused regions: iota, reshape,
 * transpose, copy (which may change the layout, or copy a tuple), and
 * tuples with their elements.
 *
 * The fast engine never copies what it can share: a tuple holds its
 * operands' values, get-tuple-element lends the element, and a reshape that
 * keeps every element at its buffer position is a view of its operand (the
 * plan keeps the shared buffers alive: eval/plan/plan.h). Other reshapes are one
 * strided copy over the dimensions both shapes refine into, or two tiled
 * copies through row-major order; transpose, copy and iota run on the
 * region executor. The reference engine computes each element through
 * index conversion (reference.c). */
#include <string.h>

#include "eval/kernels/kernel.h"
#include "eval/fast/fast.h"
#include "eval/plan/plan.h"

static void fill_iota(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	if (!e->fast || fast_elementwise(in, out, ops, e->threads, e->tuning) != 0)
		ref_iota(in, out);
}

/* A reshape the refinement does not cover: the operand copied to row-major
 * order, which is the result's row-major order, then into the result's
 * layout. */
static int reshape_two_pass(engine *e, hloi_literal *out, const hloi_literal *op)
{
	shape rm = op->shape;
	layout_set_default(&rm);
	hloi_literal *tmp = NULL, view;
	if (value_new(e, &rm, &tmp) != HLOI_OK)
		return 1;
	int rc = fast_relayout(tmp, op, e->threads, e->tuning);
	if (rc == 0) {
		memset(&view, 0, sizeof view);
		view.shape = out->shape;
		layout_set_default(&view.shape);
		view.data = tmp->data;
		view.nbytes = tmp->nbytes;
		rc = fast_relayout(out, &view, e->threads, e->tuning);
	}
	value_drop(e, tmp);
	return rc;
}

static void fill_reshape(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	(void)in;
	if (e->fast && (fast_reshape(out, ops[0], e->threads, e->tuning) == 0 || reshape_two_pass(e, out, ops[0]) == 0))
		return;
	ref_reshape(out, ops[0]);
}

static void fill_transpose(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	if (!e->fast || fast_elementwise(in, out, ops, e->threads, e->tuning) != 0)
		ref_transpose(in, out, ops[0]);
}

static void fill_copy(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	if (!e->fast || fast_elementwise(in, out, ops, e->threads, e->tuning) != 0)
		ref_elementwise(in, out, ops);
}

hloi_status kernel_iota(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_array(e, f, in, ops, dest, 0, fill_iota);
}

hloi_status kernel_reshape(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	int pos = in->position;
	if (!dest && f->plan && f->plan->view[pos] && ops[0] && !shape_is_tuple(&ops[0]->shape) &&
	    plan_reshape_is_view(&ops[0]->shape, in->result)) {
		hloi_status st = value_view(e, in->result, ops[0], &f->vals[pos]);
		if (st != HLOI_OK)
			return st;
		f->owned[pos] = VAL_SHELL;
		return HLOI_OK;
	}
	return kernel_array(e, f, in, ops, dest, 0, fill_reshape);
}

hloi_status kernel_transpose(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	int pos = in->position;
	if (!dest && f->plan && f->plan->view[pos] && ops[0] && !shape_is_tuple(&ops[0]->shape) &&
	    plan_transpose_is_view(&ops[0]->shape, in->result, instr_ints(in, ATTR_DIMENSIONS))) {
		hloi_status st = value_view(e, in->result, ops[0], &f->vals[pos]);
		if (st != HLOI_OK)
			return st;
		f->owned[pos] = VAL_SHELL;
		return HLOI_OK;
	}
	return kernel_array(e, f, in, ops, dest, 0, fill_transpose);
}

/* A new value of in's result shape holding a copy of `op`, in the result's
 * layouts (tuples element by element). */
static hloi_status new_copy(engine *e, frame *f, const instr *in, const hloi_literal *op)
{
	int pos = in->position;
	hloi_status st = value_new(e, in->result, &f->vals[pos]);
	if (st != HLOI_OK)
		return st;
	f->owned[pos] = VAL_OWNED;
	value_copy(f->vals[pos], op);
	return HLOI_OK;
}

hloi_status kernel_copy(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	if (shape_is_tuple(in->result))
		return new_copy(e, f, in, ops[0]);
	return kernel_array(e, f, in, ops, dest, 1, fill_copy);
}

/* domain and the identity custom-calls: a copy of the one operand, in the
 * result's layouts (tuples element by element). */
hloi_status kernel_identity(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	return new_copy(e, f, in, ops[0]);
}

/* A tuple shares its operands' values (the plan keeps them alive as long
 * as the tuple). */
hloi_status kernel_tuple(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	int pos = in->position;
	hloi_status st = value_tuple_shell(e, in->result, ops, in->nops, &f->vals[pos]);
	if (st != HLOI_OK)
		return st;
	f->owned[pos] = VAL_SHELL;
	return HLOI_OK;
}

/* The element itself, lent (the plan keeps the tuple alive as long). */
hloi_status kernel_get_tuple_element(const kernel_ctx *kc)
{
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	const hloi_literal *t = ops[0];
	int64_t index = -1;
	instr_int(in, ATTR_INDEX, &index);
	if (!t || index < 0 || (size_t)index >= t->nelems)
		return HLOI_EINVAL;
	f->vals[in->position] = t->elems[index];
	f->owned[in->position] = VAL_BORROWED;
	return HLOI_OK;
}
