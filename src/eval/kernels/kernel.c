/* The common ends of the kernels (kernels/kernel.h): an array result
 * written where it may go (the caller's destination, an operand's buffer at
 * its last use, or a new value), and the kernel of an opcode hloi does not
 * evaluate. */
#include "eval/kernels/kernel.h"

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
	if (shape_is_tuple(in->result))
		return -1;
	for (int k = 0; k < in->nops; k++) {
		int d = in->ops[k].def->position;
		const hloi_literal *op = ops[k];
		if (f->owned[d] != VAL_OWNED || f->last_use[d] != in->position || !op || shape_is_tuple(&op->shape) ||
		    !op->data || op->elided || op->shape.type != in->result->type ||
		    !shape_same_dims(&op->shape, in->result) || !layout_equal(&op->shape.layout, &in->result->layout))
			continue;
		/* the other operands that share the buffer (dims, layout, map) */
		if (dest_is_safe(in, ops, op, 1))
			return k;
	}
	return -1;
}

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
		f->owned[in->ops[k].def->position] = VAL_BORROWED;
	} else {
		hloi_status st = value_new(e, in->result, &res);
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
	f->owned[pos] = res != dest ? VAL_OWNED : VAL_BORROWED;
	return HLOI_OK;
}

hloi_status kernel_none(const kernel_ctx *kc)
{
	engine *e = kc->e;
	const instr *in = kc->in;
	/* the checker refuses such modules; only a caller that skipped it gets here */
	diag_error_where(e->ctx, NULL, "unsupported opcode '%s' (instruction '%s')", opcode_name(in->op), in->name);
	return HLOI_EUNSUPPORTED;
}
