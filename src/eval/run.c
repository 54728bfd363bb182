/* The engine's driver: evaluates a checked module's entry computation
 * instruction by instruction through the kernel table (engine.h), frees
 * every value after its last use, lets an elementwise op write over an
 * operand it reads for the last time, and writes an aliased result
 * (input_output_alias, SPEC §3.3) into its parameter's buffer. */
#include <stdio.h>
#include <string.h>

#include "eval/engine.h"
#include "util/alloc.h"

/* Whether `in` may write straight into dest although an operand lives in
 * dest's buffer: only ops that read each element where they write it
 * (`in_place`), at the same dims and layout, identity dimension map. */
static int dest_is_safe(const instr *in, hloi_literal *const *ops, const hloi_literal *dest, int in_place)
{
	for (int k = 0; k < in->nops; k++) {
		const hloi_literal *op = ops[k];
		if (!op || shape_is_tuple(&op->shape) || !op->data || op->data != dest->data)
			continue;
		if (!in_place || !shape_same_dims(&op->shape, &dest->shape) ||
		    !layout_equal(&op->shape.layout, &dest->shape.layout) ||
		    etype_byte_width(op->shape.type) != etype_byte_width(dest->shape.type))
			return 0;
		for (int j = 0; j < op->shape.rank; j++)
			if (in->ops[k].out_dim[j] != j)
				return 0;
	}
	return 1;
}

/* The operand whose buffer `in` may take over for its result, or -1: a
 * value the frame owns, read here for the last time, of the result's exact
 * type, dims and layout, and read at the position written (dest_is_safe);
 * for ops that read each element where they write it. */
static int reusable_operand(const frame *f, const instr *in, hloi_literal *const *ops)
{
	if (shape_is_tuple(&in->result))
		return -1;
	for (int k = 0; k < in->nops; k++) {
		int d = in->ops[k].def->position;
		const hloi_literal *op = ops[k];
		if (!f->owned[d] || f->last_use[d] != in->position || !op || shape_is_tuple(&op->shape) ||
		    !op->data || op->elided || op->shape.type != in->result.type ||
		    !shape_same_dims(&op->shape, &in->result) || !layout_equal(&op->shape.layout, &in->result.layout))
			continue;
		/* the other operands that share the buffer (dims, layout, map) */
		if (dest_is_safe(in, ops, op, 1))
			return k;
	}
	return -1;
}

/* The kernel of every opcode, from the table (ir/opcodes.def). */
static const kernel_fn kernels[OP_COUNT] = {
#define X(E, text, arity, cat, infer, ev) [OP_##E] = kernel_##ev,
#include "ir/opcodes.def"
#undef X
};

hloi_status kernel_array(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *dest,
			 int in_place, fill_fn fill)
{
	int pos = in->position;
	hloi_literal *res = NULL;
	int direct = dest && dest_is_safe(in, ops, dest, in_place);
	int k = dest || !in_place ? -1 : reusable_operand(f, in, ops);
	if (direct) {
		res = dest;
	} else if (k >= 0) {
		/* in place: the operand's buffer becomes this value */
		res = ops[k];
		f->owned[in->ops[k].def->position] = 0;
	} else {
		hloi_status st = value_new(e, &in->result, &res);
		if (st != HLOI_OK)
			return st;
	}
	fill(e, in, ops, res);
	if (dest && !direct) {
		/* computed aside because it reads dest out of place */
		value_copy(dest, res);
		value_drop(e, res);
		res = dest;
	}
	f->vals[pos] = res;
	f->owned[pos] = res != dest;
	return HLOI_OK;
}

hloi_status kernel_none(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *const *args,
			hloi_literal *dest)
{
	(void)f;
	(void)ops;
	(void)args;
	(void)dest;
	/* the checker refuses such modules; only a caller that skipped it gets here */
	diag_error_where(e->ctx, NULL, "unsupported opcode '%s' (instruction '%s')", opcode_name(in->op), in->name);
	return HLOI_EUNSUPPORTED;
}

/* Evaluates one instruction into f->vals; `dest` (the root of an aliased
 * computation) is where its result must end up, or NULL. */
