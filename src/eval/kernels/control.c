/* Kernels of the values a computation starts from and passes around:
 * parameters, constants, calls (call, fusion: the callee evaluated through
 * its own plan), while loops, conditionals and scan; and the count of evaluated
 * steps that bounds a run (eval_step). Tuples are in data.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/index.h"
#include "eval/kernels/kernel.h"
#include "util/alloc.h"

hloi_status kernel_parameter(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *args = kc->args;
	hloi_literal *v = NULL;
	int owned = 0;
	hloi_status st = value_conform(e, args[in->parameter_number], in->result, &v, &owned);
	if (st != HLOI_OK)
		return st;
	f->vals[in->position] = v;
	f->owned[in->position] = (uint8_t)owned;
	return HLOI_OK;
}

hloi_status kernel_constant(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	if (!in->value || in->value->elided) {
		diag_error_where(e->ctx, NULL, "constant '%s' is elided ({...}) and cannot be evaluated; --random-inputs fills it with random values", in->name);
		return HLOI_EUNSUPPORTED;
	}
	f->vals[in->position] = in->value;
	return HLOI_OK;
}

/* --- steps -------------------------------------------------------------------- */

hloi_status eval_step(engine *e, const computation *comp, const instr *in)
{
	eval_limits *l = &e->limits;
	int stopped = l->stop && __atomic_load_n(l->stop, __ATOMIC_RELAXED);
	e->cur = in;
	e->cur_comp = comp;
	/* one level of per-element applications is bounded by the operands'
	 * sizes; applications inside those (a map whose computation maps,
	 * each level multiplying the count) count */
	if (e->uncounted == 1 && !stopped)
		return HLOI_OK;
	if (e->loop && !stopped && l->steps >= l->max_steps) {
		char at[512] = "";
		if (in != e->loop)
			snprintf(at, sizeof at, " (at instruction '%s' in computation '%s')", in->name, comp->name);
		diag_error_where(e->ctx, NULL,
				 "while loop '%s' in computation '%s' reached the limit of %" PRIu64
				 " evaluated instruction%s in its iteration %" PRId64 "%s; raise it with max_steps (hloi: --max-steps)",
				 e->loop->name, e->loop_comp->name, l->max_steps, l->max_steps == 1 ? "" : "s", e->loop_iter,
				 at);
		return HLOI_ESTOPPED;
	}
	return eval_limits_step(l, e->ctx, comp, in);
}

/* --- calls -------------------------------------------------------------------- */

