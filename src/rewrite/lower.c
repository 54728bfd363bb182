/* `hloi lower`: makes every implicit broadcast explicit, as XlaBuilder's
 * BinaryOp does (xla-facts §6.1): a scalar operand gets one `broadcast` with
 * dimensions={}; any other operand whose dims differ from the result gets a
 * `reshape` dropping its stretched size-1 dims, then a `broadcast` mapping
 * the kept dims. A stretching `broadcast` instruction is split the same way,
 * and the scalar pred of a `select` gets a broadcast too. */
#include "rewrite/lower.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"

/* Names in use in one computation (open addressing; strings not owned). */
typedef struct name_set {
	size_t mask;
	const char **slots;
} name_set;

static size_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static int ns_init(name_set *ns, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n) {
		if (cap > SIZE_MAX / 4)
			return -1;
		cap *= 2;
	}
	ns->mask = cap - 1;
	ns->slots = hloi_calloc(cap, sizeof *ns->slots);
	return ns->slots ? 0 : -1;
}

static int ns_has(const name_set *ns, const char *name)
{
	for (size_t i = hash_name(name) & ns->mask; ns->slots[i]; i = (i + 1) & ns->mask)
		if (strcmp(ns->slots[i], name) == 0)
			return 1;
	return 0;
}

static void ns_put(name_set *ns, const char *name)
{
	size_t i = hash_name(name) & ns->mask;
	while (ns->slots[i]) {
		if (strcmp(ns->slots[i], name) == 0)
			return;
		i = (i + 1) & ns->mask;
	}
	ns->slots[i] = name;
}

typedef struct lowerer {
	module *m;
	name_set names;
	instr **out;     /* the computation's new instruction list */
	int nout;
	int oom;
} lowerer;

/* `base.suffix`, or `base.suffix.N` for the first N that is free. */
static const char *fresh_name(lowerer *lw, const char *base, const char *suffix)
{
	size_t n = strlen(base) + strlen(suffix) + 32;
	char *buf = hloi_malloc(n);
	if (!buf) {
		lw->oom = 1;
		return NULL;
	}
	snprintf(buf, n, "%s.%s", base, suffix);
	for (unsigned long k = 1; ns_has(&lw->names, buf); k++)
		snprintf(buf, n, "%s.%s.%lu", base, suffix, k);
	char *name = arena_strdup(&lw->m->arena, buf);
	hloi_free(buf);
	if (!name) {
		lw->oom = 1;
		return NULL;
	}
	ns_put(&lw->names, name);
	return name;
}

/* A new one-operand instruction `op` on `from`, with result `s` (default
 * layout), located at `like`; appended to the new list. */
static instr *new_instr(lowerer *lw, const instr *like, opcode op, const char *base,
			const char *suffix, instr *from, etype type, int rank, const int64_t *dims)
{
	const char *name = fresh_name(lw, base, suffix);
	instr *in = instr_new(&lw->m->arena);
	operand *o = arena_alloc(&lw->m->arena, sizeof *o);
	if (!name || !in || !o) {
		lw->oom = 1;
		return NULL;
	}
	memset(o, 0, sizeof *o);
	o->name = from->name;
	o->at = like->op_at;
	o->def = from;
	in->op = op;
	in->name = name;
	in->at = like->at;
	in->name_at = like->name_at;
	in->op_at = like->op_at;
	in->nops = 1;
	in->ops = o;
	shape r;
	shape_make_array(&r, type, rank, dims);
	if (!(in->result = module_intern_shape(lw->m, &r))) {
		lw->oom = 1;
		return NULL;
	}
	in->has_shape = 1;
	in->shape = in->result;
	lw->out[lw->nout++] = in;
	return in;
}

static int set_list(lowerer *lw, instr *in, attr_id id, const int64_t *v, int n)
{
	if (instr_set_ints(&lw->m->arena, in, id, v, n)) {
		lw->oom = 1;
		return -1;
	}
	return 0;
}

/* The operand dims that are not stretched (size equal to the result dim they
 * feed) and the result dims they feed. Returns how many. */
static int kept_dims(const shape *s, const int8_t *out_dim, const shape *result, int64_t *kept_sizes,
		     int64_t *kept_out)
{
	int n = 0;
	for (int j = 0; j < s->rank; j++) {
		int d = out_dim[j];
		if (s->dims[j] == result->dims[d]) {
			kept_sizes[n] = s->dims[j];
			kept_out[n] = d;
			n++;
		}
	}
	return n;
}

