/* IR -> HloModuleProto, as XLA writes it: ids assigned, instructions in
 * dependency order (operands come first, as the text must have them;
 * control predecessors may move an instruction later), callees before
 * callers, every instruction with its shape and every array with its
 * layout (the default where the text gave none), program shapes filled in,
 * constants in the field for their type in buffer order, attributes in
 * XLA's own fields (fields.c), the header's in the module's. What XLA's
 * fields cannot say (an attribute without a field, a default written out, a
 * header-less module, ...) travels in frontend_attributes under `hloi.`
 * keys, so hloi -> proto -> hloi prints the same text. Works on a parsed
 * module as well as a checked one (names are resolved here); a shape the
 * text left out needs the checker's. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "proto/pbtxt.h"
#include "proto/proto_internal.h"
#include "text/attr_text.h"
#include "text/parse.h"
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
	int quiet;             /* proto_echo_instr: no diagnostics */
	int64_t **written;     /* per computation (m->comps order): ids in written order */
	proto_stream *stream;  /* streaming: per computation (in the order written),
	                        * its instructions; NULL: in the tree */
	size_t pos;            /* streaming: the computation being written */
	arena *scratch;        /* streaming: one instruction's proto */
} saver;

int proto_plain_writer = 1;
unsigned long proto_plain_written;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int sfail(saver *S, const loc *at, const char *fmt, ...)
{
	if (S->st == HLOI_OK)
		S->st = HLOI_EINVAL;
	if (S->quiet)
		return -1;
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
	return -1;
}

static int soom(saver *S)
{
	if (S->st != HLOI_ENOMEM && !S->quiet)
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

static void *snew(saver *S, const ProtobufCMessageDescriptor *d)
{
	void *p = salloc(S, d->sizeof_message);
	if (p)
		protobuf_c_message_init(d, p);
	return p;
}

/* --- shapes and literals ----------------------------------------------------------- */

static int64_t *copy_i64(saver *S, const int64_t *v, size_t n)
{
	int64_t *r = sarray(S, n ? n : 1, sizeof *r);
	if (r && n)
		memcpy(r, v, n * sizeof *r);
	return r;
}

/* The layout of an array shape, as XLA's Layout::ToProto writes it. */
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
	/* XLA writes its default, 1 */
	lp->tail_padding_alignment_in_elements = l->tail_padding_alignment ? l->tail_padding_alignment : 1;
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
	if (s->is_buffer) {
		/* XLA's buffer shape: BUFFER around the array shape */
		shape inner = *s;
		inner.is_buffer = 0;
		sp->element_type = XLA__PRIMITIVE_TYPE__BUFFER;
		sp->n_tuple_shapes = 1;
		sp->tuple_shapes = sarray(S, 1, sizeof *sp->tuple_shapes);
		if (!sp->tuple_shapes || !(sp->tuple_shapes[0] = shape_out(S, &inner, fill, depth + 1)))
			return NULL;
		return sp;
	}
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
	for (int d = 0; d < s->rank; d++)
		sp->dimensions[d] = s->dim_kind[d] == DIM_UNBOUNDED ? INT64_MIN : s->dims[d];
	/* XLA's Shape::ToProto writes one entry per dimension, false or not */
	if (s->rank) {
		sp->n_is_dynamic_dimension = (size_t)s->rank;
		sp->is_dynamic_dimension = sarray(S, (size_t)s->rank, sizeof(protobuf_c_boolean));
		if (!sp->is_dynamic_dimension)
			return NULL;
		for (int d = 0; d < s->rank; d++)
			sp->is_dynamic_dimension[d] = s->dim_kind[d] != DIM_STATIC;
	}
	if (s->has_layout || s->rank == 0 || fill) {
		shape t = *s;
		if (!t.has_layout)
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
	if (lit->elided) {
		/* a whole elided constant is marked HLOI_KEY_ELIDED instead */
		sfail(S, NULL, "an elided literal ({...}) inside a tuple or an attribute cannot be written as a proto");
		return NULL;
	}
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


/* A copy of `s` (tuple elements in the saver's arena) with the default
 * layout on every array that has none; `mask` gets a `1` per array leaf
 * whose layout was written and a `0` per one filled in (scalars always
 * count as written: their default layout prints as nothing). */
static int fill_layouts(saver *S, const shape *s, shape *out, strbuf *mask, int depth)
{
	*out = *s;
	if (shape_is_tuple(s)) {
		if (depth > PROTO_MAX_DEPTH)
			return sfail(S, NULL, "shapes nested deeper than %d levels", PROTO_MAX_DEPTH);
		if (s->ntuple) {
			out->tuple = sarray(S, (size_t)s->ntuple, sizeof *out->tuple);
			if (!out->tuple)
				return -1;
		}
		for (int i = 0; i < s->ntuple; i++)
			if (fill_layouts(S, &s->tuple[i], &out->tuple[i], mask, depth + 1))
				return -1;
		return 0;
	}
	if (!shape_is_array(s))
		return 0;
	if (mask)
		sb_putc(mask, s->has_layout || s->rank == 0 ? '1' : '0');
	if (!s->has_layout)
		layout_set_default(out);
	return 0;
}

static int mask_all_written(const strbuf *mask)
{
	return !mask->len || !memchr(mask->s, '0', mask->len);
}

/* The shape an instruction was written with (or read from a proto with),
 * or the one the checker inferred; NULL when neither is known. */
static const shape *known_shape(const instr *in)
{
	if (in->has_shape || in->shape->type != ET_INVALID)
		return in->shape;  /* written, or read from a proto (hloi.no_shape) */
	return in->result->type != ET_INVALID ? in->result : NULL;
}

/* The instruction's shape as written to the proto (layouts filled in);
 * *inferred: the text left it out. */
static const shape *instr_shape(saver *S, const instr *in, shape *tmp, strbuf *mask, int *inferred)
{
	*inferred = !in->has_shape;
	const shape *s = known_shape(in);
	if (!s) {
		sfail(S, &in->op_at,
		      "instruction '%s' has no shape: the text leaves it out, and no check of the module "
		      "inferred one",
		      in->name);
		return NULL;
	}
	if (fill_layouts(S, s, tmp, in->has_shape ? mask : NULL, 0))
		return NULL;
	return tmp;
}

/* --- orders ------------------------------------------------------------------------ */

/* A computation's instruction names, hashed: a checked module's operands
 * point at their instructions, but an unchecked one (converted without a
 * check) and control predecessors look names up. */
typedef struct name_slot {
	const char *name;      /* NULL for an empty slot */
	int pos;
} name_slot;

typedef struct nameidx {
	const computation *c;
	name_slot *slot;
	size_t mask;
	/* instruction p's operand k is at opos[base[p] + k] (order_instr
	 * looks them up once for the writers) */
	int *opos;
	size_t *base;
} nameidx;

static size_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return (size_t)(h ^ h >> 29);
}

/* Indexes c's names: 0, -1 out of memory, or the position + 1 of the
 * first instruction whose name an earlier one has. */
static int nameidx_build(nameidx *x, const computation *c)
{
	size_t cap = 16;
	while (cap < 2 * (size_t)c->ninstrs)
		cap *= 2;
	x->c = c;
	x->mask = cap - 1;
	if (!(x->slot = hloi_calloc(cap, sizeof *x->slot)))
		return -1;
	for (int i = 0; i < c->ninstrs; i++) {
		const char *name = c->instrs[i]->name;
		size_t k = name_hash(name) & x->mask;
		for (; x->slot[k].name; k = (k + 1) & x->mask)
			if (strcmp(x->slot[k].name, name) == 0)
				return i + 1;
		x->slot[k].name = name;
		x->slot[k].pos = i;
	}
	return 0;
}

static int find_name(const nameidx *x, const char *name)
{
	for (size_t k = name_hash(name) & x->mask; x->slot[k].name; k = (k + 1) & x->mask)
		if (strcmp(x->slot[k].name, name) == 0)
			return x->slot[k].pos;
	return -1;
}

static int comp_index(const module *m, const computation *c)
{
	for (int i = 0; i < m->ncomps; i++)
		if (m->comps[i] == c)
			return i;
	return -1;
}

/* The computations an instruction calls, in XLA's order (attrs.def's
 * order of the callee attributes), with the attribute spelling each and
 * how many it names. Returns the count, -1 on error (reported). */
#define MAX_CALLEES 4096
typedef struct callees {
	size_t n;
	const computation **c;
	int nattrs;
	attr_id ids[ATTR_COUNT];
	size_t counts[ATTR_COUNT];
	const attr *attrs[ATTR_COUNT];
} callees;

static int callees_of(saver *S, const instr *in, callees *out)
{
	out->n = 0;
	out->c = NULL;
	out->nattrs = 0;
	int any = 0;
	for (int i = 0; i < in->nattrs && !any; i++)
		any = in->attrs[i].id < ATTR_COUNT && fields_is_callee((attr_id)in->attrs[i].id);
	if (!any)
		return 0;
	memset(out, 0, sizeof *out);
	size_t total = 0;
	for (int id = 0; id < ATTR_COUNT; id++) {
		if (!fields_is_callee((attr_id)id))
			continue;
		const attr *a = instr_attr(in, (attr_id)id);
		if (!a)
			continue;
		if (a->kind == AK_COMP)
			total += 1;
		else if (a->kind == AK_COMPS)
			total += (size_t)a->u.words.n;
	}
	if (total > MAX_CALLEES)
		return sfail(S, &in->op_at, "too many called computations");
	out->c = total ? sarray(S, total, sizeof *out->c) : NULL;
	if (total && !out->c)
		return -1;
	for (int id = 0; id < ATTR_COUNT; id++) {
		if (!fields_is_callee((attr_id)id))
			continue;
		const attr *a = instr_attr(in, (attr_id)id);
		if (!a || (a->kind != AK_COMP && a->kind != AK_COMPS))
			continue;
		size_t k = a->kind == AK_COMP ? 1 : (size_t)a->u.words.n;
		for (size_t j = 0; j < k; j++) {
			const char *name = a->kind == AK_COMP ? a->u.s : a->u.words.v[j];
			const computation *c = module_find_computation(S->m, name);
			if (!c) {
				const loc *at = a->kind == AK_COMPS && a->u.words.at ? &a->u.words.at[j] : &a->vat;
				return sfail(S, at, "computation does not exist: %s", name);
			}
			out->c[out->n++] = c;
		}
		out->ids[out->nattrs] = (attr_id)id;
		out->counts[out->nattrs] = k;
		out->attrs[out->nattrs] = a;
		out->nattrs++;
	}
	return (int)out->n;
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
		callees cl;
		if (callees_of(S, in, &cl) < 0)
			return -1;
		for (size_t j = 0; j < cl.n; j++)
			if (order_comps(S, order, state, comp_index(m, cl.c[j]), n))
				return -1;
	}
	S->comp = S->inst = NULL;
	state[ci] = 2;
	order[(*n)++] = ci;
	return 0;
}

