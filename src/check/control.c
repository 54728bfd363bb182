/* Shape rules of tuples and of the ops that call computations (XLA's
 * shape_inference.cc): tuple, get-tuple-element, call, fusion. */
#include <string.h>

#include "check/check_internal.h"

int infer_tuple(checker *c, instr *in, shape *inf)
{
	memset(inf, 0, sizeof *inf);
	inf->type = ET_TUPLE;
	inf->ntuple = in->nops;
	if (in->nops == 0)
		return 0;
	shape *el = arena_array(&c->m->arena, (size_t)in->nops, sizeof *el);
	if (!el) {
		c->oom = 1;
		return 1;
	}
	for (int k = 0; k < in->nops; k++)
		el[k] = in->ops[k].def->result;
	inf->tuple = el;
	return 0;
}

int infer_get_tuple_element(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	const shape *op = &in->ops[0].def->result;
	int64_t index;
	if (!instr_int(in, ATTR_INDEX, &index)) {
		ck_error(c, in->op_at, "attribute index is expected but not seen");
		return 1;
	}
	if (!shape_is_tuple(op)) {
		ck_error(c, in->op_at, "get-tuple-element expects a tuple operand; got %s.", ck_shape(a, op));
		return 1;
	}
	if (index < 0 || index >= op->ntuple) {
		ck_error(c, in->op_at, "Cannot infer shape: attempt to index out of tuple bounds: %lld > %s",
			 (long long)index, ck_shape(a, op));
		return 1;
	}
	*inf = op->tuple[index];
	c->keep_layout = 1;
	return 0;
}

/* Checks a callee before its caller; 0 when its root is usable. */
int ck_ensure_checked(checker *c, instr *in, computation *callee, loc at)
{
	(void)in;
	int idx = -1;
	for (int i = 0; i < c->m->ncomps; i++)
		if (c->m->comps[i] == callee)
			idx = i;
	if (idx < 0 || !c->comp_state)
		return 1;
	if (c->comp_state[idx] == 1) {
		ck_error(c, at, "computation %s calls itself (recursion is not supported)", callee->name);
		return 1;
	}
	if (c->comp_state[idx] == 0) {
		if (c->depth >= 64) {
			ck_unsupported(c, at, "unsupported nesting of calls deeper than 64");
			return 1;
		}
		c->depth++;
		ck_check_computation(c, callee);
		c->depth--;
	}
	return c->comp_state[idx] == 2 ? 0 : 1;
}

/* call (to_apply=) and fusion (calls=): the callee runs with the operands as
 * its parameters; the result is its root's. */
int infer_call(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	attr_id id = in->op == OP_FUSION ? ATTR_CALLS : ATTR_TO_APPLY;
	const attr *ca = instr_attr(in, id);
	if (!ca) {
		ck_error(c, in->op_at, "attribute %s is expected but not seen", attr_name(id));
		return 1;
	}
	computation *callee = in->callee;
	if (!callee)
		return 1;  /* reported already */
	if (ck_ensure_checked(c, in, callee, ca->vat))
		return 1;
	if (callee->nparams != in->nops) {
		ck_error(c, in->op_at, "%s has %d operand%s, but computation %s takes %d parameter%s",
			 opcode_name(in->op), in->nops, in->nops == 1 ? "" : "s", callee->name, callee->nparams,
			 callee->nparams == 1 ? "" : "s");
		return 1;
	}
	for (int k = 0; k < in->nops; k++) {
		const shape *os = &in->ops[k].def->result, *ps = &callee->params[k]->result;
		if (!shape_compatible(os, ps)) {
			ck_error(c, in->ops[k].at, "operand %d of %s has shape %s, but parameter %d of computation %s is %s",
				 k, opcode_name(in->op), ck_shape(a, os), k, callee->name, ck_shape(b, ps));
			return 1;
		}
	}
	*inf = callee->root->result;
	c->keep_layout = 1;
	return 0;
}