/* Makes operand `o` of the binary op `in` have the result's dims. */
static void lower_operand(lowerer *lw, instr *in, operand *o, const char *side)
{
	const shape *s = o->def->result, *r = in->result;
	if (shape_same_dims(s, r))
		return;
	char rs[64], bs[64];
	snprintf(rs, sizeof rs, "%s.reshape", side);
	snprintf(bs, sizeof bs, "%s.broadcast", side);
	instr *from = o->def;
	int64_t sizes[HLOI_MAX_RANK], outs[HLOI_MAX_RANK];
	int n = kept_dims(s, o->out_dim, r, sizes, outs);
	if (n < s->rank) {
		from = new_instr(lw, in, OP_RESHAPE, in->name, rs, from, s->type, n, sizes);
		if (!from)
			return;
	}
	instr *b = new_instr(lw, in, OP_BROADCAST, in->name, bs, from, s->type, r->rank, r->dims);
	if (!b || set_list(lw, b, ATTR_DIMENSIONS, outs, n))
		return;
	for (int j = 0; j < n; j++)
		b->ops[0].out_dim[j] = (int8_t)outs[j];
	o->name = b->name;
	o->def = b;
	o->has_shape = 0;
	for (int k = 0; k < r->rank; k++)
		o->out_dim[k] = (int8_t)k;
}

/* A `broadcast` that stretches size-1 dims: reshape them away first. */
static void lower_broadcast(lowerer *lw, instr *in)
{
	operand *o = &in->ops[0];
	const shape *s = o->def->result;
	int64_t sizes[HLOI_MAX_RANK], outs[HLOI_MAX_RANK];
	int n = kept_dims(s, o->out_dim, in->result, sizes, outs);
	if (n == s->rank)
		return;
	instr *rs = new_instr(lw, in, OP_RESHAPE, in->name, "reshape", o->def, s->type, n, sizes);
	if (!rs || set_list(lw, in, ATTR_DIMENSIONS, outs, n))
		return;
	o->name = rs->name;
	o->def = rs;
	o->has_shape = 0;
	for (int j = 0; j < n; j++)
		o->out_dim[j] = (int8_t)outs[j];
}

/* select with a scalar pred (an extension): the pred is broadcast. */
static void lower_select(lowerer *lw, instr *in)
{
	operand *o = &in->ops[0];
	const shape *s = o->def->result, *r = in->result;
	if (s->rank != 0 || !shape_is_array(r) || r->rank == 0)
		return;
	instr *b = new_instr(lw, in, OP_BROADCAST, in->name, "pred.broadcast", o->def, s->type, r->rank,
			     r->dims);
	if (!b || set_list(lw, b, ATTR_DIMENSIONS, NULL, 0))
		return;
	o->name = b->name;
	o->def = b;
	o->has_shape = 0;
	for (int k = 0; k < r->rank; k++)
		o->out_dim[k] = (int8_t)k;
}

/* Starts a new instruction list of room `cap` for c, its names taken. */
static int begin_list(lowerer *lw, computation *c, size_t cap)
{
	if (ns_init(&lw->names, cap)) {
		lw->oom = 1;
		return -1;
	}
	lw->out = arena_array(&lw->m->arena, cap ? cap : 1, sizeof *lw->out);
	if (!lw->out) {
		lw->oom = 1;
		hloi_free(lw->names.slots);
		lw->names.slots = NULL;
		return -1;
	}
	for (int i = 0; i < c->ninstrs; i++)
		ns_put(&lw->names, c->instrs[i]->name);
	return 0;
}

/* Makes the new list c's (when `install`), numbered in order. */
static void end_list(lowerer *lw, computation *c, int install)
{
	if (install) {
		c->instrs = lw->out;
		c->ninstrs = lw->nout;
		for (int i = 0; i < c->ninstrs; i++)
			c->instrs[i]->position = i;
	}
	hloi_free(lw->names.slots);
	lw->names.slots = NULL;
}

static void lower_computation(lowerer *lw, computation *c)
{
	lw->out = NULL;
	lw->nout = 0;
	lw->names.slots = NULL;
	/* at most 4 new instructions per binary op, 1 per broadcast */
	if (c->ninstrs < 0 || c->ninstrs > INT_MAX / 5) {
		lw->oom = 1;
		return;
	}
	if (begin_list(lw, c, 5 * (size_t)c->ninstrs))
		return;
	/* After a failed allocation the rest is copied unchanged, so the
	 * computation stays consistent (partly lowered). */
	for (int i = 0; i < c->ninstrs; i++) {
		instr *in = c->instrs[i];
		op_category cat = opcode_category(in->op);
		if (lw->oom) {
			/* copied as is */
		} else if ((cat == OPC_BINARY || cat == OPC_COMPARE) && in->nops == 2) {
			lower_operand(lw, in, &in->ops[0], "lhs");
			lower_operand(lw, in, &in->ops[1], "rhs");
			if (!lw->oom) {
				instr_remove_attr(in, ATTR_BROADCAST_DIMENSIONS);
			}
		} else if (in->op == OP_BROADCAST && in->nops == 1) {
			lower_broadcast(lw, in);
		} else if (in->op == OP_SELECT && in->nops == 3) {
			lower_select(lw, in);
		}
		/* attributes hloi skipped as unknown are not XLA's either */
		instr_remove_attr(in, ATTR_COUNT);
		if (!lw->oom) {
			in->has_shape = 1;
			in->shape = in->result;
		}
		lw->out[lw->nout++] = in;
	}
	end_list(lw, c, 1);
}

