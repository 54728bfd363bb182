/* Shape rules of tuples and of the ops that call computations (XLA's
 * shape_inference.cc): tuple, get-tuple-element, call, fusion, while,
 * conditional. */
#include <stdarg.h>
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
		el[k] = *in->ops[k].def->result;
	inf->tuple = el;
	return 0;
}

int infer_get_tuple_element(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	const shape *op = in->ops[0].def->result;
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
		const shape *os = in->ops[k].def->result, *ps = callee->params[k]->result;
		shape m = *ps;  /* a `?` parameter takes any size (XLA's UnboundedCall) */
		if (!shape_compatible_bounds(os, ps) && (os->type != ps->type || shape_is_tuple(ps) ||
						   !shape_has_unbounded(ps) || ck_unbounded_merge(&m, os))) {
			ck_error(c, in->ops[k].at, "operand %d of %s has shape %s, but parameter %d of computation %s is %s",
				 k, opcode_name(in->op), ck_shape(a, os), k, callee->name, ck_shape(b, ps));
			return 1;
		}
	}
	*inf = *callee->root->result;
	c->keep_layout = 1;
	return 0;
}


void ck_program_shape(strbuf *b, const computation *comp)
{
	sb_putc(b, '(');
	for (int i = 0; i < comp->nparams; i++) {
		const instr *p = comp->params[i];
		sb_printf(b, "%s%s: ", i ? ", " : "", p && p->name ? p->name : "(unknown)");
		if (p)
			shape_print(b, p->result, 0);
	}
	sb_puts(b, ") -> ");
	if (comp->root)
		shape_print(b, comp->root->result, 0);
}

/* The computation of attribute id (a single one), checked; NULL (reported)
 * when the attribute is missing or the computation unusable. */
static computation *called(checker *c, instr *in, attr_id id)
{
	const attr *a = instr_attr(in, id);
	if (!a) {
		ck_error(c, in->op_at, "attribute %s is expected but not seen", attr_name(id));
		return NULL;
	}
	computation *comp = instr_called(in, id, 0);
	if (!comp || ck_ensure_checked(c, in, comp, ck_attr_loc(c, a->vat, attr_name(id))))
		return NULL;
	return comp;
}

/* An array inferred shape takes the written layout in the driver; a tuple's
 * elements need it here (the driver keeps an inferred tuple's layouts). */
static int with_written_layouts(checker *c, const instr *in, shape *inf)
{
	if (!shape_is_tuple(inf) || !in->has_shape || !shape_is_tuple(in->shape) ||
	    in->shape->ntuple != inf->ntuple || inf->ntuple == 0)
		return 0;
	shape *el = arena_array(&c->m->arena, (size_t)inf->ntuple, sizeof *el);
	if (!el) {
		c->oom = 1;
		return 1;
	}
	for (int i = 0; i < inf->ntuple; i++) {
		el[i] = inf->tuple[i];
		const shape *w = &in->shape->tuple[i];
		if (!shape_is_tuple(w) && !shape_is_tuple(&el[i]) && w->has_layout && w->rank == el[i].rank)
			el[i].layout = w->layout;
		else if (shape_is_tuple(w) && shape_is_tuple(&el[i]) && !shape_compatible(w, &el[i]))
			return 0;
	}
	inf->tuple = el;
	return 0;
}

/* while(init), condition=c, body=b: the state goes through b while c says
 * so; c: (S) -> pred[], b: (S) -> S, result S. */
