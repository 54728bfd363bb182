/* Kernels of the data-movement ops that do not read an element where they
 * write it: iota, reshape, transpose, and copy (which may change the
 * layout, or copy a tuple). */
#include "eval/engine.h"
#include "eval/fast.h"

static void fill_iota(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	(void)e;
	(void)ops;
	ref_iota(in, out);
}

static void fill_reshape(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	(void)e;
	(void)in;
	ref_reshape(out, ops[0]);
}

static void fill_transpose(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	(void)e;
	ref_transpose(in, out, ops[0]);
}

static void fill_copy(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	if (!e->fast || fast_elementwise(in, out, ops, e->threads, NULL) != 0)
		ref_elementwise(in, out, ops);
}

hloi_status kernel_iota(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *const *args,
			hloi_literal *dest)
{
	(void)args;
	return kernel_array(e, f, in, ops, dest, 0, fill_iota);
}

hloi_status kernel_reshape(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			   hloi_literal *const *args, hloi_literal *dest)
{
	(void)args;
	return kernel_array(e, f, in, ops, dest, 0, fill_reshape);
}

hloi_status kernel_transpose(engine *e, frame *f, const instr *in, hloi_literal *const *ops,
			     hloi_literal *const *args, hloi_literal *dest)
{
	(void)args;
	return kernel_array(e, f, in, ops, dest, 0, fill_transpose);
}

hloi_status kernel_copy(engine *e, frame *f, const instr *in, hloi_literal *const *ops, hloi_literal *const *args,
			hloi_literal *dest)
{
	(void)args;
	if (shape_is_tuple(&in->result)) {
		int pos = in->position;
		hloi_status st = value_new(e, &in->result, &f->vals[pos]);
		if (st != HLOI_OK)
			return st;
		f->owned[pos] = 1;
		value_copy(f->vals[pos], ops[0]);
		return HLOI_OK;
	}
	return kernel_array(e, f, in, ops, dest, 1, fill_copy);
}
