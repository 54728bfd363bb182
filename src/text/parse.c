/* The HLO text front end's driver: runs the flex + bison parser of grammar/
 * for one of its three entry points, and builds the IR, shapes and literal
 * trees from what the grammar actions hand over (the p_* helpers). */
#include "text/parse.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "hlo.tab.h"
#include "text/parse_int.h"
#include "util/alloc.h"

/* --- small helpers --------------------------------------------------------- */

void *p_alloc(pstate *st, size_t n)
{
	size_t k = (n + 15) / 16;
	if (k < P_FREE_CLASSES && st->free_small[k]) {
		void **p = st->free_small[k];
		st->free_small[k] = *p;
		memset(p, 0, n);
		return p;
	}
	void *p = arena_alloc(st->a, n);
	if (!p)
		st->oom = 1;
	return p;
}

void p_recycle(pstate *st, void *p, size_t n)
{
	size_t k = (n + 15) / 16;
	if (!p || k >= P_FREE_CLASSES)
		return;
	*(void **)p = st->free_small[k];
	st->free_small[k] = p;
}

void p_recycle_list(pstate *st, plist *l)
{
	for (pnode *n = l->head, *next; n; n = next) {
		next = n->next;
		p_recycle(st, n, sizeof *n);
	}
	l->head = l->tail = NULL;
	l->n = 0;
}

char *p_text(pstate *st, size_t s, size_t e)
{
	char *p = arena_strndup(st->a, st->text + s, e - s);
	if (!p)
		st->oom = 1;
	return p;
}

int p_push(pstate *st, plist *l, pnode **out)
{
	pnode *n = p_alloc(st, sizeof *n);
	*out = n;
	if (!n)
		return -1;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->tail = n;
	l->n++;
	return 0;
}

int p_lpush(pstate *st, llist *l, void *p)
{
	lnode *n = p_alloc(st, sizeof *n);
	if (!n)
		return -1;
	n->p = p;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->tail = n;
	l->n++;
	return 0;
}

const shape *p_intern(pstate *st, const shape *s)
{
	const shape *r = module_intern_shape(st->m, s);
	if (!r) {
		st->oom = 1;
		return &shape_none;
	}
	return r;
}

instr *p_instr_new(pstate *st)
{
	instr *in = instr_new(st->a);
	if (!in)
		st->oom = 1;
	return in;
}

shape *p_shape_new(pstate *st)
{
	shape *s = st->free_shapes;
	if (s) {
		st->free_shapes = s->tuple;
		memset(s, 0, sizeof *s);
		return s;
	}
	return p_alloc(st, sizeof *s);
}

void p_shape_free(pstate *st, shape *s)
{
	s->tuple = st->free_shapes;
	st->free_shapes = s;
}

static int tok_is(const pstate *st, const tokval *t, const char *word)
{
	size_t n = strlen(word);
	return t->e - t->s == n && memcmp(st->text + t->s, word, n) == 0;
}

int p_int64(pstate *st, const tokval *t, loc at, int64_t *out)
{
	if (t->ovf || (!t->neg && t->u > (uint64_t)INT64_MAX)) {
		diag_error(st->ctx, st->src, at, "integer %.*s is out of range (more than 64 bits)",
			   (int)(at.end - at.start), st->text + at.start);
		*out = 0;
		return 1;
	}
	if (!t->neg)
		*out = (int64_t)t->u;
	else if (t->u == (uint64_t)1 << 63)
		*out = INT64_MIN;
	else
		*out = -(int64_t)t->u;
	return 0;
}

/* --- shapes ----------------------------------------------------------------- */

int p_dim(pstate *st, shape **sp, const tokval *t, loc at, int kind)
{
	if (!*sp) {
		*sp = p_shape_new(st);
		if (!*sp)
			return -1;
	}
	shape *s = *sp;
	int64_t v = -1;
	if (kind != DIM_UNBOUNDED && p_int64(st, t, at, &v))
		v = 0;
	if (s->rank < HLOI_MAX_RANK) {
		s->dims[s->rank] = v;
		s->dim_kind[s->rank] = (uint8_t)kind;
	}
	if (s->rank < INT_MAX)
		s->rank++;
	return 0;
}

int p_array_shape(pstate *st, shape **out, shape *dims, etype t, loc at)
{
	shape *s = p_shape_new(st);
	*out = s;
	if (!s)
		return -1;
	if (dims) {
		*s = *dims;
		p_shape_free(st, dims);
	}
	s->type = t;
	if (s->rank > HLOI_MAX_RANK) {
		diag_error(st->ctx, st->src, at, "rank %d exceeds the limit of %d", s->rank, HLOI_MAX_RANK);
		s->rank = HLOI_MAX_RANK;
	}
	return 0;
}

int p_tuple_shape(pstate *st, shape **out, const llist *elems)
{
	shape *s = p_shape_new(st);
	*out = s;
	if (!s)
		return -1;
	s->type = ET_TUPLE;
	s->ntuple = elems->n;
	if (elems->n) {
		s->tuple = arena_array(st->a, (size_t)elems->n, sizeof *s->tuple);
		if (!s->tuple) {
			st->oom = 1;
			return -1;
		}
		int i = 0;
		for (lnode *n = elems->head; n; n = n->next) {
			s->tuple[i++] = *(shape *)n->p;
			p_shape_free(st, n->p);
		}
	}
	return 0;
}

void p_buffer_shape(pstate *st, shape *s, loc at)
{
	if (!s)
		return;
	/* XLA: "Buffer shape must have array shape." */
	if (!shape_is_array(s) || s->is_buffer) {
		diag_error(st->ctx, st->src, at, "a buffer shape b(...) holds an array shape");
		return;
	}
	s->is_buffer = 1;
}

/* The integers (and `*` as -1 when allowed) of one `(...)` group of a layout
 * item; -1 after reporting anything else. */
static int group_ints(pstate *st, const layout_item *it, const plist *g, int64_t *v, int max,
		      int allow_star)
{
	int n = 0;
	for (pnode *x = g->head; x; x = x->next) {
		int64_t val;
		if (x->kind == INT) {
			if (p_int64(st, &x->tok, x->at, &val))
				return -1;
			if (allow_star && val < 1) {
				/* tile sizes: XLA's Tile takes positive sizes or `*` */
				diag_error(st->ctx, st->src, x->at, "a tile size must be positive or '*', not %lld",
					   (long long)val);
				return -1;
			}
		} else if (x->kind == '*' && allow_star) {
			val = -1;
		} else {
			diag_error(st->ctx, st->src, x->at, "expects an integer in layout component '%.*s'",
				   (int)(it->name.e - it->name.s), st->text + it->name.s);
			return -1;
		}
		if (n >= max) {
			diag_error(st->ctx, st->src, x->at, "too many values in layout component '%.*s' (at most %d)",
				   (int)(it->name.e - it->name.s), st->text + it->name.s, max);
			return -1;
		}
		v[n++] = val;
	}
	return n;
}

