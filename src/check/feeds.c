/* Shape rules of infeed and outfeed (XLA's hlo_parser.cc and
 * ShapeVerifier::HandleInfeed / HandleOutfeed): infeed(token) gives
 * (data, token[]), its data shape the written result's element 0;
 * outfeed(data, token) gives token[] and writes `outfeed_shape`, which must
 * be the operand's shape. */
#include <string.h>

#include "check/check_internal.h"

/* Operand k must be a token: XLA's CheckIsTokenOperand. */
static int token_operand(checker *c, const instr *in, int k)
{
	char a[CK_SHAPE_TEXT];
	const shape *s = in->ops[k].def->result;
	if (shape_is_tuple(s) || s->type != ET_TOKEN) {
		ck_error(c, in->ops[k].at, "Expected operand %d to be token-shaped, actual shape is %s", k,
			 ck_shape(a, s));
		return 1;
	}
	return 0;
}

int infer_infeed(checker *c, instr *in, shape *inf)
{
	if (!in->has_shape) {
		ck_error(c, in->op_at, "cannot infer shape for opcode: infeed");
		return 1;
	}
	if (!shape_is_tuple(in->shape) || in->shape->ntuple == 0) {
		ck_error(c, in->op_at, "infeed must have a non-empty tuple shape");
		return 1;
	}
	if (token_operand(c, in, 0))
		return 1;
	shape *el = arena_array(&c->m->arena, 2, sizeof *el);
	if (!el) {
		c->oom = 1;
		return 1;
	}
	/* the data as written; the token after it (a written result that is
	 * not (data, token[]) is then a mismatch of the written shape) */
	el[0] = in->shape->tuple[0];
	memset(&el[1], 0, sizeof el[1]);
	el[1].type = ET_TOKEN;
	memset(inf, 0, sizeof *inf);
	inf->type = ET_TUPLE;
	inf->ntuple = 2;
	inf->tuple = el;
	if (shape_compatible(in->shape, inf))
		*inf = *in->shape;
	c->keep_layout = 1;
	return 0;
}

int infer_outfeed(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	if (token_operand(c, in, 1))
		return 1;
	const attr *os = instr_attr(in, ATTR_OUTFEED_SHAPE);
	const shape *data = in->ops[0].def->result;
	if (os && os->kind == AK_SHAPE && !shape_compatible(os->u.shp, data)) {
		ck_error(c, instr_attr_loc(in, ATTR_OUTFEED_SHAPE),
			 "Expected outfeed shape to be equal to operand's shape %s, actual shape is %s", ck_shape(a, data),
			 ck_shape(b, os->u.shp));
		return 1;
	}
	memset(inf, 0, sizeof *inf);
	inf->type = ET_TOKEN;
	return 0;
}
