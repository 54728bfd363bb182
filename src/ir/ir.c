/* Opcode table lookups and module lifetime. */
#include "ir/ir.h"

#include <stdatomic.h>
#include <string.h>

#include "util/alloc.h"

static const struct {
	const char *name;
	int arity;
	op_category cat;
	const char *kernel;   /* the eval column: "none" when not evaluated */
	unsigned flags;
	op_types types;
} ops[] = {
#define TG(takes, message, evaluates) { takes, message, evaluates }
#define TG_NONE { 0, TM_NONE, 0 }
#define X(E, text, arity, cat, infer, ev, flags, types) { text, arity, cat, #ev, flags, types },
#include "ir/opcodes.def"
#undef X
#undef TG
#undef TG_NONE
};

const char *opcode_name(opcode op)
{
	return op < OP_COUNT ? ops[op].name : "unknown";
}

opcode opcode_from_name(const char *s, size_t len)
{
	/* 136 names: a linear scan with a first-byte filter is plenty */
	for (int i = 0; i < OP_COUNT; i++)
		if (ops[i].name[0] == (len ? s[0] : 0) && strlen(ops[i].name) == len &&
		    memcmp(ops[i].name, s, len) == 0)
			return (opcode)i;
	return OP_COUNT;
}

int opcode_arity(opcode op)
{
	return ops[op].arity;
}

op_category opcode_category(opcode op)
{
	return ops[op].cat;
}

int opcode_is_elementwise_category(opcode op)
{
	op_category c = opcode_category(op);
	return c == OPC_BINARY || c == OPC_COMPARE || c == OPC_UNARY;
}

int opcode_is_evaluated(opcode op)
{
	return op < OP_COUNT && strcmp(ops[op].kernel, "none") != 0;
}

unsigned opcode_flags(opcode op)
{
	return op < OP_COUNT ? ops[op].flags : 0;
}

int opcode_has(opcode op, unsigned f)
{
	return (opcode_flags(op) & f) == f;
}

const op_types *opcode_types(opcode op)
{
	static const op_types none = { 0, TM_NONE, 0 };
	return op < OP_COUNT ? &ops[op].types : &none;
}

static const char *const dir_names[] = { NULL, "EQ", "NE", "LT", "LE", "GT", "GE" };
static const char *const type_names[] = { NULL, "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED" };

const char *cmp_direction_name(cmp_direction d)
{
	return d > CMP_NONE && d <= CMP_GE ? dir_names[d] : "";
}

cmp_direction cmp_direction_from_name(const char *s, size_t len)
{
	for (int i = 1; i <= CMP_GE; i++)
		if (strlen(dir_names[i]) == len && memcmp(dir_names[i], s, len) == 0)
			return (cmp_direction)i;
	return CMP_NONE;
}

const char *cmp_type_name(cmp_type t)
{
	return t > CMPT_NONE && t <= CMPT_UNSIGNED ? type_names[t] : "";
}

cmp_type cmp_type_from_name(const char *s, size_t len)
{
	for (int i = 1; i <= CMPT_UNSIGNED; i++)
		if (strlen(type_names[i]) == len && memcmp(type_names[i], s, len) == 0)
			return (cmp_type)i;
	return CMPT_NONE;
}

hloi_status module_create(module **out)
{
	module *m = hloi_calloc(1, sizeof *m);
	if (!m) {
		*out = NULL;
		return HLOI_ENOMEM;
	}
	arena_init(&m->arena);
	m->src = -1;
	*out = m;
	return HLOI_OK;
}

void module_destroy(module *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nvalues; i++)
		literal_destroy(m->values[i]);
	hloi_free(m->values);
	for (int i = 0; i < m->nsnapshot_args; i++)
		literal_destroy(m->snapshot_args[i]);
	hloi_free(m->snapshot_args);
	literal_destroy(atomic_load(&m->kept));
	hloi_free(m->shape_tab);
	arena_release(&m->arena);
	hloi_free(m);
}

instr *instr_new(arena *a)
{
	instr *in = arena_alloc(a, sizeof *in);
	if (in)
		in->shape = in->result = &shape_none;
	return in;
}

/* A deep copy of `s` into the arena (tuple elements copied too). */
static int copy_into(arena *a, shape *dst, const shape *s)
{
	*dst = *s;
	if (s->ntuple <= 0) {
		dst->tuple = NULL;
		return 0;
	}
	shape *el = arena_array(a, (size_t)s->ntuple, sizeof *el);
	if (!el)
		return -1;
	for (int i = 0; i < s->ntuple; i++)
		if (copy_into(a, &el[i], &s->tuple[i]))
			return -1;
	dst->tuple = el;
	return 0;
}

