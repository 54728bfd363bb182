/* Kernels of the collectives on one device, the asynchronous wrappers and
 * the scheduling ops. With one participant every collective is data
 * movement (XLA's single-participant semantics):
 *
 *   all-reduce, all-gather, reduce-scatter, all-to-all,
 *   collective-broadcast   the operands (a tuple of them when several;
 *                          all-to-all's tuple form always a tuple)
 *   collective-permute     the operands where a pair {0,0} sends them to
 *                          this device; zeros when no pair targets it
 *   -start forms           (operands, result[, context zeros]); -done: the
 *                          result (all-reduce-done: its operand)
 *   partition-id, replica-id   u32 0
 *   async-start            the wrapped computation runs now: ((operands),
 *                          result, context zeros); async-update passes its
 *                          operand on; async-done takes the result
 *   copy-start / copy-done (operand, operand, u32 0) / element 0
 *   after-all              a token; add-dependency its first operand
 *
 * The checker has refused modules of more than one participant and
 * groups or pairs naming another device. Both engines share these kernels:
 * each result is a value of its own, filled by copies between layouts. */
#include <string.h>

#include "eval/engine.h"

/* Zeros everywhere in v (tuples deeply). */
static void zero(hloi_literal *v)
{
	if (shape_is_tuple(&v->shape)) {
		for (size_t i = 0; i < v->nelems; i++)
			zero(v->elems[i]);
		return;
	}
	if (v->data && v->nbytes)
		memset(v->data, 0, v->nbytes);
}

/* dst holds the operands: the only one, or a tuple of them. */
static void put_operands(hloi_literal *dst, hloi_literal *const *ops, int n)
{
	if (n == 1 && !shape_is_tuple(&dst->shape)) {
		value_copy(dst, ops[0]);
		return;
	}
	for (int k = 0; k < n && (size_t)k < dst->nelems; k++)
		value_copy(dst->elems[k], ops[k]);
}

/* Whether collective-permute's pairs send this device's operand to itself. */
static int self_pair(const instr *in)
{
	const attr *p = instr_attr(in, ATTR_SOURCE_TARGET_PAIRS);
	if (!p)
		return 0;
	for (int g = 0; g < p->u.lists.n; g++) {
		const int_list *pr = &p->u.lists.v[g];
		if (pr->n == 2 && pr->v[0] == 0 && pr->v[1] == 0)
			return 1;
	}
	return 0;
}

static hloi_status fresh(engine *e, frame *f, const instr *in, hloi_literal **res)
{
	hloi_status st = value_new(e, in->result, res);
	if (st != HLOI_OK)
		return st;
	f->vals[in->position] = *res;
	f->owned[in->position] = VAL_OWNED;
	return HLOI_OK;
}

hloi_status kernel_collective(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			      hloi_literal *const *args, hloi_literal *dest)
{
	(void)args;
	(void)dest;
	hloi_literal *res = NULL;
	hloi_status st = fresh(e, f, in, &res);
	if (st != HLOI_OK)
		return st;
	switch (in->op) {
	case OP_ALL_GATHER_START:
		put_operands(res->elems[0], ops, in->nops);
		put_operands(res->elems[1], ops, in->nops);
		break;
	case OP_COLLECTIVE_PERMUTE:
		if (self_pair(in))
			put_operands(res, ops, in->nops);
		else
			zero(res);
		break;
	case OP_COLLECTIVE_PERMUTE_START:
		zero(res);
		put_operands(res->elems[0], ops, in->nops);
		if (self_pair(in))
			put_operands(res->elems[1], ops, in->nops);
		break;
	default:
		put_operands(res, ops, in->nops);
		break;
	}
	return HLOI_OK;
}

hloi_status kernel_done(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *const *args,
			hloi_literal *dest)
{
	(void)args;
	(void)dest;
	hloi_literal *res = NULL;
	hloi_status st = fresh(e, f, in, &res);
	if (st != HLOI_OK)
		return st;
	const hloi_literal *src = ops[0];
	if (in->op == OP_COPY_DONE)
		src = src->elems[0];
	else if (in->op != OP_ALL_REDUCE_DONE)
		src = src->elems[1];
	value_copy(res, src);
	return HLOI_OK;
}

hloi_status kernel_device_id(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			     hloi_literal *const *args, hloi_literal *dest)
{
	(void)ops;
	(void)args;
	(void)dest;
	hloi_literal *res = NULL;
	hloi_status st = fresh(e, f, in, &res);
	if (st == HLOI_OK)
		zero(res);
	return st;
}

hloi_status kernel_copy_start(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			      hloi_literal *const *args, hloi_literal *dest)
{
	(void)args;
	(void)dest;
	hloi_literal *res = NULL;
	hloi_status st = fresh(e, f, in, &res);
	if (st != HLOI_OK)
		return st;
	zero(res);
	value_copy(res->elems[0], ops[0]);
	value_copy(res->elems[1], ops[0]);
	return HLOI_OK;
}

hloi_status kernel_after_all(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			     hloi_literal *const *args, hloi_literal *dest)
{
	(void)ops;
	(void)args;
	(void)dest;
	hloi_literal *res = NULL;
	return fresh(e, f, in, &res);
}

hloi_status kernel_add_dependency(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
				  hloi_literal *const *args, hloi_literal *dest)
{
	(void)args;
	(void)dest;
	hloi_literal *res = NULL;
	hloi_status st = fresh(e, f, in, &res);
	if (st == HLOI_OK)
		value_copy(res, ops[0]);
	return st;
}

hloi_status kernel_async_start(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			       hloi_literal *const *args, hloi_literal *dest)
{
	(void)args;
	(void)dest;
	hloi_literal *res = NULL;
	hloi_status st = fresh(e, f, in, &res);
	if (st != HLOI_OK)
		return st;
	if (in->op == OP_ASYNC_UPDATE) {
		value_copy(res, ops[0]);
		return HLOI_OK;
	}
	const computation *comp = instr_called(in, ATTR_CALLS, 0);
	if (!comp)
		return kernel_none(e, f, in, ops, args, dest);
	if (e->depth >= EVAL_MAX_DEPTH) {
		diag_error_where(e->ctx, NULL, "calls nested deeper than %d (instruction '%s')", EVAL_MAX_DEPTH,
				 in->name);
		return HLOI_EUNSUPPORTED;
	}
	hloi_literal *r = NULL;
	int owned = 0;
	e->depth++;
	st = eval_computation(e, comp, ops, NULL, &r, &owned);
	e->depth--;
	if (st != HLOI_OK)
		return st;
	zero(res);
	for (int k = 0; k < in->nops && (size_t)k < res->elems[0]->nelems; k++)
		value_copy(res->elems[0]->elems[k], ops[k]);
	value_copy(res->elems[1], r);
	if (owned)
		value_drop(e, r);
	return HLOI_OK;
}
