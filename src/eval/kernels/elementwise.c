/* Kernels of the elementwise ops (binary ops, compare, select, convert,
 * bitcast-convert, broadcast; the unary ops, clamp, complex,
 * reduce-precision, stochastic-convert): the fast engine where it covers
 * the case, else the reference engine, both from eval/scalar/scalar.h's semantics. */
#include "eval/kernels/kernel.h"
#include "eval/fast/fast.h"
#include "eval/scalar/unary.h"

static void fill_elementwise(engine *e, const instr *in, hloi_literal *const *ops, hloi_literal *out)
{
	if (e->fast) {
		int done = ew_is_unary_family(in->op) ? fast_unary(in, out, ops, e->threads) == 0
						      : fast_elementwise(in, out, ops, e->threads, NULL) == 0;
		if (done)
			return;
	}
	ref_elementwise(in, out, ops);
}

hloi_status kernel_elementwise(const kernel_ctx *kc)
{
	engine *e = kc->e;
	frame *f = kc->f;
	const instr *in = kc->in;
	hloi_literal *const *ops = kc->ops;
	hloi_literal *dest = kc->dest;
	if (!ref_elementwise_supported(in)) {
		const char *tn = etype_name(in->result->type);
		diag_error_where(e->ctx, NULL, "cannot evaluate %s on %s (instruction '%s')", opcode_name(in->op),
				 tn ? tn : "?", in->name);
		return HLOI_EUNSUPPORTED;
	}
	return kernel_array(e, f, in, ops, dest, 1, fill_elementwise);
}