/* The instruction an operand names. */
static int operand_pos(saver *S, const computation *c, const nameidx *names, const operand *op)
{
	if (op->def && op->def->position >= 0 && op->def->position < c->ninstrs &&
	    c->instrs[op->def->position] == op->def)
		return op->def->position;
	int p = find_name(names, op->name);
	if (p < 0)
		return sfail(S, &op->at, "instruction does not exist: %s", op->name);
	return p;
}

/* The positions of an instruction's control predecessors. */
static int control_preds(saver *S, const nameidx *names, const instr *in, int **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	const attr *a = instr_attr(in, ATTR_CONTROL_PREDECESSORS);
	if (!a || a->kind != AK_NAMES || !a->u.words.n)
		return 0;
	size_t k = (size_t)a->u.words.n;
	int *pos = sarray(S, k, sizeof *pos);
	if (!pos)
		return -1;
	for (size_t i = 0; i < k; i++) {
		pos[i] = find_name(names, a->u.words.v[i]);
		if (pos[i] < 0)
			return sfail(S, a->u.words.at ? &a->u.words.at[i] : &a->vat, "instruction does not exist: %s",
				     a->u.words.v[i]);
	}
	*out = pos;
	*n = k;
	return 0;
}

typedef struct iorder {
	const computation *c;
	const nameidx *names;
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
	S->inst = in->name;
	for (int k = 0; k < in->nops; k++) {
		int q = operand_pos(S, c, o->names, &in->ops[k]);
		if (q < 0)
			return -1;
		o->names->opos[o->names->base[p] + (size_t)k] = q;
		/* as the checker says: the writer does not make such a program valid */
		if (q >= p)
			return sfail(S, &in->ops[k].at, "instruction '%s' is used before its definition",
				     c->instrs[q]->name);
		if (order_instr(S, o, q))
			return -1;
	}
	int *cp;
	size_t ncp;
	if (control_preds(S, o->names, in, &cp, &ncp))
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

static int kv_buf(saver *S, kvs *k, const char *key, strbuf *b)
{
	int rc = b->oom ? soom(S) : kv_add(S, k, key, sb_str(b));
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

/* Appends `name` to a comma-separated list. */
static void list_add(strbuf *b, const char *name)
{
	if (b->len)
		sb_putc(b, ',');
	sb_puts(b, name);
}

/* --- the rest: fields the IR does not model -------------------------------------------- */

/* Merges what the loader kept aside of a message (rest.c) into the one
 * built here. A field the rest holds whole (one the IR did not reproduce
 * exactly) replaces the one built from the IR. The id in it is the one
 * written already, or one the writer renumbered; either way the built
 * message has the right one. */
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
				"the module's schedule is rebuilt from the order of its instructions: "
				"instructions were added or renumbered since it was read");
	}
	proto_rest_clear_whole(msg, r);
	if (proto_merge(S->a, msg, r, 0))
		return soom(S);
	return 0;
}

/* Whether the rest of a message holds field `num` whole (the writer then
 * need not build it). */
static int rest_holds(saver *S, const ProtobufCMessageDescriptor *d, const uint8_t *rest, size_t len, uint32_t num)
{
	if (!rest || !len)
		return 0;
	ProtobufCMessage *r = proto_rest_decode(S->a, d, rest, len);
	if (!r)
		return soom(S);
	const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, num);
	return f && proto_field_set(r, f);
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
	const shape *k = known_shape(in);
	shape s;
	if (!k) {
		sfail(S, &in->op_at, "constant '%s' has no shape", in->name);
		return NULL;
	}
	if (fill_layouts(S, k, &s, NULL, 0))
		return NULL;
	if (S->quiet)
		return NULL;
	hloi_status st = literal_from_tree(tmp, S->ctx, S->m->src, in->literal, &s);
	if (st != HLOI_OK) {
		if (S->st == HLOI_OK)
			S->st = st;
		return NULL;
	}
	return *tmp;
}

static Xla__ShapeProto *hook_shape_out(void *ctx, const shape *s)
{
	saver *S = ctx;
	shape t;
	if (fill_layouts(S, s, &t, NULL, 0))
		return NULL;
	return shape_out(S, &t, 1, 0);
}

static Xla__LiteralProto *hook_literal_out(void *ctx, const attr *a)
{
	saver *S = ctx;
	const attr_literal *l = &a->u.lit;
	if (l->value && l->value->elided) {
		sfail(S, &a->vat, "an elided literal ({...}) cannot be written as a proto");
		return NULL;
	}
	if (l->value)
		return literal_out(S, l->value, 0);
	if (!l->tree || !l->shp || S->quiet) {
		sfail(S, &a->vat, "literal= has no value");
		return NULL;
	}
	shape s;
	if (fill_layouts(S, l->shp, &s, NULL, 0))
		return NULL;
	hloi_literal *tmp = NULL;
	hloi_status st = literal_from_tree(&tmp, S->ctx, S->m->src, l->tree, &s);
	if (st != HLOI_OK) {
		if (S->st == HLOI_OK)
			S->st = st;
		return NULL;
	}
	if (tmp->elided) {
		literal_destroy(tmp);
		sfail(S, &a->vat, "an elided literal ({...}) cannot be written as a proto");
		return NULL;
	}
	Xla__LiteralProto *lp = literal_out(S, tmp, 0);
	literal_destroy(tmp);
	return lp;
}

/* Where a value's error is: at the offending byte when known. */
static loc value_loc(const attr *a, size_t off)
{
	loc at = a->vat;
	if (off != SIZE_MAX && at.start + off < at.end) {
		at.start += off;
		at.end = at.start + 1;
	}
	return at;
}

static int attr_cmp_order(const void *x, const void *y)
{
	const attr *a = *(const attr *const *)x, *b = *(const attr *const *)y;
	int ka = attr_order_key(a), kb = attr_order_key(b);
	return ka < kb ? -1 : ka > kb;
}

/* Attributes into fields (fields.c); what has no field, as text under
 * hloi.attr.*; the fields XLA sets by default; and the attributes written
 * with a default value or left out against XLA's printing
 * (hloi.explicit, hloi.implicit). */