static hloi_status eval_instr(engine *e, frame *f, const instr *in, hloi_literal *const *args, hloi_literal *dest)
{
	kernel_fn k = kernels[in->op];
	hloi_literal *small[8];
	hloi_literal **ops = small;
	if (in->nops > 8) {
		ops = hloi_calloc((size_t)in->nops, sizeof *ops);
		if (!ops)
			return value_oom(e, (int64_t)in->nops * (int64_t)sizeof *ops);
	}
	for (int i = 0; i < in->nops; i++)
		ops[i] = f->vals[in->ops[i].def->position];
	hloi_status st = k(e, f, in, ops, args, dest);
	if (ops != small)
		hloi_free(ops);
	return st;
}

/* Evaluates comp on args. The root's value comes back in *out: owned by the
 * caller when *out_owned, else borrowed (an argument, a constant, or dest).
 * With dest, the root's result is written into dest and *out is dest. */
hloi_status eval_computation(engine *e, const computation *comp, hloi_literal *const *args, hloi_literal *dest,
			     hloi_literal **out, int *out_owned)
{
	hloi_status st = HLOI_OK;
	frame f;
	int *last_use = NULL;
	int n = comp->ninstrs, rootpos = comp->root->position;
	*out = NULL;
	*out_owned = 0;
	f.comp = comp;
	f.vals = hloi_calloc((size_t)n, sizeof *f.vals);
	f.owned = hloi_calloc((size_t)n, 1);
	last_use = hloi_calloc((size_t)n, sizeof *last_use);
	f.last_use = last_use;
	if (!f.vals || !f.owned || !last_use) {
		diag_error_where(e->ctx, NULL, "out of memory");
		st = HLOI_ENOMEM;
		goto cleanup;
	}
	/* What the root needs (operands come before their users), and when each
	 * value is used for the last time; -1 marks instructions not needed. */
	for (int i = 0; i < n; i++)
		last_use[i] = -1;
	last_use[rootpos] = n;
	for (int i = rootpos; i >= 0; i--) {
		const instr *in = comp->instrs[i];
		if (last_use[i] < 0)
			continue;
		for (int k = 0; k < in->nops; k++) {
			int d = in->ops[k].def->position;
			if (last_use[d] < i)
				last_use[d] = i;
		}
	}
	for (int i = 0; i <= rootpos; i++) {
		const instr *in = comp->instrs[i];
		if (last_use[i] < 0)
			continue;
		st = eval_step(e, comp, in);
		if (st == HLOI_OK)
			st = eval_instr(e, &f, in, args, i == rootpos ? dest : NULL);
		if (st != HLOI_OK)
			goto cleanup;
		for (int k = 0; k < in->nops; k++) {
			int d = in->ops[k].def->position;
			if (last_use[d] == i)
				value_release(e, &f, d);
		}
	}
	if (dest && f.vals[rootpos] != dest) {
		/* a parameter, constant, tuple element or call result */
		value_copy(dest, f.vals[rootpos]);
		value_release(e, &f, rootpos);
		f.vals[rootpos] = dest;
	}
	*out = f.vals[rootpos];
	*out_owned = f.owned[rootpos];
	f.vals[rootpos] = NULL;
	f.owned[rootpos] = 0;
cleanup:
	if (f.vals && f.owned)
		for (int i = 0; i < n; i++)
			value_release(e, &f, i);
	hloi_free(f.vals);
	hloi_free(f.owned);
	hloi_free(last_use);
	return st;
}

/* Inputs: one per parameter, each with the parameter's type and dims. */
static hloi_status check_inputs(const computation *comp, hloi_context *ctx, hloi_literal *const *inputs,
				size_t ninputs)
{
	if ((size_t)comp->nparams != ninputs) {
		diag_error_where(ctx, NULL, "expected %d input%s, got %zu", comp->nparams,
				 comp->nparams == 1 ? "" : "s", ninputs);
		return HLOI_EINVAL;
	}
	hloi_status st = HLOI_OK;
	for (size_t i = 0; i < ninputs; i++) {
		const instr *p = comp->params[i];
		const hloi_literal *lit = inputs[i];
		if (!lit) {
			diag_error_where(ctx, NULL, "input %zu for parameter '%s' is missing", i, p->name);
			st = HLOI_EINVAL;
			continue;
		}
		if (!shape_compatible(&lit->shape, &p->result)) {
			strbuf a = STRBUF_INIT, b = STRBUF_INIT;
			shape_print(&a, &lit->shape, 0);
			shape_print(&b, &p->result, 0);
			diag_error_where(ctx, NULL, "input %zu for parameter '%s' has shape %s, but the parameter is %s",
					 i, p->name, sb_str(&a), sb_str(&b));
			sb_free(&a);
			sb_free(&b);
			st = HLOI_EINVAL;
		} else if (lit->elided) {
			diag_error_where(ctx, NULL, "input %zu for parameter '%s' is elided ({...}) and cannot be evaluated",
					 i, p->name);
			st = HLOI_EINVAL;
		} else if (!shape_is_tuple(&lit->shape) && !lit->data && value_bytes(&lit->shape) > 0) {
			diag_error_where(ctx, NULL,
					 "input %zu for parameter '%s' holds no data (an earlier in-place run moved it into its result)",
					 i, p->name);
			st = HLOI_EINVAL;
		}
	}
	return st;
}