/* Applies one `name(...)` of a layout suffix; errors are reported. */
static void layout_item_apply(pstate *st, layout *l, const layout_item *it)
{
	char name[8] = "";
	if (it->sym) {
		name[0] = (char)it->sym;
	} else {
		size_t n = it->name.e - it->name.s;
		if (n < sizeof name)
			memcpy(name, st->text + it->name.s, n);
		name[n < sizeof name ? n : 0] = '\0';
	}
	const plist *g0 = it->groups.head ? it->groups.head->p : NULL;
	int ngroups = it->groups.n;
	if (!strcmp(name, "D") || !strcmp(name, "SC") || !strcmp(name, "P") || !strcmp(name, "*") ||
	    !strcmp(name, "#")) {
		diag_error(st->ctx, st->src, it->at, "unsupported layout component '%s'", name);
		return;
	}
	if (!strcmp(name, "T")) {
		for (pnode *g = it->groups.head; g; g = g->next) {
			if (l->ntiles >= HLOI_MAX_TILES) {
				diag_error(st->ctx, st->src, g->at, "too many tiles (at most %d)", HLOI_MAX_TILES);
				return;
			}
			tile *t = &l->tiles[l->ntiles];
			int n = group_ints(st, it, g->p, t->dims, HLOI_MAX_RANK, 1);
			if (n < 0)
				return;
			t->n = n;
			l->ntiles++;
		}
		return;
	}
	if (ngroups != 1) {
		diag_error(st->ctx, st->src, it->at, "expects one (...) after layout component '%.*s'",
			   (int)(it->name.e - it->name.s), st->text + it->name.s);
		return;
	}
	if (!strcmp(name, "pad")) {
		int n = group_ints(st, it, g0, l->padded_dimensions, HLOI_MAX_RANK, 0);
		if (n >= 0)
			l->n_padded = n;
		return;
	}
	if (!strcmp(name, "padval")) {
		static const struct {
			const char *w;
			pad_value v;
		} vals[] = { { "zero", PAD_ZERO }, { "one", PAD_ONE }, { "lowest", PAD_LOWEST },
			     { "highest", PAD_HIGHEST } };
		pnode *x = g0->head;
		if (x && !x->next && x->kind == IDENT) {
			for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
				if (tok_is(st, &x->tok, vals[i].w)) {
					l->padding_value = vals[i].v;
					return;
				}
			}
		}
		loc at = x ? x->at : it->at;
		diag_error(st->ctx, st->src, at,
			   "unknown padding value '%.*s' (expects zero, one, lowest or highest)",
			   (int)(at.end - at.start), st->text + at.start);
		return;
	}
	int64_t *field = NULL;
	if (!strcmp(name, "L"))
		field = &l->tail_padding_alignment;
	else if (!strcmp(name, "E"))
		field = &l->element_size_in_bits;
	else if (!strcmp(name, "S"))
		field = &l->memory_space;
	else if (!strcmp(name, "M"))
		field = &l->dynamic_shape_metadata_prefix_bytes;
	if (!field) {
		diag_error(st->ctx, st->src, it->at, "unknown layout component '%.*s'",
			   (int)(it->name.e - it->name.s), st->text + it->name.s);
		return;
	}
	int64_t v[1];
	int n = group_ints(st, it, g0, v, 1, 0);
	if (n == 1)
		*field = v[0];
	else if (n == 0)
		diag_error(st->ctx, st->src, it->at, "expects an integer in layout component '%s'", name);
}

int p_layout(pstate *st, shape *s, const plist *m2m, const llist *items, loc at)
{
	layout *l = &s->layout;
	s->has_layout = 1;
	l->padding_value = PAD_ZERO;
	for (pnode *n = m2m->head; n; n = n->next) {
		if (l->n_minor_to_major >= HLOI_MAX_RANK) {
			diag_error(st->ctx, st->src, at, "layout has more than %d dimensions", HLOI_MAX_RANK);
			break;
		}
		l->minor_to_major[l->n_minor_to_major++] = n->i;
	}
	for (lnode *n = items->head; n; n = n->next)
		layout_item_apply(st, l, n->p);
	return 0;
}

/* --- literals --------------------------------------------------------------- */

int p_lit_scalar(pstate *st, lit_node **out, int kind, loc at)
{
	lit_node *n = p_alloc(st, sizeof *n);
	*out = n;
	if (!n)
		return -1;
	n->kind = (lit_kind)kind;
	n->at = at;
	n->text = p_text(st, at.start, at.end);
	return n->text ? 0 : -1;
}

int p_lit_list(pstate *st, lit_node **out, int kind, const llist *items, loc at)
{
	lit_node *n = p_alloc(st, sizeof *n);
	*out = n;
	if (!n)
		return -1;
	n->kind = (lit_kind)kind;
	n->at = at;
	if (items && items->n) {
		n->kids = arena_array(st->a, (size_t)items->n, sizeof *n->kids);
		if (!n->kids) {
			st->oom = 1;
			return -1;
		}
		for (lnode *x = items->head; x; x = x->next)
			n->kids[n->n++] = x->p;
	}
	return 0;
}

int p_literal_entry(pstate *st, shape *s, lit_node *lit)
{
	if (p_lpush(st, &st->lit_shapes, s) || p_lpush(st, &st->lits, lit))
		return -1;
	return 0;
}

/* --- instructions ------------------------------------------------------------ */

/* Opcodes whose result shape may be left out: XLA's CanInferShape list
 * (hlo_parser.cc), plus the ones XLA chose to require although their shape
 * follows from the operands (slice, dynamic-slice, collectives, ...): the
 * rows without OPF_SHAPE_REQUIRED. */
static int can_infer_shape(opcode op)
{
	return !opcode_has(op, OPF_SHAPE_REQUIRED);
}

static int same_name(const pstate *st, const tokval *a, const tokval *b)
{
	return a->e - a->s == b->e - b->s && memcmp(st->text + a->s, st->text + b->s, a->e - a->s) == 0;
}

/* Records an attribute skipped as unknown in the module (for --strict). */
static void note_unknown(pstate *st, const char *name, loc at, int header)
{
	if (!st->m)
		return;
	unknown_attr *u = p_alloc(st, sizeof *u);
	if (!u)
		return;
	u->name = name;
	u->at = at;
	u->header = header;
	u->next = NULL;
	unknown_attr **tail = &st->m->unknown;
	while (*tail)
		tail = &(*tail)->next;
	*tail = u;
	st->m->nunknown++;
}

/* Attributes of XLA's that hloi keeps as written without a table row:
 * a composite call's `composite.*`. */
static int quietly_kept(const char *name)
{
	return !strncmp(name, "composite.", 10);
}