static int instr_fields(saver *S, const instr *in, Xla__HloInstructionProto *ip, kvs *fa, const fields_ops *ops)
{
	strbuf err = STRBUF_INIT, b = STRBUF_INIT;
	fields_hooks hooks = { S, NULL, hook_shape_out, hook_literal_out };
	fout o;
	memset(&o, 0, sizeof o);
	o.a = S->a;
	o.op = in->op;
	o.hooks = &hooks;
	o.err = &err;
	uint8_t have[ATTR_COUNT];
	memset(have, 0, sizeof have);
	int rc = 0;
	const attr **sorted = in->nattrs ? sarray(S, (size_t)in->nattrs, sizeof *sorted) : NULL;
	if (in->nattrs && !sorted)
		return -1;
	for (int i = 0; i < in->nattrs; i++)
		sorted[i] = &in->attrs[i];
	if (in->nattrs)
		qsort(sorted, (size_t)in->nattrs, sizeof *sorted, attr_cmp_order);
	for (int i = 0; i < in->nattrs && !rc; i++) {
		const attr *a = sorted[i];
		if (a->id < ATTR_COUNT && (fields_is_callee((attr_id)a->id) || a->id == ATTR_CONTROL_PREDECESSORS))
			continue;
		if (a->id == ATTR_FRONTEND_ATTRIBUTES && a->kind == AK_RAW) {
			tcur c;
			char **k, **v;
			size_t n;
			tc_init(&c, a->u.s, strlen(a->u.s));
			if (frontend_parse(&c, &k, &v, &n, S->a) == 0 && !tc_at_end(&c))
				tc_fail(&c, "the end of the value");
			if (c.oom) {
				rc = soom(S);
				break;
			}
			if (c.bad) {
				loc at = value_loc(a, c.bad_at);
				rc = sfail(S, &at, "malformed frontend_attributes: expects %s", c.expect);
				break;
			}
			for (size_t j = 0; j < n && !rc; j++) {
				if (proto_is_hloi_key(k[j]))
					rc = sfail(S, &a->vat, "frontend attribute '%s': keys starting with '%s' are hloi's own",
						   k[j], HLOI_KEY_PREFIX);
				else
					rc = kv_add(S, fa, k[j], v[j]);
			}
			have[ATTR_FRONTEND_ATTRIBUTES] = 1;
			continue;
		}
		sb_reset(&err);
		o.err_off = SIZE_MAX;
		fo_result r = field_out(&o, a, ip);
		if (r == FO_OK) {
			have[a->id] = 1;
			continue;
		}
		if (r == FO_OOM || err.oom) {
			rc = soom(S);
			break;
		}
		if (r == FO_BAD) {
			loc at = value_loc(a, o.err_off);
			/* a hook that failed has said why */
			rc = sb_str(&err)[0] || S->st == HLOI_OK ? sfail(S, &at, "%s", sb_str(&err)) : -1;
			break;
		}
		/* no field of XLA's holds it: kept as text */
		sb_reset(&b);
		attr_print_value(&b, a);
		rc = b.oom ? soom(S) : kv_stash(S, fa, HLOI_KEY_ATTR, attr_text_name(a), sb_str(&b));
	}
	if (!rc && fields_defaults(&o, ip, ops))
		rc = soom(S);
	if (!rc) {
		/* what the loader will show for these fields */
		ip->frontend_attributes = kv_message(S, fa);
		attr shown_v[ATTR_COUNT];
		int nshown;
		if (fields_in(S->a, in->op, ip, ops, NULL, NULL, NULL, shown_v, &nshown) < 0) {
			rc = soom(S);
		} else {
			uint8_t shown[ATTR_COUNT];
			memset(shown, 0, sizeof shown);
			strbuf x = STRBUF_INIT, y = STRBUF_INIT;
			for (int i = 0; i < nshown && !rc; i++) {
				const attr *sa = &shown_v[i];
				shown[sa->id] = 1;
				/* a value spelled otherwise than XLA prints it keeps its spelling */
				const attr *wa = have[sa->id] ? instr_attr(in, (attr_id)sa->id) : NULL;
				if (!wa || wa->kind != sa->kind || sa->kind == AK_SHAPE || sa->kind == AK_SHAPES ||
				    sa->kind == AK_LITERAL)
					continue;
				sb_reset(&x);
				sb_reset(&y);
				attr_print_value(&x, wa);
				attr_print_value(&y, sa);
				if (x.oom || y.oom)
					rc = soom(S);
				else if (strcmp(sb_str(&x), sb_str(&y)) != 0)
					rc = kv_stash(S, fa, HLOI_KEY_ATTR, attr_name((attr_id)sa->id), sb_str(&x));
			}
			sb_free(&x);
			sb_free(&y);
			if (in->op != OP_CONSTANT && ip->literal)
				shown[ATTR_LITERAL] = 1;
			strbuf ex = STRBUF_INIT, im = STRBUF_INIT;
			/* the ids written or shown, in order (not all ATTR_COUNT of
			 * them for each of a million instructions) */
			uint8_t seen[ATTR_COUNT];
			int ids[2 * ATTR_COUNT], nids = 0;
			memset(seen, 0, sizeof seen);
			for (int i = 0; i < in->nattrs; i++)
				if (in->attrs[i].id < ATTR_COUNT && have[in->attrs[i].id] && !seen[in->attrs[i].id]++)
					ids[nids++] = in->attrs[i].id;
			if (have[ATTR_FRONTEND_ATTRIBUTES] && !seen[ATTR_FRONTEND_ATTRIBUTES]++)
				ids[nids++] = ATTR_FRONTEND_ATTRIBUTES;
			for (int i = 0; i < nshown; i++)
				if (shown_v[i].id < ATTR_COUNT && !seen[shown_v[i].id]++)
					ids[nids++] = shown_v[i].id;
			for (int i = 1; i < nids; i++)
				for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
					int t = ids[j];
					ids[j] = ids[j - 1];
					ids[j - 1] = t;
				}
			for (int k = 0; k < nids; k++) {
				int id = ids[k];
				if (fields_is_callee((attr_id)id) || id == ATTR_CONTROL_PREDECESSORS)
					continue;
				if (have[id] && !shown[id])
					list_add(&ex, attr_name((attr_id)id));
				if (!have[id] && shown[id] && !instr_attr(in, (attr_id)id))
					list_add(&im, attr_name((attr_id)id));
			}
			if (ex.len)
				rc = kv_buf(S, fa, HLOI_KEY_EXPLICIT, &ex);
			if (!rc && im.len)
				rc = kv_buf(S, fa, HLOI_KEY_IMPLICIT, &im);
			sb_free(&ex);
			sb_free(&im);
		}
	}
	sb_free(&err);
	sb_free(&b);
	return rc;
}

/* The callees' spelling, when it is not XLA's for the opcode. */
static int callee_spelling(saver *S, const instr *in, const callees *cl, const fields_ops *ops, kvs *fa)
{
	attr_id ids[2];
	size_t counts[2];
	int pred = ops && ops->nops > 0 && ops->shapes[0] && ops->shapes[0]->type == ET_PRED;
	int k = fields_canon_callees(in->op, cl->n, pred, ids, counts);
	int same = k == cl->nattrs;
	for (int i = 0; same && i < k; i++)
		same = ids[i] == cl->ids[i] && counts[i] == cl->counts[i];
	if (same)
		return 0;
	strbuf b = STRBUF_INIT;
	for (int i = 0; i < cl->nattrs; i++) {
		list_add(&b, attr_name(cl->ids[i]));
		if (cl->attrs[i]->kind == AK_COMPS)
			sb_printf(&b, ":%zu", cl->counts[i]);
	}
	int rc = kv_buf(S, fa, HLOI_KEY_CALLEES, &b);
	sb_free(&b);
	return rc;
}

/* Everything the writer gives an instruction but its ids, operands,
 * callees' ids and control predecessors. `full`: also the shape and a
 * constant's literal (the echo leaves them out). */
static int instr_common(saver *S, const instr *in, Xla__HloInstructionProto *ip, kvs *fa, const fields_ops *ops,
			int full)
{
	strbuf mask = STRBUF_INIT;
	shape tmp;
	int inferred;
	const shape *s = instr_shape(S, in, &tmp, &mask, &inferred);
	int rc = 0;
	if (!s) {
		rc = -1;
	} else {
		if (full && !(ip->shape = shape_out(S, s, 1, 0)))
			rc = -1;
		if (!rc && inferred)
			rc = kv_add(S, fa, HLOI_KEY_NO_SHAPE, "true");
		if (!rc && !mask_all_written(&mask))
			rc = kv_buf(S, fa, HLOI_KEY_NO_LAYOUT, &mask);
	}
	sb_free(&mask);
	if (rc)
		return -1;
	if (in->op == OP_PARAMETER)
		ip->parameter_number = in->parameter_number;
	if (in->op == OP_CONSTANT) {
		/* an elided array; a tuple with an elided element is refused
		 * below (the proto has no way to say which) */
		int elided = in->value ? in->value->elided && !shape_is_tuple(&in->value->shape)
				       : in->literal && in->literal->kind == LIT_ELIDED;
		if (elided) {
			if (kv_add(S, fa, HLOI_KEY_ELIDED, "true"))
				return -1;
		} else if (full) {
			hloi_literal *t = NULL;
			const hloi_literal *v = constant_value(S, in, &t);
			if (!v)
				return -1;
			if (v->elided) {
				literal_destroy(t);
				return sfail(S, in->literal ? &in->literal->at : &in->op_at,
					     "tuple constant '%s' has an elided element ({...}), which a proto cannot hold",
					     in->name);
			}
			ip->literal = literal_out(S, v, 0);
			literal_destroy(t);
			if (!ip->literal)
				return -1;
		}
	}
	if (instr_fields(S, in, ip, fa, ops))
		return -1;
	callees cl;
	if (callees_of(S, in, &cl) < 0 || callee_spelling(S, in, &cl, ops, fa))
		return -1;
	return 0;
}

/* --- strings: UTF-8, as protobuf (and the loader) require --------------------- */

/* Whether every string field below `msg` is UTF-8; on the first that is
 * not, its path below `msg` (`frontend_attributes.map[1].value`) is left
 * in `path` and 0 returned. HLO text may hold any byte in a quoted string
 * or an attribute kept as written; a proto string may not. */
static int strings_utf8(const ProtobufCMessage *msg, strbuf *path, int depth)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const char *base = (const char *)msg;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		size_t n = 1;
		void *const *v = (void *const *)(base + f->offset);
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(const size_t *)(base + f->quantifier_offset);
			v = *(void *const *const *)(base + f->offset);
		} else if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
			   *(const uint32_t *)(base + f->quantifier_offset) != f->id) {
			continue;
		}
		for (size_t k = 0; k < n && v; k++) {
			if (!v[k])
				continue;
			size_t mark = path->len;
			sb_printf(path, "%s%s", mark ? "." : "", f->name);
			if (f->label == PROTOBUF_C_LABEL_REPEATED)
				sb_printf(path, "[%zu]", k);
			int ok = f->type == PROTOBUF_C_TYPE_STRING
					 ? proto_utf8_valid((const unsigned char *)v[k], strlen(v[k]))
					 : depth >= PROTO_MAX_DEPTH || strings_utf8(v[k], path, depth + 1);
			if (!ok)
				return 0;
			path->len = mark;
		}
	}
	return 1;
}

/* Fails (located at `at`, or at the instruction or module being written)
 * when a string field below `msg` is not UTF-8. */
static int check_strings(saver *S, const loc *at, const ProtobufCMessage *msg)
{
	strbuf path = STRBUF_INIT;
	int ok = strings_utf8(msg, &path, 0);
	int rc = 0;
	if (path.oom)
		rc = soom(S);
	else if (!ok)
		rc = sfail(S, at, "field %s is not valid UTF-8, which a proto string must be", sb_str(&path));
	sb_free(&path);
	return rc;
}

/* XLA's HloInstruction::ToProto sets metadata, frontend_attributes and
 * statistics_viz on every instruction, empty or not. */
static int instr_always(saver *S, Xla__HloInstructionProto *ip)
{
	if (!ip->metadata && !(ip->metadata = snew(S, &xla__op_metadata__descriptor)))
		return -1;
	if (!ip->frontend_attributes && !(ip->frontend_attributes = snew(S, &xla__frontend_attributes__descriptor)))
		return -1;
	if (!ip->statistics_viz && !(ip->statistics_viz = snew(S, &xla__statistics_viz__descriptor)))
		return -1;
	return 0;
}

