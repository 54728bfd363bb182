/* Kernels of the values a computation starts from and passes around:
 * parameters, constants, and calls (call, fusion: the callee evaluated
 * through its own plan). Tuples are in data.c. */
#include <string.h>

#include "eval/engine.h"
#include "util/alloc.h"

hloi_status kernel_parameter(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			     hloi_literal *const *args, hloi_literal *dest)
{
	(void)ops;
	(void)dest;
	hloi_literal *v = NULL;
	int owned = 0;
	hloi_status st = value_conform(e, args[in->parameter_number], &in->result, &v, &owned);
	if (st != HLOI_OK)
		return st;
	f->vals[in->position] = v;
	f->owned[in->position] = (uint8_t)owned;
	return HLOI_OK;
}

hloi_status kernel_constant(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			    hloi_literal *const *args, hloi_literal *dest)
{
	(void)ops;
	(void)args;
	(void)dest;
	if (!in->value || in->value->elided) {
		diag_error_where(e->ctx, NULL, "constant '%s' is elided ({...}) and cannot be evaluated", in->name);
		return HLOI_EUNSUPPORTED;
	}
	f->vals[in->position] = in->value;
	return HLOI_OK;
}

/* Runs a call or fusion: the callee with the operand values as its
 * parameters. The result is owned by the frame (or is dest). */
hloi_status kernel_call(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *const *args,
			 hloi_literal *dest)
{
	(void)args;
	if (dest && shape_is_tuple(&in->result))
		dest = NULL;  /* tuple results are copied into dest by the driver */
	int pos = in->position;
	if (e->depth >= EVAL_MAX_DEPTH) {
		diag_error_where(e->ctx, NULL, "calls nested deeper than %d (instruction '%s')", EVAL_MAX_DEPTH,
				 in->name);
		return HLOI_EUNSUPPORTED;
	}
	hloi_literal *r = NULL;
	int owned = 0;
	e->depth++;
	hloi_status st = eval_computation(e, in->callee, ops, dest, &r, &owned);
	e->depth--;
	if (st != HLOI_OK)
		return st;
	if (dest && r == dest) {
		f->vals[pos] = dest;
		return HLOI_OK;
	}
	if (!owned) {
		/* a parameter or constant of the callee: the caller's value may
		 * be released after this instruction */
		hloi_literal *c = NULL;
		st = value_clone(e, r, &c);
		if (st != HLOI_OK)
			return st;
		r = c;
	}
	hloi_literal *conf = NULL;
	int cowned = 0;
	st = value_conform(e, r, &in->result, &conf, &cowned);
	if (st != HLOI_OK) {
		value_drop(e, r);
		return st;
	}
	if (cowned)
		value_drop(e, r);
	f->vals[pos] = conf;
	f->owned[pos] = 1;
	return HLOI_OK;
}

