/* IR -> HloModuleProto, as XLA writes it: ids assigned, instructions in
 * dependency order (operands come first, as the text must have them;
 * control predecessors may move an instruction later), callees before
 * callers, program shapes filled in, constants in the field for their type
 * in buffer order. What XLA's fields cannot say (attributes hloi keeps as
 * text, a header-less module, ...) travels in frontend_attributes under
 * `hloi.` keys, so hloi -> proto -> hloi prints the same text. Works on a
 * parsed module as well as a checked one: names are resolved here. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "proto/pbtxt.h"
#include "proto/proto_internal.h"
#include "text/attr_text.h"
#include "util/alloc.h"
#include "util/diag.h"

typedef struct saver {
	hloi_context *ctx;
	const module *m;
	arena *a;
	hloi_status st;
	const char *comp;
	const char *inst;
	int keep_ids;          /* the ids the module was read with are written */
} saver;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int sfail(saver *S, const loc *at, const char *fmt, ...)
{
	strbuf msg = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (S->m->src >= 0 && at) {
		diag_error(S->ctx, S->m->src, *at, "%s", sb_str(&msg));
	} else {
		strbuf where = STRBUF_INIT;
		sb_puts(&where, S->m->filename ? S->m->filename : "module");
		if (S->comp)
			sb_printf(&where, ": computation '%s'", S->comp);
		if (S->comp && S->inst)
			sb_printf(&where, ", instruction '%s'", S->inst);
		diag_error_where(S->ctx, sb_str(&where), "%s", sb_str(&msg));
		sb_free(&where);
	}
	sb_free(&msg);
	if (S->st == HLOI_OK)
		S->st = HLOI_EINVAL;
	return -1;
}

static int soom(saver *S)
{
	if (S->st != HLOI_ENOMEM)
		diag_error_where(S->ctx, NULL, "out of memory writing the proto");
	S->st = HLOI_ENOMEM;
	return -1;
}

static void *salloc(saver *S, size_t n)
{
	void *p = arena_alloc(S->a, n);
	if (!p)
		soom(S);
	return p;
}

static void *sarray(saver *S, size_t count, size_t size)
{
	if (count == 0)
		return NULL;
	void *p = arena_array(S->a, count, size);
	if (!p)
		soom(S);
	return p;
}

static char *sstrdup(saver *S, const char *s)
{
	char *r = arena_strdup(S->a, s);
	if (!r)
		soom(S);
	return r;
}

/* --- shapes and literals ----------------------------------------------------------- */

static int64_t *copy_i64(saver *S, const int64_t *v, size_t n)
{
	int64_t *r = sarray(S, n ? n : 1, sizeof *r);
	if (r && n)
		memcpy(r, v, n * sizeof *r);
	return r;
}

/* The layout of an array shape (a scalar without one gets XLA's `layout {}`). */
static Xla__LayoutProto *layout_out(saver *S, const shape *s)
{
	const layout *l = &s->layout;
	Xla__LayoutProto *lp = salloc(S, sizeof *lp);
	if (!lp)
		return NULL;
	xla__layout_proto__init(lp);
	if (!s->has_layout)
		return lp;
	lp->n_minor_to_major = (size_t)l->n_minor_to_major;
	lp->n_padded_dimensions = (size_t)l->n_padded;
	if (!(lp->minor_to_major = copy_i64(S, l->minor_to_major, lp->n_minor_to_major)) ||
	    !(lp->padded_dimensions = copy_i64(S, l->padded_dimensions, lp->n_padded_dimensions)))
		return NULL;
	if (l->n_padded || l->padding_value != PAD_ZERO)
		lp->padding_value = (Xla__PaddingValue)l->padding_value;
	lp->element_size_in_bits = l->element_size_in_bits;
	lp->memory_space = l->memory_space;
	lp->dynamic_shape_metadata_prefix_bytes = l->dynamic_shape_metadata_prefix_bytes;
	lp->tail_padding_alignment_in_elements = l->tail_padding_alignment;
	if (l->ntiles) {
		lp->n_tiles = (size_t)l->ntiles;
		lp->tiles = sarray(S, lp->n_tiles, sizeof *lp->tiles);
		if (!lp->tiles)
			return NULL;
		for (int t = 0; t < l->ntiles; t++) {
			Xla__TileProto *tp = salloc(S, sizeof *tp);
			if (!tp)
				return NULL;
			xla__tile_proto__init(tp);
			tp->n_dimensions = (size_t)l->tiles[t].n;
			if (!(tp->dimensions = copy_i64(S, l->tiles[t].dims, tp->n_dimensions)))
				return NULL;
			for (int i = 0; i < l->tiles[t].n; i++)
				if (tp->dimensions[i] == -1)
					tp->dimensions[i] = INT64_MIN;
			lp->tiles[t] = tp;
		}
	}
	return lp;
}

/* `fill`: give an array without a written layout the default one (for
 * literals and program shapes, which XLA wants with layouts). */
static Xla__ShapeProto *shape_out(saver *S, const shape *s, int fill, int depth)
{
	if (depth > PROTO_MAX_DEPTH) {
		sfail(S, NULL, "shapes nested deeper than %d levels", PROTO_MAX_DEPTH);
		return NULL;
	}
	Xla__ShapeProto *sp = salloc(S, sizeof *sp);
	if (!sp)
		return NULL;
	xla__shape_proto__init(sp);
	sp->element_type = (Xla__PrimitiveType)s->type;
	if (shape_is_tuple(s)) {
		sp->n_tuple_shapes = (size_t)s->ntuple;
		sp->tuple_shapes = sarray(S, sp->n_tuple_shapes, sizeof *sp->tuple_shapes);
		if (s->ntuple && !sp->tuple_shapes)
			return NULL;
		for (int i = 0; i < s->ntuple; i++)
			if (!(sp->tuple_shapes[i] = shape_out(S, &s->tuple[i], fill, depth + 1)))
				return NULL;
		return sp;
	}
	if (!shape_is_array(s))
		return sp;
	sp->n_dimensions = (size_t)s->rank;
	sp->dimensions = sarray(S, (size_t)s->rank, sizeof(int64_t));
	if (s->rank && !sp->dimensions)
		return NULL;
	int dynamic = 0;
	for (int d = 0; d < s->rank; d++) {
		sp->dimensions[d] = s->dim_kind[d] == DIM_UNBOUNDED ? INT64_MIN : s->dims[d];
		dynamic |= s->dim_kind[d] != DIM_STATIC;
	}
	if (dynamic) {
		sp->n_is_dynamic_dimension = (size_t)s->rank;
		sp->is_dynamic_dimension = sarray(S, (size_t)s->rank, sizeof(protobuf_c_boolean));
		if (!sp->is_dynamic_dimension)
			return NULL;
		for (int d = 0; d < s->rank; d++)
			sp->is_dynamic_dimension[d] = s->dim_kind[d] != DIM_STATIC;
	}
	if (s->has_layout || s->rank == 0 || fill) {
		shape t = *s;
		if (!t.has_layout && t.rank > 0)
			layout_set_default(&t);
		if (!(sp->layout = layout_out(S, &t)))
			return NULL;
	}
	return sp;
}