static Xla__HloInstructionProto *instr_out(saver *S, const computation *c, const nameidx *names, int p,
					   const int64_t *ids, const int64_t *comp_ids)
{
	const instr *in = c->instrs[p];
	S->inst = in->name;
	Xla__HloInstructionProto *ip = snew(S, &xla__hlo_instruction_proto__descriptor);
	if (!ip)
		return NULL;
	kvs fa = { NULL, 0, 0 };
	ip->name = (char *)in->name;
	ip->opcode = (char *)opcode_name(in->op);
	ip->id = ids[p];
	ip->n_operand_ids = (size_t)in->nops;
	ip->operand_ids = sarray(S, (size_t)in->nops, sizeof(int64_t));
	const shape **opshapes = sarray(S, (size_t)in->nops, sizeof *opshapes);
	if (in->nops && (!ip->operand_ids || !opshapes))
		return NULL;
	for (int k = 0; k < in->nops; k++) {
		int q = names->opos[names->base[p] + (size_t)k];
		ip->operand_ids[k] = ids[q];
		opshapes[k] = known_shape(c->instrs[q]);
	}
	fields_ops ops = { in->nops, opshapes };
	if (instr_common(S, in, ip, &fa, &ops, 1))
		return NULL;
	callees cl;
	if (callees_of(S, in, &cl) < 0)
		return NULL;
	ip->n_called_computation_ids = cl.n;
	if (cl.n && !(ip->called_computation_ids = sarray(S, cl.n, sizeof(int64_t))))
		return NULL;
	for (size_t j = 0; j < cl.n; j++)
		ip->called_computation_ids[j] = comp_ids[comp_index(S->m, cl.c[j])];
	int *cp;
	size_t ncp;
	if (control_preds(S, names, in, &cp, &ncp))
		return NULL;
	ip->n_control_predecessor_ids = ncp;
	if (ncp && !(ip->control_predecessor_ids = sarray(S, ncp, sizeof(int64_t))))
		return NULL;
	for (size_t k = 0; k < ncp; k++)
		ip->control_predecessor_ids[k] = ids[cp[k]];
	ip->frontend_attributes = kv_message(S, &fa);
	if (fa.n && !ip->frontend_attributes)
		return NULL;
	if (instr_always(S, ip))
		return NULL;
	if (rest_out(S, &ip->base, in->pb_rest, in->pb_rest_len))
		return NULL;
	if (check_strings(S, &in->name_at, &ip->base))
		return NULL;
	return ip;
}

Xla__HloInstructionProto *proto_echo_instr(arena *a, const module *m, const instr *in, const fields_ops *ops)
{
	saver S;
	memset(&S, 0, sizeof S);
	S.m = m;
	S.a = a;
	S.quiet = 1;
	Xla__HloInstructionProto *ip = snew(&S, &xla__hlo_instruction_proto__descriptor);
	kvs fa = { NULL, 0, 0 };
	if (!ip || instr_common(&S, in, ip, &fa, ops, 0))
		return NULL;
	ip->frontend_attributes = kv_message(&S, &fa);
	return S.st == HLOI_OK ? ip : NULL;
}


/* --- computations and the module ----------------------------------------------------- */

/* A shape with default layouts filled in, as a proto. */
static Xla__ShapeProto *filled_shape_out(saver *S, const shape *s, strbuf *mask)
{
	shape t;
	if (fill_layouts(S, s, &t, mask, 0))
		return NULL;
	return shape_out(S, &t, 1, 0);
}

/* The computation's program shape: its signature when the text wrote one
 * (`mask` gets which layouts were written), else its parameters and
 * root. */
static Xla__ProgramShapeProto *program_shape_out(saver *S, const computation *c, strbuf *mask)
{
	Xla__ProgramShapeProto *ps = snew(S, &xla__program_shape_proto__descriptor);
	if (!ps)
		return NULL;
	if (c->has_signature) {
		size_t n = (size_t)c->nsig_params;
		ps->n_parameters = ps->n_parameter_names = n;
		ps->parameters = sarray(S, n, sizeof *ps->parameters);
		ps->parameter_names = sarray(S, n, sizeof *ps->parameter_names);
		if (n && (!ps->parameters || !ps->parameter_names))
			return NULL;
		for (size_t i = 0; i < n; i++) {
			ps->parameter_names[i] = (char *)c->sig_names[i];
			if (!(ps->parameters[i] = filled_shape_out(S, &c->sig_shapes[i], mask)))
				return NULL;
		}
		ps->result = filled_shape_out(S, &c->sig_result, mask);
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
		const shape *s = known_shape(pi);
		S->inst = pi->name;
		if (!s) {
			sfail(S, &pi->op_at, "parameter '%s' has no shape", pi->name);
			return NULL;
		}
		ps->parameter_names[i] = (char *)pi->name;
		if (!(ps->parameters[i] = filled_shape_out(S, s, NULL)))
			return NULL;
	}
	const instr *root = c->root ? c->root : c->instrs[c->ninstrs - 1];
	const shape *rs = known_shape(root);
	if (!rs) {
		S->inst = root->name;
		sfail(S, &root->op_at, "instruction '%s' has no shape: the text leaves it out, and no check of the "
				      "module inferred one",
		      root->name);
		return NULL;
	}
	ps->result = filled_shape_out(S, rs, NULL);
	S->inst = NULL;
	return ps->result ? ps : NULL;
}

/* --- packed bytes in chunks ------------------------------------------------------------- */

struct chunk_piece {
	chunk_piece *next;
	size_t len, cap;
	unsigned char data[];
};

enum { CHUNKBUF_PIECE = 1 << 20 };

unsigned char *chunkbuf_extend(chunkbuf *b, size_t n)
{
	chunk_piece *t = b->tail;
	if (!t || t->cap - t->len < n) {
		size_t cap = n > CHUNKBUF_PIECE ? n : CHUNKBUF_PIECE;
		if (cap > SIZE_MAX - sizeof *t || !(t = hloi_malloc(sizeof *t + cap)))
			return NULL;
		t->next = NULL;
		t->len = 0;
		t->cap = cap;
		if (b->tail)
			b->tail->next = t;
		else
			b->head = t;
		b->tail = t;
	}
	unsigned char *p = t->data + t->len;
	t->len += n;
	b->len += n;
	return p;
}

int chunkbuf_emit(const chunkbuf *b, int (*put)(void *arg, const void *data, size_t n), void *arg)
{
	for (const chunk_piece *c = b->head; c; c = c->next)
		if (c->len && put(arg, c->data, c->len))
			return -1;
	return 0;
}

void chunkbuf_free(chunkbuf *b)
{
	while (b->head) {
		chunk_piece *next = b->head->next;
		hloi_free(b->head);
		b->head = next;
	}
	b->tail = NULL;
	b->len = 0;
}

static int proto_put_field(chunkbuf *b, uint32_t num, const ProtobufCMessage *msg)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint64_t key = (uint64_t)num << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
	unsigned char *p = chunkbuf_extend(b, wire_varint_len(key) + wire_varint_len(n) + n);
	if (!p)
		return -1;
	p = wire_put_varint(wire_put_varint(p, key), n);
	protobuf_c_message_pack(msg, p);
	return 0;
}

/* --- plain instructions, straight to wire bytes ------------------------------------------ */

/* Most instructions of a big dump are an elementwise op or a parameter
 * with a written shape and layout and at most `metadata={...}` in XLA's
 * own spelling. instr_out would make such an instruction: name (1),
 * opcode (2), shape (3), metadata (7, empty or not), parameter_number (9),
 * id (35), operand_ids (36), and the empty frontend_attributes (68) and
 * statistics_viz (82). These are written here without building messages:
 * the shape's bytes packed once per interned shape (by shape_out), the
 * metadata read by a strict reader of the spelling metadata_print_body
 * prints (anything else goes through instr_out, which keeps other
 * spellings). test_proto's `plain_writer` checks both give the same bytes
 * for every module of testdata/. */

typedef struct shape_bytes {
	const shape *key;
	int plain;               /* written, layout and all: no hloi.* key needed */
	size_t len;
	unsigned char *bytes;
} shape_bytes;

/* What a streamed computation keeps until it is written: its instructions
 * in written order, each either packed already (built as a message) or
 * plain, packed as the bytes go out. */
typedef struct comp_stream {
	const computation *c;
	size_t n;
	int *order;              /* written order: positions in c */
	int64_t *ids;            /* by position */
	int *opos;               /* operand positions (nameidx's) */
	size_t *base;
	size_t *packed_len;      /* by written index: its bytes in `packed`, 0 when plain */
	chunkbuf packed;
	size_t len;              /* all its instructions' bytes, as fields */
} comp_stream;

struct proto_stream {
	comp_stream *comps;      /* in the order written */
	size_t ncomps;
	shape_bytes *shapes;     /* packed ShapeProtos by interned shape */
	size_t nshapes, shapes_cap;
};

static size_t ptr_hash(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9u;
	return (size_t)(h ^ h >> 32);
}

/* The slot of `key` (empty when it is not there yet), or NULL out of
 * memory. */
static shape_bytes *shape_bytes_find(proto_stream *ps, const shape *key)
{
	if (ps->nshapes * 2 >= ps->shapes_cap) {
		size_t cap = ps->shapes_cap ? ps->shapes_cap * 2 : 64;
		shape_bytes *t = hloi_calloc(cap, sizeof *t);
		if (!t)
			return NULL;
		for (size_t i = 0; i < ps->shapes_cap; i++) {
			if (!ps->shapes[i].key)
				continue;
			size_t j = ptr_hash(ps->shapes[i].key) & (cap - 1);
			while (t[j].key)
				j = (j + 1) & (cap - 1);
			t[j] = ps->shapes[i];
		}
		hloi_free(ps->shapes);
		ps->shapes = t;
		ps->shapes_cap = cap;
	}
	size_t j = ptr_hash(key) & (ps->shapes_cap - 1);
	while (ps->shapes[j].key && ps->shapes[j].key != key)
		j = (j + 1) & (ps->shapes_cap - 1);
	return &ps->shapes[j];
}

/* The bytes of `key`, which the stream has. */
static const shape_bytes *shape_bytes_get(const proto_stream *ps, const shape *key)
{
	if (!ps->shapes_cap)
		return NULL;
	size_t j = ptr_hash(key) & (ps->shapes_cap - 1);
	while (ps->shapes[j].key && ps->shapes[j].key != key)
		j = (j + 1) & (ps->shapes_cap - 1);
	return ps->shapes[j].key ? &ps->shapes[j] : NULL;
}