static int apply_attrs(pstate *st, instr *in, const llist *attrs)
{
	in->attrs = attrs->n ? arena_array(st->a, (size_t)attrs->n, sizeof *in->attrs) : NULL;
	if (attrs->n && !in->attrs) {
		st->oom = 1;
		return -1;
	}
	int n = 0;
	for (lnode *ln = attrs->head; ln; ln = ln->next) {
		const attr_item *it = ln->p;
		int dup = 0;
		for (lnode *m = attrs->head; m != ln; m = m->next)
			dup |= same_name(st, &((attr_item *)m->p)->name, &it->name);
		char *name = p_text(st, it->name.s, it->name.e);
		if (!name)
			return -1;
		if (dup) {
			diag_error(st->ctx, st->src, it->at, "attribute %s already exists", name);
			continue;
		}
		attr *a = &in->attrs[n];
		memset(a, 0, sizeof *a);
		a->id = (uint16_t)attr_from_name(name, strlen(name));
		a->at = it->at;
		a->vat = (loc){ it->name.vs, it->name.ve };
		if (a->id == ATTR_COUNT) {
			if (!quietly_kept(name)) {
				diag_warning(st->ctx, st->src, it->at, "unknown attribute '%s' ignored (kept as written)",
					     name);
				note_unknown(st, name, it->at, 0);
			}
			a->kind = AK_RAW;
			a->uname = name;
			a->u.s = p_text(st, it->name.vs, it->name.ve);
			if (!a->u.s)
				return -1;
			n++;
			continue;
		}
		int rc = p_attr_value(st, a, name, in->name, it->name.vs, it->name.ve);
		if (rc < 0)
			return -1;
		if (rc == 0)
			n++;
	}
	in->nattrs = n;
	return 0;
}

/* XLA's async sugar (hlo_parser.cc ParseOpcode): `<op>-start`, `-update`,
 * `-done` for any opcode but those with async forms of their own and the
 * async wrappers themselves. 1 with *op and *wrapped set; 0 when the word
 * has no such suffix; -1 when it has one but wraps no opcode that may be
 * wrapped. */
static int async_sugar(const char *s, size_t len, opcode *op, opcode *wrapped)
{
	static const struct {
		const char *suffix;
		opcode op;
	} forms[] = { { "-start", OP_ASYNC_START }, { "-update", OP_ASYNC_UPDATE }, { "-done", OP_ASYNC_DONE } };
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		size_t n = strlen(forms[i].suffix);
		if (len <= n || memcmp(s + len - n, forms[i].suffix, n))
			continue;
		opcode w = opcode_from_name(s, len - n);
		if (!opcode_async_wrappable(w))
			return -1;
		*op = forms[i].op;
		*wrapped = w;
		return 1;
	}
	return 0;
}

/* async-start and async-update: `((operand shapes...), output, ...)`. */
static int async_shape_ok(const shape *s)
{
	return s->type == ET_TUPLE && s->ntuple >= 2 && s->tuple[0].type == ET_TUPLE;
}

/* The instruction `name = [sh] oc` without its attributes; *out NULL (and
 * 0 returned) when the opcode is unknown. */
static int make_instr(pstate *st, instr **out, int is_root, const char *name, loc name_at, shape *sh,
		      opcall *oc, loc at)
{
	*out = NULL;
	opcode op;
	if (oc->kind == OC_PARAMETER)
		op = OP_PARAMETER;
	else if (oc->kind == OC_CONSTANT)
		op = OP_CONSTANT;
	else
		op = opcode_from_name(st->text + oc->op.s, oc->op.e - oc->op.s);
	opcode wrapped = OP_COUNT;
	if (op == OP_COUNT) {
		int sugar = async_sugar(st->text + oc->op.s, oc->op.e - oc->op.s, &op, &wrapped);
		if (sugar <= 0) {
			diag_error(st->ctx, st->src, oc->op_at, "expects %sopcode but sees: %.*s",
				   sugar < 0 ? "async wrapped " : "", (int)(oc->op.e - oc->op.s),
				   st->text + oc->op.s);
			return 0;
		}
		if (!sh) {
			diag_error(st->ctx, st->src, oc->op_at, "async op %s must have an explicit shape",
				   opcode_name(op));
			return 0;
		}
		if (op != OP_ASYNC_DONE && !async_shape_ok(sh)) {
			diag_error(st->ctx, st->src, oc->op_at,
				   "%s expects the shape to be in the form of ((operand0_shape, "
				   "operand1_shape, ...), output_shape, ...)",
				   opcode_name(op));
			return 0;
		}
	}
	instr *in = p_instr_new(st);
	if (!in)
		return -1;
	in->op = op;
	in->async_sugar = wrapped != OP_COUNT;
	in->async_op = wrapped;
	in->name = name;
	in->at = at;
	in->name_at = name_at;
	in->op_at = oc->op_at;
	in->is_root = is_root;
	if (sh) {
		in->has_shape = 1;
		in->shape = p_intern(st, sh);
		p_shape_free(st, sh);
	} else if (!can_infer_shape(op)) {
		diag_error(st->ctx, st->src, oc->op_at, "cannot infer shape for opcode: %s", opcode_name(op));
	}
	switch (oc->kind) {
	case OC_PARAMETER:
		in->parameter_at = oc->call_at;
		if (!p_int64(st, &oc->num, oc->num_at, &in->parameter_number) && in->parameter_number < 0)
			diag_error(st->ctx, st->src, oc->num_at, "parameter number must be >= 0");
		break;
	case OC_CONSTANT:
		in->literal = oc->lit;
		break;
	default:
		if (oc->operands.n) {
			in->ops = arena_array(st->a, (size_t)oc->operands.n, sizeof *in->ops);
			if (!in->ops) {
				st->oom = 1;
				return -1;
			}
			for (pnode *n = oc->operands.head; n; n = n->next) {
				operand *o = &in->ops[in->nops++];
				o->name = n->kind == OPERAND_NESTED ? n->p : p_text(st, n->tok.s, n->tok.e);
				if (!o->name)
					return -1;
				o->at = n->at;
				if (n->kind != OPERAND_NESTED && n->p) {
					o->has_shape = 1;
					o->declared = n->p; /* in the module's arena */
				} else if (n->kind == OPERAND_NESTED && n->shp) {
					o->has_shape = 1;
					o->declared = n->shp;
				}
			}
		}
		break;
	}
	*out = in;
	return 0;
}

static int build_computation(pstate *st, int is_entry, loc entry_at, char *name, loc name_at, sigval *sig,
			     const ivec *instrs);

/* Attributes of a sugared async-start that stay on it; the others belong to
 * the op it wraps (XLA's parser gives those to the wrapped instruction). */