static ProtobufCBinaryData *bytes_field(Xla__LiteralProto *lp, etype t)
{
#define B(E, f)                 \
	case ET_##E:            \
		return &lp->f;
	switch (t) {
	B(S1, s1s) B(S2, s2s) B(S4, s4s) B(S8, s8s)
	B(U1, u1s) B(U2, u2s) B(U4, u4s) B(U8, u8s)
	B(S16, s16s) B(U16, u16s) B(F16, f16s) B(BF16, bf16s)
	B(F8E5M2, f8e5m2s) B(F8E4M3, f8e4m3s) B(F8E4M3FN, f8e4m3fns)
	B(F8E4M3B11FNUZ, f8e4m3b11fnuzs) B(F8E3M4, f8e3m4s) B(F8E5M2FNUZ, f8e5m2fnuzs)
	B(F8E4M3FNUZ, f8e4m3fnuzs) B(F4E2M1FN, f4e2m1fns) B(F8E8M0FNU, f8e8m0fnus)
	default:
		break;
	}
#undef B
	return NULL;
}

static Xla__LiteralProto *literal_out(saver *S, const hloi_literal *lit, int depth)
{
	if (depth > PROTO_MAX_DEPTH) {
		sfail(S, NULL, "literals nested deeper than %d levels", PROTO_MAX_DEPTH);
		return NULL;
	}
	Xla__LiteralProto *lp = salloc(S, sizeof *lp);
	if (!lp)
		return NULL;
	xla__literal_proto__init(lp);
	const shape *s = &lit->shape;
	if (!(lp->shape = shape_out(S, s, 1, 0)))
		return NULL;
	if (shape_is_tuple(s)) {
		lp->n_tuple_literals = lit->nelems;
		lp->tuple_literals = sarray(S, lit->nelems, sizeof *lp->tuple_literals);
		if (lit->nelems && !lp->tuple_literals)
			return NULL;
		for (size_t i = 0; i < lit->nelems; i++)
			if (!(lp->tuple_literals[i] = literal_out(S, lit->elems[i], depth + 1)))
				return NULL;
		return lp;
	}
	if (!shape_is_array(s))
		return lp;
	int64_t count64;
	if (shape_element_count(s, &count64)) {
		sfail(S, NULL, "literal too large");
		return NULL;
	}
	size_t n = (size_t)count64;
	etype t = s->type;
	size_t w = (size_t)etype_byte_width(t);
	void *dst = NULL;
	switch (t) {
	case ET_PRED: lp->n_preds = n; dst = lp->preds = sarray(S, n, sizeof(protobuf_c_boolean)); break;
	case ET_S32: lp->n_s32s = n; dst = lp->s32s = sarray(S, n, 4); break;
	case ET_S64: lp->n_s64s = n; dst = lp->s64s = sarray(S, n, 8); break;
	case ET_U32: lp->n_u32s = n; dst = lp->u32s = sarray(S, n, 4); break;
	case ET_U64: lp->n_u64s = n; dst = lp->u64s = sarray(S, n, 8); break;
	case ET_F32: lp->n_f32s = n; dst = lp->f32s = sarray(S, n, 4); break;
	case ET_F64: lp->n_f64s = n; dst = lp->f64s = sarray(S, n, 8); break;
	case ET_C64: lp->n_c64s = 2 * n; dst = lp->c64s = sarray(S, n, 8); break;
	case ET_C128: lp->n_c128s = 2 * n; dst = lp->c128s = sarray(S, n, 16); break;
	default: {
		ProtobufCBinaryData *bd = bytes_field(lp, t);
		if (!bd) {
			sfail(S, NULL, "literals of type %s cannot be written", etype_name(t));
			return NULL;
		}
		bd->len = n * w;
		dst = bd->data = sarray(S, n, w);
		break;
	}
	}
	if (n && !dst)
		return NULL;
	if (n == 0)
		return lp;
	int64_t nbuf;
	if (shape_buffer_elements(s, &nbuf))
		nbuf = 0;
	/* the values in minor_to_major order: buffer order unless tiled */
	int padded = s->layout.n_padded > 0, tiled = !index_is_strided(s);
	const unsigned char *src = lit->data;
	unsigned char *out = dst;
	size_t k = 0;
	int64_t tidx[HLOI_MAX_RANK] = { 0 };
	for (int64_t pos = 0; pos < nbuf && k < n; pos++) {
		int64_t idx[HLOI_MAX_RANK], lin = pos;
		if (tiled) {
			lin = index_to_linear(s, tidx);
			index_next_minor_to_major(s, tidx);
		} else if (padded && index_from_linear(s, lin, idx)) {
			continue;
		}
		const unsigned char *p = src + (size_t)lin * w;
		if (t == ET_PRED) {
			((protobuf_c_boolean *)dst)[k] = p[0] != 0;
		} else if (w == 2 && bytes_field(lp, t)) {
			uint16_t v;
			memcpy(&v, p, 2);
			out[2 * k] = (unsigned char)(v & 0xff);
			out[2 * k + 1] = (unsigned char)(v >> 8);
		} else if (w == 1 && etype_bit_width(t) < 8) {
			/* sub-byte integers and f4e2m1fn: the low bits, as XLA writes them */
			out[k] = (unsigned char)(p[0] & ((1u << etype_bit_width(t)) - 1u));
		} else {
			memcpy(out + k * w, p, w);
		}
		k++;
	}
	return lp;
}

/* --- orders ------------------------------------------------------------------------ */

typedef struct namepos {
	const char *name;
	int pos;
} namepos;

static int namepos_cmp(const void *a, const void *b)
{
	const namepos *x = a, *y = b;
	return strcmp(x->name, y->name);
}

static int find_name(const namepos *v, size_t n, const char *name)
{
	namepos key = { name, 0 };
	const namepos *r = bsearch(&key, v, n, sizeof *v, namepos_cmp);
	return r ? r->pos : -1;
}

static int comp_index(const module *m, const computation *c)
{
	for (int i = 0; i < m->ncomps; i++)
		if (m->comps[i] == c)
			return i;
	return -1;
}

/* Raw attributes that name called computations (as opposed to the typed
 * to_apply= / calls=). */
static int is_callee_raw(const raw_attr *r)
{
	return attr_slot(r->name) == 0;
}