hloi_status kernel_call_computation(engine *e, frame *f, const instr *in, const computation *comp,
				    hloi_literal *const *args, hloi_literal *dest)
{
	if (dest && shape_is_tuple(in->result))
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
	hloi_status st = eval_computation(e, comp, args, dest, &r, &owned);
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
	st = value_conform(e, r, in->result, &conf, &cowned);
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

/* Runs a call or fusion: the callee with the operand values as its
 * parameters. */
hloi_status kernel_call(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	return kernel_call_computation(e, f, in, in->callee, ops, dest);
}

/* conditional: the branch the index selects (pred: true_computation for
 * true, false_computation for false; s32: branch_computations[index], the
 * last one when the index is out of range, as XLA's evaluator does) runs on
 * its operand. */
hloi_status kernel_conditional(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	const hloi_literal *index = ops[0];
	const computation *branch = NULL;
	int b = 0;
	if (index->shape.type == ET_PRED) {
		b = ((const uint8_t *)index->data)[0] ? 0 : 1;
		branch = instr_called(in, b == 0 ? ATTR_TRUE_COMPUTATION : ATTR_FALSE_COMPUTATION, 0);
	} else {
		const attr *bc = instr_attr(in, ATTR_BRANCH_COMPUTATIONS);
		int nb = bc ? bc->u.words.n : 0;
		int32_t v;
		memcpy(&v, index->data, sizeof v);
		b = v < 0 || v >= nb ? nb - 1 : v;
		branch = instr_called(in, ATTR_BRANCH_COMPUTATIONS, b);
	}
	if (!branch || 1 + b >= in->nops)
		return kernel_none(kc);
	return kernel_call_computation(e, f, in, branch, &ops[1 + b], dest);
}

/* while: the state goes through body as long as condition gives true. The
 * while instruction counts a step per iteration, and the steps of its
 * computations count even inside a per-element application. */
hloi_status kernel_while(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	/* (the driver copies an aliased root into kc->dest) */
	const computation *cond = instr_called(in, ATTR_CONDITION, 0), *body = instr_called(in, ATTR_BODY, 0);
	if (!cond || !body)
		return kernel_none(kc);
	if (e->depth >= EVAL_MAX_DEPTH) {
		diag_error_where(e->ctx, NULL, "calls nested deeper than %d (instruction '%s')", EVAL_MAX_DEPTH,
				 in->name);
		return HLOI_EUNSUPPORTED;
	}
	const instr *outer = e->loop;
	const computation *outer_comp = e->loop_comp;
	int64_t outer_iter = e->loop_iter;
	int outer_uncounted = e->uncounted;
	e->loop = in;
	e->loop_comp = f->comp;
	e->loop_iter = 0;
	e->uncounted = 0;
	e->depth++;
	hloi_literal *state = ops[0];
	int owned = 0;
	hloi_status st;
	for (;;) {
		e->loop_iter++;
		st = eval_step(e, f->comp, in);
		if (st != HLOI_OK)
			break;
		hloi_literal *p = NULL;
		int powned = 0;
		st = eval_computation(e, cond, &state, NULL, &p, &powned);
		if (st != HLOI_OK)
			break;
		int go = p->data && ((const uint8_t *)p->data)[0] != 0;
		if (powned)
			value_drop(e, p);
		if (!go)
			break;
		hloi_literal *next = NULL;
		int nowned = 0;
		st = eval_computation(e, body, &state, NULL, &next, &nowned);
		if (st != HLOI_OK)
			break;
		if (next != state) {
			if (owned)
				value_drop(e, state);
			state = next;
			owned = nowned;
		}
	}
	e->depth--;
	e->loop_trips = e->loop_iter - 1;  /* the last iteration found the condition false */
	e->loop = outer;
	e->loop_comp = outer_comp;
	e->loop_iter = outer_iter;
	e->uncounted = outer_uncounted;
	if (st != HLOI_OK) {
		if (owned)
			value_drop(e, state);
		return st;
	}
	if (!owned) {
		/* the operand or a constant: the result needs a value of its own */
		hloi_literal *c = NULL;
		st = value_clone(e, state, &c);
		if (st != HLOI_OK)
			return st;
		state = c;
	}
	hloi_literal *conf = NULL;
	int cowned = 0;
	st = value_conform(e, state, in->result, &conf, &cowned);
	if (st != HLOI_OK) {
		value_drop(e, state);
		return st;
	}
	if (cowned)
		value_drop(e, state);
	f->vals[in->position] = conf;
	f->owned[in->position] = 1;
	return HLOI_OK;
}

/* Copies between an array `whole` and its element `part` at position `at`
 * of dimension d (part's shape is whole's without d): into part when
 * `into_part`, else into whole. */
static void scan_move(hloi_literal *whole, hloi_literal *part, int64_t d, int64_t at, int into_part)
{
	int64_t n;
	if (shape_element_count(&part->shape, &n) || n == 0 || !whole->data || !part->data)
		return;
	size_t w = (size_t)etype_byte_width(part->shape.type);
	int64_t pi[HLOI_MAX_RANK] = { 0 }, wi[HLOI_MAX_RANK];
	do {
		for (int j = 0, k = 0; j < whole->shape.rank; j++)
			wi[j] = j == d ? at : pi[k++];
		if (into_part)
			memcpy(literal_element(part, pi), literal_element(whole, wi), w);
		else
			memcpy(literal_element(whole, wi), literal_element(part, pi), w);
	} while (index_next(part->shape.rank, part->shape.dims, pi));
}

/* scan(inputs..., inits...), dimensions={d}, num_carries=C, to_apply=f:
 * XLA's ScanExpander's loop. At step i (from the end when is_reverse) f
 * gets element i of each input along d and the carries; its outputs are
 * written at i along d, its carries go to the next step; the result holds
 * the outputs and the last carries (the inits when the length is 0, when
 * the outputs are zeros). */
hloi_status kernel_scan(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	const computation *body = instr_called(in, ATTR_TO_APPLY, 0);
	int64_t ncar = 0;
	instr_int(in, ATTR_NUM_CARRIES, &ncar);
	int64_t d = instr_ints(in, ATTR_DIMENSIONS)->v[0];
	int reverse = instr_bool(in, ATTR_IS_REVERSE, 0);
	int nops = in->nops, nin = nops - (int)ncar;
	if (!body)
		return kernel_none(kc);
	const shape *rs = body->root->result;
	int nres = shape_is_tuple(rs) ? rs->ntuple : 1, nout = nres - (int)ncar;
	if (e->depth >= EVAL_MAX_DEPTH || nops > 64 || nres > 64) {
		diag_error_where(e->ctx, NULL, "scan nested deeper than %d or with more than 64 operands or results (instruction '%s')",
				 EVAL_MAX_DEPTH, in->name);
		return HLOI_EUNSUPPORTED;
	}
	int64_t len = ops[0]->shape.dims[d];
	hloi_literal *res = NULL, *argv[64] = { NULL }, *carry[64] = { NULL };
	uint8_t carry_owned[64] = { 0 };
	hloi_status st = value_new(e, in->result, &res);
	for (int k = 0; st == HLOI_OK && k < nin; k++)
		st = value_new(e, body->params[k]->result, &argv[k]);
	if (st != HLOI_OK)
		goto done;
	hloi_literal *outs[64];
	for (int i = 0; i < nres; i++) {
		hloi_literal *t = shape_is_tuple(&res->shape) ? res->elems[i] : res;
		if (i < nout) {
			outs[i] = t;
			if (t->data)
				memset(t->data, 0, t->nbytes);  /* a zero-length scan's outputs */
			literal_fill_padding(t);
		}
	}
	for (int j = 0; j < ncar; j++)
		carry[j] = ops[nin + j];
	e->depth++;
	for (int64_t i = 0; i < len && st == HLOI_OK; i++) {
		int64_t at = reverse ? len - 1 - i : i;
		st = eval_step(e, f->comp, in);
		if (st != HLOI_OK)
			break;
		for (int k = 0; k < nin; k++)
			scan_move(ops[k], argv[k], d, at, 1);
		for (int j = 0; j < ncar; j++)
			argv[nin + j] = carry[j];
		hloi_literal *r = NULL;
		int rowned = 0;
		st = eval_computation(e, body, argv, NULL, &r, &rowned);
		if (st != HLOI_OK)
			break;
		for (int k = 0; k < nout; k++)
			scan_move(outs[k], shape_is_tuple(&r->shape) ? r->elems[k] : r, d, at, 0);
		/* the next carries: copies of their own, made before r (which
		 * may hold the present carries) or the present ones are let go */
		hloi_literal *next[64];
		int made = 0;
		for (int j = 0; j < ncar && st == HLOI_OK; j++, made++)
			st = value_clone(e, shape_is_tuple(&r->shape) ? r->elems[nout + j] : r, &next[j]);
		if (rowned)
			value_drop(e, r);
		if (st != HLOI_OK) {
			for (int j = 0; j + 1 < made; j++)
				value_drop(e, next[j]);
			break;
		}
		for (int j = 0; j < ncar; j++) {
			if (carry_owned[j])
				value_drop(e, carry[j]);
			carry[j] = next[j];
			carry_owned[j] = 1;
		}
	}
	e->depth--;
	for (int j = 0; j < ncar && st == HLOI_OK; j++)
		value_copy(shape_is_tuple(&res->shape) ? res->elems[nout + j] : res, carry[j]);
done:
	for (int j = 0; j < ncar; j++)
		if (carry_owned[j])
			value_drop(e, carry[j]);
	for (int k = 0; k < nin; k++)
		if (argv[k])
			value_drop(e, argv[k]);
	if (st != HLOI_OK) {
		if (res)
			value_drop(e, res);
		return st;
	}
	f->vals[in->position] = res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}
