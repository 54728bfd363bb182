/* The HLO text front end's driver: runs the flex + bison parser of grammar/
 * for one of its three entry points, and builds the IR, shapes and literal
 * trees from what the grammar actions hand over (the p_* helpers). */
#include "text/parse.h"

#include <limits.h>
#include <string.h>

#include "hlo.tab.h"
#include "text/parse_int.h"
#include "util/alloc.h"

/* --- small helpers --------------------------------------------------------- */

void *p_alloc(pstate *st, size_t n)
{
	void *p = arena_alloc(st->a, n);
	if (!p)
		st->oom = 1;
	return p;
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

/* Attributes every instruction may carry, kept as written. */
static int always_raw(const char *name)
{
	static const char *const names[] = {
		"metadata", "backend_config", "sharding", "frontend_attributes", "control-predecessors",
		"statistics", "origin", "parameter_replication", "result_accuracy",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

/* Attributes of an evaluated opcode that do not change its result: kept
 * verbatim (a fusion's kind, a reshape's inferred_dimension, ...). */
static int op_raw_attr(opcode op, const char *name)
{
	switch (op) {
	case OP_FUSION:
		return !strcmp(name, "kind") || !strcmp(name, "output_to_operand_aliasing");
	case OP_CALL:
		return !strncmp(name, "composite.", 10) || !strcmp(name, "is_composite");
	case OP_RESHAPE:
		return !strcmp(name, "inferred_dimension");
	default:
		return 0;
	}
}

/* Opcodes whose result shape may be left out (the brief's CanInferShape subset). */
static int can_infer_shape(opcode op)
{
	op_category c = opcode_category(op);
	return c == OPC_BINARY || c == OPC_COMPARE || c == OPC_UNARY || op == OP_SELECT ||
	       op == OP_TUPLE || op == OP_GET_TUPLE_ELEMENT;
}

static int to_int_list(pstate *st, int_list *il, const attr_item *a)
{
	il->present = 1;
	il->n = a->ints.n;
	il->at = a->at;
	il->v = NULL;
	if (a->ints.n) {
		il->v = arena_array(st->a, (size_t)a->ints.n, sizeof *il->v);
		if (!il->v) {
			st->oom = 1;
			return -1;
		}
		int i = 0;
		for (pnode *n = a->ints.head; n; n = n->next)
			il->v[i++] = n->i;
	}
	return 0;
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

static int apply_attrs(pstate *st, instr *in, const llist *attrs)
{
	int nraw = 0;
	in->raw = attrs->n ? arena_array(st->a, (size_t)attrs->n, sizeof *in->raw) : NULL;
	if (attrs->n && !in->raw) {
		st->oom = 1;
		return -1;
	}
	int evaluated = opcode_is_evaluated(in->op);
	for (lnode *n = attrs->head; n; n = n->next) {
		const attr_item *a = n->p;
		int dup = 0;
		for (lnode *m = attrs->head; m != n; m = m->next)
			dup |= same_name(st, &((attr_item *)m->p)->name, &a->name);
		char *name = p_text(st, a->name.s, a->name.e);
		if (!name)
			return -1;
		if (dup) {
			diag_error(st->ctx, st->src, a->at, "attribute %s already exists", name);
			continue;
		}
		switch (a->kind) {
		case AK_DIMENSIONS:
			if (to_int_list(st, &in->dimensions, a))
				return -1;
			break;
		case AK_BCAST:
			if (to_int_list(st, &in->broadcast_dimensions, a))
				return -1;
			break;
		case AK_DIRECTION:
			in->direction = cmp_direction_from_name(st->text + a->val.s, a->val.e - a->val.s);
			in->direction_at = a->at;
			if (in->direction == CMP_NONE)
				diag_error(st->ctx, st->src, a->vat, "Unknown comparison direction: %.*s",
					   (int)(a->val.e - a->val.s), st->text + a->val.s);
			break;
		case AK_TYPE:
			in->comparison_type = cmp_type_from_name(st->text + a->val.s, a->val.e - a->val.s);
			in->comparison_type_at = a->at;
			if (in->comparison_type == CMPT_NONE)
				diag_error(st->ctx, st->src, a->vat, "Unknown comparison type: %.*s",
					   (int)(a->val.e - a->val.s), st->text + a->val.s);
			break;
		case AK_INDEX:
			in->has_index = 1;
			p_int64(st, &a->val, a->vat, &in->index);
			break;
		case AK_IOTA:
			in->has_iota_dimension = 1;
			p_int64(st, &a->val, a->vat, &in->iota_dimension);
			break;
		case AK_CALLEE:
			in->callee_attr = name;
			in->callee_name = p_text(st, a->val.s, a->val.e);
			if (!in->callee_name)
				return -1;
			in->callee_at = a->vat;
			break;
		default:
			if (evaluated && !always_raw(name) && !op_raw_attr(in->op, name)) {
				diag_warning(st->ctx, st->src, a->at, "unknown attribute '%s' skipped", name);
				note_unknown(st, name, a->at, 0);
				break;
			}
			raw_attr *r = &in->raw[nraw++];
			r->name = name;
			r->value = p_text(st, a->name.vs, a->name.ve);
			r->at = a->at;
			if (!r->value)
				return -1;
			break;
		}
	}
	in->nraw = nraw;
	return 0;
}

int p_instr(pstate *st, instr **out, int is_root, const tokval *name, loc name_at,
	    shape *sh, opcall *oc, const llist *attrs, loc at)
{
	*out = NULL;
	opcode op;
	if (oc->kind == OC_PARAMETER)
		op = OP_PARAMETER;
	else if (oc->kind == OC_CONSTANT)
		op = OP_CONSTANT;
	else
		op = opcode_from_name(st->text + oc->op.s, oc->op.e - oc->op.s);
	if (op == OP_COUNT) {
		diag_error(st->ctx, st->src, oc->op_at, "expects opcode but sees: %.*s",
			   (int)(oc->op.e - oc->op.s), st->text + oc->op.s);
		return 0;
	}
	instr *in = p_alloc(st, sizeof *in);
	if (!in)
		return -1;
	in->op = op;
	in->name = p_text(st, name->s, name->e);
	if (!in->name)
		return -1;
	in->at = at;
	in->name_at = name_at;
	in->op_at = oc->op_at;
	in->is_root = is_root;
	if (sh) {
		in->has_shape = 1;
		in->shape = *sh;
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
				o->name = p_text(st, n->tok.s, n->tok.e);
				if (!o->name)
					return -1;
				o->at = n->at;
				if (n->p) {
					o->has_shape = 1;
					o->declared = n->p; /* in the module's arena */
				}
			}
		}
		break;
	}
	if (apply_attrs(st, in, attrs))
		return -1;
	*out = in;
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

int p_computation(pstate *st, int is_entry, loc entry_at, const tokval *name, loc name_at,
		  sigval *sig, const llist *instrs)
{
	computation *c = p_alloc(st, sizeof *c);
	if (!c)
		return -1;
	c->name = p_text(st, name->s, name->e);
	if (!c->name)
		return -1;
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
	if (instrs->n) {
		c->instrs = arena_array(st->a, (size_t)instrs->n, sizeof *c->instrs);
		if (!c->instrs) {
			st->oom = 1;
			return -1;
		}
	}
	int i = 0;
	for (lnode *n = instrs->head; n; n = n->next) {
		instr *in = n->p;
		c->instrs[i++] = in;
		if (!in->is_root)
			continue;
		if (c->root) {
			loc at = { in->at.start, in->at.start + 4 };
			diag_error(st->ctx, st->src, at, "one computation should have only one ROOT");
		} else {
			c->root = in;
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
			i = 0;
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

/* A cursor over an attribute value's text, for input_output_alias. */
typedef struct vcur {
	pstate *st;
	size_t p, end;
	int bad;
} vcur;

static void vc_skip(vcur *c)
{
	const char *t = c->st->text;
	while (c->p < c->end) {
		char ch = t[c->p];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f') {
			c->p++;
		} else if (ch == '/' && c->p + 1 < c->end && t[c->p + 1] == '/') {
			while (c->p < c->end && t[c->p] != '\n')
				c->p++;
		} else if (ch == '/' && c->p + 1 < c->end && t[c->p + 1] == '*') {
			size_t q = c->p + 2;
			while (q + 1 < c->end && !(t[q] == '*' && t[q + 1] == '/'))
				q++;
			c->p = q + 2 <= c->end ? q + 2 : c->end;
		} else {
			break;
		}
	}
}

static void vc_fail(vcur *c, const char *what)
{
	if (c->bad)
		return;
	c->bad = 1;
	loc at = { c->p, c->p < c->end ? c->p + 1 : c->p };
	diag_error(c->st->ctx, c->st->src, at, "malformed input_output_alias: expects %s", what);
}

static int vc_eat(vcur *c, char ch)
{
	vc_skip(c);
	if (c->p < c->end && c->st->text[c->p] == ch) {
		c->p++;
		return 1;
	}
	return 0;
}

static void vc_expect(vcur *c, char ch)
{
	if (!c->bad && !vc_eat(c, ch)) {
		char what[4] = { '\'', ch, '\'', '\0' };
		vc_fail(c, what);
	}
}

static int64_t vc_int(vcur *c)
{
	vc_skip(c);
	const char *t = c->st->text;
	int64_t v = 0;
	size_t start = c->p;
	while (c->p < c->end && t[c->p] >= '0' && t[c->p] <= '9') {
		int d = t[c->p] - '0';
		if (v > (INT64_MAX - d) / 10) {
			c->p = start;
			vc_fail(c, "a smaller integer");
			return 0;
		}
		v = v * 10 + d;
		c->p++;
	}
	if (c->p == start)
		vc_fail(c, "an integer");
	return v;
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
	vcur c = { st, vs, ve, 0 };
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
	static const char *const known[] = {
		"entry_computation_layout", "input_output_alias", "is_scheduled", "replica_count",
		"num_partitions", "frontend_attributes", "buffer_donor", "alias_passthrough_params",
		"allow_spmd_sharding_propagation_to_parameters",
		"allow_spmd_sharding_propagation_to_output", "origin_recovery_table", "broadcast_mode",
	};
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
		int ok = 0;
		for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
			ok |= !strcmp(known[i], an);
		if (!ok) {
			diag_warning(st->ctx, st->src, n->at, "unknown header attribute '%s' skipped", an);
			note_unknown(st, an, n->at, 1);
			continue;
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
static hloi_status run(pstate *st, hloi_context *ctx, const char *name, const char *text, size_t len)
{
	st->ctx = ctx;
	st->text = text;
	st->len = len;
	st->src = diag_add_source(ctx, name, text, len);
	if (st->src < 0)
		return HLOI_ENOMEM;
	size_t errors = ctx->nerrors;
	if (len > (size_t)INT_MAX - 2) {
		diag_error_where(ctx, name, "input is too large (%zu bytes)", len);
		return HLOI_EPARSE;
	}
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		size_t off = (size_t)(nul - text);
		diag_error(ctx, st->src, (loc){ off, off + 1 }, "invalid NUL byte in input");
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

hloi_status text_parse_module(module **out, hloi_context *ctx, const char *name, const char *text,
			      size_t len)
{
	*out = NULL;
	module *m;
	hloi_status st = module_create(&m);
	if (st != HLOI_OK)
		return st;
	pstate *ps = hloi_calloc(1, sizeof *ps);
	if (!ps) {
		module_destroy(m);
		return HLOI_ENOMEM;
	}
	ps->a = &m->arena;
	ps->m = m;
	ps->start_token = START_MODULE;
	st = run(ps, ctx, name, text, len);
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
	hloi_status st = run(ps, ctx, name, text, len);
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
	hloi_status st = run(ps, ctx, name, text, len);
	if (st == HLOI_OK && ps->shape_out)
		*out = *ps->shape_out;
	else if (st == HLOI_OK)
		st = HLOI_EPARSE;
	hloi_free(ps);
	return st;
}