/* The computations a raw callee attribute names, resolved; -1 on error. */
static int raw_callees(saver *S, const raw_attr *r, const computation ***out, size_t *n)
{
	char **names = NULL;
	size_t k = 0;
	if (r->value[0] == '{') {
		if (attr_parse_names(r->value, &names, &k, S->a))
			return sfail(S, &r->at, "cannot read the computation names in %s=%s", r->name, r->value);
	} else {
		names = sarray(S, 1, sizeof *names);
		if (!names)
			return -1;
		names[0] = (char *)(r->value[0] == '%' ? r->value + 1 : r->value);
		k = 1;
	}
	const computation **cs = sarray(S, k ? k : 1, sizeof *cs);
	if (!cs)
		return -1;
	for (size_t i = 0; i < k; i++) {
		cs[i] = module_find_computation(S->m, names[i]);
		if (!cs[i])
			return sfail(S, &r->at, "computation does not exist: %s", names[i]);
	}
	*out = cs;
	*n = k;
	return 0;
}

/* to_apply= or calls=: the callee the proto's typed field holds first. */
static const attr *typed_callee_attr(const instr *in)
{
	const attr *a = instr_attr(in, ATTR_TO_APPLY);
	return a ? a : instr_attr(in, ATTR_CALLS);
}

static const computation *typed_callee(saver *S, const instr *in)
{
	const attr *a = typed_callee_attr(in);
	if (!a)
		return NULL;
	if (in->callee && in->callee == in->called[0] && !strcmp(in->callee->name, a->u.s))
		return in->callee;
	const computation *c = module_find_computation(S->m, a->u.s);
	if (!c)
		sfail(S, &a->vat, "computation does not exist: %s", a->u.s);
	return c;
}

/* The attributes other than those with a field of their own (dimensions,
 * broadcast_dimensions, iota_dimension, index, direction, type, to_apply,
 * calls), as `name=value` text. */
static int raw_view(saver *S, const instr *in, raw_attr **out, int *n)
{
	*out = NULL;
	*n = 0;
	if (!in->nattrs)
		return 0;
	raw_attr *v = sarray(S, (size_t)in->nattrs, sizeof *v);
	if (!v)
		return -1;
	strbuf b = STRBUF_INIT;
	for (int i = 0; i < in->nattrs; i++) {
		const attr *a = &in->attrs[i];
		switch (a->id) {
		case ATTR_DIMENSIONS:
		case ATTR_BROADCAST_DIMENSIONS:
		case ATTR_IOTA_DIMENSION:
		case ATTR_INDEX:
		case ATTR_DIRECTION:
		case ATTR_TYPE:
		case ATTR_TO_APPLY:
		case ATTR_CALLS:
			if (a->kind != AK_RAW)
				continue;
			break;
		default:
			break;
		}
		sb_reset(&b);
		attr_print_value(&b, a);
		if (b.oom) {
			sb_free(&b);
			return soom(S);
		}
		raw_attr *r = &v[(*n)++];
		r->name = attr_text_name(a);
		r->value = arena_strdup(S->a, sb_str(&b));
		r->at = a->at;
		if (!r->value) {
			sb_free(&b);
			return soom(S);
		}
	}
	sb_free(&b);
	*out = v;
	return 0;
}

/* Depth-first post order of the computations over their callees. */
static int order_comps(saver *S, int *order, int *state, int ci, int *n)
{
	const module *m = S->m;
	if (state[ci] == 2)
		return 0;
	if (state[ci] == 1)
		return sfail(S, &m->comps[ci]->name_at, "computation '%s' calls itself (directly or not)",
			     m->comps[ci]->name);
	state[ci] = 1;
	const computation *c = m->comps[ci];
	for (int i = 0; i < c->ninstrs; i++) {
		const instr *in = c->instrs[i];
		S->comp = c->name;
		S->inst = in->name;
		const computation *tc = typed_callee_attr(in) ? typed_callee(S, in) : NULL;
		if (typed_callee_attr(in) && !tc)
			return -1;
		if (tc && order_comps(S, order, state, comp_index(m, tc), n))
			return -1;
		raw_attr *rv;
		int nrv;
		if (raw_view(S, in, &rv, &nrv))
			return -1;
		for (int r = 0; r < nrv; r++) {
			if (!is_callee_raw(&rv[r]))
				continue;
			const computation **cs;
			size_t k;
			if (raw_callees(S, &rv[r], &cs, &k))
				return -1;
			for (size_t j = 0; j < k; j++)
				if (order_comps(S, order, state, comp_index(m, cs[j]), n))
					return -1;
		}
	}
	S->comp = S->inst = NULL;
	state[ci] = 2;
	order[(*n)++] = ci;
	return 0;
}

/* The instruction an operand names. */
static int operand_pos(saver *S, const computation *c, const namepos *names, const operand *op)
{
	if (op->def && op->def->position >= 0 && op->def->position < c->ninstrs &&
	    c->instrs[op->def->position] == op->def)
		return op->def->position;
	int p = find_name(names, (size_t)c->ninstrs, op->name);
	if (p < 0)
		return sfail(S, &op->at, "instruction does not exist: %s", op->name);
	return p;
}

/* The control predecessors a raw attribute names, as positions. */
static int control_preds(saver *S, const computation *c, const namepos *names, const instr *in,
			 int **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	raw_attr *rv;
	int nrv;
	if (raw_view(S, in, &rv, &nrv))
		return -1;
	for (int r = 0; r < nrv; r++) {
		if (strcmp(rv[r].name, "control-predecessors") != 0)
			continue;
		char **v;
		size_t k;
		if (attr_parse_names(rv[r].value, &v, &k, S->a))
			return 0; /* kept as text */
		int *pos = sarray(S, k ? k : 1, sizeof *pos);
		if (!pos)
			return -1;
		for (size_t i = 0; i < k; i++) {
			pos[i] = find_name(names, (size_t)c->ninstrs, v[i]);
			if (pos[i] < 0)
				return 0; /* kept as text */
		}
		*out = pos;
		*n = k;
		return 0;
	}
	return 0;
}

typedef struct iorder {
	const computation *c;
	const namepos *names;
	int *order, *state, n;
} iorder;

static int order_instr(saver *S, iorder *o, int p)
{
	const computation *c = o->c;
	if (o->state[p] == 2)
		return 0;
	if (o->state[p] == 1)
		return sfail(S, &c->instrs[p]->name_at, "instruction '%s' depends on itself",
			     c->instrs[p]->name);
	o->state[p] = 1;
	const instr *in = c->instrs[p];
	for (int k = 0; k < in->nops; k++) {
		int q = operand_pos(S, c, o->names, &in->ops[k]);
		if (q < 0)
			return -1;
		/* as the checker says: the writer does not make such a program valid */
		if (q >= p)
			return sfail(S, &in->ops[k].at, "instruction '%s' is used before its definition",
				     c->instrs[q]->name);
		if (order_instr(S, o, q))
			return -1;
	}
	int *cp;
	size_t ncp;
	if (control_preds(S, c, o->names, in, &cp, &ncp))
		return -1;
	for (size_t k = 0; k < ncp; k++)
		if (order_instr(S, o, cp[k]))
			return -1;
	o->state[p] = 2;
	o->order[o->n++] = p;
	return 0;
}