hloi_status lower_module(module *m, hloi_context *ctx)
{
	if (!m->checked) {
		diag_error_where(ctx, m->filename, "the module must be checked before it is lowered");
		return HLOI_EINVAL;
	}
	if (m->unbounded) {
		/* a broadcast's result needs sizes (XLA's InferBroadcastShape);
		 * XLA's frontends write dynamic_broadcast_in_dim instead */
		diag_error_where(ctx, m->filename,
				 "unsupported: lowering a module with `?` dimensions (an explicit broadcast needs the sizes a run takes from its inputs)");
		return HLOI_EUNSUPPORTED;
	}
	lowerer lw;
	memset(&lw, 0, sizeof lw);
	lw.m = m;
	for (int i = 0; i < m->ncomps && !lw.oom; i++)
		lower_computation(&lw, m->comps[i]);
	if (lw.oom) {
		m->checked = 0;
		return HLOI_ENOMEM;
	}
	/* The broadcasts are explicit now: the mode is moot, and XLA does not
	 * know the attribute; nor attributes hloi ignored as unknown. */
	int k = 0;
	for (int i = 0; i < m->nheader_attrs; i++)
		if (strcmp(m->header_attrs[i].name, "broadcast_mode") != 0 &&
		    header_attr_known(m->header_attrs[i].name))
			m->header_attrs[k++] = m->header_attrs[i];
	m->nheader_attrs = k;
	m->broadcast_mode = HLOI_BROADCAST_DEFAULT;
	m->unknown = NULL;
	m->nunknown = 0;
	m->checked = 0;
	return HLOI_OK;
}

/* --- mixed precision ------------------------------------------------------------- */

/* The ops whose float operands take the result's type (OPF_MIXED: the
 * elementwise ops, select, clamp, the data-movement ops, dot and
 * convolution, as XLA's evaluator converts their operands). */
static int converts_operands(opcode op)
{
	return opcode_has(op, OPF_MIXED);
}

static int is_float_array(const shape *s)
{
	return shape_is_array(s) && etype_get_kind(s->type) == KIND_FLOAT;
}

/* The type an instruction's float operands are converted to, ET_INVALID
 * when none is: the result's for the ops above, the higher precision of
 * compare's two float operands (a pred result; as XLA's float
 * normalization, which converts to the higher type where a backend does not
 * compute mixed precision). */
static etype operand_target(const instr *in)
{
	if (in->op == OP_COMPARE) {
		const shape *a = in->ops[0].def->result, *b = in->ops[1].def->result;
		return is_float_array(a) && is_float_array(b) ? etype_higher_precision(a->type, b->type) : ET_INVALID;
	}
	return converts_operands(in->op) && is_float_array(in->result) ? in->result->type : ET_INVALID;
}

/* The instructions after position i of c, and c's root, take `to` where
 * they took `from`. */
static void uses_to(computation *c, int i, instr *from, instr *to)
{
	for (int j = i + 1; j < c->ninstrs; j++)
		for (int k = 0; k < c->instrs[j]->nops; k++)
			if (c->instrs[j]->ops[k].def == from) {
				c->instrs[j]->ops[k].def = to;
				c->instrs[j]->ops[k].name = to->name;
			}
	if (c->root == from) {
		c->root = to;
		to->is_root = from->is_root;
		from->is_root = 0;
	}
}

/* A tuple result declared with other float types than inferred (the
 * checker's in->mixed_tuple): `in` computes the inferred tuple, and a tuple
 * of its elements, each converted to the declared type where it differs
 * (`NAME.element.K`, `NAME.mixed.K`, `NAME.mixed`), is what the declared
 * result was. Appends them after `in`; returns the tuple, NULL when out of
 * memory. */