static int grow_shape_tab(module *m)
{
	size_t cap = m->shape_tab_cap ? 2 * m->shape_tab_cap : 64;
	const shape **tab = hloi_calloc(cap, sizeof *tab);
	if (!tab)
		return -1;
	for (size_t i = 0; i < m->shape_tab_cap; i++) {
		const shape *s = m->shape_tab[i];
		if (!s)
			continue;
		size_t j = (size_t)shape_hash(s) & (cap - 1);
		while (tab[j])
			j = (j + 1) & (cap - 1);
		tab[j] = s;
	}
	hloi_free(m->shape_tab);
	m->shape_tab = tab;
	m->shape_tab_cap = cap;
	return 0;
}

const shape *module_intern_shape(module *m, const shape *s)
{
	if (s == &shape_none)
		return s;
	if (4 * (m->shape_tab_n + 1) > 3 * m->shape_tab_cap && grow_shape_tab(m))
		return NULL;
	size_t mask = m->shape_tab_cap - 1, j = (size_t)shape_hash(s) & mask;
	for (; m->shape_tab[j]; j = (j + 1) & mask)
		if (shape_identical(m->shape_tab[j], s))
			return m->shape_tab[j];
	shape *copy = arena_alloc(&m->arena, sizeof *copy);
	if (!copy || copy_into(&m->arena, copy, s))
		return NULL;
	m->shape_tab[j] = copy;
	m->shape_tab_n++;
	return copy;
}

computation *module_find_computation(const module *m, const char *name)
{
	for (int i = 0; i < m->ncomps; i++)
		if (strcmp(m->comps[i]->name, name) == 0)
			return m->comps[i];
	return NULL;
}

int async_result_pending(const shape *s, const shape *root)
{
	if (!shape_is_tuple(s) || s->ntuple < 2)
		return 0;
	const shape *r = &s->tuple[1];
	return shape_is_tuple(r) && r->ntuple == 0 && !(shape_is_tuple(root) && root->ntuple == 0);
}

int opcode_async_wrappable(opcode op)
{
	return op < OP_COUNT && !opcode_has(op, OPF_OWN_ASYNC);
}

/* The single instruction of an async-start's computation (XLA's
 * CanExpandIntoSingleInstruction), or NULL. */
static instr *single_instruction(const computation *c)
{
	if (!c || !c->root)
		return NULL;
	for (int i = 0; i < c->ninstrs; i++)
		if (c->instrs[i] != c->root && c->instrs[i]->op != OP_PARAMETER)
			return NULL;
	return c->root;
}

/* Whether an instruction other than `start` names computation `w`. */
static int called_elsewhere(const module *m, const computation *w, const instr *start)
{
	for (int ci = 0; ci < m->ncomps; ci++) {
		const computation *c = m->comps[ci];
		for (int i = 0; i < c->ninstrs; i++) {
			const instr *in = c->instrs[i];
			if (in == start)
				continue;
			for (int k = 0; k < in->nattrs; k++) {
				const attr *a = &in->attrs[k];
				if (a->kind == AK_COMP && !strcmp(a->u.s, w->name))
					return 1;
				for (int j = 0; a->kind == AK_COMPS && j < a->u.words.n; j++)
					if (!strcmp(a->u.words.v[j], w->name))
						return 1;
			}
		}
	}
	return 0;
}

void module_mark_async_sugar(module *m)
{
	for (int ci = 0; ci < m->ncomps; ci++) {
		computation *c = m->comps[ci];
		for (int i = 0; i < c->ninstrs; i++) {
			instr *in = c->instrs[i];
			if (in->op == OP_ASYNC_START) {
				const attr *a = instr_attr(in, ATTR_CALLS);
				computation *w = a && a->kind == AK_COMP ? module_find_computation(m, a->u.s) : NULL;
				instr *root = single_instruction(w);
				if (!root || w == c || !opcode_async_wrappable(root->op) || called_elsewhere(m, w, in))
					continue;
				in->async_sugar = 1;
				in->async_op = root->op;
				in->async_wrapped = root;
				w->async_wrapped = 1;
			} else if ((in->op == OP_ASYNC_UPDATE && in->nops >= 1) ||
				   (in->op == OP_ASYNC_DONE && in->nops == 1)) {
				/* follows its start (instructions come in operand order) */
				for (int j = i - 1; j >= 0; j--) {
					const instr *prev = c->instrs[j];
					if (strcmp(prev->name, in->ops[0].name) != 0)
						continue;
					if (prev->async_sugar && prev->op != OP_ASYNC_DONE) {
						in->async_sugar = 1;
						in->async_op = prev->async_op;
						in->async_wrapped = prev->async_wrapped;
					}
					break;
				}
			}
		}
	}
}