/* --- frontend attributes ----------------------------------------------------------- */

typedef struct kvs {
	Xla__FrontendAttributes__MapEntry **v;
	size_t n, cap;
} kvs;

static int kv_add(saver *S, kvs *k, const char *key, const char *value)
{
	if (k->n == k->cap) {
		size_t ncap = k->cap ? 2 * k->cap : 8;
		Xla__FrontendAttributes__MapEntry **nv = sarray(S, ncap, sizeof *nv);
		if (!nv)
			return -1;
		if (k->n)
			memcpy(nv, k->v, k->n * sizeof *nv);
		k->v = nv;
		k->cap = ncap;
	}
	Xla__FrontendAttributes__MapEntry *e = salloc(S, sizeof *e);
	if (!e)
		return -1;
	xla__frontend_attributes__map_entry__init(e);
	if (!(e->key = sstrdup(S, key)) || !(e->value = sstrdup(S, value)))
		return -1;
	k->v[k->n++] = e;
	return 0;
}

static int kv_stash(saver *S, kvs *k, const char *prefix, const char *name, const char *value)
{
	strbuf key = STRBUF_INIT;
	sb_puts(&key, prefix);
	sb_puts(&key, name);
	int rc = key.oom ? soom(S) : kv_add(S, k, sb_str(&key), value);
	sb_free(&key);
	return rc;
}

static Xla__FrontendAttributes *kv_message(saver *S, kvs *k)
{
	if (k->n == 0)
		return NULL;
	Xla__FrontendAttributes *fa = salloc(S, sizeof *fa);
	if (!fa)
		return NULL;
	xla__frontend_attributes__init(fa);
	fa->n_map = k->n;
	fa->map = k->v;
	return fa;
}

/* --- the rest: fields the IR does not model -------------------------------------------- */

/* Merges what the loader kept aside of a message (rest.c) into the one
 * built here. The id in it is the one written already, or one the writer
 * renumbered; either way the built message has the right one. */