static void proto_stream_free(proto_stream *ps)
{
	for (size_t i = 0; i < ps->shapes_cap; i++)
		hloi_free(ps->shapes[i].bytes);
	hloi_free(ps->shapes);
	for (size_t i = 0; i < ps->ncomps; i++) {
		comp_stream *cs = &ps->comps[i];
		hloi_free(cs->order);
		hloi_free(cs->ids);
		hloi_free(cs->opos);
		hloi_free(cs->base);
		hloi_free(cs->packed_len);
		chunkbuf_free(&cs->packed);
	}
	hloi_free(ps->comps);
}

/* The packed ShapeProto instr_common gives `in` (whose shape was written),
 * or NULL (S->st says why). Built in the scratch arena. */
static const shape_bytes *plain_shape(saver *S, const instr *in)
{
	shape_bytes *e = shape_bytes_find(S->stream, in->shape);
	if (!e) {
		soom(S);
		return NULL;
	}
	if (e->key)
		return e;
	shape tmp;
	strbuf mask = STRBUF_INIT;
	int inferred = 0;
	arena *keep = S->a;
	arena_reset(S->scratch);
	S->a = S->scratch;
	const shape *s = instr_shape(S, in, &tmp, &mask, &inferred);
	Xla__ShapeProto *sp = NULL;
	int plain = s && !mask.oom && !inferred && mask_all_written(&mask);
	if (plain)
		sp = shape_out(S, s, 1, 0);
	S->a = keep;
	if (mask.oom)
		soom(S);
	sb_free(&mask);
	if (!s || mask.oom || (plain && !sp))
		return NULL;
	if (plain) {
		e->len = xla__shape_proto__get_packed_size(sp);
		if (!(e->bytes = hloi_malloc(e->len ? e->len : 1))) {
			soom(S);
			return NULL;
		}
		xla__shape_proto__pack(sp, e->bytes);
	}
	e->key = in->shape;
	e->plain = plain;
	S->stream->nshapes++;
	return e;
}

enum { MD_FIELDS = 9 };

typedef struct md_field {
	uint32_t num;
	int is_int;
	const char *s;           /* a string's bytes (no escapes in them) */
	size_t n;
	int64_t v;
} md_field;

/* The fields of metadata text exactly as metadata_print_body spells them
 * (those fields in that order, single spaces, strings without escapes,
 * ints without sign or leading zero): how many, or -1 for any other
 * spelling. Numbers and print order of OpMetadata's fields. */
static int plain_metadata(const char *t, md_field *out)
{
	static const struct { const char *name; uint32_t num; int is_int; } order[] = {
		{ "op_type", 1, 0 },         { "op_name", 2, 0 },         { "source_file", 3, 0 },
		{ "source_line", 4, 1 },     { "source_end_line", 17, 1 }, { "source_column", 18, 1 },
		{ "source_end_column", 19, 1 }, { "deduplicated_name", 12, 0 }, { "scheduling_name", 16, 0 },
	};
	if (*t++ != '{')
		return -1;
	int n = 0;
	size_t next = 0;
	while (*t != '}') {
		if (n && *t++ != ' ')
			return -1;
		size_t k = next;
		size_t len = 0;
		for (; k < sizeof order / sizeof order[0]; k++) {
			len = strlen(order[k].name);
			if (strncmp(t, order[k].name, len) == 0 && t[len] == '=')
				break;
		}
		if (k == sizeof order / sizeof order[0])
			return -1;
		t += len + 1;
		md_field *f = &out[n++];
		f->num = order[k].num;
		f->is_int = order[k].is_int;
		next = k + 1;
		if (f->is_int) {
			if (*t < '1' || *t > '9')
				return -1;
			int64_t v = 0;
			while (*t >= '0' && *t <= '9') {
				v = v * 10 + (*t++ - '0');
				if (v > INT32_MAX)
					return -1;
			}
			f->v = v;
		} else {
			if (*t++ != '"')
				return -1;
			f->s = t;
			while ((unsigned char)*t >= 0x20 && (unsigned char)*t < 0x7f && *t != '"' && *t != '\\' &&
			       *t != '\'')
				t++;
			f->n = (size_t)(t - f->s);
			if (*t++ != '"' || f->n == 0)
				return -1;
		}
	}
	return t[1] == '\0' && n > 0 ? n : -1;
}

static size_t len_field_size(uint32_t num, size_t len)
{
	return wire_varint_len((uint64_t)num << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) + wire_varint_len(len) + len;
}