static int async_keeps(const instr *in, const attr *a)
{
	if (a->id == ATTR_COUNT || a->id >= ATTR_SHARDING || a->id == ATTR_ASYNC_EXECUTION_THREAD)
		return 1;
	return a->id == ATTR_OUTPUT_TO_OPERAND_ALIASING && in->async_op != OP_CUSTOM_CALL;
}

static instr *wrapped_instr(pstate *st, const instr *in, opcode op, const char *name, const shape *sh)
{
	instr *w = p_instr_new(st);
	char *nm = arena_strdup(st->a, name);
	if (!w || !nm) {
		st->oom = 1;
		return NULL;
	}
	w->op = op;
	w->name = nm;
	w->at = in->at;
	w->name_at = in->name_at;
	w->op_at = in->op_at;
	w->has_shape = 1;
	w->shape = p_intern(st, sh);
	if (!w->shape)
		return NULL;
	return w;
}

/* The computation a sugared async-start calls, as XLA's parser makes it
 * (CreateAsyncWrappedComputation): one parameter per operand shape in *ops
 * (at least the wrapped opcode's arity, f32[1] for the missing ones) and a
 * root of the wrapped opcode over them, of shape *out, with the wrapped
 * op's attributes. The computation is named `<start>.async_wrapped` and
 * becomes the start's `calls`. */
static int wrap_async(pstate *st, instr *in, const shape *ops, const shape *out)
{
	int arity = opcode_arity(in->async_op);
	int np = arity > ops->ntuple ? arity : ops->ntuple;
	instr *root = wrapped_instr(st, in, in->async_op, "async_op", out);
	if (!root)
		return -1;
	root->is_root = 1;
	ivec body = { arena_array(st->a, (size_t)np + 1, sizeof(instr *)), 0, 1, root };
	if (!body.v) {
		st->oom = 1;
		return -1;
	}
	if (np) {
		root->ops = arena_array(st->a, (size_t)np, sizeof *root->ops);
		if (!root->ops) {
			st->oom = 1;
			return -1;
		}
	}
	shape dummy;
	int64_t one = 1;
	shape_make_array(&dummy, ET_F32, 1, &one);
	for (int i = 0; i < np; i++) {
		char pname[32];
		if (i)
			snprintf(pname, sizeof pname, "async_param.%d", i);
		else
			snprintf(pname, sizeof pname, "async_param");
		instr *p = wrapped_instr(st, in, OP_PARAMETER, pname, i < ops->ntuple ? &ops->tuple[i] : &dummy);
		if (!p)
			return -1;
		body.v[body.n++] = p;
		p->parameter_number = i;
		p->parameter_at = in->op_at;
		operand *o = &root->ops[root->nops++];
		o->name = p->name;
		o->at = in->op_at;
	}
	/* split the written attributes */
	int moved = 0;
	for (int i = 0; i < in->nattrs; i++)
		moved += !async_keeps(in, &in->attrs[i]);
	attr *kept = arena_array(st->a, (size_t)(in->nattrs - moved + 1), sizeof *kept);
	root->attrs = moved ? arena_array(st->a, (size_t)moved, sizeof *root->attrs) : NULL;
	if (!kept || (moved && !root->attrs)) {
		st->oom = 1;
		return -1;
	}
	int nk = 0;
	for (int i = 0; i < in->nattrs; i++) {
		if (async_keeps(in, &in->attrs[i]))
			kept[nk++] = in->attrs[i];
		else
			root->attrs[root->nattrs++] = in->attrs[i];
	}
	size_t len = strlen(in->name);
	char *cname = arena_alloc(st->a, len + sizeof ".async_wrapped");
	if (!cname) {
		st->oom = 1;
		return -1;
	}
	memcpy(cname, in->name, len);
	memcpy(cname + len, ".async_wrapped", sizeof ".async_wrapped");
	attr *calls = &kept[nk++];
	memset(calls, 0, sizeof *calls);
	calls->id = ATTR_CALLS;
	calls->kind = AK_COMP;
	calls->at = calls->vat = in->op_at;
	calls->u.s = cname;
	in->attrs = kept;
	in->nattrs = nk;
	in->async_wrapped = root;
	body.v[body.n++] = root;
	if (build_computation(st, 0, in->at, cname, in->name_at, NULL, &body))
		return -1;
	((computation *)st->comps.tail->p)->async_wrapped = 1;
	return 0;
}

int p_instr(pstate *st, instr **out, int is_root, const tokval *name, loc name_at,
	    shape *sh, opcall *oc, const llist *attrs, loc at)
{
	*out = NULL;
	char *n = p_text(st, name->s, name->e);
	if (!n || make_instr(st, out, is_root, n, name_at, sh, oc, at))
		return -1;
	if (*out && apply_attrs(st, *out, attrs))
		return -1;
	/* the instruction holds copies of all of it */
	for (lnode *l = attrs->head, *next; l; l = next) {
		next = l->next;
		p_recycle(st, l->p, sizeof(attr_item));
		p_recycle(st, l, sizeof *l);
	}
	p_recycle_list(st, &oc->operands);
	p_recycle(st, oc, sizeof *oc);
	return 0;
}

/* Nested instructions are named `<opcode>.nested.<k>`, k counting them in
 * the text being parsed, so the names are unique and say where they came
 * from. */
int p_nested(pstate *st, pnode **out, shape *sh, opcall *oc, loc at)
{
	*out = NULL;
	pnode *nd = p_alloc(st, sizeof *nd);
	if (!nd)
		return -1;
	nd->at = at;
	char buf[96];
	const char *opname = oc->kind == OC_PARAMETER ? "parameter"
			     : oc->kind == OC_CONSTANT ? "constant"
						       : NULL;
	size_t oplen = opname ? strlen(opname) : oc->op.e - oc->op.s;
	if (oplen > 48)
		oplen = 48;
	snprintf(buf, sizeof buf, "%.*s.nested.%d", (int)oplen, opname ? opname : st->text + oc->op.s,
		 st->nhoisted++);
	char *name = arena_strdup(st->a, buf);
	if (!name) {
		st->oom = 1;
		return -1;
	}
	instr *in = NULL;
	if (make_instr(st, &in, 0, name, oc->op_at, sh, oc, at))
		return -1;
	if (in && p_lpush(st, &st->hoisted, in))
		return -1;
	/* the operand names it; its span is the whole nested text */
	nd->kind = OPERAND_NESTED;
	nd->p = name;
	*out = nd;
	return 0;
}