static int rest_out(saver *S, ProtobufCMessage *msg, const uint8_t *rest, size_t len)
{
	if (!rest || len == 0)
		return 0;
	int simple = proto_rest_merge_simple(S->a, msg, rest, len);
	if (simple)
		return simple < 0 ? soom(S) : 0;
	ProtobufCMessage *r = proto_rest_decode(S->a, msg->descriptor, rest, len);
	if (!r)
		return soom(S);
	if (msg->descriptor == &xla__hlo_instruction_proto__descriptor)
		((Xla__HloInstructionProto *)r)->id = 0;
	else if (msg->descriptor == &xla__hlo_computation_proto__descriptor)
		((Xla__HloComputationProto *)r)->id = 0;
	else if (!S->keep_ids && ((Xla__HloModuleProto *)r)->schedule) {
		/* its instruction ids are not the ones written */
		((Xla__HloModuleProto *)r)->schedule = NULL;
		diag_emit_where(S->ctx, DIAG_WARNING, S->m->filename ? S->m->filename : "module",
				"the module's schedule is dropped: instructions were added or renumbered "
				"since it was read");
	}
	if (proto_merge(S->a, msg, r, 0))
		return soom(S);
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The ids a computation's instructions were read with, by position; 0
 * when some instruction was not read from a proto or two ids are the
 * same, -1 when out of memory. */
static int read_instr_ids(saver *S, const computation *c, int64_t *ids)
{
	size_t n = (size_t)c->ninstrs;
	for (size_t i = 0; i < n; i++) {
		const instr *in = c->instrs[i];
		if (!in->pb_rest || proto_rest_id(in->pb_rest, in->pb_rest_len,
						  &xla__hlo_instruction_proto__descriptor, &ids[i]))
			return 0;
	}
	int64_t *v = hloi_calloc(n ? n : 1, sizeof *v);
	if (!v)
		return soom(S);
	memcpy(v, ids, n * sizeof *v);
	qsort(v, n, sizeof *v, id_cmp);
	int ok = 1;
	for (size_t i = 1; i < n && ok; i++)
		ok = v[i] != v[i - 1];
	hloi_free(v);
	return ok;
}

/* Whether the module, every computation and every instruction were read
 * from a proto, with ids unique (computations in the module, instructions
 * in their computation): then those ids are written again (the schedule
 * and other fields the IR does not model may refer to them), and
 * comp_ids gets the computations' by position in m->comps. -1 when out
 * of memory. */
static int original_ids(saver *S, int64_t *comp_ids)
{
	const module *m = S->m;
	if (!m->pb_rest)
		return 0;
	int ok = 1;
	for (int i = 0; i < m->ncomps && ok == 1; i++) {
		const computation *c = m->comps[i];
		if (!c->pb_rest || proto_rest_id(c->pb_rest, c->pb_rest_len,
						 &xla__hlo_computation_proto__descriptor, &comp_ids[i])) {
			ok = 0;
			break;
		}
		int64_t *ids = hloi_calloc(c->ninstrs ? (size_t)c->ninstrs : 1, sizeof *ids);
		ok = ids ? read_instr_ids(S, c, ids) : soom(S);
		hloi_free(ids);
	}
	if (ok != 1)
		return ok;
	int64_t *v = hloi_calloc((size_t)m->ncomps, sizeof *v);
	if (!v)
		return soom(S);
	memcpy(v, comp_ids, (size_t)m->ncomps * sizeof *v);
	qsort(v, (size_t)m->ncomps, sizeof *v, id_cmp);
	for (int i = 1; i < m->ncomps && ok; i++)
		ok = v[i] != v[i - 1];
	hloi_free(v);
	return ok;
}

/* The instruction ids of a computation, by position: the ones read (when
 * S->keep_ids), else 1, 2, ... across the module in the written order. */
static int instr_ids(saver *S, const computation *c, const int *order, int64_t *ids, int64_t *next_id)
{
	if (S->keep_ids) {
		int ok = read_instr_ids(S, c, ids);
		if (ok < 0)
			return -1;
		if (ok)
			return 0;
	}
	for (int i = 0; i < c->ninstrs; i++)
		ids[order[i]] = (*next_id)++;
	return 0;
}

/* --- instructions -------------------------------------------------------------------- */

static int int_list_out(saver *S, const int_list *l, size_t *n, int64_t **v)
{
	*n = (size_t)l->n;
	if (l->n == 0)
		return 0;
	*v = sarray(S, (size_t)l->n, sizeof **v);
	if (!*v)
		return -1;
	memcpy(*v, l->v, (size_t)l->n * sizeof **v);
	return 0;
}

/* The constant's value as a literal: the checker's, or converted here.
 * *tmp gets a literal the caller frees. */
static const hloi_literal *constant_value(saver *S, const instr *in, hloi_literal **tmp)
{
	*tmp = NULL;
	if (in->value)
		return in->value;
	if (!in->literal) {
		sfail(S, &in->op_at, "constant has no value");
		return NULL;
	}
	shape s = in->has_shape ? in->shape : in->result;
	if (shape_is_array(&s) && !s.has_layout)
		layout_set_default(&s);
	hloi_status st = literal_from_tree(tmp, S->ctx, S->m->src, in->literal, &s);
	if (st != HLOI_OK) {
		if (S->st == HLOI_OK)
			S->st = st;
		return NULL;
	}
	return *tmp;
}

/* Which rebuilt text an attribute gets on load, compared with what was
 * written: 0 when the fields reproduce it exactly. */
static int same_text(const strbuf *b, const char *value)
{
	return !b->oom && strcmp(sb_str(b), value) == 0;
}

static int attrs_out(saver *S, const instr *in, Xla__HloInstructionProto *ip, const computation *c,
		     const namepos *names, const int64_t *ids, kvs *fa, int callees_reproduced, const raw_attr *rv, int nrv)
{
	strbuf b = STRBUF_INIT;
	int rc = 0;
	char **ukeys = NULL, **uvals = NULL;
	size_t nuser = 0;
	for (int r = 0; r < nrv && rc == 0; r++) {
		const raw_attr *ra = &rv[r];
		int exact = 0;
		sb_reset(&b);
		if (strcmp(ra->name, "metadata") == 0) {
			Xla__OpMetadata *md = salloc(S, sizeof *md);
			if (!md) {
				rc = -1;
				break;
			}
			xla__op_metadata__init(md);
			if (attr_parse_metadata(ra->value, md, S->a) == 0) {
				ip->metadata = md;
				attr_render_metadata(&b, md);
				exact = same_text(&b, ra->value);
			}
		} else if (strcmp(ra->name, "backend_config") == 0) {
			ProtobufCBinaryData bd = { 0, NULL };
			if (attr_parse_backend_config(ra->value, &bd, S->a) == 0) {
				ip->backend_config = bd;
				attr_render_backend_config(&b, bd.data, bd.len);
				exact = same_text(&b, ra->value);
			}
		} else if (strcmp(ra->name, "frontend_attributes") == 0) {
			if (attr_parse_frontend(ra->value, &ukeys, &uvals, &nuser, S->a) == 0) {
				Xla__FrontendAttributes tmp = XLA__FRONTEND_ATTRIBUTES__INIT;
				kvs k = { NULL, 0, 0 };
				for (size_t i = 0; i < nuser && rc == 0; i++)
					rc = kv_add(S, &k, ukeys[i], uvals[i]);
				tmp.n_map = k.n;
				tmp.map = k.v;
				attr_render_frontend(&b, &tmp);
				exact = same_text(&b, ra->value);
			} else {
				nuser = 0;
			}
		} else if (strcmp(ra->name, "kind") == 0 && in->op == OP_FUSION) {
			ip->fusion_kind = (char *)ra->value;
			exact = 1;
		} else if (strcmp(ra->name, "control-predecessors") == 0) {
			char **v;
			size_t k;
			if (attr_parse_names(ra->value, &v, &k, S->a) == 0) {
				int *pos = sarray(S, k ? k : 1, sizeof *pos);
				int ok = pos != NULL;
				for (size_t i = 0; ok && i < k; i++)
					ok = (pos[i] = find_name(names, (size_t)c->ninstrs, v[i])) >= 0;
				if (ok) {
					ip->n_control_predecessor_ids = k;
					ip->control_predecessor_ids = sarray(S, k ? k : 1, sizeof(int64_t));
					if (!ip->control_predecessor_ids) {
						rc = -1;
						break;
					}
					const char **nm = sarray(S, k ? k : 1, sizeof *nm);
					if (!nm) {
						rc = -1;
						break;
					}
					for (size_t i = 0; i < k; i++) {
						ip->control_predecessor_ids[i] = ids[pos[i]];
						nm[i] = c->instrs[pos[i]]->name;
					}
					attr_render_names(&b, nm, k);
					exact = same_text(&b, ra->value);
				}
			}
		} else if (is_callee_raw(ra)) {
			exact = callees_reproduced;
		}
		if (b.oom)
			rc = soom(S);
		else if (!exact)
			rc = kv_stash(S, fa, HLOI_KEY_ATTR, ra->name, ra->value);
	}
	for (size_t i = 0; i < nuser && rc == 0; i++)
		rc = kv_add(S, fa, ukeys[i], uvals[i]);
	/* The order the loader rebuilds (attr_order_cmp) must be the written
	 * one; else keep the written order. */
	int sorted = 1;
	for (int r = 1; r < nrv; r++)
		if (attr_order_cmp(rv[r - 1].name, rv[r].name) > 0)
			sorted = 0;
	if (!sorted && rc == 0) {
		sb_reset(&b);
		for (int r = 0; r < nrv; r++) {
			if (r)
				sb_putc(&b, ',');
			sb_puts(&b, rv[r].name);
		}
		rc = b.oom ? soom(S) : kv_add(S, fa, HLOI_KEY_ATTR_ORDER, sb_str(&b));
	}
	sb_free(&b);
	return rc;
}

/* Called computations: the typed one, then the raw ones in XLA's order for
 * the opcode. *reproduced says whether the loader's rendering of the raw
 * ones gives back the written text. */
static int callees_out(saver *S, const instr *in, Xla__HloInstructionProto *ip, const int64_t *comp_ids,
		       kvs *fa, int *reproduced, const raw_attr *rv, int nrv)
{
	*reproduced = 1;
	const computation *list[64];
	size_t n = 0;
	const attr *ta = typed_callee_attr(in);
	const computation *tc = ta ? typed_callee(S, in) : NULL;
	if (ta && !tc)
		return -1;
	if (tc) {
		list[n++] = tc;
		const char *want = callee_typed_attr(in->op);
		const char *have = attr_name((attr_id)ta->id);
		if ((!want || strcmp(want, have) != 0) && kv_add(S, fa, HLOI_KEY_PREFIX "callee_attr", have))
			return -1;
	}
	/* Raw callee attributes in canonical order: while (condition, body),
	 * select-and-scatter (select, scatter), conditional (true, false or the
	 * branch list), else as written. */
	static const char *const canon[] = { "condition", "body", "select", "scatter", "true_computation",
					     "false_computation", "branch_computations",
					     "called_computations" };
	int nraw = 0;
	const char *an[2];
	char *av[2];
	for (size_t k = 0; k < sizeof canon / sizeof canon[0]; k++) {
		for (int r = 0; r < nrv; r++) {
			const raw_attr *ra = &rv[r];
			if (strcmp(ra->name, canon[k]) != 0)
				continue;
			const computation **cs;
			size_t cn;
			if (raw_callees(S, ra, &cs, &cn))
				return -1;
			for (size_t j = 0; j < cn; j++) {
				if (n == sizeof list / sizeof list[0])
					return sfail(S, &ra->at, "too many called computations");
				list[n++] = cs[j];
			}
		}
	}
	for (int r = 0; r < nrv; r++)
		if (is_callee_raw(&rv[r]))
			nraw++;
	size_t first_raw = tc ? 1 : 0;
	if (nraw) {
		const char *names[64];
		for (size_t j = first_raw; j < n; j++)
			names[j - first_raw] = list[j]->name;
		int k = callee_render(in->op, names, n - first_raw, an, av, S->a);
		if (k < 0)
			return soom(S);
		/* the rendering reproduces the text when it has the same attributes, in order */
		int j = 0;
		for (int r = 0; r < nrv && *reproduced; r++) {
			if (!is_callee_raw(&rv[r]))
				continue;
			if (j >= k || strcmp(rv[r].name, an[j]) != 0 || strcmp(rv[r].value, av[j]) != 0)
				*reproduced = 0;
			j++;
		}
		if (j != k)
			*reproduced = 0;
		if (tc && callee_typed_attr(in->op))
			*reproduced = 0; /* the loader would make the first one typed */
	}
	ip->n_called_computation_ids = n;
	if (n) {
		ip->called_computation_ids = sarray(S, n, sizeof(int64_t));
		if (!ip->called_computation_ids)
			return -1;
		for (size_t j = 0; j < n; j++)
			ip->called_computation_ids[j] = comp_ids[comp_index(S->m, list[j])];
	}
	return 0;
}

static Xla__HloInstructionProto *instr_out(saver *S, const computation *c, const namepos *names,
					   int p, const int64_t *ids, const int64_t *comp_ids)
{
	const instr *in = c->instrs[p];
	S->inst = in->name;
	Xla__HloInstructionProto *ip = salloc(S, sizeof *ip);
	if (!ip)
		return NULL;
	xla__hlo_instruction_proto__init(ip);
	kvs fa = { NULL, 0, 0 };
	ip->name = (char *)in->name;
	ip->opcode = (char *)opcode_name(in->op);
	ip->id = ids[p];
	const shape *s = in->has_shape ? &in->shape : &in->result;
	if (!(ip->shape = shape_out(S, s, 0, 0)))
		return NULL;
	ip->n_operand_ids = (size_t)in->nops;
	ip->operand_ids = sarray(S, (size_t)in->nops, sizeof(int64_t));
	if (in->nops && !ip->operand_ids)
		return NULL;
	for (int k = 0; k < in->nops; k++) {
		int q = operand_pos(S, c, names, &in->ops[k]);
		if (q < 0)
			return NULL;
		ip->operand_ids[k] = ids[q];
	}
	if (in->op == OP_PARAMETER)
		ip->parameter_number = in->parameter_number;
	if (in->op == OP_CONSTANT) {
		hloi_literal *tmp = NULL;
		const hloi_literal *v = constant_value(S, in, &tmp);
		if (!v)
			return NULL;
		if (v->elided) {
			if (kv_add(S, &fa, HLOI_KEY_ELIDED, "true"))
				v = NULL;
		} else {
			ip->literal = literal_out(S, v, 0);
			if (!ip->literal)
				v = NULL;
		}
		literal_destroy(tmp);
		if (!v)
			return NULL;
	}
	const int_list *dims = NULL;
	const char *dims_name = NULL;
	int64_t iota_dim, index;
	switch (opcode_category(in->op)) {
	case OPC_BINARY:
	case OPC_COMPARE:
		dims = instr_ints(in, ATTR_BROADCAST_DIMENSIONS);
		dims_name = "broadcast_dimensions";
		break;
	default:
		if (in->op == OP_IOTA && instr_int(in, ATTR_IOTA_DIMENSION, &iota_dim)) {
			ip->n_dimensions = 1;
			if (!(ip->dimensions = sarray(S, 1, sizeof(int64_t))))
				return NULL;
			ip->dimensions[0] = iota_dim;
		} else {
			dims = instr_ints(in, ATTR_DIMENSIONS);
			dims_name = "dimensions";
		}
		break;
	}
	if (dims) {
		if (int_list_out(S, dims, &ip->n_dimensions, &ip->dimensions))
			return NULL;
		int implied = !strcmp(dims_name, "dimensions") && opcode_always_has_dimensions(in->op);
		if (dims->n == 0 && !implied && kv_stash(S, &fa, HLOI_KEY_ATTR, dims_name, "{}"))
			return NULL;
	}
	if (instr_int(in, ATTR_INDEX, &index))
		ip->tuple_index = index;
	if (instr_direction(in) != CMP_NONE)
		ip->comparison_direction = (char *)cmp_direction_name(instr_direction(in));
	if (instr_comparison_type(in) != CMPT_NONE)
		ip->comparison_type = (char *)cmp_type_name(instr_comparison_type(in));
	raw_attr *rv;
	int nrv;
	if (raw_view(S, in, &rv, &nrv))
		return NULL;
	int reproduced;
	if (callees_out(S, in, ip, comp_ids, &fa, &reproduced, rv, nrv))
		return NULL;
	if (attrs_out(S, in, ip, c, names, ids, &fa, reproduced, rv, nrv))
		return NULL;
	if (fa.n && !(ip->frontend_attributes = kv_message(S, &fa)))
		return NULL;
	if (rest_out(S, &ip->base, in->pb_rest, in->pb_rest_len))
		return NULL;
	return ip;
}

/* --- computations and the module ----------------------------------------------------- */

static Xla__ProgramShapeProto *program_shape_out(saver *S, const computation *c)
{
	Xla__ProgramShapeProto *ps = salloc(S, sizeof *ps);
	if (!ps)
		return NULL;
	xla__program_shape_proto__init(ps);
	if (c->has_signature) {
		size_t n = (size_t)c->nsig_params;
		ps->n_parameters = ps->n_parameter_names = n;
		ps->parameters = sarray(S, n, sizeof *ps->parameters);
		ps->parameter_names = sarray(S, n, sizeof *ps->parameter_names);
		if (n && (!ps->parameters || !ps->parameter_names))
			return NULL;
		for (size_t i = 0; i < n; i++) {
			ps->parameter_names[i] = (char *)c->sig_names[i];
			if (!(ps->parameters[i] = shape_out(S, &c->sig_shapes[i], 0, 0)))
				return NULL;
		}
		ps->result = shape_out(S, &c->sig_result, 0, 0);
		return ps->result ? ps : NULL;
	}
	/* parameters by number */
	size_t n = 0;
	for (int i = 0; i < c->ninstrs; i++)
		if (c->instrs[i]->op == OP_PARAMETER)
			n++;
	const instr **params = sarray(S, n ? n : 1, sizeof *params);
	if (!params)
		return NULL;
	n = 0;
	for (int i = 0; i < c->ninstrs; i++)
		if (c->instrs[i]->op == OP_PARAMETER)
			params[n++] = c->instrs[i];
	for (size_t i = 1; i < n; i++) {
		const instr *x = params[i];
		size_t j = i;
		while (j > 0 && params[j - 1]->parameter_number > x->parameter_number) {
			params[j] = params[j - 1];
			j--;
		}
		params[j] = x;
	}
	ps->n_parameters = ps->n_parameter_names = n;
	ps->parameters = sarray(S, n, sizeof *ps->parameters);
	ps->parameter_names = sarray(S, n, sizeof *ps->parameter_names);
	if (n && (!ps->parameters || !ps->parameter_names))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const instr *pi = params[i];
		ps->parameter_names[i] = (char *)pi->name;
		if (!(ps->parameters[i] = shape_out(S, pi->has_shape ? &pi->shape : &pi->result, 1, 0)))
			return NULL;
	}
	const instr *root = c->root ? c->root : c->instrs[c->ninstrs - 1];
	ps->result = shape_out(S, root->has_shape ? &root->shape : &root->result, 1, 0);
	return ps->result ? ps : NULL;
}