static unsigned char *put_len_field(unsigned char *p, uint32_t num, const void *data, size_t len)
{
	p = wire_put_varint(p, (uint64_t)num << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
	p = wire_put_varint(p, len);
	if (len)
		memcpy(p, data, len);
	return p + len;
}

/* What plain_write needs of an instruction, measured. */
typedef struct plain_parts {
	md_field md[MD_FIELDS];
	int nmd;
	size_t md_len, ops_len, body;
} plain_parts;

/* Whether `in` may be plain by what it is (its shape aside). */
static int plain_candidate(const instr *in)
{
	op_category cat = opcode_category(in->op);
	return proto_plain_writer && !in->pb_rest && !in->async_sugar && in->has_shape &&
	       (cat == OPC_BINARY || cat == OPC_UNARY || in->op == OP_PARAMETER) &&
	       (in->nattrs == 0 ||
		(in->nattrs == 1 && in->attrs[0].id == ATTR_METADATA && in->attrs[0].kind == AK_RAW));
}

/* Measures plain candidate `in` (sh its shape's bytes, its operands at
 * positions opos, ids by position, id its own): 1, or 0 when its metadata
 * is spelled otherwise than XLA prints it. */
static int plain_measure(const instr *in, const shape_bytes *sh, const int *opos, const int64_t *ids, int64_t id,
			 plain_parts *pp)
{
	pp->nmd = 0;
	if (in->nattrs == 1) {
		if ((pp->nmd = plain_metadata(in->attrs[0].u.s, pp->md)) < 0)
			return 0;
		for (int i = 1; i < pp->nmd; i++) /* into field-number order */
			for (int j = i; j > 0 && pp->md[j - 1].num > pp->md[j].num; j--) {
				md_field t = pp->md[j];
				pp->md[j] = pp->md[j - 1];
				pp->md[j - 1] = t;
			}
	}
	pp->md_len = 0;
	for (int k = 0; k < pp->nmd; k++) {
		const md_field *f = &pp->md[k];
		pp->md_len += f->is_int ? wire_varint_len((uint64_t)f->num << 3) + wire_varint_len((uint64_t)f->v)
					: len_field_size(f->num, f->n);
	}
	pp->ops_len = 0;
	for (int k = 0; k < in->nops; k++)
		pp->ops_len += wire_varint_len((uint64_t)ids[opos[k]]);
	size_t name_len = strlen(in->name), opname_len = strlen(opcode_name(in->op));
	pp->body = len_field_size(3, sh->len) + len_field_size(7, pp->md_len) + len_field_size(68, 0) +
		   len_field_size(82, 0);
	if (name_len)
		pp->body += len_field_size(1, name_len);
	if (opname_len)
		pp->body += len_field_size(2, opname_len);
	if (in->op == OP_PARAMETER && in->parameter_number)
		pp->body += wire_varint_len(9 << 3) + wire_varint_len((uint64_t)in->parameter_number);
	if (id)
		pp->body += wire_varint_len(35 << 3) + wire_varint_len((uint64_t)id);
	if (in->nops)
		pp->body += len_field_size(36, pp->ops_len);
	return 1;
}

/* Writes a measured plain instruction as field 2 of the computation
 * (len_field_size(2, pp->body) bytes); returns the byte after it. */
static unsigned char *plain_write(unsigned char *q, const instr *in, const shape_bytes *sh, const int *opos,
				  const int64_t *ids, int64_t id, const plain_parts *pp)
{
	const char *opname = opcode_name(in->op);
	size_t name_len = strlen(in->name), opname_len = strlen(opname);
	q = wire_put_varint(q, 2 << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
	q = wire_put_varint(q, pp->body);
	if (name_len)
		q = put_len_field(q, 1, in->name, name_len);
	if (opname_len)
		q = put_len_field(q, 2, opname, opname_len);
	q = put_len_field(q, 3, sh->bytes, sh->len);
	q = wire_put_varint(q, 7 << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
	q = wire_put_varint(q, pp->md_len);
	for (int k = 0; k < pp->nmd; k++) {
		const md_field *f = &pp->md[k];
		if (f->is_int)
			q = wire_put_varint(wire_put_varint(q, (uint64_t)f->num << 3), (uint64_t)f->v);
		else
			q = put_len_field(q, f->num, f->s, f->n);
	}
	if (in->op == OP_PARAMETER && in->parameter_number)
		q = wire_put_varint(wire_put_varint(q, 9 << 3), (uint64_t)in->parameter_number);
	if (id)
		q = wire_put_varint(wire_put_varint(q, 35 << 3), (uint64_t)id);
	if (in->nops) {
		q = wire_put_varint(q, 36 << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
		q = wire_put_varint(q, pp->ops_len);
		for (int k = 0; k < in->nops; k++)
			q = wire_put_varint(q, (uint64_t)ids[opos[k]]);
	}
	q = put_len_field(q, 68, NULL, 0);
	return put_len_field(q, 82, NULL, 0);
}

/* Instruction p of a streamed computation: 1 plain (its bytes counted in
 * cs->len, written as they go out), 0 not plain, -1 failed (S->st). */
static int plain_instr_out(saver *S, const nameidx *names, int p, const int64_t *ids, comp_stream *cs)
{
	const instr *in = names->c->instrs[p];
	if (!plain_candidate(in))
		return 0;
	S->inst = in->name;
	const shape_bytes *sh = plain_shape(S, in);
	if (!sh)
		return -1;
	plain_parts pp;
	if (!sh->plain || !plain_measure(in, sh, names->opos + names->base[p], ids, ids[p], &pp))
		return 0;
	cs->len += len_field_size(2, pp.body);
	proto_plain_written++;
	return 1;
}

static Xla__HloComputationProto *computation_out(saver *S, int ci, int64_t comp_id, int64_t *next_id,
						 const int64_t *comp_ids, int is_fusion, strbuf *sigmask)
{
	const computation *c = S->m->comps[ci];
	S->comp = c->name;
	S->inst = NULL;
	size_t n = (size_t)c->ninstrs;
	if (n == 0) {
		sfail(S, &c->name_at, "computation '%s' has no instructions", c->name);
		return NULL;
	}
	Xla__HloComputationProto *cp = snew(S, &xla__hlo_computation_proto__descriptor);
	nameidx ix = { c, NULL, 0, NULL, NULL };
	int *order = hloi_calloc(n, sizeof *order);
	int *state = hloi_calloc(n, sizeof *state);
	int64_t *ids = hloi_calloc(n, sizeof *ids);
	int64_t *written = sarray(S, n, sizeof *written);
	Xla__HloComputationProto *result = NULL;
	if (!cp || !order || !state || !ids || !written) {
		soom(S);
		goto out;
	}
	cp->name = (char *)c->name;
	cp->id = comp_id;
	cp->is_fusion_computation = is_fusion;
	if (c->execution_thread && strcmp(c->execution_thread, "main") != 0)
		cp->execution_thread = (char *)c->execution_thread;
	int dup = nameidx_build(&ix, c);
	size_t nopos = 0;
	if (dup >= 0 && (ix.base = hloi_calloc(n + 1, sizeof *ix.base))) {
		for (size_t i = 0; i < n; i++)
			ix.base[i + 1] = nopos += (size_t)c->instrs[i]->nops;
		ix.opos = hloi_calloc(nopos ? nopos : 1, sizeof *ix.opos);
	}
	if (dup < 0 || !ix.base || !ix.opos) {
		soom(S);
		goto out;
	}
	if (dup > 0) {
		const instr *d = c->instrs[dup - 1];
		sfail(S, &d->name_at, "instruction already exists: %s", d->name);
		goto out;
	}
	iorder o = { c, &ix, order, state, 0 };
	for (size_t i = 0; i < n; i++)
		if (order_instr(S, &o, (int)i))
			goto out;
	S->inst = NULL;
	if (instr_ids(S, c, order, ids, next_id))
		goto out;
	comp_stream *cs = S->stream ? &S->stream->comps[S->pos] : NULL;
	if (cs) {
		/* One instruction at a time: a plain one measured (packed as
		 * the bytes go out), any other built in the scratch arena,
		 * packed as field 2 of the computation, and dropped. */
		arena *keep = S->a;
		if (!(cs->packed_len = hloi_calloc(n, sizeof *cs->packed_len))) {
			soom(S);
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			arena_reset(S->scratch);
			S->a = S->scratch;
			int plain = plain_instr_out(S, &ix, order[i], ids, cs);
			Xla__HloInstructionProto *ip = plain ? NULL : instr_out(S, c, &ix, order[i], ids, comp_ids);
			S->a = keep;
			if (plain < 0 || (!plain && !ip))
				goto out;
			if (!plain) {
				size_t before = cs->packed.len;
				if (proto_put_field(&cs->packed, 2, &ip->base)) {
					soom(S);
					goto out;
				}
				cs->packed_len[i] = cs->packed.len - before;
				cs->len += cs->packed_len[i];
			}
			written[i] = ids[order[i]];
		}
		arena_reset(S->scratch);
	} else {
		cp->n_instructions = n;
		cp->instructions = sarray(S, n, sizeof *cp->instructions);
		if (!cp->instructions)
			goto out;
		for (size_t i = 0; i < n; i++) {
			if (!(cp->instructions[i] = instr_out(S, c, &ix, order[i], ids, comp_ids)))
				goto out;
			written[i] = ids[order[i]];
		}
	}
	S->inst = NULL;
	const instr *root = c->root ? c->root : c->instrs[n - 1];
	for (size_t i = 0; i < n; i++)
		if (c->instrs[i] == root)
			cp->root_id = ids[i];
	if (!(cp->program_shape = program_shape_out(S, c, sigmask)))
		goto out;
	if (rest_out(S, &cp->base, c->pb_rest, c->pb_rest_len))
		goto out;
	S->written[ci] = written;
	result = cp;
	if (cs) {
		/* kept until the instructions are written */
		cs->c = c;
		cs->n = n;
		cs->order = order;
		cs->ids = ids;
		cs->opos = ix.opos;
		cs->base = ix.base;
		order = NULL;
		ids = NULL;
		ix.opos = NULL;
		ix.base = NULL;
	}
out:
	hloi_free(ix.slot);
	hloi_free(ix.base);
	hloi_free(ix.opos);
	hloi_free(order);
	hloi_free(state);
	hloi_free(ids);
	return result;
}

static Xla__HloInputOutputAliasProto *alias_out(saver *S)
{
	const module *m = S->m;
	Xla__HloInputOutputAliasProto *ap = snew(S, &xla__hlo_input_output_alias_proto__descriptor);
	if (!ap)
		return NULL;
	ap->n_entries = (size_t)m->nalias;
	ap->entries = sarray(S, (size_t)m->nalias, sizeof *ap->entries);
	if (m->nalias && !ap->entries)
		return NULL;
	for (int i = 0; i < m->nalias; i++) {
		const alias_entry *a = &m->alias[i];
		Xla__HloInputOutputAliasProto__AliasEntryProto *e =
			snew(S, &xla__hlo_input_output_alias_proto__alias_entry_proto__descriptor);
		if (!e)
			return NULL;
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

/* Header attributes in XLA's printing order (HloModule::Print); hloi's own
 * broadcast_mode last. */
static const char *const header_order[] = {
	"is_scheduled", "input_output_alias", "buffer_donor", "alias_passthrough_params",
	"entry_computation_layout", "allow_spmd_sharding_propagation_to_parameters",
	"allow_spmd_sharding_propagation_to_output", "replica_count", "num_partitions", "frontend_attributes",
	"origin_recovery_table", "debug_attributes", "broadcast_mode",
};

int proto_header_rank(const char *name)
{
	for (size_t i = 0; i < sizeof header_order / sizeof header_order[0]; i++)
		if (strcmp(header_order[i], name) == 0)
			return (int)i;
	return (int)(sizeof header_order / sizeof header_order[0]);
}

/* A header value read by a text-cursor parser; errors located in it. */
static int header_value(saver *S, const raw_attr *r, int (*fn)(tcur *, void *, arena *), void *dst)
{
	tcur c;
	tc_init(&c, r->value, strlen(r->value));
	if (fn(&c, dst, S->a) == 0 && !tc_at_end(&c))
		tc_fail(&c, "the end of the value");
	if (c.oom)
		return soom(S);
	if (c.bad) {
		/* the value is the end of `name=value` */
		loc at = r->at;
		size_t vlen = strlen(r->value);
		if (at.end >= vlen && at.end - vlen + c.bad_at < at.end) {
			at.start = at.end - vlen + c.bad_at;
			at.end = at.start + 1;
		}
		return sfail(S, &at, "malformed %s: expects %s", r->name, c.expect);
	}
	return 0;
}

static int p_donor(tcur *c, void *out, arena *a) { return donor_parse(c, out, a); }
static int p_frames(tcur *c, void *out, arena *a) { return stack_frames_parse(c, out, a); }

typedef struct kv_lists {
	char **k, **v;
	size_t n;
} kv_lists;
static int p_frontend(tcur *c, void *out, arena *a)
{
	kv_lists *l = out;
	return frontend_parse(c, &l->k, &l->v, &l->n, a);
}

/* entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}} as XLA's
 * host_program_shape (parameters named p0, p1, ...). */
static Xla__ProgramShapeProto *entry_layout_in(saver *S, const raw_attr *r)
{
	const char *v = r->value;
	size_t n = strlen(v), s = 0, e = n;
	while (s < e && (v[s] == ' ' || v[s] == '\n' || v[s] == '\t'))
		s++;
	while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\n' || v[e - 1] == '\t'))
		e--;
	size_t open = s + 1, close = 0, arrow = 0;
	if (e - s >= 2 && v[s] == '{' && v[e - 1] == '}') {
		size_t p = open;
		while (p < e && (v[p] == ' ' || v[p] == '\n'))
			p++;
		open = p;
		int depth = 0;
		for (; p < e - 1; p++) {
			if (v[p] == '(')
				depth++;
			else if (v[p] == ')' && --depth == 0) {
				close = p;
				break;
			}
		}
		for (p = close + 1; close && p + 1 < e - 1; p++) {
			if (v[p] == '-' && v[p + 1] == '>') {
				arrow = p;
				break;
			}
			if (v[p] != ' ' && v[p] != '\n')
				break;
		}
	}
	if (!close || !arrow || v[open] != '(') {
		sfail(S, &r->at, "malformed entry_computation_layout: expects {(parameter shapes)->result shape}");
		return NULL;
	}
	shape params, result;
	arena *a = S->a;
	if (text_parse_shape(&params, a, S->ctx, "entry_computation_layout", v + open, close + 1 - open) != HLOI_OK ||
	    text_parse_shape(&result, a, S->ctx, "entry_computation_layout", v + arrow + 2, e - 1 - (arrow + 2)) !=
		    HLOI_OK) {
		if (S->st == HLOI_OK)
			S->st = HLOI_EINVAL;
		return NULL;
	}
	Xla__ProgramShapeProto *ps = snew(S, &xla__program_shape_proto__descriptor);
	if (!ps)
		return NULL;
	size_t np = (size_t)params.ntuple;
	ps->n_parameters = ps->n_parameter_names = np;
	ps->parameters = sarray(S, np, sizeof *ps->parameters);
	ps->parameter_names = sarray(S, np, sizeof *ps->parameter_names);
	if (np && (!ps->parameters || !ps->parameter_names))
		return NULL;
	for (size_t i = 0; i < np; i++) {
		char name[32];
		snprintf(name, sizeof name, "p%zu", i);
		if (!(ps->parameter_names[i] = sstrdup(S, name)) ||
		    !(ps->parameters[i] = filled_shape_out(S, &params.tuple[i], NULL)))
			return NULL;
	}
	ps->result = filled_shape_out(S, &result, NULL);
	return ps->result ? ps : NULL;
}

/* XLA's host_program_shape when the text has no entry_computation_layout:
 * the entry's, its parameters named p0, p1, ... */
static Xla__ProgramShapeProto *entry_layout_default(saver *S, const Xla__ProgramShapeProto *entry)
{
	Xla__ProgramShapeProto *ps = snew(S, &xla__program_shape_proto__descriptor);
	if (!ps)
		return NULL;
	*ps = *entry;
	ps->parameter_names = sarray(S, entry->n_parameters, sizeof *ps->parameter_names);
	if (entry->n_parameters && !ps->parameter_names)
		return NULL;
	for (size_t i = 0; i < entry->n_parameters; i++) {
		char name[32];
		snprintf(name, sizeof name, "p%zu", i);
		if (!(ps->parameter_names[i] = sstrdup(S, name)))
			return NULL;
	}
	return ps;
}

/* The schedule is_scheduled=true stands for: every computation but the
 * fused ones, in the order written (XLA's ScheduleFromInstructionOrder). */
static Xla__HloScheduleProto *schedule_out(saver *S, const int64_t *comp_ids, const unsigned char *fusion)
{
	const module *m = S->m;
	Xla__HloScheduleProto *sp = snew(S, &xla__hlo_schedule_proto__descriptor);
	if (!sp)
		return NULL;
	size_t n = 0;
	for (int i = 0; i < m->ncomps; i++)
		n += !fusion[i];
	sp->sequences = sarray(S, n, sizeof *sp->sequences);
	if (n && !sp->sequences)
		return NULL;
	for (int i = 0; i < m->ncomps; i++) {
		if (fusion[i])
			continue;
		Xla__HloScheduleProto__SequencesEntry *e = snew(S, &xla__hlo_schedule_proto__sequences_entry__descriptor);
		Xla__HloScheduleProto__InstructionSequence *q =
			snew(S, &xla__hlo_schedule_proto__instruction_sequence__descriptor);
		if (!e || !q)
			return NULL;
		e->key = comp_ids[i];
		q->n_instruction_ids = (size_t)m->comps[i]->ninstrs;
		q->instruction_ids = S->written[i];
		e->value = q;
		/* by computation id, as XLA's deterministic serialisation orders a map */
		size_t j = sp->n_sequences;
		while (j > 0 && sp->sequences[j - 1]->key > e->key) {
			sp->sequences[j] = sp->sequences[j - 1];
			j--;
		}
		sp->sequences[j] = e;
		sp->n_sequences++;
	}
	return sp;
}

/* The header's attributes into the module's fields, and what has none into
 * hloi's keys. */
static int header_out(saver *S, Xla__HloModuleProto *mp, kvs *fa, kvs *user, int *scheduled)
{
	const module *m = S->m;
	strbuf ex = STRBUF_INIT, order = STRBUF_INIT;
	int rc = 0, sorted = 1, last = -1, have_layout = 0;
	*scheduled = 0;
	for (int i = 0; i < m->nheader_attrs && !rc; i++) {
		const raw_attr *r = &m->header_attrs[i];
		list_add(&order, r->name);
		int rank = proto_header_rank(r->name);
		if (rank < last)
			sorted = 0;
		last = rank;
		if (strcmp(r->name, "is_scheduled") == 0) {
			if (strcmp(r->value, "true") == 0)
				*scheduled = 1;
			else if (strcmp(r->value, "false") == 0)
				list_add(&ex, r->name);
			else
				rc = sfail(S, &r->at, "malformed is_scheduled: expects true or false");
		} else if (strcmp(r->name, "input_output_alias") == 0) {
			if (!m->nalias)
				list_add(&ex, r->name);
		} else if (strcmp(r->name, "buffer_donor") == 0) {
			Xla__HloBufferDonorProto *d = snew(S, &xla__hlo_buffer_donor_proto__descriptor);
			rc = !d ? -1 : header_value(S, r, p_donor, d);
			if (!rc) {
				mp->buffer_donor = d;
				if (!d->n_entries)
					list_add(&ex, r->name);
			}
		} else if (strcmp(r->name, "entry_computation_layout") == 0) {
			if (!(mp->host_program_shape = entry_layout_in(S, r)))
				rc = -1;
			have_layout = 1;
		} else if (strcmp(r->name, "frontend_attributes") == 0) {
			kv_lists l = { NULL, NULL, 0 };
			rc = header_value(S, r, p_frontend, &l);
			for (size_t k = 0; k < l.n && !rc; k++) {
				if (proto_is_hloi_key(l.k[k]))
					rc = sfail(S, &r->at, "frontend attribute '%s': keys starting with '%s' are hloi's own",
						   l.k[k], HLOI_KEY_PREFIX);
				else
					rc = kv_add(S, user, l.k[k], l.v[k]);
			}
			if (!rc && !l.n)
				list_add(&ex, r->name);
		} else if (strcmp(r->name, "broadcast_mode") != 0) {
			/* module config (replica_count, num_partitions, ...): no field in HloModuleProto */
			rc = kv_stash(S, fa, HLOI_KEY_HEADER_ATTR, r->name, r->value);
		}
	}
	if (!rc && !sorted)
		rc = kv_buf(S, fa, HLOI_KEY_HEADER_ORDER, &order);
	if (!rc && ex.len)
		rc = kv_buf(S, fa, HLOI_KEY_EXPLICIT, &ex);
	if (!rc && m->has_header && !have_layout)
		rc = kv_add(S, fa, HLOI_KEY_IMPLICIT, "entry_computation_layout");
	if (!rc && (ex.oom || order.oom))
		rc = soom(S);
	sb_free(&ex);
	sb_free(&order);
	return rc;
}

static int module_attrs_out(saver *S, kvs *fa, char *const *sigmasks)
{
	const module *m = S->m;
	if (!m->has_header && kv_add(S, fa, HLOI_KEY_NO_HEADER, "true"))
		return -1;
	if (m->broadcast_mode != HLOI_BROADCAST_DEFAULT &&
	    kv_add(S, fa, HLOI_KEY_BROADCAST_MODE, m->broadcast_mode == HLOI_BROADCAST_NUMPY ? "numpy" : "xla"))
		return -1;
	const computation *entry = m->entry ? m->entry : m->comps[m->ncomps - 1];
	if (!entry->is_entry && kv_add(S, fa, HLOI_KEY_IMPLICIT_ENTRY, "true"))
		return -1;
	strbuf roots = STRBUF_INIT, sigs = STRBUF_INIT;
	for (int i = 0; i < m->ncomps; i++) {
		const computation *c = m->comps[i];
		const instr *root = c->root ? c->root : (c->ninstrs ? c->instrs[c->ninstrs - 1] : NULL);
		if (root && !root->is_root)
			list_add(&roots, c->name);
		if (c->has_signature) {
			list_add(&sigs, c->name);
			if (sigmasks[i] && strchr(sigmasks[i], '0'))
				sb_printf(&sigs, ":%s", sigmasks[i]);
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

hloi_status proto_build_module(Xla__HloModuleProto **out, arena *a, const module *m,
			       hloi_context *ctx, proto_stream *stream)
{
	*out = NULL;
	saver S;
	memset(&S, 0, sizeof S);
	S.ctx = ctx;
	S.m = m;
	S.a = a;
	arena scratch;
	arena_init(&scratch);
	S.stream = stream;
	S.scratch = &scratch;
	if (m->ncomps == 0) {
		sfail(&S, NULL, "the module has no computations");
		return S.st;
	}
	size_t nc = (size_t)m->ncomps;
	int *order = hloi_calloc(nc, sizeof *order);
	int *state = hloi_calloc(nc, sizeof *state);
	int64_t *comp_ids = hloi_calloc(nc, sizeof *comp_ids);
	unsigned char *fusion = hloi_calloc(nc, 1);
	char **sigmasks = hloi_calloc(nc, sizeof *sigmasks);
	S.written = sarray(&S, nc, sizeof *S.written);
	Xla__HloModuleProto *mp = NULL;
	int n = 0;
	if (!order || !state || !comp_ids || !fusion || !sigmasks || !S.written) {
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
			callees cl;
			if (in->op != OP_FUSION)
				continue;
			S.comp = c->name;
			S.inst = in->name;
			if (callees_of(&S, in, &cl) < 0)
				goto out;
			if (cl.n)
				fusion[comp_index(m, cl.c[0])] = 1;
		}
	}
	S.comp = S.inst = NULL;
	mp = snew(&S, &xla__hlo_module_proto__descriptor);
	if (!mp)
		goto out;
	mp->name = (char *)(m->name ? m->name : "module");
	/* the module's own id, as read */
	if (m->pb_rest && proto_rest_id(m->pb_rest, m->pb_rest_len, &xla__hlo_module_proto__descriptor, &mp->id))
		mp->id = 0;
	mp->n_computations = nc;
	mp->computations = sarray(&S, nc, sizeof *mp->computations);
	if (!mp->computations)
		goto out;
	int64_t next_id = 1;
	const computation *entry = m->entry ? m->entry : m->comps[m->ncomps - 1];
	int entry_pos = 0;
	for (size_t i = 0; i < nc; i++) {
		const computation *c = m->comps[order[i]];
		strbuf mask = STRBUF_INIT;
		S.pos = i;
		mp->computations[i] = computation_out(&S, order[i], comp_ids[order[i]], &next_id, comp_ids,
						      fusion[order[i]], &mask);
		if (mask.oom)
			soom(&S);
		else if (mask.len)
			sigmasks[order[i]] = sb_take(&mask);
		sb_free(&mask);
		if (!mp->computations[i])
			goto out;
		if (c == entry) {
			mp->entry_computation_name = (char *)c->name;
			mp->entry_computation_id = comp_ids[order[i]];
			entry_pos = (int)i;
		}
	}
	S.comp = S.inst = NULL;
	kvs fa = { NULL, 0, 0 }, user = { NULL, 0, 0 };
	int scheduled = 0;
	if (header_out(&S, mp, &fa, &user, &scheduled))
		goto out;
	if (!mp->host_program_shape &&
	    !(mp->host_program_shape = entry_layout_default(&S, mp->computations[entry_pos]->program_shape)))
		goto out;
	/* XLA's HloModule::ToProto sets these, empty or not */
	if (!(mp->input_output_alias = alias_out(&S)))
		goto out;
	if (!mp->buffer_donor && !(mp->buffer_donor = snew(&S, &xla__hlo_buffer_donor_proto__descriptor)))
		goto out;
	if (m->stack_frames) {
		raw_attr r = { "stack frame tables", m->stack_frames, { 0, 0 } };
		Xla__StackFrameIndexProto *sf = snew(&S, &xla__stack_frame_index_proto__descriptor);
		if (!sf || header_value(&S, &r, p_frames, sf))
			goto out;
		mp->stack_frame_index = sf;
	}
	int rest_schedule = rest_holds(&S, &xla__hlo_module_proto__descriptor, m->pb_rest, m->pb_rest_len, 7);
	if (rest_schedule < 0)
		goto out;
	if (scheduled && !(rest_schedule && S.keep_ids) && !(mp->schedule = schedule_out(&S, comp_ids, fusion)))
		goto out;
	if (module_attrs_out(&S, &fa, sigmasks))
		goto out;
	/* HLO text may define a callee after its caller; a proto may not, so
	 * the text's order travels along. */
	int reordered = 0;
	for (int i = 0; i < m->ncomps; i++)
		reordered |= order[i] != i;
	if (reordered) {
		strbuf b = STRBUF_INIT;
		for (int i = 0; i < m->ncomps; i++)
			list_add(&b, m->comps[i]->name);
		int rc = kv_buf(&S, &fa, HLOI_KEY_COMP_ORDER, &b);
		sb_free(&b);
		if (rc)
			goto out;
	}
	for (size_t i = 0; i < fa.n; i++)
		if (kv_add(&S, &user, fa.v[i]->key, fa.v[i]->value))
			goto out;
	if (user.n ? !(mp->frontend_attributes = kv_message(&S, &user))
		   : !(mp->frontend_attributes = snew(&S, &xla__frontend_attributes__descriptor)))
		goto out;
	if (rest_out(&S, &mp->base, m->pb_rest, m->pb_rest_len))
		goto out;
	/* (the instructions were checked as they were made) */
	S.comp = S.inst = NULL;
	if (check_strings(&S, NULL, &mp->base))
		goto out;
	*out = mp;
out:
	hloi_free(order);
	hloi_free(state);
	hloi_free(comp_ids);
	hloi_free(fusion);
	if (sigmasks)
		for (size_t i = 0; i < nc; i++)
			hloi_free(sigmasks[i]);
	hloi_free(sigmasks);
	arena_release(&scratch);
	if (!*out && S.st == HLOI_OK)
		S.st = HLOI_ENOMEM;
	return *out ? HLOI_OK : S.st;
}
/* Where the fields numbered above `num` begin in packed bytes (protobuf-c
 * writes known fields in number order, unknown ones last). */
static size_t fields_end(const unsigned char *p, size_t len, uint32_t num)
{
	size_t pos = 0;
	wire_field f;
	while (pos < len) {
		size_t start = pos;
		if (wire_next(p, len, &pos, &f) || f.num > num)
			return start;
	}
	return len;
}

/* The module written as protobuf-c would pack the whole tree, but with
 * each computation's instructions packed one at a time while it was built
 * (packed[i]): the module and its computations are packed without
 * instructions, and put() gets the pieces in order with the instructions
 * spliced in as field 2. Nothing holds the whole file at once. 0, -1 out
 * of memory, -2 when put() failed. */
enum { EMIT_BUFFER = 1 << 18 };

/* A streamed computation's instructions, in written order: the packed
 * ones as they are, the plain ones packed into a buffer that is handed to
 * put() when full. 0, -1 out of memory, -2 when put() failed. */
static int emit_instructions(const proto_stream *ps, const comp_stream *cs, proto_put_fn put, void *arg)
{
	size_t cap = EMIT_BUFFER, used = 0;
	unsigned char *buf = hloi_malloc(cap);
	if (!buf)
		return -1;
	const chunk_piece *piece = cs->packed.head;
	size_t off = 0;
	int rc = 0;
	for (size_t k = 0; k < cs->n && !rc; k++) {
		const instr *in = cs->c->instrs[cs->order[k]];
		size_t plen = cs->packed_len[k];
		if (plen) {
			while (piece && off == piece->len) {
				piece = piece->next;
				off = 0;
			}
			if (!piece || piece->len - off < plen) {
				rc = -1; /* (cannot happen: measured as packed) */
				break;
			}
			if ((used && put(arg, buf, used)) || put(arg, piece->data + off, plen))
				rc = -2;
			used = 0;
			off += plen;
			continue;
		}
		int p = cs->order[k];
		const int *opos = cs->opos + cs->base[p];
		const shape_bytes *sh = shape_bytes_get(ps, in->shape);
		plain_parts pp;
		if (!sh || !plain_measure(in, sh, opos, cs->ids, cs->ids[p], &pp)) {
			rc = -1; /* (cannot happen: measured as plain) */
			break;
		}
		size_t need = len_field_size(2, pp.body);
		if (cap - used < need) {
			if (used && put(arg, buf, used)) {
				rc = -2;
				break;
			}
			used = 0;
			if (need > cap) {
				unsigned char *bigger = hloi_realloc(buf, need);
				if (!bigger) {
					rc = -1;
					break;
				}
				buf = bigger;
				cap = need;
			}
		}
		used = (size_t)(plain_write(buf + used, in, sh, opos, cs->ids, cs->ids[p], &pp) - buf);
	}
	if (!rc && used && put(arg, buf, used))
		rc = -2;
	hloi_free(buf);
	return rc;
}

static int emit_spliced(Xla__HloModuleProto *mp, const proto_stream *ps, proto_put_fn put, void *arg)
{
	size_t nc = mp->n_computations;
	mp->n_computations = 0;
	size_t mlen = xla__hlo_module_proto__get_packed_size(mp);
	unsigned char *mb = hloi_malloc(mlen ? mlen : 1);
	unsigned char *cb = NULL;
	size_t cb_cap = 0;
	int rc = -1;
	if (!mb)
		goto done;
	xla__hlo_module_proto__pack(mp, mb);
	size_t msplit = fields_end(mb, mlen, 3);
	if (put(arg, mb, msplit))
		goto failed_put;
	for (size_t i = 0; i < nc; i++) {
		size_t clen = xla__hlo_computation_proto__get_packed_size(mp->computations[i]);
		if (clen > cb_cap) {
			hloi_free(cb);
			cb_cap = clen;
			if (!(cb = hloi_malloc(cb_cap)))
				goto done;
		}
		xla__hlo_computation_proto__pack(mp->computations[i], cb);
		size_t csplit = fields_end(cb, clen, 2);
		unsigned char head[2 * 10], *q = head;
		q = wire_put_varint(q, 3 << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
		q = wire_put_varint(q, clen + ps->comps[i].len);
		if (put(arg, head, (size_t)(q - head)) || put(arg, cb, csplit))
			goto failed_put;
		rc = emit_instructions(ps, &ps->comps[i], put, arg);
		if (rc == -1)
			goto done;
		if (rc == -2 || put(arg, cb + csplit, clen - csplit))
			goto failed_put;
		rc = -1;
	}
	if (put(arg, mb + msplit, mlen - msplit))
		goto failed_put;
	rc = 0;
	goto done;
failed_put:
	rc = -2;
done:
	mp->n_computations = nc;
	hloi_free(mb);
	hloi_free(cb);
	return rc;
}

hloi_status proto_save_binary_to(proto_put_fn put, void *arg, const module *m, hloi_context *ctx)
{
	arena a;
	arena_init(&a);
	size_t nc = m->ncomps > 0 ? (size_t)m->ncomps : 1;
	proto_stream ps;
	memset(&ps, 0, sizeof ps);
	ps.comps = hloi_calloc(nc, sizeof *ps.comps);
	ps.ncomps = ps.comps ? nc : 0;
	proto_stream *packed = ps.comps ? &ps : NULL;
	Xla__HloModuleProto *mp;
	hloi_status st = packed ? proto_build_module(&mp, &a, m, ctx, packed) : HLOI_ENOMEM;
	int said = packed != NULL; /* the builder reports its own failures */
	if (st == HLOI_OK) {
		/* (a packed buffer that ran out of memory failed the build) */
		int rc = emit_spliced(mp, packed, put, arg);
		if (rc == -1) {
			st = HLOI_ENOMEM;
			said = 0;
		} else if (rc == -2) {
			st = HLOI_EIO;
		}
	}
	if (st == HLOI_ENOMEM && !said)
		diag_error_where(ctx, NULL, "out of memory writing the proto");
	proto_stream_free(&ps);
	arena_release(&a);
	return st;
}

static int put_strbuf(void *arg, const void *data, size_t n)
{
	strbuf *b = arg;
	sb_putn(b, (const char *)data, n);
	return b->oom ? -1 : 0;
}

hloi_status proto_save_binary(unsigned char **out, size_t *len, const module *m, hloi_context *ctx)
{
	*out = NULL;
	*len = 0;
	strbuf b = STRBUF_INIT;
	hloi_status st = proto_save_binary_to(put_strbuf, &b, m, ctx);
	if (st == HLOI_EIO) {
		diag_error_where(ctx, NULL, "out of memory writing the proto");
		st = HLOI_ENOMEM;
	}
	if (st == HLOI_OK) {
		*len = b.len;
		*out = b.s ? (unsigned char *)sb_take(&b) : (unsigned char *)hloi_strdup("");
		if (!*out)
			st = HLOI_ENOMEM;
	}
	sb_free(&b);
	return st;
}

hloi_status proto_save_text(char **out, size_t *len, const module *m, hloi_context *ctx)
{
	*out = NULL;
	*len = 0;
	arena a;
	arena_init(&a);
	Xla__HloModuleProto *mp;
	hloi_status st = proto_build_module(&mp, &a, m, ctx, NULL);
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