/* --- attribute lookups ------------------------------------------------------ */

const attr *instr_attr(const instr *in, attr_id id)
{
	for (int i = 0; i < in->nattrs; i++)
		if (in->attrs[i].id == id)
			return &in->attrs[i];
	return NULL;
}

const int_list *instr_ints(const instr *in, attr_id id)
{
	const attr *a = instr_attr(in, id);
	return a && a->kind == AK_INTS ? &a->u.ints : NULL;
}

int instr_int(const instr *in, attr_id id, int64_t *out)
{
	const attr *a = instr_attr(in, id);
	if (!a || (a->kind != AK_INT && a->kind != AK_BOOL))
		return 0;
	*out = a->u.i;
	return 1;
}

int instr_bool(const instr *in, attr_id id, int dflt)
{
	const attr *a = instr_attr(in, id);
	return a && a->kind == AK_BOOL ? a->u.i != 0 : dflt;
}

const char *instr_text(const instr *in, attr_id id)
{
	const attr *a = instr_attr(in, id);
	if (!a)
		return NULL;
	switch (a->kind) {
	case AK_WORD:
	case AK_STRING:
	case AK_RAW:
	case AK_COMP:
	case AK_DIM_LABELS:
		return a->u.s;
	default:
		return NULL;
	}
}

cmp_direction instr_direction(const instr *in)
{
	const char *w = instr_text(in, ATTR_DIRECTION);
	return w ? cmp_direction_from_name(w, strlen(w)) : CMP_NONE;
}

cmp_type instr_comparison_type(const instr *in)
{
	const char *w = instr_text(in, ATTR_TYPE);
	return w ? cmp_type_from_name(w, strlen(w)) : CMPT_NONE;
}

loc instr_attr_loc(const instr *in, attr_id id)
{
	const attr *a = instr_attr(in, id);
	return a ? a->at : in->op_at;
}

/* in->called holds the computations of the AK_COMP and AK_COMPS attributes
 * in the attribute table's order (the checker's resolve_called). */
computation **instr_called_slot(const instr *in, attr_id id, int j)
{
	int k = 0;
	for (int a = 0; a < ATTR_COUNT && in->called; a++) {
		const attr *x = instr_attr(in, (attr_id)a);
		if (!x || (x->kind != AK_COMP && x->kind != AK_COMPS))
			continue;
		int n = x->kind == AK_COMP ? 1 : x->u.words.n;
		if (a == (int)id)
			return j >= 0 && j < n && k + j < in->ncalled ? &in->called[k + j] : NULL;
		k += n;
	}
	return NULL;
}

computation *instr_called(const instr *in, attr_id id, int j)
{
	computation **slot = instr_called_slot(in, id, j);
	return slot ? *slot : NULL;
}

/* in's attribute `id`, added when missing, its value cleared; NULL when out
 * of memory. */
static attr *attr_slot(arena *a, instr *in, attr_id id, attr_kind kind)
{
	attr *at = (attr *)instr_attr(in, id);
	if (!at) {
		attr *na = arena_array(a, (size_t)in->nattrs + 1, sizeof *na);
		if (!na)
			return NULL;
		if (in->nattrs)
			memcpy(na, in->attrs, (size_t)in->nattrs * sizeof *na);
		at = &na[in->nattrs];
		memset(at, 0, sizeof *at);
		in->attrs = na;
		in->nattrs++;
	}
	at->id = (uint16_t)id;
	at->kind = (uint8_t)kind;
	memset(&at->u, 0, sizeof at->u);
	return at;
}

int instr_set_int(arena *a, instr *in, attr_id id, int64_t v)
{
	attr *at = attr_slot(a, in, id, AK_INT);
	if (!at)
		return -1;
	at->u.i = v;
	return 0;
}