/* The parameter the whole (array) result is written into, or -1. */
int eval_aliased_parameter(const module *m)
{
	const computation *comp = m->entry;
	if (!m->checked || !comp || !comp->root || shape_is_tuple(&comp->root->result))
		return -1;
	for (int i = 0; i < m->nalias; i++) {
		const alias_entry *a = &m->alias[i];
		if (a->n_output_index == 0 && a->n_parameter_index == 0 && a->parameter_number >= 0 &&
		    a->parameter_number < comp->nparams &&
		    !shape_is_tuple(&comp->params[a->parameter_number]->result))
			return (int)a->parameter_number;
	}
	return -1;
}

/* Whether `lit` shares a buffer with any of the inputs (tuples deeply). */
static int shares_buffer(const hloi_literal *lit, const hloi_literal *in)
{
	if (!lit || !in)
		return 0;
	if (shape_is_tuple(&lit->shape)) {
		for (size_t i = 0; i < lit->nelems; i++)
			if (shares_buffer(lit->elems[i], in))
				return 1;
		return 0;
	}
	if (shape_is_tuple(&in->shape)) {
		for (size_t i = 0; i < in->nelems; i++)
			if (shares_buffer(lit, in->elems[i]))
				return 1;
		return 0;
	}
	return lit->data && lit->data == in->data;
}

/* Runs the module into `into` (the caller's literal of the result's exact
 * shape) when given, else into a new literal in *out. */