static Xla__HloComputationProto *computation_out(saver *S, const computation *c, int64_t comp_id,
						 int64_t *next_id, const int64_t *comp_ids, int is_fusion)
{
	S->comp = c->name;
	S->inst = NULL;
	size_t n = (size_t)c->ninstrs;
	if (n == 0) {
		sfail(S, &c->name_at, "computation '%s' has no instructions", c->name);
		return NULL;
	}
	Xla__HloComputationProto *cp = salloc(S, sizeof *cp);
	namepos *names = hloi_calloc(n, sizeof *names);
	int *order = hloi_calloc(n, sizeof *order);
	int *state = hloi_calloc(n, sizeof *state);
	int64_t *ids = hloi_calloc(n, sizeof *ids);
	Xla__HloComputationProto *result = NULL;
	if (!cp || !names || !order || !state || !ids) {
		soom(S);
		goto out;
	}
	xla__hlo_computation_proto__init(cp);
	cp->name = (char *)c->name;
	cp->id = comp_id;
	cp->is_fusion_computation = is_fusion;
	for (size_t i = 0; i < n; i++) {
		names[i].name = c->instrs[i]->name;
		names[i].pos = (int)i;
	}
	qsort(names, n, sizeof *names, namepos_cmp);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(names[i].name, names[i - 1].name) == 0) {
			const instr *d = c->instrs[names[i].pos > names[i - 1].pos ? names[i].pos : names[i - 1].pos];
			sfail(S, &d->name_at, "instruction already exists: %s", d->name);
			goto out;
		}
	}
	iorder o = { c, names, order, state, 0 };
	for (size_t i = 0; i < n; i++)
		if (order_instr(S, &o, (int)i))
			goto out;
	if (instr_ids(S, c, order, ids, next_id))
		goto out;
	cp->n_instructions = n;
	cp->instructions = sarray(S, n, sizeof *cp->instructions);
	if (!cp->instructions)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!(cp->instructions[i] = instr_out(S, c, names, order[i], ids, comp_ids)))
			goto out;
	S->inst = NULL;
	const instr *root = c->root ? c->root : c->instrs[n - 1];
	for (size_t i = 0; i < n; i++)
		if (c->instrs[i] == root)
			cp->root_id = ids[i];
	if (!(cp->program_shape = program_shape_out(S, c)))
		goto out;
	if (rest_out(S, &cp->base, c->pb_rest, c->pb_rest_len))
		goto out;
	result = cp;