int instr_set_ints(arena *a, instr *in, attr_id id, const int64_t *v, int n)
{
	attr *at = attr_slot(a, in, id, AK_INTS);
	if (!at)
		return -1;
	at->u.ints.present = 1;
	at->u.ints.n = n;
	if (n > 0) {
		at->u.ints.v = arena_array(a, (size_t)n, sizeof *v);
		if (!at->u.ints.v)
			return -1;
		memcpy(at->u.ints.v, v, (size_t)n * sizeof *v);
	}
	return 0;
}

void instr_remove_attr(instr *in, attr_id id)
{
	int k = 0;
	for (int i = 0; i < in->nattrs; i++)
		if (in->attrs[i].id != id)
			in->attrs[k++] = in->attrs[i];
	in->nattrs = k;
}

int header_attr_known(const char *name)
{
	static const char *const known[] = {
		"entry_computation_layout", "input_output_alias", "is_scheduled", "replica_count",
		"num_partitions", "frontend_attributes", "buffer_donor", "alias_passthrough_params",
		"allow_spmd_sharding_propagation_to_parameters",
		"allow_spmd_sharding_propagation_to_output", "origin_recovery_table", "debug_attributes",
		"broadcast_mode",
	};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (!strcmp(known[i], name))
			return 1;
	return 0;
}

int int_list_has(const int_list *l, int64_t d)
{
	for (int i = 0; l && i < l->n; i++)
		if (l->v[i] == d)
			return 1;
	return 0;
}

int dot_result_sources(const instr *in, int lhs_rank, int rhs_rank, int *from_op, int *from_dim)
{
	const int_list *lb = instr_ints(in, ATTR_LHS_BATCH_DIMS), *lc = instr_ints(in, ATTR_LHS_CONTRACTING_DIMS);
	const int_list *rb = instr_ints(in, ATTR_RHS_BATCH_DIMS), *rc = instr_ints(in, ATTR_RHS_CONTRACTING_DIMS);
	int n = 0;
	for (int i = 0; lb && i < lb->n && n < HLOI_MAX_RANK; i++, n++) {
		from_op[n] = 0;
		from_dim[n] = (int)lb->v[i];
	}
	for (int d = 0; d < lhs_rank && n < HLOI_MAX_RANK; d++)
		if (!int_list_has(lb, d) && !int_list_has(lc, d)) {
			from_op[n] = 0;
			from_dim[n++] = d;
		}
	for (int d = 0; d < rhs_rank && n < HLOI_MAX_RANK; d++)
		if (!int_list_has(rb, d) && !int_list_has(rc, d)) {
			from_op[n] = 1;
			from_dim[n++] = d;
		}
	return n;
}

int opcode_dynamic_on_sizes(const instr *in)
{
	/* reduce: only one of several inputs (op-specific: by operand count) */
	return opcode_has(in->op, OPF_ON_SIZES) || (in->op == OP_REDUCE && in->nops > 2);
}

int gather_result_sources(const instr *in, const int64_t *operand_dims, int operand_rank, int indices_rank,
			  int result_rank, int *from_op, int *from_dim)
{
	const int_list *offs = instr_ints(in, ATTR_OFFSET_DIMS), *coll = instr_ints(in, ATTR_COLLAPSED_SLICE_DIMS);
	const int_list *obat = instr_ints(in, ATTR_OPERAND_BATCHING_DIMS), *ss = instr_ints(in, ATTR_SLICE_SIZES);
	int64_t ivd = indices_rank;
	instr_int(in, ATTR_INDEX_VECTOR_DIM, &ivd);
	for (int r = 0; r < result_rank; r++)
		from_op[r] = -1;
	/* the operand's dimensions neither collapsed nor batched give the
	 * offset dimensions, in order */
	int j = 0;
	for (int d = 0; d < operand_rank; d++) {
		if (int_list_has(coll, d) || int_list_has(obat, d))
			continue;
		if (offs && j < offs->n && ss && d < ss->n && ss->v[d] == operand_dims[d] && offs->v[j] >= 0 &&
		    offs->v[j] < result_rank) {
			from_op[offs->v[j]] = 0;
			from_dim[offs->v[j]] = d;
		}
		j++;
	}
	/* the others are the indices' dimensions but the index vector one */
	int id = 0;
	for (int r = 0; r < result_rank; r++) {
		if (int_list_has(offs, r))
			continue;
		if (id == ivd)
			id++;
		if (id < indices_rank) {
			from_op[r] = 1;
			from_dim[r] = id;
		}
		id++;
	}
	return result_rank;
}