int infer_while(checker *c, instr *in, shape *inf)
{
	computation *cond = called(c, in, ATTR_CONDITION);
	if (!cond)
		return 1;
	computation *body = called(c, in, ATTR_BODY);
	if (!body)
		return 1;
	const shape *init = in->ops[0].def->result;
	if (cond->nparams != 1) {
		ck_error(c, instr_attr_loc(in, ATTR_CONDITION), "Condition must take 1 arguments; got %d.", cond->nparams);
		return 1;
	}
	if (body->nparams != 1) {
		ck_error(c, instr_attr_loc(in, ATTR_BODY), "Body must take 1 arguments; got %d.", body->nparams);
		return 1;
	}
	strbuf m = STRBUF_INIT;
	sb_puts(&m, "Condition: ");
	ck_program_shape(&m, cond);
	sb_puts(&m, "; body: ");
	ck_program_shape(&m, body);
	sb_puts(&m, "; init: ");
	shape_print(&m, init, 0);
	sb_putc(&m, '.');
	if (m.oom) {
		c->oom = 1;
		sb_free(&m);
		return 1;
	}
	const shape *cr = cond->root->result, *br = body->root->result;
	int err = 1;
	if (shape_is_tuple(cr) || cr->type != ET_PRED || cr->rank != 0) {
		ck_error(c, instr_attr_loc(in, ATTR_CONDITION), "Condition must return a boolean; got %s.", sb_str(&m));
	} else if (!shape_compatible_bounds(br, cond->params[0]->result) || !shape_compatible_bounds(br, body->params[0]->result) ||
		   !shape_compatible_bounds(br, init)) {
		ck_error(c, in->op_at,
			 "The parameter of condition and body, the result of the body, and init must all have the same shape; got %s.",
			 sb_str(&m));
	} else {
		err = 0;
	}
	sb_free(&m);
	if (err)
		return 1;
	*inf = *init;
	c->keep_layout = 1;
	return with_written_layouts(c, in, inf);
}

/* conditional(index, operands...): a pred index with true_computation= and
 * false_computation=, or an s32 index with branch_computations={...}; the
 * branch the index selects runs on its operand (an s32 index out of range
 * selects the last branch). */
int infer_conditional(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT];
	if (in->nops == 0) {
		ck_error(c, in->op_at, "conditional requires at least one operand");
		return 1;
	}
	const shape *index = in->ops[0].def->result;
	int is_pred = !shape_is_tuple(index) && index->rank == 0 && index->type == ET_PRED;
	int is_s32 = !shape_is_tuple(index) && index->rank == 0 && index->type == ET_S32;
	if (!is_pred && !is_s32) {
		ck_error(c, in->ops[0].at, "branch_index must be bool or int32_t; got %s.", ck_shape(a, index));
		return 1;
	}
	int nb;
	computation *pair[2];
	computation **branches;
	if (is_pred) {
		const attr *bc = instr_attr(in, ATTR_BRANCH_COMPUTATIONS);
		if (bc) {
			ck_error(c, ck_attr_loc(c, bc->vat, "branch_computations"),
				 "a conditional with a pred branch index takes true_computation and false_computation, not branch_computations");
			return 1;
		}
		if (!(pair[0] = called(c, in, ATTR_TRUE_COMPUTATION)) || !(pair[1] = called(c, in, ATTR_FALSE_COMPUTATION)))
			return 1;
		nb = 2;
		branches = pair;
	} else {
		const attr *bc = instr_attr(in, ATTR_BRANCH_COMPUTATIONS);
		attr_id other = instr_attr(in, ATTR_TRUE_COMPUTATION) ? ATTR_TRUE_COMPUTATION
				: instr_attr(in, ATTR_FALSE_COMPUTATION) ? ATTR_FALSE_COMPUTATION : ATTR_COUNT;
		if (other != ATTR_COUNT) {
			ck_error(c, instr_attr_loc(in, other),
				 "a conditional with an s32 branch index takes branch_computations, not %s", attr_name(other));
			return 1;
		}
		if (!bc) {
			ck_error(c, in->op_at, "attribute branch_computations is expected but not seen");
			return 1;
		}
		nb = bc->u.words.n;
		if (nb == 0) {
			ck_error(c, ck_attr_loc(c, bc->vat, "branch_computations"),
				 "branch_computations must name at least one computation");
			return 1;
		}
		branches = arena_array(&c->m->arena, (size_t)nb, sizeof *branches);
		if (!branches) {
			c->oom = 1;
			return 1;
		}
		for (int j = 0; j < nb; j++) {
			branches[j] = instr_called(in, ATTR_BRANCH_COMPUTATIONS, j);
			if (!branches[j] || ck_ensure_checked(c, in, branches[j], attr_word_loc(bc, j)))
				return 1;
		}
	}
	if (in->nops != nb + 1) {
		ck_error(c, in->op_at,
			 "conditional has %d branch computation%s and so expects %d operands (the branch index and one per branch), but has %d operand%s",
			 nb, nb == 1 ? "" : "s", nb + 1, in->nops, in->nops == 1 ? "" : "s");
		return 1;
	}
	for (int j = 0; j < nb; j++) {
		const computation *b = branches[j];
		if (b->nparams != 1) {
			ck_error(c, in->op_at, "branch computation %d must take 1 argument; got %d.", j, b->nparams);
			return 1;
		}
		const shape *op = in->ops[1 + j].def->result;
		if (!shape_compatible_bounds(b->params[0]->result, op)) {
			strbuf m = STRBUF_INIT;
			ck_program_shape(&m, b);
			if (m.oom)
				c->oom = 1;
			else
				ck_error(c, in->ops[1 + j].at,
					 "branch operand %d must match the shape of the only parameter of branch computation %d: got operand: %s; computation: %s.",
					 j, j, ck_shape(a, op), sb_str(&m));
			sb_free(&m);
			return 1;
		}
		if (!shape_compatible_bounds(branches[0]->root->result, b->root->result)) {
			char r0[CK_SHAPE_TEXT];
			ck_error(c, in->op_at,
				 "the result of branch 0 computation and branch %d computation must have the same shape: got branch 0 computation result: %s; branch %d computation result: %s.",
				 j, ck_shape(r0, branches[0]->root->result), j, ck_shape(a, b->root->result));
			return 1;
		}
	}
	*inf = *branches[0]->root->result;
	c->keep_layout = 1;
	return with_written_layouts(c, in, inf);
}