int p_gte_operand(pstate *st, pnode **out, shape *sh, const tokval *name, const plist *indices, loc at)
{
	*out = NULL;
	strbuf key = STRBUF_INIT;
	sb_printf(&key, "%.*s", (int)(name->e - name->s), st->text + name->s);
	const char *prev = p_text(st, name->s, name->e);
	if (!prev) {
		sb_free(&key);
		return -1;
	}
	for (pnode *ix = indices->head; ix; ix = ix->next) {
		int64_t idx = 0;
		p_int64(st, &ix->tok, ix->at, &idx);
		sb_printf(&key, "#%lld", (long long)idx);
		if (key.oom) {
			st->oom = 1;
			break;
		}
		/* `p#1` used again in this computation names the same one */
		instr *found = NULL;
		for (lnode *g = st->gtes.head, *k = st->gte_keys.head; g && !found; g = g->next, k = k->next)
			if (!strcmp(k->p, sb_str(&key)))
				found = g->p;
		if (!found) {
			/* XLA's name: the key with `#` made `_` */
			char *nm = arena_strdup(st->a, sb_str(&key));
			char *k = arena_strdup(st->a, sb_str(&key));
			if (!nm || !k || p_lpush(st, &st->gte_keys, k)) {
				st->oom = 1;
				break;
			}
			for (char *c = nm; *c; c++)
				if (*c == '#')
					*c = '_';
			instr *in = p_instr_new(st);
			operand *o = p_alloc(st, sizeof *o);
			attr *a = p_alloc(st, sizeof *a);
			if (!nm || !in || !o || !a) {
				st->oom = 1;
				break;
			}
			in->op = OP_GET_TUPLE_ELEMENT;
			in->name = nm;
			in->at = in->name_at = in->op_at = at;
			o->name = prev;
			o->at = at;
			in->ops = o;
			in->nops = 1;
			a->id = ATTR_INDEX;
			a->kind = AK_INT;
			a->at = a->vat = ix->at;
			a->u.i = idx;
			in->attrs = a;
			in->nattrs = 1;
			if (p_lpush(st, &st->hoisted, in) || p_lpush(st, &st->gtes, in))
				break;
			found = in;
		}
		prev = found->name;
	}
	sb_free(&key);
	if (st->oom)
		return -1;
	pnode *nd = p_alloc(st, sizeof *nd);
	if (!nd)
		return -1;
	nd->at = at;
	nd->kind = OPERAND_NESTED;
	nd->p = (void *)prev;
	nd->shp = sh; /* the written shape is the last element's */
	*out = nd;
	return 0;
}

/* --- computations and the module ------------------------------------------- */

