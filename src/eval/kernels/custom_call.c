/* The kernel of custom-call: the target's kernel from the registry
 * (ir/custom_calls.def, one cc_kernel_<rule> each, in this file and in
 * eval/lib/lapack.c), else the embedder's evaluate callback
 * (hloi_custom_call_register). Both engines run these kernels. */
#include <string.h>

#include "core/literal.h"
#include "eval/kernels/kernel.h"
#include "eval/lib/lapack.h"

static hloi_status cc_kernel_identity(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	return kernel_identity(&(kernel_ctx){ e, f, in, ops, NULL, NULL });
}

static hloi_status cc_kernel_allocate_buffer(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
					     etype t)
{
	(void)ops;
	(void)t;
	hloi_literal *res;
	hloi_status st = value_result(e, f, in, &res);
	if (st == HLOI_OK)
		value_zero(res);
	return st;
}

/* CreateBuffer: a buffer of zeros (XLA leaves its contents undefined). */
static hloi_status cc_kernel_create_buffer(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	return cc_kernel_allocate_buffer(e, f, in, ops, t);
}

/* Pin and Unpin: the operand's elements, as a buffer or as an array. */
static hloi_status pin_unpin(engine *e, frame *f, const instr *in, hloi_literal *const *ops)
{
	hloi_literal *res;
	hloi_status st = value_result(e, f, in, &res);
	if (st == HLOI_OK)
		value_copy(res, ops[0]);
	return st;
}

static hloi_status cc_kernel_pin(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	return pin_unpin(e, f, in, ops);
}

static hloi_status cc_kernel_unpin(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	return pin_unpin(e, f, in, ops);
}

/* TopK: the k largest along the last dimension, k the result's, by total
 * order, the lower index first among equals. A comparator (to_apply) is not
 * consulted: XLA's TopkRewriter makes the call only from a sort by a
 * greater-than comparator, and XLA's CPU kernel does not read it either. */
static hloi_status cc_kernel_topk(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	const shape *v = &in->result->tuple[0];
	return eval_topk(e, f, in, ops[0], v->dims[v->rank - 1], 1);
}

static hloi_status cc_kernel_slice_to_dynamic(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_slice_to_dynamic(e, f, in, ops);
}

static hloi_status cc_kernel_pad_to_static(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_pad_to_static(e, f, in, ops);
}

static hloi_status cc_kernel_dynamic_conv_forward(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
						   etype t)
{
	(void)t;
	return eval_dynamic_conv_forward(e, f, in, ops);
}

static hloi_status cc_kernel_dynamic_reduce_window_same(engine *e, frame *f, const instr *in,
							hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_dynamic_reduce_window_same(e, f, in, ops);
}

static hloi_status cc_kernel_dynamic_select_and_scatter_same(engine *e, frame *f, const instr *in,
							 hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_dynamic_select_and_scatter_same(e, f, in, ops);
}

static hloi_status cc_kernel_dynamic_conv_input_grad(engine *e, frame *f, const instr *in,
						       hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_dynamic_conv_input_grad(e, f, in, ops);
}

static hloi_status cc_kernel_dynamic_conv_kernel_grad(engine *e, frame *f, const instr *in,
							hloi_literal *const *ops, etype t)
{
	(void)t;
	return eval_dynamic_conv_kernel_grad(e, f, in, ops);
}

typedef hloi_status (*cc_kernel)(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t);

static const cc_kernel kernels[CC_COUNT] = {
#define X(E, text, rule, type) [E] = cc_kernel_##rule,
#include "ir/custom_calls.def"
#undef X
};

static hloi_status call_user(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			     const hloi_custom_call *u)
{
	hloi_literal *res = NULL;
	hloi_status st = value_new(e, in->result, &res);
	if (st != HLOI_OK)
		return st;
	size_t before = hloi_context_error_count(e->ctx);
	st = u->evaluate(u->user_data, e->ctx, ops, (size_t)in->nops, res, instr_text(in, ATTR_BACKEND_CONFIG));
	if (st != HLOI_OK) {
		if (st > HLOI_OK || st < HLOI_ESTOPPED)
			st = HLOI_EINVAL;
		if (hloi_context_error_count(e->ctx) == before)
			diag_error_where(e->ctx, NULL, "custom-call target '%s' failed (instruction '%s'): %s", u->target,
					 in->name, hloi_status_name(st));
		value_drop(e, res);
		return st;
	}
	f->vals[in->position] = res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}

hloi_status kernel_custom_call(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	const char *t = instr_text(in, ATTR_CUSTOM_CALL_TARGET);
	int id = custom_call_builtin(t);
	if (id >= 0)
		return kernels[id](e, f, in, ops, custom_call_builtin_type((cc_target)id));
	const hloi_custom_call *u = custom_call_user(t);
	if (u)
		return call_user(e, f, in, ops, u);
	if (custom_call_runs_callee(in))
		return kernel_call_computation(e, f, in, in->called[0], ops, kc->dest);
	/* the checker refuses every other target; only a caller that skipped it gets here */
	diag_error_where(e->ctx, NULL, "unsupported custom-call target %s (instruction '%s')", t ? t : "(none)",
			 in->name);
	return HLOI_EUNSUPPORTED;
}