/* The scan element shape of an input: its shape without dimension d. */
static void delete_dim(shape *out, const shape *s, int64_t d)
{
	int64_t dims[HLOI_MAX_RANK];
	int n = 0;
	for (int i = 0; i < s->rank; i++)
		if (i != d)
			dims[n++] = s->dims[i];
	shape_make_array(out, s->type, n, dims);
}

/* One of XLA's verifier messages for scan (hlo_verifier.cc, HandleScan):
 * the formatted text, then " in " and the instruction as XLA prints it.
 * Returns 1. */
static int scan_error(checker *c, const instr *in, loc at, const char *fmt, ...)
{
	strbuf m = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&m, fmt, ap);
	va_end(ap);
	sb_puts(&m, " in ");
	ck_instr_text(&m, in);
	return ck_report(c, at, &m);
}

/* scan(inputs..., inits...), dimensions={d}, num_carries=C, to_apply=f
 * (XLA's HloScanInstruction; ScanExpander gives its meaning): the last C
 * operands are the carries' initial values, the others arrays of one
 * length along d. f takes (an element of each input along d..., the
 * carries...) and gives (outputs..., carries...), or one value when there
 * is one of them in all; the result is (each output stacked along d...,
 * the final carries...), a tuple unless f's result is not one. */
int infer_scan(checker *c, instr *in, shape *inf)
{
	char a[CK_SHAPE_TEXT], b[CK_SHAPE_TEXT];
	computation *f = called(c, in, ATTR_TO_APPLY);
	if (!f)
		return 1;
	const int_list *dl = instr_ints(in, ATTR_DIMENSIONS);
	if (!dl || dl->n != 1) {
		ck_error(c, dl ? ck_attr_loc(c, dl->at, "dimensions") : in->op_at,
			 "scan expects one scan dimension in dimensions={d}");
		return 1;
	}
	int64_t d = dl->v[0], ncar = 0;
	instr_int(in, ATTR_NUM_CARRIES, &ncar);
	if (ncar < 0 || ncar >= in->nops) {
		ck_error(c, instr_attr_loc(in, ATTR_NUM_CARRIES),
			 "scan has %d operand%s, so num_carries=%lld leaves no input (0 <= num_carries < %d)", in->nops,
			 in->nops == 1 ? "" : "s", (long long)ncar, in->nops);
		return 1;
	}
	int nin = in->nops - (int)ncar;
	int64_t len = -1;
	for (int k = 0; k < nin; k++) {
		if (!ck_array_operand(c, in, k))
			return 1;
		const shape *x = in->ops[k].def->result;
		if (d < 0 || d >= x->rank)
			return scan_error(c, in, in->ops[k].at, "Scan dimension %lld out of bounds for operand %d",
					  (long long)d, k);
		if (len >= 0 && x->dims[d] != len) {
			ck_error(c, in->ops[k].at,
				 "scan inputs must have one length along dimension %lld: input %d is %s, input 0 has %lld",
				 (long long)d, k, ck_shape(a, x), (long long)len);
			return 1;
		}
		len = x->dims[d];
	}
	if (f->nparams != in->nops) {
		ck_error(c, instr_attr_loc(in, ATTR_TO_APPLY),
			 "Expected computation %s called from %s to have %d parameters, has %d", f->name,
			 in->name ? in->name : "scan", in->nops, f->nparams);
		return 1;
	}
	/* XLA's verifier asks each parameter for its value's exact shape,
	 * element type included, with and without allow_mixed_precision: a
	 * computation of another float type than the inputs or the inits is
	 * refused (ShapesSame, ShapeUtil::Compatible) */
	for (int k = 0; k < in->nops; k++) {
		shape want;
		const shape *x = in->ops[k].def->result;
		if (k < nin)
			delete_dim(&want, x, d);
		else
			want = *x;
		const shape *p = f->params[k]->result;
		if (!shape_compatible(&want, p))
			return scan_error(c, in, in->ops[k].at,
					  "Parameter %d of to_apply computation shape %s does not match %s shape %s", k,
					  ck_shape(a, p), k < nin ? "input element" : "init", ck_shape(b, &want));
	}
	const shape *r = f->root->result;
	int nres = shape_is_tuple(r) ? r->ntuple : 1;
	if (nres < ncar) {
		ck_error(c, instr_attr_loc(in, ATTR_TO_APPLY),
			 "computation %s gives %d value%s, fewer than the %lld carries of scan", f->name, nres,
			 nres == 1 ? "" : "s", (long long)ncar);
		return 1;
	}
	int nout = nres - (int)ncar;
	shape *el = arena_array(&c->m->arena, (size_t)nres, sizeof *el);
	if (!el) {
		c->oom = 1;
		return 1;
	}
	for (int i = 0; i < nres; i++) {
		const shape *y = shape_is_tuple(r) ? &r->tuple[i] : r;
		if (i >= nout) {
			const shape *init = in->ops[nin + i - nout].def->result;
			const shape *p = f->params[nin + i - nout]->result;
			if (!shape_compatible(y, p))
				return scan_error(c, in, instr_attr_loc(in, ATTR_TO_APPLY),
						  "Computation %s result element %d shape %s does not match parameter %d shape %s",
						  f->name, i, ck_shape(a, y), nin + i - nout, ck_shape(b, p));
			el[i] = *init;
			continue;
		}
		if (shape_is_tuple(y) || y->rank >= HLOI_MAX_RANK || d > y->rank) {
			ck_error(c, instr_attr_loc(in, ATTR_TO_APPLY),
				 "output %d of computation %s is %s: scan stacks arrays along dimension %lld", i, f->name,
				 ck_shape(a, y), (long long)d);
			return 1;
		}
		int64_t dims[HLOI_MAX_RANK];
		for (int j = 0, k = 0; j <= y->rank; j++)
			dims[j] = j == d ? len : y->dims[k++];
		shape_make_array(&el[i], y->type, y->rank + 1, dims);
	}
	/* inputs and inits of two float types: refused without
	 * allow_mixed_precision (kScan is not on the verifier's list of
	 * exceptions), run as they are with it */
	if (ck_mixed_precision(c, in))
		return 1;
	if (shape_is_tuple(r)) {
		memset(inf, 0, sizeof *inf);
		inf->type = ET_TUPLE;
		inf->ntuple = nres;
		inf->tuple = el;
	} else {
		*inf = el[0];
	}
	return with_written_layouts(c, in, inf);
}