static instr *mixed_tuple_result(lowerer *lw, instr *in)
{
	const shape *declared = in->result, *inferred = in->mixed_tuple;
	int n = inferred->ntuple;
	in->result = inferred;
	in->shape = inferred;
	lw->out[lw->nout++] = in;
	operand *ops = arena_array(&lw->m->arena, (size_t)n, sizeof *ops);
	if (!ops) {
		lw->oom = 1;
		return NULL;
	}
	for (int k = 0; k < n; k++) {
		const shape *ie = &inferred->tuple[k], *de = &declared->tuple[k];
		instr *e = new_instr(lw, in, OP_GET_TUPLE_ELEMENT, in->name, "element", in, ie->type, ie->rank, ie->dims);
		if (!e || instr_set_int(&lw->m->arena, e, ATTR_INDEX, k)) {
			lw->oom = 1;
			return NULL;
		}
		instr *v = e;
		if (de->type != ie->type) {
			const shape *ds = module_intern_shape(lw->m, de);
			v = ds ? new_instr(lw, in, OP_CONVERT, in->name, "mixed", e, de->type, de->rank, de->dims) : NULL;
			if (!v) {
				lw->oom = 1;
				return NULL;
			}
			v->result = ds;
			v->shape = ds;
		}
		memset(&ops[k], 0, sizeof ops[k]);
		ops[k].name = v->name;
		ops[k].at = in->op_at;
		ops[k].def = v;
	}
	instr *t = new_instr(lw, in, OP_TUPLE, in->name, "mixed", in, ET_F32, 0, NULL);
	if (!t)
		return NULL;
	t->nops = n;
	t->ops = ops;
	t->result = declared;
	t->shape = declared;
	return t;
}

static void mixed_computation(lowerer *lw, computation *c, size_t *changed)
{
	lw->nout = 0;
	/* at most one convert per operand, or one after the instruction */
	size_t cap = (size_t)c->ninstrs;
	for (int i = 0; i < c->ninstrs; i++) {
		cap += (size_t)(c->instrs[i]->nops > 1 ? c->instrs[i]->nops : 1);
		/* a tuple result: an element, a convert each, and the tuple */
		if (c->instrs[i]->mixed_tuple)
			cap += 2 * (size_t)c->instrs[i]->mixed_tuple->ntuple + 1;
	}
	if (begin_list(lw, c, cap))
		return;
	for (int i = 0; i < c->ninstrs && !lw->oom; i++) {
		instr *in = c->instrs[i];
		const shape *rs = in->result;
		etype to = operand_target(in);
		if (to != ET_INVALID) {
			for (int k = 0; k < in->nops && !lw->oom; k++) {
				operand *o = &in->ops[k];
				const shape *os = o->def->result;
				if (!is_float_array(os) || os->type == to)
					continue;
				instr *cv = new_instr(lw, in, OP_CONVERT, in->name, "convert", o->def, to, os->rank,
						      os->dims);
				if (!cv)
					break;
				o->def = cv;
				o->name = cv->name;
				o->has_shape = 0;
				(*changed)++;
			}
			lw->out[lw->nout++] = in;
		} else if (in->mixed_type != ET_INVALID && is_float_array(rs)) {
			/* computed in the inferred type, converted after */
			shape inferred = *rs;
			inferred.type = in->mixed_type;
			const shape *declared = rs;
			const shape *is = module_intern_shape(lw->m, &inferred);
			if (!is) {
				lw->oom = 1;
				break;
			}
			in->result = is;
			in->shape = is;
			lw->out[lw->nout++] = in;
			instr *cv = new_instr(lw, in, OP_CONVERT, in->name, "mixed", in, declared->type, declared->rank,
					      declared->dims);
			if (!cv)
				break;
			cv->result = declared;
			cv->shape = declared;
			uses_to(c, i, in, cv);
			(*changed)++;
		} else if (in->mixed_tuple) {
			instr *t = mixed_tuple_result(lw, in);
			if (!t)
				break;
			uses_to(c, i, in, t);
			(*changed)++;
		} else {
			lw->out[lw->nout++] = in;
		}
	}
	end_list(lw, c, !lw->oom);
}

hloi_status lower_mixed_precision(module *m, hloi_context *ctx, size_t *changed)
{
	*changed = 0;
	if (!m->checked) {
		diag_error_where(ctx, m->filename, "the module must be checked before its mixed precision is made explicit");
		return HLOI_EINVAL;
	}
	lowerer lw;
	memset(&lw, 0, sizeof lw);
	lw.m = m;
	for (int i = 0; i < m->ncomps && !lw.oom; i++)
		mixed_computation(&lw, m->comps[i], changed);
	if (*changed)
		m->checked = 0;
	if (lw.oom) {
		m->checked = 0;
		diag_error_where(ctx, m->filename, "out of memory");
		return HLOI_ENOMEM;
	}
	return HLOI_OK;
}