static size_t hash_name(const char *s)
{
	size_t h = 14695981039346656037u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* Adds a computation name to the set: 0 when added, 1 when it was there
 * already, -1 when out of memory. */
static int comp_name_add(pstate *st, char *name)
{
	if ((st->comp_names_n + 1) * 2 > st->comp_names_cap) {
		size_t cap = st->comp_names_cap ? st->comp_names_cap * 2 : 64;
		char **t = hloi_calloc(cap, sizeof *t);
		if (!t) {
			st->oom = 1;
			return -1;
		}
		for (size_t i = 0; i < st->comp_names_cap; i++) {
			char *k = st->comp_names[i];
			if (!k)
				continue;
			size_t j = hash_name(k) & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = k;
		}
		hloi_free(st->comp_names);
		st->comp_names = t;
		st->comp_names_cap = cap;
	}
	size_t mask = st->comp_names_cap - 1;
	size_t j = hash_name(name) & mask;
	while (st->comp_names[j]) {
		if (!strcmp(st->comp_names[j], name))
			return 1;
		j = (j + 1) & mask;
	}
	st->comp_names[j] = name;
	st->comp_names_n++;
	return 0;
}

int p_push_instr(pstate *st, instr *in)
{
	ivec *v = &st->cur;
	if (v->n == st->cur_cap) {
		if (st->cur_cap > INT_MAX / 2) {
			st->oom = 1;
			return -1;
		}
		int cap = st->cur_cap ? 2 * st->cur_cap : 64;
		instr **nv = hloi_realloc(v->v, (size_t)cap * sizeof *nv);
		if (!nv) {
			st->oom = 1;
			return -1;
		}
		v->v = nv;
		st->cur_cap = cap;
	}
	v->v[v->n++] = in;
	/* noted now, while `in` is in cache: a million-instruction
	 * computation would otherwise read each one again to find its ROOT */
	if (in->is_root && !v->nroots++)
		v->root = in;
	return 0;
}

int p_take_instrs(pstate *st, ivec *out)
{
	*out = st->cur;
	out->v = NULL;
	if (st->cur.n) {
		out->v = arena_array(st->a, (size_t)st->cur.n, sizeof *out->v);
		if (!out->v) {
			st->oom = 1;
			return -1;
		}
		memcpy(out->v, st->cur.v, (size_t)st->cur.n * sizeof *out->v);
	}
	st->cur.n = st->cur.nroots = 0;
	st->cur.root = NULL;
	return 0;
}

/* XLA's parser rewrites the computation of a sugared async-start at each
 * update and done of its chain (UpdateAsyncWrappedComputation): its
 * parameters become the operand shapes the last update lists (an update
 * may add operands), its root the done's shape. The chain is followed
 * through the sugared updates and done that name the instruction before;
 * one of another opcode is XLA's parser's error. */
static void async_chain_shapes(pstate *st, const ivec *instrs, int i, const shape **ops, const shape **out)
{
	const instr *cur = instrs->v[i];
	const opcode wrapped = cur->async_op;
	*ops = &cur->shape->tuple[0];
	*out = &cur->shape->tuple[1];
	for (int j = i + 1; j < instrs->n; j++) {
		const instr *u = instrs->v[j];
		if ((u->op != OP_ASYNC_UPDATE && u->op != OP_ASYNC_DONE) || !u->async_sugar || u->nops < 1 ||
		    strcmp(u->ops[0].name, cur->name) != 0 || !u->has_shape)
			continue;
		if (u->async_op != wrapped) {
			diag_error(st->ctx, st->src, u->op_at, "Expect async wrapped opcode to be %s, but got %s",
				   opcode_name(wrapped), opcode_name(u->async_op));
			return;
		}
		if (u->op == OP_ASYNC_DONE) {
			*out = u->shape;
			return;
		}
		if (!async_shape_ok(u->shape))
			return;
		*ops = &u->shape->tuple[0];
		*out = &u->shape->tuple[1];
		cur = u;
	}
}

/* The computations of the sugared async-starts among instrs, once their
 * chains are known. */
static int wrap_async_chains(pstate *st, const ivec *instrs)
{
	for (int i = 0; i < instrs->n; i++) {
		instr *in = instrs->v[i];
		if (!in->async_sugar || in->op != OP_ASYNC_START || in->async_wrapped)
			continue;
		const shape *ops, *out;
		async_chain_shapes(st, instrs, i, &ops, &out);
		if (wrap_async(st, in, ops, out))
			return -1;
	}
	return 0;
}

static int build_computation(pstate *st, int is_entry, loc entry_at, char *name, loc name_at, sigval *sig,
			     const ivec *instrs)
{
	if (wrap_async_chains(st, instrs))
		return -1;
	computation *c = p_alloc(st, sizeof *c);
	if (!c)
		return -1;
	c->name = name;
	c->name_at = name_at;
	c->is_entry = is_entry;
	if (is_entry) {
		if (st->entry_seen)
			diag_error(st->ctx, st->src, entry_at, "expects only one ENTRY");
		st->entry_seen = 1;
	}
	int dup = comp_name_add(st, (char *)c->name);
	if (dup < 0)
		return -1;
	if (dup)
		diag_error(st->ctx, st->src, name_at, "computation already exists: %s", c->name);
	if (instrs->n == 0 && !st->nsyntax && !st->fatal)
		diag_error(st->ctx, st->src, name_at, "computation %s has no instructions", c->name);
	c->ninstrs = instrs->n;
	c->instrs = instrs->v;
	c->root = instrs->root;
	for (int i = 0, roots = 0; instrs->nroots > 1 && i < instrs->n; i++) {
		const instr *in = instrs->v[i];
		if (in->is_root && roots++) {
			loc at = { in->at.start, in->at.start + 4 };
			diag_error(st->ctx, st->src, at, "one computation should have only one ROOT");
		}
	}
	if (!c->root && c->ninstrs)
		c->root = c->instrs[c->ninstrs - 1];
	if (sig) {
		c->has_signature = 1;
		c->sig_at = sig->at;
		c->sig_result = *sig->result;
		p_shape_free(st, sig->result);
		c->nsig_params = sig->params.n;
		if (sig->params.n) {
			c->sig_names = arena_array(st->a, (size_t)sig->params.n, sizeof *c->sig_names);
			c->sig_shapes = arena_array(st->a, (size_t)sig->params.n, sizeof *c->sig_shapes);
			if (!c->sig_names || !c->sig_shapes) {
				st->oom = 1;
				return -1;
			}
			int i = 0;
			for (pnode *n = sig->params.head; n; n = n->next, i++) {
				c->sig_names[i] = p_text(st, n->tok.s, n->tok.e);
				if (!c->sig_names[i])
					return -1;
				c->sig_shapes[i] = *(shape *)n->p;
				p_shape_free(st, n->p);
			}
		}
	}
	return p_lpush(st, &st->comps, c);
}

static int name_taken(const ivec *instrs, const instr *self, const char *name)
{
	for (int i = 0; i < instrs->n; i++)
		if (instrs->v[i] != self && !strcmp(instrs->v[i]->name, name))
			return 1;
	return 0;
}

/* A get-tuple-element made for `name#i` whose name another instruction of
 * the computation has is renamed `<name>.<k>` (XLA uniquifies it too), and
 * its users follow (they share its name's pointer). */
int p_uniquify_gtes(pstate *st, const ivec *instrs)
{
	if (!st->gtes.n)
		return 0;
	for (lnode *g = st->gtes.head; g; g = g->next) {
		instr *gte = g->p;
		if (!name_taken(instrs, gte, gte->name))
			continue;
		const char *old = gte->name;
		char buf[160];
		for (int k = 1;; k++) {
			snprintf(buf, sizeof buf, "%.140s.%d", old, k);
			if (!name_taken(instrs, gte, buf))
				break;
		}
		char *nm = arena_strdup(st->a, buf);
		if (!nm) {
			st->oom = 1;
			return -1;
		}
		for (int k = 0; k < instrs->n; k++) {
			instr *in = instrs->v[k];
			for (int i = 0; i < in->nops; i++)
				if (in->ops[i].name == old)
					in->ops[i].name = nm;
		}
		gte->name = nm;
	}
	return 0;
}

int p_computation(pstate *st, int is_entry, loc entry_at, const tokval *name, loc name_at,
		  sigval *sig)
{
	ivec body;
	if (p_take_instrs(st, &body))
		return -1;
	const ivec *instrs = &body;
	int r = p_uniquify_gtes(st, instrs);
	st->gtes.head = st->gtes.tail = NULL;
	st->gtes.n = 0;
	st->gte_keys = st->gtes;
	if (r)
		return r;
	char *n = p_text(st, name->s, name->e);
	if (!n)
		return -1;
	return build_computation(st, is_entry, entry_at, n, name_at, sig, instrs);
}

int p_computation_attrs(pstate *st, const plist *attrs)
{
	computation *c = st->comps.tail ? st->comps.tail->p : NULL;
	for (pnode *n = attrs->head; n; n = n->next) {
		const tokval *t = &n->tok;
		char *an = p_text(st, t->s, t->e);
		if (!an)
			return -1;
		if (strcmp(an, "execution_thread") != 0 || !c) {
			diag_warning(st->ctx, st->src, n->at, "unknown computation attribute '%s' skipped", an);
			note_unknown(st, an, n->at, 0);
			continue;
		}
		if (c->execution_thread_seen) {
			diag_error(st->ctx, st->src, n->at, "attribute %s already exists", an);
			continue;
		}
		c->execution_thread_seen = 1;
		char *raw = p_text(st, t->vs, t->ve);
		if (!raw)
			return -1;
		size_t len = strlen(raw);
		if (len < 2 || raw[0] != '"' || raw[len - 1] != '"') {
			diag_error(st->ctx, st->src, (loc){ t->vs, t->ve }, "malformed execution_thread: expects a quoted string");
			continue;
		}
		char *v = attr_string_value(st->a, raw, NULL);
		if (!v) {
			st->oom = 1;
			return -1;
		}
		c->execution_thread = strcmp(v, "main") == 0 ? NULL : v;
	}
	return 0;
}

int p_stack_frames(pstate *st, loc at)
{
	if (!st->m)
		return 0;
	size_t s = at.start, e = at.end;
	while (s < e && strchr(" \t\r\n", st->text[s]))
		s++;
	while (e > s && strchr(" \t\r\n", st->text[e - 1]))
		e--;
	if (s == e)
		return 0;
	st->m->stack_frames = p_text(st, s, e);
	return st->m->stack_frames ? 0 : -1;
}

int p_computation_named(pstate *st, const char *name, loc at, const ivec *instrs)
{
	return build_computation(st, 0, at, (char *)name, at, NULL, instrs);
}

/* Attribute values nest computations at most this deep (each level is a
 * parser on the C stack). */
#define PARSE_MAX_SUB_DEPTH 32

int p_subparse(pstate *st, int what, size_t s, size_t e, pstate **out)
{
	*out = NULL;
	if (st->sub_depth >= PARSE_MAX_SUB_DEPTH) {
		diag_error(st->ctx, st->src, (loc){ s, s + 1 },
			   "computations written in attributes nest too deeply (more than %d levels)",
			   PARSE_MAX_SUB_DEPTH);
		return 1;
	}
	pstate *c = hloi_calloc(1, sizeof *c);
	if (!c) {
		st->oom = 1;
		return -1;
	}
	c->ctx = st->ctx;
	c->src = st->src;
	c->text = st->text;
	c->pos = s;
	c->len = e;
	c->a = st->a;
	c->m = st->m;
	c->sub_depth = st->sub_depth + 1;
	c->depth = st->depth;
	switch (what) {
	case P_SUB_SHAPE: c->start_token = START_SHAPE; break;
	case P_SUB_SHAPES: c->start_token = START_SHAPES; break;
	case P_SUB_LITERAL:
		c->start_token = START_LITERALS;
		c->literal_mode = 1;
		break;
	default: c->start_token = START_COMPUTATION; break;
	}
	size_t errors = st->ctx->nerrors;
	int r = hlo_text_run(c);
	hloi_free(c->comp_names);
	c->comp_names = NULL;
	if (c->oom || st->ctx->oom) {
		st->oom = 1;
		hloi_free(c);
		return -1;
	}
	if (r != 0 || st->ctx->nerrors > errors) {
		if (st->ctx->nerrors == errors)
			diag_error(st->ctx, st->src, (loc){ c->pos, c->pos }, "syntax error");
		hloi_free(c);
		return 1;
	}
	/* computations it made (written in its own attributes) join ours */
	for (lnode *n = c->comps.head; n; n = n->next)
		if (p_lpush(st, &st->comps, n->p)) {
			hloi_free(c);
			return -1;
		}
	*out = c;
	return 0;
}

/* `{1,2}` into idx; returns the count. */
static int vc_index(vcur *c, int64_t *idx)
{
	int n = 0;
	vc_expect(c, '{');
	if (c->bad)
		return 0;
	if (vc_eat(c, '}'))
		return 0;
	do {
		int64_t v = vc_int(c);
		if (c->bad)
			return 0;
		if (n >= HLOI_MAX_RANK) {
			vc_fail(c, "at most 16 index entries");
			return 0;
		}
		idx[n++] = v;
	} while (vc_eat(c, ','));
	vc_expect(c, '}');
	return n;
}

/* input_output_alias={ {out}: (param, {idx}[, may-alias|must-alias]), ... } */
static int parse_alias(pstate *st, module *m, size_t vs, size_t ve)
{
	vcur c;
	vc_init(&c, st, vs, ve, "input_output_alias");
	plist entries = { NULL, NULL, 0 };
	vc_expect(&c, '{');
	if (!c.bad && !vc_eat(&c, '}')) {
		do {
			pnode *n;
			if (p_push(st, &entries, &n))
				return -1;
			alias_entry *e = p_alloc(st, sizeof *e);
			if (!e)
				return -1;
			n->p = e;
			vc_skip(&c);
			size_t start = c.p;
			e->n_output_index = vc_index(&c, e->output_index);
			vc_expect(&c, ':');
			vc_expect(&c, '(');
			e->parameter_number = vc_int(&c);
			vc_expect(&c, ',');
			e->n_parameter_index = vc_index(&c, e->parameter_index);
			if (vc_eat(&c, ',')) {
				vc_skip(&c);
				const char *t = st->text + c.p;
				size_t left = c.end - c.p;
				if (left >= 10 && !memcmp(t, "must-alias", 10)) {
					e->must_alias = 1;
					c.p += 10;
				} else if (left >= 9 && !memcmp(t, "may-alias", 9)) {
					c.p += 9;
				} else {
					vc_fail(&c, "may-alias or must-alias");
				}
			}
			vc_expect(&c, ')');
			e->at = (loc){ start, c.p };
		} while (!c.bad && vc_eat(&c, ','));
		vc_expect(&c, '}');
	}
	vc_skip(&c);
	if (!c.bad && c.p != c.end)
		vc_fail(&c, "the end of the value");
	if (c.bad)
		return 0;
	m->nalias = entries.n;
	if (entries.n) {
		m->alias = arena_array(st->a, (size_t)entries.n, sizeof *m->alias);
		if (!m->alias) {
			st->oom = 1;
			return -1;
		}
		int i = 0;
		for (pnode *n = entries.head; n; n = n->next)
			m->alias[i++] = *(alias_entry *)n->p;
	}
	return 0;
}

int p_header(pstate *st, const tokval *name, const plist *attrs)
{
	module *m = st->m;
	if (!m)
		return 0;
	m->has_header = 1;
	m->name = p_text(st, name->s, name->e);
	if (!m->name)
		return -1;
	if (attrs->n) {
		m->header_attrs = arena_array(st->a, (size_t)attrs->n, sizeof *m->header_attrs);
		if (!m->header_attrs) {
			st->oom = 1;
			return -1;
		}
	}
	for (pnode *n = attrs->head; n; n = n->next) {
		const tokval *t = &n->tok;
		char *an = p_text(st, t->s, t->e);
		char *av = p_text(st, t->vs, t->ve);
		if (!an || !av)
			return -1;
		int dup = 0;
		for (pnode *k = attrs->head; k != n; k = k->next)
			dup |= same_name(st, &k->tok, t);
		if (dup) {
			diag_error(st->ctx, st->src, n->at, "attribute %s already exists", an);
			continue;
		}
		if (!header_attr_known(an)) {
			/* kept as written (printed back, stashed in a .pb) like an
			 * instruction's unknown attribute; --strict refuses it */
			diag_warning(st->ctx, st->src, n->at,
				     "unknown header attribute '%s' ignored (kept as written)", an);
			note_unknown(st, an, n->at, 1);
		}
		if (!strcmp(an, "broadcast_mode")) {
			m->broadcast_mode_at = n->at;
			if (!strcmp(av, "numpy"))
				m->broadcast_mode = HLOI_BROADCAST_NUMPY;
			else if (!strcmp(av, "xla"))
				m->broadcast_mode = HLOI_BROADCAST_XLA;
			else
				diag_error(st->ctx, st->src, (loc){ t->vs, t->ve },
					   "unknown broadcast_mode '%s' (expects xla or numpy)", av);
		} else if (!strcmp(an, "input_output_alias")) {
			m->alias_at = n->at;
			if (parse_alias(st, m, t->vs, t->ve))
				return -1;
		}
		raw_attr *r = &m->header_attrs[m->nheader_attrs++];
		r->name = an;
		r->value = av;
		r->at = n->at;
	}
	return 0;
}

static int finish_module(pstate *st, module *m)
{
	m->ncomps = st->comps.n;
	m->comps = arena_array(st->a, (size_t)st->comps.n, sizeof *m->comps);
	if (!m->comps)
		return -1;
	int i = 0;
	for (lnode *n = st->comps.head; n; n = n->next) {
		computation *c = n->p;
		m->comps[i++] = c;
		if (c->is_entry && !m->entry)
			m->entry = c;
	}
	if (!m->entry && m->ncomps)
		m->entry = m->comps[m->ncomps - 1];
	if (!m->has_header && m->entry) {
		size_t n = strlen(m->entry->name);
		char *name = arena_alloc(st->a, n + 8);
		if (!name)
			return -1;
		memcpy(name, "module_", 7);
		memcpy(name + 7, m->entry->name, n + 1);
		m->name = name;
	}
	return 0;
}

/* --- drivers ----------------------------------------------------------------- */

/* Registers the source, runs the parser, and turns the outcome into a
 * status: HLOI_ENOMEM when anything failed to allocate, HLOI_EPARSE when an
 * error was recorded. */
static hloi_status run(pstate *st, hloi_context *ctx, const char *name, const char *text, size_t len,
		       char *take)
{
	st->ctx = ctx;
	st->text = text;
	st->len = len;
	st->src = take ? diag_add_source_take(ctx, name, take, len) : diag_add_source(ctx, name, text, len);
	if (st->src < 0)
		return HLOI_ENOMEM;
	size_t errors = ctx->nerrors;
	if (len > (size_t)INT_MAX - 2) {
		diag_error_where(ctx, name, "input is too large (%zu bytes)", len);
		return HLOI_EPARSE;
	}
	/* Refused before scanning: flex takes each NUL for the end of its
	 * buffer and rescans the token so far, so a long line full of them
	 * took minutes (quadratic). */
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		size_t off = (size_t)(nul - text);
		diag_error(ctx, st->src, (loc){ off, off + 1 }, "invalid NUL byte in input");
		return HLOI_EPARSE;
	}
	int r = hlo_text_run(st);
	hloi_free(st->comp_names);
	st->comp_names = NULL;
	if (st->oom || ctx->oom)
		return HLOI_ENOMEM;
	if (r != 0 && ctx->nerrors == errors)
		diag_error(ctx, st->src, (loc){ st->pos, st->pos }, "syntax error");
	return ctx->nerrors > errors ? HLOI_EPARSE : HLOI_OK;
}