static hloi_status run_module(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			      const hloi_run_options *opts, hloi_literal *into, hloi_literal **out)
{
	hloi_status st = HLOI_OK;
	engine e;
	hloi_literal **args = NULL;
	uint8_t *args_owned = NULL;
	if (out)
		*out = NULL;
	memset(&e, 0, sizeof e);
	computation *comp = m->entry;
	if (!m->checked || !comp || !comp->root) {
		diag_error_where(ctx, NULL, "the module must be checked before it runs");
		return HLOI_EINVAL;
	}
	st = check_inputs(comp, ctx, inputs, ninputs);
	if (st != HLOI_OK)
		return st;

	e.m = m;
	e.ctx = ctx;
	e.budget = opts && opts->max_memory ? opts->max_memory : eval_default_budget();
	e.fast = !opts || opts->engine != HLOI_ENGINE_REFERENCE;
	e.threads = opts ? opts->threads : 0;
	eval_limits_init(&e.limits, opts);

	/* Elided constants the entry needs are reported all at once, before
	 * anything runs. */
	uint8_t *needed = hloi_calloc((size_t)comp->ninstrs, 1);
	if (!needed) {
		diag_error_where(ctx, NULL, "out of memory");
		return HLOI_ENOMEM;
	}
	needed[comp->root->position] = 1;
	for (int i = comp->root->position; i >= 0; i--)
		for (int k = 0; needed[i] && k < comp->instrs[i]->nops; k++)
			needed[comp->instrs[i]->ops[k].def->position] = 1;
	for (int i = 0; i <= comp->root->position; i++) {
		const instr *in = comp->instrs[i];
		if (needed[i] && in->op == OP_CONSTANT && (!in->value || in->value->elided)) {
			loc at = in->literal ? in->literal->at : in->op_at;
			if (diag_source(ctx, m->src))
				diag_error(ctx, m->src, at, "constant '%s' is elided ({...}) and cannot be evaluated",
					   in->name);
			else
				diag_error_where(ctx, NULL, "constant '%s' is elided ({...}) and cannot be evaluated",
						 in->name);
			st = HLOI_EUNSUPPORTED;
		}
	}
	hloi_free(needed);
	if (st != HLOI_OK)
		return st;

	/* The inputs in their parameters' layouts. */
	size_t na = ninputs ? ninputs : 1;
	args = hloi_calloc(na, sizeof *args);
	args_owned = hloi_calloc(na, 1);
	if (!args || !args_owned) {
		diag_error_where(ctx, NULL, "out of memory");
		st = HLOI_ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < ninputs; i++) {
		int owned = 0;
		st = value_conform(&e, inputs[i], &comp->params[i]->result, &args[i], &owned);
		if (st != HLOI_OK)
			goto cleanup;
		args_owned[i] = (uint8_t)owned;
	}

	/* input_output_alias: the result goes into the parameter's buffer. */
	int ap = eval_aliased_parameter(m);
	hloi_literal *dest = ap >= 0 ? args[ap] : into;
	hloi_literal *r = NULL;
	int owned = 0;
	st = eval_computation(&e, comp, args, dest, &r, &owned);
	if (st != HLOI_OK)
		goto cleanup;
	if (into) {
		/* the result is in the caller's literal */
	} else if (dest) {
		if (args_owned[ap]) {
			/* the converted copy of the input is the result */
			*out = dest;
			args_owned[ap] = 0;
			args[ap] = NULL;
		} else {
			/* the caller's input buffer moves into the result */
			hloi_literal *res = hloi_calloc(1, sizeof *res);
			if (!res) {
				st = value_oom(&e, (int64_t)sizeof *res);
				goto cleanup;
			}
			res->shape = dest->shape;
			res->data = dest->data;
			res->nbytes = dest->nbytes;
			dest->data = NULL;
			dest->nbytes = 0;
			*out = res;
		}
	} else if (owned) {
		*out = r;
	} else {
		/* A parameter or constant: the caller gets its own copy. */
		st = value_clone(&e, r, out);
	}
cleanup:
	if (args && args_owned)
		for (size_t i = 0; i < ninputs; i++)
			if (args_owned[i])
				value_drop(&e, args[i]);
	value_free_spare(&e);
	hloi_free(args);
	hloi_free(args_owned);
	return st;
}

hloi_status eval_module(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			const hloi_run_options *opts, hloi_literal **out)
{
	return run_module(m, ctx, inputs, ninputs, opts, NULL, out);
}

hloi_status eval_module_into(module *m, hloi_context *ctx, hloi_literal *const *inputs, size_t ninputs,
			     const hloi_run_options *opts, hloi_literal *result)
{
	const computation *comp = m->entry;
	if (!m->checked || !comp || !comp->root) {
		diag_error_where(ctx, NULL, "the module must be checked before it runs");
		return HLOI_EINVAL;
	}
	if (!result) {
		diag_error_where(ctx, NULL, "no result literal to run into");
		return HLOI_EINVAL;
	}
	int ap = eval_aliased_parameter(m);
	if (ap >= 0) {
		diag_error_where(ctx, NULL,
				 "the module writes its result into input %d (input_output_alias); run it without a result literal",
				 ap);
		return HLOI_EINVAL;
	}
	const shape *want = &comp->root->result;
	if (!shape_compatible(&result->shape, want) || !value_same_layouts(&result->shape, want) || result->elided ||
	    (!shape_is_tuple(want) && !result->data && value_bytes(want) > 0)) {
		strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		shape_print(&a, &result->shape, 1);
		shape_print(&b, want, 1);
		diag_error_where(ctx, NULL, "the result literal is %s%s, but the module's result is %s", sb_str(&a),
				 result->elided ? " (elided)" : "", sb_str(&b));
		sb_free(&a);
		sb_free(&b);
		return HLOI_EINVAL;
	}
	for (size_t i = 0; i < ninputs; i++) {
		if (inputs && shares_buffer(result, inputs[i])) {
			diag_error_where(ctx, NULL, "the result literal shares its buffer with input %zu", i);
			return HLOI_EINVAL;
		}
	}
	return run_module(m, ctx, inputs, ninputs, opts, result, NULL);
}