out:
	hloi_free(names);
	hloi_free(order);
	hloi_free(state);
	hloi_free(ids);
	return result;
}

static int module_attrs_out(saver *S, kvs *fa)
{
	const module *m = S->m;
	if (!m->has_header && kv_add(S, fa, HLOI_KEY_NO_HEADER, "true"))
		return -1;
	if (m->broadcast_mode != HLOI_BROADCAST_DEFAULT &&
	    kv_add(S, fa, HLOI_KEY_BROADCAST_MODE, m->broadcast_mode == HLOI_BROADCAST_NUMPY ? "numpy" : "xla"))
		return -1;
	for (int i = 0; i < m->nheader_attrs; i++) {
		char key[64];
		if (i > 9999)
			return sfail(S, NULL, "too many module attributes");
		snprintf(key, sizeof key, "%s%04d.", HLOI_KEY_HEADER_ATTR, i);
		if (kv_stash(S, fa, key, m->header_attrs[i].name, m->header_attrs[i].value))
			return -1;
	}
	const computation *entry = m->entry ? m->entry : m->comps[m->ncomps - 1];
	if (!entry->is_entry && kv_add(S, fa, HLOI_KEY_IMPLICIT_ENTRY, "true"))
		return -1;
	strbuf roots = STRBUF_INIT, sigs = STRBUF_INIT;
	for (int i = 0; i < m->ncomps; i++) {
		const computation *c = m->comps[i];
		const instr *root = c->root ? c->root : (c->ninstrs ? c->instrs[c->ninstrs - 1] : NULL);
		if (root && !root->is_root) {
			if (roots.len)
				sb_putc(&roots, ',');
			sb_puts(&roots, c->name);
		}
		if (c->has_signature) {
			if (sigs.len)
				sb_putc(&sigs, ',');
			sb_puts(&sigs, c->name);
		}
	}
	int rc = 0;
	if (roots.oom || sigs.oom)
		rc = soom(S);
	if (!rc && roots.len)
		rc = kv_add(S, fa, HLOI_KEY_IMPLICIT_ROOT, sb_str(&roots));
	if (!rc && sigs.len)
		rc = kv_add(S, fa, HLOI_KEY_SIGNATURE, sb_str(&sigs));
	sb_free(&roots);
	sb_free(&sigs);
	return rc;
}

static Xla__HloInputOutputAliasProto *alias_out(saver *S)
{
	const module *m = S->m;
	Xla__HloInputOutputAliasProto *ap = salloc(S, sizeof *ap);
	if (!ap)
		return NULL;
	xla__hlo_input_output_alias_proto__init(ap);
	ap->n_entries = (size_t)m->nalias;
	ap->entries = sarray(S, (size_t)m->nalias, sizeof *ap->entries);
	if (!ap->entries)
		return NULL;
	for (int i = 0; i < m->nalias; i++) {
		const alias_entry *a = &m->alias[i];
		Xla__HloInputOutputAliasProto__AliasEntryProto *e = salloc(S, sizeof *e);
		if (!e)
			return NULL;
		xla__hlo_input_output_alias_proto__alias_entry_proto__init(e);
		e->n_output_shape_index = (size_t)a->n_output_index;
		e->output_shape_index = sarray(S, (size_t)a->n_output_index + 1, sizeof(int64_t));
		e->n_parameter_shape_index = (size_t)a->n_parameter_index;
		e->parameter_shape_index = sarray(S, (size_t)a->n_parameter_index + 1, sizeof(int64_t));
		if (!e->output_shape_index || !e->parameter_shape_index)
			return NULL;
		memcpy(e->output_shape_index, a->output_index, (size_t)a->n_output_index * sizeof(int64_t));
		memcpy(e->parameter_shape_index, a->parameter_index,
		       (size_t)a->n_parameter_index * sizeof(int64_t));
		e->parameter_number = a->parameter_number;
		e->kind = a->must_alias ? XLA__KIND__MUST_ALIAS : XLA__KIND__MAY_ALIAS;
		ap->entries[i] = e;
	}
	return ap;
}