static hloi_status parse_module(module **out, hloi_context *ctx, const char *name, const char *text,
				size_t len, char *take)
{
	*out = NULL;
	module *m;
	hloi_status st = module_create(&m);
	if (st != HLOI_OK) {
		hloi_free(take);
		return st;
	}
	pstate *ps = hloi_calloc(1, sizeof *ps);
	if (!ps) {
		hloi_free(take);
		module_destroy(m);
		return HLOI_ENOMEM;
	}
	ps->a = &m->arena;
	ps->m = m;
	ps->start_token = START_MODULE;
	st = run(ps, ctx, name, text, len, take);
	m->src = ps->src;
	if (st == HLOI_OK && finish_module(ps, m))
		st = HLOI_ENOMEM;
	if (st == HLOI_OK && !(m->filename = arena_strdup(&m->arena, name ? name : "<input>")))
		st = HLOI_ENOMEM;
	hloi_free(ps);
	if (st != HLOI_OK) {
		module_destroy(m);
		return st;
	}
	*out = m;
	return HLOI_OK;
}

hloi_status text_parse_module(module **out, hloi_context *ctx, const char *name, const char *text,
			      size_t len)
{
	return parse_module(out, ctx, name, text, len, NULL);
}

hloi_status text_parse_module_take(module **out, hloi_context *ctx, const char *name, char *text,
				   size_t len)
{
	return parse_module(out, ctx, name, text, len, text);
}

