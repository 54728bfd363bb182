/* --strict beyond shapes: unknown attributes the parser skipped, the
 * broadcast_mode header attribute and broadcast_dimensions on binary ops
 * are hloi's own and XLA's HLO parser rejects them; --strict says so. */
#include "check/strict.h"

#include <string.h>

#include "util/diag.h"

/* broadcast_dimensions on an op whose operands have equal dims: the checker
 * reported nothing (it is the identity), but XLA does not know the attribute.
 * Other uses are implicit broadcasts the checker already rejected. */
static int identity_bcast_attr(const instr *in)
{
	op_category cat = opcode_category(in->op);
	if ((cat != OPC_BINARY && cat != OPC_COMPARE) || !instr_ints(in, ATTR_BROADCAST_DIMENSIONS))
		return 0;
	/* only where the checker inferred a result (else it reported errors) */
	if (in->nops != 2 || !in->ops[0].def || !in->ops[1].def || in->result->type == ET_INVALID)
		return 0;
	return shape_same_dims(in->ops[0].def->result, in->ops[1].def->result);
}

size_t check_strict_attrs(const module *m, hloi_context *ctx, const hloi_check_options *opts)
{
	if (!opts || !opts->strict)
		return 0;
	size_t n = 0;
	int src = m->src;
	for (const unknown_attr *u = m->unknown; u; u = u->next) {
		/* the parser's "skipped" warning becomes this error */
		diag_drop_warning(ctx, src, u->at);
		diag_error(ctx, src, u->at, "unknown %sattribute '%s' (not allowed with --strict)",
			   u->header ? "header " : "", u->name);
		n++;
	}
	for (int i = 0; i < m->nheader_attrs; i++) {
		const raw_attr *r = &m->header_attrs[i];
		if (strcmp(r->name, "broadcast_mode") != 0)
			continue;
		diag_error(ctx, src, r->at,
			   "header attribute broadcast_mode is an hloi extension (not allowed with --strict)");
		n++;
	}
	for (int c = 0; c < m->ncomps; c++) {
		const computation *comp = m->comps[c];
		for (int i = 0; i < comp->ninstrs; i++) {
			const instr *in = comp->instrs[i];
			if (!identity_bcast_attr(in))
				continue;
			diag_error(ctx, src, instr_attr_loc(in, ATTR_BROADCAST_DIMENSIONS),
				   "attribute broadcast_dimensions is an hloi extension (not allowed with --strict)");
			n++;
		}
	}
	return n;
}