hloi_status proto_build_module(Xla__HloModuleProto **out, arena *a, const module *m,
			       hloi_context *ctx)
{
	*out = NULL;
	saver S = { ctx, m, a, HLOI_OK, NULL, NULL, 0 };
	if (m->ncomps == 0) {
		sfail(&S, NULL, "the module has no computations");
		return S.st;
	}
	size_t nc = (size_t)m->ncomps;
	int *order = hloi_calloc(nc, sizeof *order);
	int *state = hloi_calloc(nc, sizeof *state);
	int64_t *comp_ids = hloi_calloc(nc, sizeof *comp_ids);
	unsigned char *fusion = hloi_calloc(nc, 1);
	Xla__HloModuleProto *mp = NULL;
	int n = 0;
	if (!order || !state || !comp_ids || !fusion) {
		soom(&S);
		goto out;
	}
	for (int i = 0; i < m->ncomps; i++)
		if (order_comps(&S, order, state, i, &n))
			goto out;
	S.keep_ids = original_ids(&S, comp_ids);
	if (S.keep_ids < 0)
		goto out;
	if (!S.keep_ids)
		for (int i = 0; i < m->ncomps; i++)
			comp_ids[order[i]] = i + 1;
	for (int i = 0; i < m->ncomps; i++) {
		const computation *c = m->comps[i];
		for (int k = 0; k < c->ninstrs; k++) {
			const instr *in = c->instrs[k];
			if (in->op == OP_FUSION && typed_callee_attr(in)) {
				const computation *t = typed_callee(&S, in);
				if (t)
					fusion[comp_index(m, t)] = 1;
			}
		}
	}
	mp = salloc(&S, sizeof *mp);
	if (!mp)
		goto out;
	xla__hlo_module_proto__init(mp);
	mp->name = (char *)(m->name ? m->name : "module");
	mp->n_computations = nc;
	mp->computations = sarray(&S, nc, sizeof *mp->computations);
	if (!mp->computations)
		goto out;
	int64_t next_id = 1;
	const computation *entry = m->entry ? m->entry : m->comps[m->ncomps - 1];
	for (size_t i = 0; i < nc; i++) {
		const computation *c = m->comps[order[i]];
		mp->computations[i] = computation_out(&S, c, comp_ids[order[i]], &next_id, comp_ids,
						      fusion[order[i]]);
		if (!mp->computations[i])
			goto out;
		if (c == entry) {
			mp->entry_computation_name = (char *)c->name;
			mp->entry_computation_id = comp_ids[order[i]];
			mp->host_program_shape = mp->computations[i]->program_shape;
		}
	}
	S.comp = S.inst = NULL;
	if (m->nalias && !(mp->input_output_alias = alias_out(&S)))
		goto out;
	kvs fa = { NULL, 0, 0 };
	if (module_attrs_out(&S, &fa))
		goto out;
	/* HLO text may define a callee after its caller; a proto may not, so
	 * the text's order travels along. */
	int reordered = 0;
	for (int i = 0; i < m->ncomps; i++)
		reordered |= order[i] != i;
	if (reordered) {
		strbuf b = STRBUF_INIT;
		for (int i = 0; i < m->ncomps; i++) {
			if (i)
				sb_putc(&b, ',');
			sb_puts(&b, m->comps[i]->name);
		}
		int rc = b.oom ? soom(&S) : kv_add(&S, &fa, HLOI_KEY_COMP_ORDER, sb_str(&b));
		sb_free(&b);
		if (rc)
			goto out;
	}
	if (fa.n && !(mp->frontend_attributes = kv_message(&S, &fa)))
		goto out;
	if (rest_out(&S, &mp->base, m->pb_rest, m->pb_rest_len))
		goto out;
	*out = mp;
out:
	hloi_free(order);
	hloi_free(state);
	hloi_free(comp_ids);
	hloi_free(fusion);
	if (!*out && S.st == HLOI_OK)
		S.st = HLOI_ENOMEM;
	return *out ? HLOI_OK : S.st;
}

hloi_status proto_save_binary(unsigned char **out, size_t *len, const module *m, hloi_context *ctx)
{
	*out = NULL;
	*len = 0;
	arena a;
	arena_init(&a);
	Xla__HloModuleProto *mp;
	hloi_status st = proto_build_module(&mp, &a, m, ctx);
	if (st == HLOI_OK) {
		size_t n = xla__hlo_module_proto__get_packed_size(mp);
		unsigned char *buf = hloi_malloc(n ? n : 1);
		if (!buf) {
			diag_error_where(ctx, NULL, "out of memory writing the proto");
			st = HLOI_ENOMEM;
		} else {
			xla__hlo_module_proto__pack(mp, buf);
			*out = buf;
			*len = n;
		}
	}
	arena_release(&a);
	return st;
}

hloi_status proto_save_text(char **out, size_t *len, const module *m, hloi_context *ctx)
{
	*out = NULL;
	*len = 0;
	arena a;
	arena_init(&a);
	Xla__HloModuleProto *mp;
	hloi_status st = proto_build_module(&mp, &a, m, ctx);
	if (st == HLOI_OK) {
		uint32_t first = 0;
		size_t nunknown = proto_count_unknown(&mp->base, &first);
		if (nunknown)
			diag_emit_where(ctx, DIAG_WARNING, m->filename ? m->filename : "module",
					"proto text has no form for fields unknown to hloi's schema: %zu %s "
					"dropped (the first is field %" PRIu32 ")",
					nunknown, nunknown == 1 ? "is" : "are", first);
		strbuf b = STRBUF_INIT;
		pbtxt_print_message(&b, &mp->base);
		if (b.oom) {
			sb_free(&b);
			diag_error_where(ctx, NULL, "out of memory writing the proto");
			st = HLOI_ENOMEM;
		} else {
			*len = b.len;
			*out = b.s ? sb_take(&b) : hloi_strdup("");
			if (!*out)
				st = HLOI_ENOMEM;
		}
	}
	arena_release(&a);
	return st;
}

Xla__LiteralProto *proto_literal_out(arena *a, hloi_context *ctx, const char *file, const hloi_literal *lit,
				     hloi_status *st)
{
	module none;
	memset(&none, 0, sizeof none);
	none.src = -1;
	none.filename = file;
	saver S;
	memset(&S, 0, sizeof S);
	S.ctx = ctx;
	S.m = &none;
	S.a = a;
	Xla__LiteralProto *lp = literal_out(&S, lit, 0);
	*st = lp ? HLOI_OK : S.st != HLOI_OK ? S.st : HLOI_ENOMEM;
	return lp;
}