hloi_status text_parse_literals(arena *a, hloi_context *ctx, int *src, const char *name,
				const char *text, size_t len, shape **shapes, lit_node ***trees,
				size_t *count)
{
	*shapes = NULL;
	*trees = NULL;
	*count = 0;
	*src = -1;
	pstate *ps = hloi_calloc(1, sizeof *ps);
	if (!ps)
		return HLOI_ENOMEM;
	ps->a = a;
	ps->literal_mode = 1;
	ps->start_token = START_LITERALS;
	hloi_status st = run(ps, ctx, name, text, len, NULL);
	*src = ps->src;
	if (st == HLOI_OK) {
		size_t n = (size_t)ps->lits.n;
		shape *sv = arena_array(a, n, sizeof *sv);
		lit_node **tv = arena_array(a, n, sizeof *tv);
		if (!sv || !tv) {
			st = HLOI_ENOMEM;
		} else {
			size_t i = 0;
			for (lnode *x = ps->lit_shapes.head, *y = ps->lits.head; x && y;
			     x = x->next, y = y->next, i++) {
				sv[i] = *(shape *)x->p;
				tv[i] = y->p;
			}
			*shapes = sv;
			*trees = tv;
			*count = n;
		}
	}
	hloi_free(ps);
	return st;
}

hloi_status text_parse_shape(shape *out, arena *a, hloi_context *ctx, const char *name,
			     const char *text, size_t len)
{
	memset(out, 0, sizeof *out);
	pstate *ps = hloi_calloc(1, sizeof *ps);
	if (!ps)
		return HLOI_ENOMEM;
	ps->a = a;
	ps->start_token = START_SHAPE;
	hloi_status st = run(ps, ctx, name, text, len, NULL);
	if (st == HLOI_OK && ps->shape_out)
		*out = *ps->shape_out;
	else if (st == HLOI_OK)
		st = HLOI_EPARSE;
	hloi_free(ps);
	return st;
}

hloi_status text_parse_attr(attr *out, module *m, hloi_context *ctx, const char *where, const char *name,
			    const char *value)
{
	memset(out, 0, sizeof *out);
	pstate *ps = hloi_calloc(1, sizeof *ps);
	if (!ps)
		return HLOI_ENOMEM;
	ps->ctx = ctx;
	ps->a = &m->arena;
	ps->m = m;
	ps->text = value;
	ps->len = strlen(value);
	ps->src = diag_add_source(ctx, where, value, ps->len);
	hloi_status st = HLOI_OK;
	if (ps->src < 0) {
		st = HLOI_ENOMEM;
		goto done;
	}
	char *n = arena_strdup(&m->arena, name);
	if (!n) {
		st = HLOI_ENOMEM;
		goto done;
	}
	out->id = (uint16_t)attr_from_name(name, strlen(name));
	out->at = out->vat = (loc){ 0, ps->len };
	if (out->id == ATTR_COUNT) {
		out->kind = AK_RAW;
		out->uname = n;
		out->u.s = arena_strdup(&m->arena, value);
		st = out->u.s ? HLOI_OK : HLOI_ENOMEM;
		goto done;
	}
	int rc = p_attr_value(ps, out, n, "", 0, ps->len);
	st = rc < 0 || ps->oom ? HLOI_ENOMEM : rc ? HLOI_EPARSE : HLOI_OK;
done:
	hloi_free(ps->comp_names);
	hloi_free(ps);
	return st;
}
