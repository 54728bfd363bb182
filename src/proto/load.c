/* Proto -> IR: HloModuleProto (bare, or inside HloProto / HloSnapshot) into
 * the same module the text front end builds, validating what protobuf-c
 * does not: ids (unique, operands defined before use, root and entry
 * found, callees defined before their callers), enum values, dimensions,
 * literal payload sizes. Errors name the computation and instruction. */
#include "proto/proto.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "proto/proto_internal.h"
#include "text/parse.h"
#include "util/alloc.h"
#include "util/diag.h"

typedef struct loader {
	hloi_context *ctx;
	module *m;
	const char *file;
	const char *comp;       /* the computation being read, or NULL */
	const char *inst;       /* the instruction being read, or NULL */
	int64_t inst_id;
	hloi_status st;
	proto_loss loss;        /* fields kept nowhere (proto_rest_take) */
	const char *loss_comp, *loss_inst;
	const proto_skeleton *sk; /* where each instruction's bytes are */
	const unsigned char *data;
	size_t len;
	attr *av;                 /* an instruction's attributes as they are read */
	int avcap;
	const shape **opshapes;   /* an instruction's operand shapes */
	size_t opcap;
	arena scratch;            /* an instruction's echo, emptied for each */
	arena unpack;             /* an instruction's unpacked proto, emptied for each */
	int unpack_failed;
} loader;

/* protobuf-c allocating an instruction's proto in L->unpack: nothing to
 * free one object at a time (an instruction unpacks into ~10 allocations,
 * a million instructions into ten million mallocs and frees). */
static void *unpack_alloc(void *data, size_t n)
{
	loader *L = data;
	void *p = arena_alloc(&L->unpack, n);
	if (!p)
		L->unpack_failed = 1;
	return p;
}

static void unpack_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

/* Names are printed as HLO text, where a control character cannot stand; a
 * module name with one could also read as an HloProto (wire_classify).
 * The offset of the first control byte in s, or -1. */
static long control_byte(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return (long)(p - (const unsigned char *)s);
	return -1;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int lfail(loader *L, const char *fmt, ...)
{
	strbuf where = STRBUF_INIT, msg = STRBUF_INIT;
	sb_puts(&where, L->file);
	if (L->comp) {
		sb_printf(&where, ": computation '%s'", L->comp);
		if (L->inst)
			sb_printf(&where, ", instruction '%s' (id %" PRId64 ")", L->inst, L->inst_id);
	}
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&msg, fmt, ap);
	va_end(ap);
	diag_error_where(L->ctx, sb_str(&where), "%s", sb_str(&msg));
	sb_free(&where);
	sb_free(&msg);
	if (L->st == HLOI_OK)
		L->st = HLOI_EPARSE;
	return -1;
}

static int loom(loader *L)
{
	if (L->st != HLOI_ENOMEM) {
		char why[160];
		alloc_failure_text(why, sizeof why);
		diag_error_where(L->ctx, L->file, "out of memory loading the module%s%s", *why ? ": " : "", why);
	}
	L->st = HLOI_ENOMEM;
	return -1;
}

static char *lstrdup(loader *L, const char *s)
{
	char *r = arena_strdup(&L->m->arena, s);
	if (!r)
		loom(L);
	return r;
}

/* Keeps what the IR does not model of a message (the rest, rest.c). */
static int rest_in(loader *L, const ProtobufCMessage *msg, opcode op, const uint64_t *keep,
		   const uint64_t *present, const uint8_t **out, size_t *len)
{
	size_t before = L->loss.n;
	if (proto_rest_take(&L->m->arena, msg, op, keep, present, out, len, &L->loss))
		return loom(L);
	if (!before && L->loss.n) {
		L->loss_comp = L->comp;
		L->loss_inst = L->inst;
	}
	return 0;
}

/* --- shapes ------------------------------------------------------------------ */

static int layout_in(loader *L, const Xla__LayoutProto *lp, shape *s)
{
	layout *l = &s->layout;
	if (lp->n_minor_to_major > HLOI_MAX_RANK)
		return lfail(L, "layout has %zu minor_to_major entries; hloi's maximum rank is %d",
			     lp->n_minor_to_major, HLOI_MAX_RANK);
	l->n_minor_to_major = (int)lp->n_minor_to_major;
	for (size_t i = 0; i < lp->n_minor_to_major; i++)
		l->minor_to_major[i] = lp->minor_to_major[i];
	if (lp->n_padded_dimensions > HLOI_MAX_RANK)
		return lfail(L, "layout has %zu padded_dimensions; hloi's maximum rank is %d",
			     lp->n_padded_dimensions, HLOI_MAX_RANK);
	l->n_padded = (int)lp->n_padded_dimensions;
	for (size_t i = 0; i < lp->n_padded_dimensions; i++)
		l->padded_dimensions[i] = lp->padded_dimensions[i];
	int pv = (int)lp->padding_value;
	if (pv < 0 || pv > PAD_UNKNOWN)
		return lfail(L, "invalid padding_value %d", pv);
	l->padding_value = pv == PAD_INVALID ? PAD_ZERO : (pad_value)pv;
	if (lp->n_tiles > HLOI_MAX_TILES)
		return lfail(L, "layout has %zu tiles; hloi keeps at most %d", lp->n_tiles, HLOI_MAX_TILES);
	l->ntiles = (int)lp->n_tiles;
	for (size_t t = 0; t < lp->n_tiles; t++) {
		const Xla__TileProto *tp = lp->tiles[t];
		if (tp->n_dimensions > HLOI_MAX_RANK)
			return lfail(L, "tile %zu has %zu dimensions; hloi's maximum rank is %d", t,
				     tp->n_dimensions, HLOI_MAX_RANK);
		l->tiles[t].n = (int)tp->n_dimensions;
		for (size_t i = 0; i < tp->n_dimensions; i++) {
			int64_t v = tp->dimensions[i];
			if (v == INT64_MIN)
				v = -1; /* XLA's combine dimension `*` */
			else if (v < 1)
				return lfail(L, "tile %zu has dimension %" PRId64 "; tile sizes are positive", t, v);
			l->tiles[t].dims[i] = v;
		}
	}
	for (size_t i = 0; i < lp->n_dim_level_types; i++) {
		int d = (int)lp->dim_level_types[i];
		if (d < 0 || d > 3)
			return lfail(L, "invalid dim_level_type %d", d);
		if (d != 0)
			return lfail(L, "sparse layouts (dim_level_types) are not supported");
	}
	l->element_size_in_bits = lp->element_size_in_bits;
	l->memory_space = lp->memory_space;
	l->dynamic_shape_metadata_prefix_bytes = lp->dynamic_shape_metadata_prefix_bytes;
	/* 1 is the default XLA writes out: the same as not given */
	l->tail_padding_alignment = lp->tail_padding_alignment_in_elements == 1 ? 0 : lp->tail_padding_alignment_in_elements;
	return 0;
}

static const char *prim_name(int et)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(&xla__primitive_type__descriptor, et);
	return v ? v->name : NULL;
}

static int shape_in(loader *L, const Xla__ShapeProto *sp, shape *out, int depth)
{
	memset(out, 0, sizeof *out);
	if (depth > PROTO_MAX_DEPTH)
		return lfail(L, "shapes nested deeper than %d levels", PROTO_MAX_DEPTH);
	int et = (int)sp->element_type;
	if (et == XLA__PRIMITIVE_TYPE__TUPLE) {
		if (sp->n_dimensions)
			return lfail(L, "a tuple shape has dimensions");
		if (sp->n_tuple_shapes > INT32_MAX)
			return lfail(L, "tuple shape too large");
		out->type = ET_TUPLE;
		out->ntuple = (int)sp->n_tuple_shapes;
		if (sp->n_tuple_shapes) {
			out->tuple = arena_array(&L->m->arena, sp->n_tuple_shapes, sizeof *out->tuple);
			if (!out->tuple)
				return loom(L);
		}
		for (size_t i = 0; i < sp->n_tuple_shapes; i++)
			if (shape_in(L, sp->tuple_shapes[i], &out->tuple[i], depth + 1))
				return -1;
		return 0;
	}
	if (et == XLA__PRIMITIVE_TYPE__BUFFER) {
		/* XLA's buffer shape: one array shape in tuple_shapes */
		if (sp->n_dimensions || sp->n_tuple_shapes != 1)
			return lfail(L, "a buffer shape needs exactly one shape in tuple_shapes");
		if (shape_in(L, sp->tuple_shapes[0], out, depth + 1))
			return -1;
		if (!shape_is_array(out) || out->is_buffer)
			return lfail(L, "a buffer shape must hold an array shape");
		out->is_buffer = 1;
		return 0;
	}
	etype t = etype_from_number(et);
	if (et == 0)
		return lfail(L, "shape has no element_type");
	if (t == ET_INVALID) {
		const char *n = prim_name(et);
		if (n)
			return lfail(L, "element type %s is not supported", n);
		return lfail(L, "invalid element_type %d", et);
	}
	if (sp->n_tuple_shapes)
		return lfail(L, "an array shape has tuple_shapes");
	if (sp->n_dimensions > HLOI_MAX_RANK)
		return lfail(L, "shape has %zu dimensions; hloi's maximum rank is %d", sp->n_dimensions,
			     HLOI_MAX_RANK);
	if ((t == ET_TOKEN || t == ET_OPAQUE) && sp->n_dimensions)
		return lfail(L, "a %s shape has dimensions", etype_name(t));
	if (sp->n_is_dynamic_dimension && sp->n_is_dynamic_dimension != sp->n_dimensions)
		return lfail(L, "is_dynamic_dimension has %zu entries for %zu dimensions",
			     sp->n_is_dynamic_dimension, sp->n_dimensions);
	out->type = t;
	out->rank = (int)sp->n_dimensions;
	for (size_t d = 0; d < sp->n_dimensions; d++) {
		int dyn = sp->n_is_dynamic_dimension && sp->is_dynamic_dimension[d];
		int64_t v = sp->dimensions[d];
		if (dyn && v == INT64_MIN) {
			out->dim_kind[d] = DIM_UNBOUNDED;
			out->dims[d] = -1;
		} else if (v < 0) {
			return lfail(L, "negative dimension %" PRId64 " at index %zu", v, d);
		} else {
			out->dim_kind[d] = dyn ? DIM_BOUNDED : DIM_STATIC;
			out->dims[d] = v;
		}
	}
	if (sp->layout) {
		out->has_layout = 1;
		if (layout_in(L, sp->layout, out))
			return -1;
	}
	return 0;
}

/* A shape read and validated (dims and layout), with `what` naming it. */
static int valid_shape_in(loader *L, const Xla__ShapeProto *sp, shape *out, const char *what)
{
	if (!sp)
		return lfail(L, "%s is missing", what);
	if (shape_in(L, sp, out, 0))
		return -1;
	char msg[512];
	if (shape_validate(out, msg, sizeof msg))
		return lfail(L, "invalid %s: %s", what, msg);
	return 0;
}

static const char *shape_text(strbuf *b, const shape *s)
{
	sb_reset(b);
	shape_print(b, s, 0);
	return sb_str(b);
}

/* --- literals ---------------------------------------------------------------- */

/* The `bytes` field that holds values of type t, or NULL. */
static ProtobufCBinaryData *bytes_field(Xla__LiteralProto *lp, etype t, const char **name)
{
#define B(E, f)                 \
	case ET_##E:            \
		*name = #f;     \
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
	*name = NULL;
	return NULL;
}

/* Walks the buffer positions of an array literal that hold elements (not
 * padding) in the order of a LiteralProto's values: minor_to_major order
 * over the logical dimensions, which is buffer order unless tiles reorder
 * the buffer (XLA's literals are never tiled). */
typedef struct phys_iter {
	const shape *s;
	int64_t lin, nbuf, left;
	int padded, tiled;
	int64_t idx[HLOI_MAX_RANK];
} phys_iter;

static void phys_begin(phys_iter *it, const shape *s)
{
	memset(it, 0, sizeof *it);
	it->s = s;
	it->padded = s->layout.n_padded > 0 || s->layout.tail_padding_alignment > 1;
	it->tiled = !index_is_strided(s);
	if (shape_buffer_elements(s, &it->nbuf))
		it->nbuf = 0;
	if (shape_element_count(s, &it->left))
		it->left = 0;
}

static int64_t phys_next(phys_iter *it)
{
	if (it->tiled) {
		if (it->left <= 0)
			return -1;
		int64_t lin = index_to_linear(it->s, it->idx);
		index_next_minor_to_major(it->s, it->idx);
		it->left--;
		return lin;
	}
	int64_t idx[HLOI_MAX_RANK];
	while (it->lin < it->nbuf) {
		int64_t lin = it->lin++;
		if (!it->padded || !index_from_linear(it->s, lin, idx))
			return lin;
	}
	return -1;
}

/* Where an array literal's values are and how many there must be. */
typedef struct payload {
	const char *field;
	size_t have, want;
	const unsigned char *bytes;   /* `bytes` fields */
	int is_bytes;
} payload;

static int payload_of(loader *L, const shape *s, Xla__LiteralProto *lp, payload *pl)
{
	etype t = s->type;
	int64_t count64;
	strbuf sb = STRBUF_INIT;
	int rc = 0;
	memset(pl, 0, sizeof *pl);
	if (shape_element_count(s, &count64)) {
		rc = lfail(L, "literal shape %s is too large", shape_text(&sb, s));
		goto out;
	}
	if (lp->n_sparse_indices) {
		rc = lfail(L, "sparse literals are not supported");
		goto out;
	}
	size_t count = (size_t)count64;
	pl->want = count;
	switch (t) {
	case ET_PRED: pl->field = "preds"; pl->have = lp->n_preds; break;
	case ET_S32: pl->field = "s32s"; pl->have = lp->n_s32s; break;
	case ET_S64: pl->field = "s64s"; pl->have = lp->n_s64s; break;
	case ET_U32: pl->field = "u32s"; pl->have = lp->n_u32s; break;
	case ET_U64: pl->field = "u64s"; pl->have = lp->n_u64s; break;
	case ET_F32: pl->field = "f32s"; pl->have = lp->n_f32s; break;
	case ET_F64: pl->field = "f64s"; pl->have = lp->n_f64s; break;
	case ET_C64: pl->field = "c64s"; pl->have = lp->n_c64s; pl->want = 2 * count; break;
	case ET_C128: pl->field = "c128s"; pl->have = lp->n_c128s; pl->want = 2 * count; break;
	default: {
		ProtobufCBinaryData *bd = bytes_field(lp, t, &pl->field);
		if (!bd) {
			rc = lfail(L, "literals of type %s are not supported", etype_name(t));
			goto out;
		}
		pl->have = bd->len;
		pl->want = count * (size_t)etype_byte_width(t);
		pl->bytes = bd->data;
		pl->is_bytes = 1;
		break;
	}
	}
	if (pl->have != pl->want) {
		rc = lfail(L, "literal of shape %s needs %zu %s in %s, has %zu", shape_text(&sb, s), pl->want,
			   pl->bytes || pl->want == count * (size_t)etype_byte_width(t) ? "bytes" : "values",
			   pl->field, pl->have);
		goto out;
	}
out:
	sb_free(&sb);
	return rc;
}

static void array_fill(hloi_literal *lit, Xla__LiteralProto *lp, const payload *pl)
{
	const shape *s = &lit->shape;
	etype t = s->type;
	size_t w = (size_t)etype_byte_width(t);
	unsigned char *data = lit->data;
	const unsigned char *src = pl->bytes;
	int64_t count64 = 0;
	shape_element_count(s, &count64);
	phys_iter it;
	phys_begin(&it, s);
	for (size_t k = 0; k < (size_t)count64; k++) {
		int64_t lin = phys_next(&it);
		if (lin < 0)
			break;
		unsigned char *dst = data + (size_t)lin * w;
		switch (t) {
		case ET_PRED: dst[0] = lp->preds[k] ? 1 : 0; break;
		case ET_S32: memcpy(dst, &lp->s32s[k], 4); break;
		case ET_S64: memcpy(dst, &lp->s64s[k], 8); break;
		case ET_U32: memcpy(dst, &lp->u32s[k], 4); break;
		case ET_U64: memcpy(dst, &lp->u64s[k], 8); break;
		case ET_F32: memcpy(dst, &lp->f32s[k], 4); break;
		case ET_F64: memcpy(dst, &lp->f64s[k], 8); break;
		case ET_C64: memcpy(dst, &lp->c64s[2 * k], 8); break;
		case ET_C128: memcpy(dst, &lp->c128s[2 * k], 16); break;
		default:
			if (w == 2) {
				/* little-endian on the wire, native in the buffer */
				uint16_t v = (uint16_t)(src[2 * k] | (src[2 * k + 1] << 8));
				memcpy(dst, &v, 2);
			} else {
				/* sub-byte integers and f4e2m1fn: one element per byte
				 * in the low bits, the bits above ignored (XLA) */
				dst[0] = etype_from_low_bits(t, src[k]);
			}
			break;
		}
	}
}

/* Checks a literal's structure and value counts before anything is
 * allocated for it: a shape alone may describe far more than the file
 * holds. */
static int literal_check(loader *L, const shape *s, Xla__LiteralProto *lp, int depth)
{
	if (depth > PROTO_MAX_DEPTH)
		return lfail(L, "literals nested deeper than %d levels", PROTO_MAX_DEPTH);
	if (s->type == ET_OPAQUE)
		return lfail(L, "opaque literals are not supported");
	if (s->type == ET_TOKEN)
		return 0;
	if (!shape_is_tuple(s)) {
		payload pl;
		return payload_of(L, s, lp, &pl);
	}
	strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
	int rc = 0;
	if (lp->n_tuple_literals != (size_t)s->ntuple) {
		rc = lfail(L, "tuple literal of shape %s has %zu elements in tuple_literals, expected %d",
			   shape_text(&sb, s), lp->n_tuple_literals, s->ntuple);
		goto out;
	}
	for (int i = 0; i < s->ntuple; i++) {
		Xla__LiteralProto *el = lp->tuple_literals[i];
		if (el->shape) {
			shape es;
			if (shape_in(L, el->shape, &es, depth + 1)) {
				rc = -1;
				goto out;
			}
			if (!shape_compatible(&es, &s->tuple[i])) {
				rc = lfail(L, "tuple literal element %d has shape %s, expected %s", i,
					   shape_text(&sb, &es), shape_text(&sb2, &s->tuple[i]));
				goto out;
			}
		}
		if (literal_check(L, &s->tuple[i], el, depth + 1)) {
			rc = -1;
			goto out;
		}
	}
out:
	sb_free(&sb);
	sb_free(&sb2);
	return rc;
}

static void literal_fill(hloi_literal *lit, Xla__LiteralProto *lp)
{
	if (shape_is_tuple(&lit->shape)) {
		for (size_t i = 0; i < lit->nelems; i++)
			literal_fill(lit->elems[i], lp->tuple_literals[i]);
		return;
	}
	if (!shape_is_array(&lit->shape))
		return;
	/* the counts were checked by literal_check */
	payload pl;
	const char *f;
	memset(&pl, 0, sizeof pl);
	ProtobufCBinaryData *bd = bytes_field(lp, lit->shape.type, &f);
	if (bd)
		pl.bytes = bd->data;
	array_fill(lit, lp, &pl);
}

/* Reads a literal: its shape (a missing layout is the default one), checked
 * counts, then the values. */
static int literal_in(loader *L, Xla__LiteralProto *lp, hloi_literal **out, const char *what)
{
	*out = NULL;
	shape s;
	if (valid_shape_in(L, lp->shape, &s, what))
		return -1;
	if (shape_is_array(&s) && !s.has_layout)
		layout_set_default(&s);
	if (literal_check(L, &s, lp, 0))
		return -1;
	/* The values are in the file; only padding can make the buffer much
	 * larger, and a layout must not make a small file allocate gigabytes. */
	int64_t count, bytes;
	if (shape_is_array(&s) && !shape_element_count(&s, &count) && !shape_byte_size(&s, &bytes) &&
	    bytes > ((int64_t)1 << 20) && bytes / 64 > count * etype_byte_width(s.type)) {
		strbuf sb = STRBUF_INIT;
		lfail(L, "%s %s pads %" PRId64 " values to a %" PRId64 "-byte buffer; hloi refuses padding that large",
		      what, shape_text(&sb, &s), count, bytes);
		sb_free(&sb);
		return -1;
	}
	hloi_literal *lit = NULL;
	hloi_status st = literal_create(&lit, &s);
	if (st == HLOI_ENOMEM)
		return loom(L);
	if (st != HLOI_OK) {
		strbuf sb = STRBUF_INIT;
		lfail(L, "%s %s is too large", what, shape_text(&sb, &s));
		sb_free(&sb);
		return -1;
	}
	literal_fill(lit, lp);
	*out = lit;
	return 0;
}

/* --- instructions ---------------------------------------------------------------- */

typedef struct idpos {
	int64_t id;
	int pos;
} idpos;

static int idpos_cmp(const void *a, const void *b)
{
	const idpos *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int id_lookup(const idpos *v, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].id == id)
			return v[mid].pos;
		if (v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int proto_names_distinct(const namepos *v, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	int *slot = hloi_calloc(cap, sizeof *slot);
	if (!slot)
		return -1;
	int distinct = 1;
	for (size_t i = 0; i < n && distinct; i++) {
		uint64_t h = 1469598103934665603ull;
		for (const unsigned char *p = (const unsigned char *)v[i].name; *p; p++)
			h = (h ^ *p) * 1099511628211ull;
		size_t k = (size_t)(h ^ (h >> 29)) & (cap - 1);
		while (slot[k] && distinct) {
			distinct = strcmp(v[slot[k] - 1].name, v[i].name) != 0;
			k = (k + 1) & (cap - 1);
		}
		slot[k] = (int)i + 1;
	}
	hloi_free(slot);
	return distinct;
}

static int namepos_cmp(const void *a, const void *b)
{
	const namepos *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static const char *fa_get(const Xla__FrontendAttributes *fa, const char *key)
{
	if (!fa)
		return NULL;
	for (size_t i = 0; i < fa->n_map; i++)
		if (strcmp(fa->map[i]->key, key) == 0)
			return fa->map[i]->value;
	return NULL;
}

/* Splits a comma-separated list; calls fn on each item. */
static int each_item(const char *list, int (*fn)(void *ctx, const char *s, size_t n), void *ctx)
{
	const char *p = list;
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (fn(ctx, p, len))
			return -1;
		p = e ? e + 1 : p + len;
	}
	return 0;
}

static int flag_item(void *ctx, const char *s, size_t n)
{
	attr_id id = attr_from_name(s, n);
	if (id == ATTR_COUNT)
		return -1;
	((uint8_t *)ctx)[id] = 1;
	return 0;
}

/* hloi.explicit / hloi.implicit: attribute names into flags. */
static int name_flags(loader *L, const Xla__FrontendAttributes *fa, const char *key, uint8_t *flags)
{
	memset(flags, 0, ATTR_COUNT);
	const char *v = fa_get(fa, key);
	if (v && each_item(v, flag_item, flags))
		return lfail(L, "invalid %s '%s'", key, v);
	return 0;
}

/* hloi.no_layout: the array leaves whose layout the text left out. */
static int unmask_layouts(shape *s, const char **mask)
{
	if (shape_is_tuple(s)) {
		for (int i = 0; i < s->ntuple; i++)
			if (unmask_layouts(&s->tuple[i], mask))
				return -1;
		return 0;
	}
	if (!shape_is_array(s))
		return 0;
	char ch = **mask;
	if (ch != '0' && ch != '1')
		return -1;
	(*mask)++;
	if (ch == '0')
		s->has_layout = 0;
	return 0;
}

static int hook_shape_in(void *ctx, const Xla__ShapeProto *sp, shape *out)
{
	return valid_shape_in(ctx, sp, out, "attribute shape");
}

/* A growable list of attributes: the loader's buffer, reused by every
 * instruction; the module keeps a copy of exactly the attributes read. */
typedef struct avec {
	attr *v;
	int n, cap;
} avec;

static int av_reserve(loader *L, avec *v, int need)
{
	if (need <= L->avcap) {
		v->v = L->av;
		v->cap = L->avcap;
		return 0;
	}
	int ncap = L->avcap ? L->avcap : ATTR_COUNT + 16;
	while (ncap < need)
		ncap *= 2;
	attr *nv = hloi_realloc(L->av, (size_t)ncap * sizeof *nv);
	if (!nv)
		return loom(L);
	L->av = v->v = nv;
	L->avcap = v->cap = ncap;
	return 0;
}

static attr *av_add(loader *L, avec *v)
{
	if (v->n == v->cap && (v->n == INT_MAX / 2 || av_reserve(L, v, v->n + 1)))
		return NULL;
	attr *a = &v->v[v->n++];
	memset(a, 0, sizeof *a);
	return a;
}

typedef struct spell {
	loader *L;
	attr_id ids[ATTR_COUNT];
	size_t counts[ATTR_COUNT];
	int n;
} spell;

static int spell_item(void *ctx, const char *s, size_t n)
{
	spell *sp = ctx;
	const char *colon = memchr(s, ':', n);
	size_t nl = colon ? (size_t)(colon - s) : n;
	attr_id id = attr_from_name(s, nl);
	if (id == ATTR_COUNT || !fields_is_callee(id) || sp->n == ATTR_COUNT)
		return -1;
	size_t count = 1;
	if (attr_table_kind(id) == AK_COMPS) {
		if (!colon)
			return -1;
		count = 0;
		for (const char *p = colon + 1; p < s + n; p++) {
			if (*p < '0' || *p > '9' || count > 1000000)
				return -1;
			count = count * 10 + (size_t)(*p - '0');
		}
	} else if (colon) {
		return -1;
	}
	sp->ids[sp->n] = id;
	sp->counts[sp->n] = count;
	sp->n++;
	return 0;
}

/* The called computations as the attributes that name them: XLA's
 * spelling for the opcode, or the one hloi.callees keeps. */
static int callees_in(loader *L, instr *in, const Xla__HloInstructionProto *ip, computation **comps,
		      const idpos *cids, size_t ncids, int comp_pos, const shape *op0, avec *out)
{
	size_t n = ip->n_called_computation_ids;
	if (n == 0)
		return 0;
	const char **names = arena_array(&L->m->arena, n, sizeof *names);
	if (!names)
		return loom(L);
	for (size_t k = 0; k < n; k++) {
		int64_t id = ip->called_computation_ids[k];
		int p = id_lookup(cids, ncids, id);
		if (p < 0)
			return lfail(L, "called computation id %" PRId64 " is not defined", id);
		if (p == comp_pos)
			return lfail(L, "calls its own computation (id %" PRId64 ")", id);
		if (p > comp_pos)
			return lfail(L, "calls computation '%s' (id %" PRId64 "), which comes after its caller",
				     comps[p]->name, id);
		names[k] = comps[p]->name;
	}
	spell sp;
	memset(&sp, 0, sizeof sp);
	sp.L = L;
	const char *key = fa_get(ip->frontend_attributes, HLOI_KEY_CALLEES);
	if (key) {
		size_t total = 0;
		if (each_item(key, spell_item, &sp))
			return lfail(L, "invalid %s '%s'", HLOI_KEY_CALLEES, key);
		for (int i = 0; i < sp.n; i++)
			total += sp.counts[i];
		if (total != n)
			return lfail(L, "%s '%s' names %zu computations; the instruction calls %zu", HLOI_KEY_CALLEES,
				     key, total, n);
	} else {
		sp.n = fields_canon_callees(in->op, n, op0 && op0->type == ET_PRED, sp.ids, sp.counts);
	}
	size_t k = 0;
	for (int i = 0; i < sp.n; i++) {
		attr *a = av_add(L, out);
		if (!a)
			return -1;
		a->id = (uint16_t)sp.ids[i];
		if (attr_table_kind(sp.ids[i]) == AK_COMP) {
			a->kind = AK_COMP;
			a->u.s = names[k++];
		} else {
			a->kind = AK_COMPS;
			a->u.words.n = (int)sp.counts[i];
			a->u.words.v = names + k;
			k += sp.counts[i];
		}
	}
	return 0;
}

static int own_value(loader *L, hloi_literal *lit)
{
	module *m = L->m;
	if (m->nvalues % 16 == 0) {
		hloi_literal **nv = hloi_realloc(m->values, ((size_t)m->nvalues + 16) * sizeof *nv);
		if (!nv) {
			literal_destroy(lit);
			return loom(L);
		}
		m->values = nv;
	}
	m->values[m->nvalues++] = lit;
	return 0;
}

static int constant_in(loader *L, instr *in, const Xla__HloInstructionProto *ip)
{
	if (fa_get(ip->frontend_attributes, HLOI_KEY_ELIDED)) {
		shape s = *in->shape;
		if (shape_is_array(&s) && !s.has_layout)
			layout_set_default(&s);
		hloi_literal *lit = NULL;
		hloi_status st = shape_is_array(&s) ? literal_create_elided(&lit, &s) : HLOI_EINVAL;
		if (st == HLOI_ENOMEM)
			return loom(L);
		if (st != HLOI_OK)
			return lfail(L, "elided constant of this shape cannot be represented");
		in->value = lit;
	} else {
		if (!ip->literal)
			return lfail(L, "constant has no literal");
		if (literal_in(L, ip->literal, &in->value, "literal shape"))
			return -1;
		hloi_literal *lit = in->value;
		if (!shape_compatible(&lit->shape, in->shape)) {
			strbuf a = STRBUF_INIT, b = STRBUF_INIT;
			lfail(L, "literal of shape %s does not match the instruction's shape %s",
			      shape_text(&a, &lit->shape), shape_text(&b, in->shape));
			sb_free(&a);
			sb_free(&b);
			literal_destroy(lit);
			in->value = NULL;
			return -1;
		}
		if (shape_is_array(in->shape) && in->shape->has_layout &&
		    !layout_equal(&lit->shape.layout, &in->shape->layout)) {
			hloi_literal *r = NULL;
			hloi_status st = literal_relayout(&r, lit, in->shape);
			literal_destroy(lit);
			in->value = NULL;
			if (st == HLOI_ENOMEM)
				return loom(L);
			if (st != HLOI_OK)
				return lfail(L, "cannot convert the literal to the instruction's layout");
			in->value = r;
		}
	}
	if (own_value(L, in->value)) {
		in->value = NULL;
		return -1;
	}
	return 0;
}

/* --- the echo: which fields the writer gives back exactly ----------------------- */

static int set_bit(uint64_t *keep, uint32_t num)
{
	if (num >= 128)
		return 0;
	keep[num / 64] |= 1ull << (num % 64);
	return 1;
}

/* Packed bytes of a message (scratch buffer grown as needed). */
typedef struct packbuf {
	uint8_t *p;
	size_t cap;
} packbuf;

static int packed_equal(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	size_t na = protobuf_c_message_get_packed_size(a), nb = protobuf_c_message_get_packed_size(b);
	if (na != nb)
		return 0;
	if (!na)
		return 1;
	uint8_t small[2][512], *pa = small[0], *pb = small[1];
	if (na > sizeof small[0]) {
		pa = hloi_malloc(na);
		pb = hloi_malloc(na);
		if (!pa || !pb) {
			hloi_free(pa);
			hloi_free(pb);
			return 0;  /* treated as different: kept whole */
		}
	}
	protobuf_c_message_pack(a, pa);
	protobuf_c_message_pack(b, pb);
	int eq = memcmp(pa, pb, na) == 0;
	if (pa != small[0]) {
		hloi_free(pa);
		hloi_free(pb);
	}
	return eq;
}

static int field_equal(const ProtobufCMessage *a, const ProtobufCMessage *b, const ProtobufCFieldDescriptor *f)
{
	int sa = proto_field_set(a, f), sb = proto_field_set(b, f);
	if (sa != sb)
		return 0;
	if (!sa)
		return 1;
	const char *pa = (const char *)a + f->offset, *pb = (const char *)b + f->offset;
	if (f->label == PROTOBUF_C_LABEL_REPEATED) {
		size_t na, nb;
		memcpy(&na, (const char *)a + f->quantifier_offset, sizeof na);
		memcpy(&nb, (const char *)b + f->quantifier_offset, sizeof nb);
		if (na != nb)
			return 0;
		const char *va = *(const char *const *)pa, *vb = *(const char *const *)pb;
		for (size_t i = 0; i < na; i++) {
			switch (f->type) {
			case PROTOBUF_C_TYPE_STRING:
				if (strcmp(((char *const *)(const void *)va)[i], ((char *const *)(const void *)vb)[i]))
					return 0;
				break;
			case PROTOBUF_C_TYPE_MESSAGE:
				if (!packed_equal(((ProtobufCMessage *const *)(const void *)va)[i],
						  ((ProtobufCMessage *const *)(const void *)vb)[i]))
					return 0;
				break;
			case PROTOBUF_C_TYPE_BYTES: {
				const ProtobufCBinaryData *x = &((const ProtobufCBinaryData *)(const void *)va)[i];
				const ProtobufCBinaryData *y = &((const ProtobufCBinaryData *)(const void *)vb)[i];
				if (x->len != y->len || (x->len && memcmp(x->data, y->data, x->len)))
					return 0;
				break;
			}
			default: {
				size_t w = proto_elem_size(f->type);
				if (memcmp(va + i * w, vb + i * w, w))
					return 0;
			}
			}
		}
		return 1;
	}
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING:
		return strcmp(*(const char *const *)pa, *(const char *const *)pb) == 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		return packed_equal(*(ProtobufCMessage *const *)pa, *(ProtobufCMessage *const *)pb);
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *x = (const void *)pa, *y = (const void *)pb;
		return x->len == y->len && (!x->len || memcmp(x->data, y->data, x->len) == 0);
	}
	default:
		return memcmp(pa, pb, proto_elem_size(f->type)) == 0;
	}
}

/* OpMetadata's fields HLO text shows. */
static int metadata_equal(const Xla__OpMetadata *a, const Xla__OpMetadata *b)
{
	static const Xla__OpMetadata none = XLA__OP_METADATA__INIT;
	if (!a)
		a = &none;
	if (!b)
		b = &none;
#define S_EQ(f) (strcmp(a->f ? a->f : "", b->f ? b->f : "") == 0)
	return S_EQ(op_type) && S_EQ(op_name) && S_EQ(source_file) && S_EQ(deduplicated_name) &&
	       S_EQ(scheduling_name) && a->source_line == b->source_line && a->source_end_line == b->source_end_line &&
	       a->source_column == b->source_column && a->source_end_column == b->source_end_column &&
	       a->stack_frame_id == b->stack_frame_id && a->n_profile_type == b->n_profile_type &&
	       (!a->n_profile_type || memcmp(a->profile_type, b->profile_type, a->n_profile_type * sizeof *a->profile_type) == 0);
#undef S_EQ
}

/* Frontend attributes as sets of entries. */
static int fa_equal(const Xla__FrontendAttributes *a, const Xla__FrontendAttributes *b)
{
	size_t na = a ? a->n_map : 0, nb = b ? b->n_map : 0;
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++) {
		const char *v = fa_get(b, a->map[i]->key);
		if (!v || strcmp(v, a->map[i]->value) != 0)
			return 0;
	}
	return 1;
}

/* StatisticsViz by content (XLA writes an empty one everywhere). */
static int stats_equal(const Xla__StatisticsViz *a, const Xla__StatisticsViz *b)
{
	static const Xla__StatisticsViz none = XLA__STATISTICS_VIZ__INIT;
	return packed_equal(&(a ? a : &none)->base, &(b ? b : &none)->base);
}

/* The instruction's fields the writer would not give back as they were
 * read (set in keep): the rest keeps those whole. */
static int echo_instr(loader *L, const instr *in, const Xla__HloInstructionProto *ip, const fields_ops *ops,
		      const uint64_t *present, uint64_t *keep)
{
	arena_reset(&L->scratch);
	const Xla__HloInstructionProto *e = proto_echo_instr(&L->scratch, L->m, in, ops);
	const ProtobufCMessageDescriptor *d = &xla__hlo_instruction_proto__descriptor;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		/* a field the bytes do not hold is unset: nothing to keep (most
		 * of the ~90 fields of every instruction) */
		if (f->id < 128 && !(present[f->id / 64] >> (f->id % 64) & 1))
			continue;
		/* name, opcode, shape, id, operand ids: the instruction's own */
		switch (f->id) {
		case 1: case 2: case 3: case 35: case 36:
			continue;
		default:
			break;
		}
		if (f->id == attr_proto_field(ATTR_CONTROL_PREDECESSORS) || f->id == attr_proto_field(ATTR_CALLS) ||
		    (f->id == attr_proto_field(ATTR_LITERAL) && in->op == OP_CONSTANT))
			continue;
		int same;
		if (!e)
			same = !proto_field_set(&ip->base, f);
		else if (f->id == attr_proto_field(ATTR_METADATA))
			same = metadata_equal(ip->metadata, e->metadata);
		else if (f->id == attr_proto_field(ATTR_FRONTEND_ATTRIBUTES))
			same = fa_equal(ip->frontend_attributes, e->frontend_attributes);
		else if (f->id == attr_proto_field(ATTR_STATISTICS))
			same = stats_equal(ip->statistics_viz, e->statistics_viz);
		else
			same = field_equal(&ip->base, &e->base, f);
		if (!same && proto_field_set(&ip->base, f))
			set_bit(keep, f->id);
	}
	return 0;
}

static int stash_item(loader *L, instr *in, avec *av, const char *name, const char *value)
{
	attr tmp;
	hloi_status st = text_parse_attr(&tmp, L->m, L->ctx, L->file, name, value);
	if (st == HLOI_ENOMEM)
		return loom(L);
	if (st != HLOI_OK)
		return lfail(L, "attribute %s (%s%s) has a malformed value: %s", name, HLOI_KEY_ATTR, name, value);
	(void)in;
	/* it takes the place of one made from the fields */
	for (int i = 0; i < av->n; i++) {
		if (tmp.id < ATTR_COUNT && av->v[i].id == tmp.id) {
			av->v[i] = tmp;
			return 0;
		}
	}
	attr *a = av_add(L, av);
	if (!a)
		return -1;
	*a = tmp;
	return 0;
}

static int attr_key_cmp(const void *x, const void *y)
{
	const attr *a = x, *b = y;
	int ka = attr_order_key(a), kb = attr_order_key(b);
	return ka < kb ? -1 : ka > kb;
}

static int instr_in(loader *L, computation *c, int pos, const Xla__HloInstructionProto *ip, const uint64_t *present,
		    const idpos *ids, size_t nids, computation **comps, const idpos *cids, size_t ncids,
		    int comp_pos)
{
	instr *in = c->instrs[pos];
	const Xla__FrontendAttributes *fa = ip->frontend_attributes;
	module *m = L->m;
	if (!ip->opcode[0])
		return lfail(L, "instruction has no opcode");
	in->op = opcode_from_name(ip->opcode, strlen(ip->opcode));
	if (in->op == OP_COUNT)
		return lfail(L, "unknown opcode '%s'", ip->opcode);
	shape written;
	if (valid_shape_in(L, ip->shape, &written, "shape"))
		return -1;
	in->has_shape = !fa_get(fa, HLOI_KEY_NO_SHAPE);
	const char *mask = fa_get(fa, HLOI_KEY_NO_LAYOUT);
	if (mask) {
		const char *p = mask;
		if (unmask_layouts(&written, &p) || *p)
			return lfail(L, "invalid %s '%s' for shape %s", HLOI_KEY_NO_LAYOUT, mask, ip->opcode);
	}
	if (!(in->shape = module_intern_shape(m, &written)))
		return loom(L);

	in->nops = (int)ip->n_operand_ids;
	if (ip->n_operand_ids > INT32_MAX)
		return lfail(L, "too many operands");
	if (ip->n_operand_ids > L->opcap) {
		const shape **v = hloi_realloc(L->opshapes, ip->n_operand_ids * sizeof *v);
		if (!v)
			return loom(L);
		L->opshapes = v;
		L->opcap = ip->n_operand_ids;
	}
	const shape **opshapes = L->opshapes;
	if (in->nops && !(in->ops = arena_array(&m->arena, ip->n_operand_ids, sizeof *in->ops)))
		return loom(L);
	for (size_t k = 0; k < ip->n_operand_ids; k++) {
		int64_t id = ip->operand_ids[k];
		int p = id_lookup(ids, nids, id);
		if (p < 0)
			return lfail(L, "operand %zu refers to unknown instruction id %" PRId64, k, id);
		if (p >= pos)
			return lfail(L, "operand %zu: instruction '%s' (id %" PRId64 ") is used before its definition",
				     k, c->instrs[p]->name, id);
		in->ops[k].name = c->instrs[p]->name;
		opshapes[k] = c->instrs[p]->shape;
	}
	fields_ops ops = { in->nops, opshapes };

	if (in->op == OP_PARAMETER) {
		if (ip->parameter_number < 0)
			return lfail(L, "negative parameter_number %" PRId64, ip->parameter_number);
		in->parameter_number = ip->parameter_number;
	}
	if (in->op == OP_GET_TUPLE_ELEMENT && ip->tuple_index < 0)
		return lfail(L, "negative tuple_index %" PRId64, ip->tuple_index);
	if (in->op == OP_IOTA && ip->n_dimensions > 1)
		return lfail(L, "iota has %zu dimensions; it takes one (iota_dimension)", ip->n_dimensions);
	if (ip->comparison_direction[0] &&
	    cmp_direction_from_name(ip->comparison_direction, strlen(ip->comparison_direction)) == CMP_NONE)
		return lfail(L, "invalid comparison_direction '%s'", ip->comparison_direction);
	if (ip->comparison_type[0] &&
	    cmp_type_from_name(ip->comparison_type, strlen(ip->comparison_type)) == CMPT_NONE)
		return lfail(L, "invalid comparison_type '%s'", ip->comparison_type);
	if (in->op == OP_CONSTANT && constant_in(L, in, ip))
		return -1;

	/* the attributes */
	uint8_t force[ATTR_COUNT], suppress[ATTR_COUNT];
	if (name_flags(L, fa, HLOI_KEY_EXPLICIT, force) || name_flags(L, fa, HLOI_KEY_IMPLICIT, suppress))
		return -1;
	fields_hooks hooks = { L, hook_shape_in, NULL, NULL };
	avec av = { NULL, 0, 0 };
	if (av_reserve(L, &av, ATTR_COUNT))
		return -1;
	int r = fields_in(&m->arena, in->op, ip, &ops, &hooks, force, suppress, av.v, &av.n);
	if (r < 0)
		return loom(L);
	if (L->st != HLOI_OK)
		return -1;  /* a shape the hook refused */
	if (in->op != OP_CONSTANT && ip->literal && !suppress[ATTR_LITERAL]) {
		hloi_literal *lit;
		if (literal_in(L, ip->literal, &lit, "literal shape") || own_value(L, lit))
			return -1;
		attr *a = av_add(L, &av);
		if (!a)
			return -1;
		a->id = ATTR_LITERAL;
		a->kind = AK_LITERAL;
		a->u.lit.shp = &lit->shape;
		a->u.lit.value = lit;
	}
	if (callees_in(L, in, ip, comps, cids, ncids, comp_pos, in->nops ? opshapes[0] : NULL, &av))
		return -1;
	if (ip->n_control_predecessor_ids) {
		size_t n = ip->n_control_predecessor_ids;
		const char **names = arena_array(&m->arena, n, sizeof *names);
		attr *a = av_add(L, &av);
		if (!names || !a)
			return loom(L);
		for (size_t k = 0; k < n; k++) {
			int64_t id = ip->control_predecessor_ids[k];
			int p = id_lookup(ids, nids, id);
			if (p < 0)
				return lfail(L, "control predecessor %zu refers to unknown instruction id %" PRId64,
					     k, id);
			names[k] = c->instrs[p]->name;
		}
		a->id = ATTR_CONTROL_PREDECESSORS;
		a->kind = AK_NAMES;
		a->u.words.n = (int)n;
		a->u.words.v = names;
	}
	/* attributes XLA has no field for, kept as text */
	size_t plen = strlen(HLOI_KEY_ATTR);
	for (size_t i = 0; fa && i < fa->n_map; i++) {
		const char *k = fa->map[i]->key;
		if (strncmp(k, HLOI_KEY_ATTR, plen) == 0 && k[plen] &&
		    stash_item(L, in, &av, k + plen, fa->map[i]->value))
			return -1;
	}
	if (av.n) {
		qsort(av.v, (size_t)av.n, sizeof *av.v, attr_key_cmp);
		if (!(in->attrs = arena_array(&m->arena, (size_t)av.n, sizeof *in->attrs)))
			return loom(L);
		memcpy(in->attrs, av.v, (size_t)av.n * sizeof *in->attrs);
	}
	in->nattrs = av.n;

	uint64_t keep[2] = { 0, 0 };
	if (echo_instr(L, in, ip, &ops, present, keep))
		return -1;
	return rest_in(L, &ip->base, in->op, keep, present, &in->pb_rest, &in->pb_rest_len);
}

/* --- computations and the module ---------------------------------------------------- */

/* Whether `name` is in a comma-separated list whose items may carry a
 * `:suffix`; *suffix gets it (or NULL). */
static int in_list_suffix(const char *list, const char *name, const char **suffix, size_t *slen)
{
	if (suffix)
		*suffix = NULL;
	if (!list)
		return 0;
	size_t n = strlen(name);
	const char *p = list;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len >= n && memcmp(p, name, n) == 0 && (len == n || p[n] == ':')) {
			if (suffix && len > n) {
				*suffix = p + n + 1;
				*slen = len - n - 1;
			}
			return 1;
		}
		p = e ? e + 1 : p + len;
	}
	return 0;
}

static int in_list(const char *list, const char *name)
{
	return in_list_suffix(list, name, NULL, NULL);
}

static int computation_in(loader *L, computation *c, const Xla__HloComputationProto *cp,
			  computation **comps, const idpos *cids, size_t ncids, int comp_pos,
			  const Xla__FrontendAttributes *mfa)
{
	module *m = L->m;
	const proto_skeleton *sk = L->sk;
	size_t first = sk->first[comp_pos], n = sk->first[comp_pos + 1] - first;
	if (n == 0)
		return lfail(L, "computation has no instructions");
	if (n > INT32_MAX)
		return lfail(L, "too many instructions");
	c->ninstrs = (int)n;
	c->instrs = arena_array(&m->arena, n, sizeof *c->instrs);
	idpos *ids = hloi_calloc(n, sizeof *ids);
	namepos *names = hloi_calloc(n, sizeof *names);
	int rc = 0;
	if (!c->instrs || !ids || !names) {
		rc = loom(L);
		goto out;
	}
	/* Pass 1: names and ids, each unique, read off the wire; the
	 * instructions are unpacked one at a time in pass 2. */
	for (size_t i = 0; i < n; i++) {
		size_t plen;
		const unsigned char *p = wire_skeleton_span(sk, L->data, L->len, first + i, &plen);
		const char *name;
		size_t name_len;
		int64_t id;
		if (!p) {
			rc = lfail(L, "instruction %zu is not a valid HloInstructionProto", i);
			goto out;
		}
		wire_name_id(p, plen, &name, &name_len, &id);
		instr *in = instr_new(&m->arena);
		if (!in || !(in->name = arena_strndup(&m->arena, name, name_len))) {
			rc = loom(L);
			goto out;
		}
		if (!in->name[0] || control_byte(in->name) >= 0) {
			rc = lfail(L, "instruction %zu (id %" PRId64 ") has %s", i, id,
				   in->name[0] ? "a name with a control character" : "no name");
			goto out;
		}
		in->position = (int)i;
		c->instrs[i] = in;
		ids[i].id = id;
		ids[i].pos = (int)i;
		names[i].name = in->name;
		names[i].pos = (int)i;
	}
	qsort(ids, n, sizeof *ids, idpos_cmp);
	for (size_t i = 1; i < n; i++) {
		if (ids[i].id == ids[i - 1].id) {
			L->inst = c->instrs[ids[i].pos]->name;
			L->inst_id = ids[i].id;
			rc = lfail(L, "instruction id %" PRId64 " is also used by '%s'", ids[i].id,
				   c->instrs[ids[i - 1].pos]->name);
			goto out;
		}
	}
	int distinct = proto_names_distinct(names, n);
	if (distinct < 0) {
		rc = loom(L);
		goto out;
	}
	if (!distinct)
		qsort(names, n, sizeof *names, namepos_cmp);
	for (size_t i = 1; i < n && !distinct; i++) {
		if (strcmp(names[i].name, names[i - 1].name) == 0) {
			L->inst = names[i].name;
			L->inst_id = 0;
			for (size_t j = 0; j < n; j++)
				if (ids[j].pos == names[i].pos)
					L->inst_id = ids[j].id;
			rc = lfail(L, "instruction name '%s' is used twice", names[i].name);
			goto out;
		}
	}
	/* Pass 2: the instructions. */
	ProtobufCAllocator ua = { unpack_alloc, unpack_free, L };
	for (size_t i = 0; i < n; i++) {
		size_t plen;
		const unsigned char *p = wire_skeleton_span(sk, L->data, L->len, first + i, &plen);
		arena_reset(&L->unpack);
		L->unpack_failed = 0;
		Xla__HloInstructionProto *ip = xla__hlo_instruction_proto__unpack(&ua, plen, p);
		L->inst = c->instrs[i]->name;
		if (!ip) {
			L->inst_id = 0;
			rc = L->unpack_failed ? loom(L) : lfail(L, "not a valid HloInstructionProto");
			goto out;
		}
		L->inst_id = ip->id;
		uint64_t present[2];
		wire_present(p, plen, present);
		int bad = instr_in(L, c, (int)i, ip, present, ids, n, comps, cids, ncids, comp_pos);
		if (bad) {
			rc = -1;
			goto out;
		}
	}
	L->inst = NULL;
	int r = id_lookup(ids, n, cp->root_id);
	if (r < 0) {
		rc = lfail(L, "root_id %" PRId64 " does not name an instruction of this computation",
			   cp->root_id);
		goto out;
	}
	c->root = c->instrs[r];
	c->root->is_root = !in_list(fa_get(mfa, HLOI_KEY_IMPLICIT_ROOT), c->name);
	if (cp->execution_thread[0] && strcmp(cp->execution_thread, "main") != 0 &&
	    !(c->execution_thread = lstrdup(L, cp->execution_thread))) {
		rc = -1;
		goto out;
	}
	const char *sigmask = NULL;
	size_t sigmask_len = 0;
	if (in_list_suffix(fa_get(mfa, HLOI_KEY_SIGNATURE), c->name, &sigmask, &sigmask_len) && cp->program_shape) {
		/* The signature `(p: f32[2]) -> f32[2]` the text had. */
		const Xla__ProgramShapeProto *ps = cp->program_shape;
		if (ps->n_parameters != ps->n_parameter_names || ps->n_parameters > INT32_MAX || !ps->result) {
			rc = lfail(L, "program_shape does not describe a signature");
			goto out;
		}
		c->has_signature = 1;
		c->nsig_params = (int)ps->n_parameters;
		if (ps->n_parameters) {
			c->sig_names = arena_array(&m->arena, ps->n_parameters, sizeof *c->sig_names);
			c->sig_shapes = arena_array(&m->arena, ps->n_parameters, sizeof *c->sig_shapes);
			if (!c->sig_names || !c->sig_shapes) {
				rc = loom(L);
				goto out;
			}
		}
		for (size_t i = 0; i < ps->n_parameters; i++) {
			if (!(c->sig_names[i] = lstrdup(L, ps->parameter_names[i])) ||
			    valid_shape_in(L, ps->parameters[i], &c->sig_shapes[i], "parameter shape")) {
				rc = -1;
				goto out;
			}
		}
		if (valid_shape_in(L, ps->result, &c->sig_result, "result shape")) {
			rc = -1;
			goto out;
		}
		if (sigmask) {
			char *mk = arena_strndup(&m->arena, sigmask, sigmask_len);
			const char *q = mk;
			int bad = !mk;
			for (int i = 0; !bad && i < c->nsig_params; i++)
				bad = unmask_layouts(&c->sig_shapes[i], &q);
			if (bad || unmask_layouts(&c->sig_result, &q) || *q) {
				rc = lfail(L, "invalid layout mask in %s", HLOI_KEY_SIGNATURE);
				goto out;
			}
		}
	}
	/* XLA writes the main thread as "" */
	uint64_t keep[2] = { 0, 0 };
	if (strcmp(cp->execution_thread, "main") == 0)
		set_bit(keep, 8);
	rc = rest_in(L, &cp->base, OP_COUNT, keep, NULL, &c->pb_rest, &c->pb_rest_len);
out:
	hloi_free(ids);
	hloi_free(names);
	return rc;
}

static int alias_in(loader *L, const Xla__HloInputOutputAliasProto *ap)
{
	module *m = L->m;
	if (!ap || ap->n_entries == 0)
		return 0;
	if (ap->n_entries > INT32_MAX)
		return lfail(L, "too many input_output_alias entries");
	m->alias = arena_array(&m->arena, ap->n_entries, sizeof *m->alias);
	if (!m->alias)
		return loom(L);
	m->nalias = (int)ap->n_entries;
	for (size_t i = 0; i < ap->n_entries; i++) {
		const Xla__HloInputOutputAliasProto__AliasEntryProto *e = ap->entries[i];
		alias_entry *a = &m->alias[i];
		if (e->n_output_shape_index > HLOI_MAX_RANK || e->n_parameter_shape_index > HLOI_MAX_RANK)
			return lfail(L, "input_output_alias entry %zu: shape index deeper than %d", i,
				     HLOI_MAX_RANK);
		if (e->parameter_number < 0)
			return lfail(L, "input_output_alias entry %zu: negative parameter_number", i);
		if (e->kind != XLA__KIND__MAY_ALIAS && e->kind != XLA__KIND__MUST_ALIAS)
			return lfail(L, "input_output_alias entry %zu: kind must be MAY_ALIAS or MUST_ALIAS", i);
		a->n_output_index = (int)e->n_output_shape_index;
		if (e->n_output_shape_index)
			memcpy(a->output_index, e->output_shape_index,
			       e->n_output_shape_index * sizeof(int64_t));
		a->parameter_number = e->parameter_number;
		a->n_parameter_index = (int)e->n_parameter_shape_index;
		if (e->n_parameter_shape_index)
			memcpy(a->parameter_index, e->parameter_shape_index,
			       e->n_parameter_shape_index * sizeof(int64_t));
		a->must_alias = e->kind == XLA__KIND__MUST_ALIAS;
	}
	return 0;
}

/* The module's hloi keys the loader reads; another is an older or newer
 * hloi's, which the writer would not give back. */
static int known_module_key(const char *k)
{
	static const char *const keys[] = { HLOI_KEY_NO_HEADER, HLOI_KEY_HEADER_ORDER, HLOI_KEY_BROADCAST_MODE,
					    HLOI_KEY_IMPLICIT_ENTRY, HLOI_KEY_IMPLICIT_ROOT, HLOI_KEY_SIGNATURE,
					    HLOI_KEY_COMP_ORDER, HLOI_KEY_EXPLICIT, HLOI_KEY_IMPLICIT };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(k, keys[i]) == 0)
			return 1;
	return strncmp(k, HLOI_KEY_HEADER_ATTR, strlen(HLOI_KEY_HEADER_ATTR)) == 0;
}

typedef struct hlist {
	raw_attr v[64];
	int n;
} hlist;

static int hadd(loader *L, hlist *h, const char *name, const char *value)
{
	if (h->n == (int)(sizeof h->v / sizeof h->v[0]))
		return lfail(L, "too many module attributes");
	raw_attr *a = &h->v[h->n];
	memset(a, 0, sizeof *a);
	if (!(a->name = lstrdup(L, name)) || !(a->value = lstrdup(L, value)))
		return -1;
	h->n++;
	return 0;
}

static int hadd_buf(loader *L, hlist *h, const char *name, strbuf *b)
{
	int rc = b->oom ? loom(L) : hadd(L, h, name, sb_str(b));
	sb_reset(b);
	return rc;
}

/* entry_computation_layout={(f32[2]{0}, ...)->f32[2]{0}} from XLA's
 * host_program_shape. */
static int entry_layout_text(loader *L, const Xla__ProgramShapeProto *ps, strbuf *b, uint64_t *keep)
{
	sb_puts(b, "{(");
	for (size_t i = 0; i < ps->n_parameters; i++) {
		shape s;
		if (valid_shape_in(L, ps->parameters[i], &s, "entry parameter layout"))
			return -1;
		if (i)
			sb_puts(b, i % 5 == 0 ? "" : ", ");
		if (i && i % 5 == 0)
			sb_printf(b, ", /*index=%zu*/", i);
		shape_print(b, &s, 1);
		char want[32];
		snprintf(want, sizeof want, "p%zu", i);
		if (i >= ps->n_parameter_names || strcmp(ps->parameter_names[i], want) != 0)
			set_bit(keep, 4);  /* the names are XLA's p0, p1, ... */
	}
	if (ps->n_parameter_names != ps->n_parameters)
		set_bit(keep, 4);
	shape r;
	if (valid_shape_in(L, ps->result, &r, "entry result layout"))
		return -1;
	sb_puts(b, ")->");
	shape_print(b, &r, 1);
	sb_putc(b, '}');
	return 0;
}

/* The header's attributes from the module's fields and hloi's keys, in
 * XLA's order (or the one the text had). */
static int header_in(loader *L, const Xla__HloModuleProto *mp, uint64_t *keep)
{
	module *m = L->m;
	const Xla__FrontendAttributes *fa = mp->frontend_attributes;
	m->has_header = !fa_get(fa, HLOI_KEY_NO_HEADER);
	const char *mode = fa_get(fa, HLOI_KEY_BROADCAST_MODE);
	if (mode) {
		if (strcmp(mode, "numpy") == 0)
			m->broadcast_mode = HLOI_BROADCAST_NUMPY;
		else if (strcmp(mode, "xla") == 0)
			m->broadcast_mode = HLOI_BROADCAST_XLA;
		else
			return lfail(L, "invalid %s '%s'", HLOI_KEY_BROADCAST_MODE, mode);
	}
	for (size_t i = 0; fa && i < fa->n_map; i++)
		if (proto_is_hloi_key(fa->map[i]->key) && !known_module_key(fa->map[i]->key))
			set_bit(keep, 19);
	if (!m->has_header)
		return 0;
	const char *ex = fa_get(fa, HLOI_KEY_EXPLICIT), *im = fa_get(fa, HLOI_KEY_IMPLICIT);
	hlist *h = hloi_calloc(1, sizeof *h);
	strbuf b = STRBUF_INIT;
	int rc = 0;
	if (!h)
		return loom(L);
	if (mp->schedule)
		rc = hadd(L, h, "is_scheduled", "true");
	else if (in_list(ex, "is_scheduled"))
		rc = hadd(L, h, "is_scheduled", "false");
	if (!rc && (m->nalias || in_list(ex, "input_output_alias"))) {
		alias_text(&b, m->alias, m->nalias);
		rc = hadd_buf(L, h, "input_output_alias", &b);
	}
	if (!rc && ((mp->buffer_donor && mp->buffer_donor->n_entries) || in_list(ex, "buffer_donor"))) {
		donor_print(&b, mp->buffer_donor);
		rc = hadd_buf(L, h, "buffer_donor", &b);
	}
	if (!rc && mp->host_program_shape && !in_list(im, "entry_computation_layout")) {
		rc = entry_layout_text(L, mp->host_program_shape, &b, keep);
		if (!rc)
			rc = hadd_buf(L, h, "entry_computation_layout", &b);
	}
	if (!rc && (frontend_user_count(fa) || in_list(ex, "frontend_attributes"))) {
		frontend_print(&b, fa);
		rc = hadd_buf(L, h, "frontend_attributes", &b);
	}
	size_t plen = strlen(HLOI_KEY_HEADER_ATTR);
	for (size_t i = 0; !rc && fa && i < fa->n_map; i++)
		if (strncmp(fa->map[i]->key, HLOI_KEY_HEADER_ATTR, plen) == 0 && fa->map[i]->key[plen])
			rc = hadd(L, h, fa->map[i]->key + plen, fa->map[i]->value);
	if (!rc && mode)
		rc = hadd(L, h, "broadcast_mode", mode);
	sb_free(&b);
	/* XLA's order, stably */
	for (int i = 1; !rc && i < h->n; i++) {
		raw_attr x = h->v[i];
		int j = i;
		while (j > 0 && proto_header_rank(h->v[j - 1].name) > proto_header_rank(x.name)) {
			h->v[j] = h->v[j - 1];
			j--;
		}
		h->v[j] = x;
	}
	const char *order = fa_get(fa, HLOI_KEY_HEADER_ORDER);
	int placed = 0;
	for (const char *p = order; !rc && p && *p && placed < h->n;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		for (int i = placed; i < h->n; i++) {
			if (strlen(h->v[i].name) == len && memcmp(h->v[i].name, p, len) == 0) {
				raw_attr x = h->v[i];
				memmove(&h->v[placed + 1], &h->v[placed], (size_t)(i - placed) * sizeof x);
				h->v[placed++] = x;
				break;
			}
		}
		p = e ? e + 1 : p + len;
	}
	if (!rc && h->n) {
		m->header_attrs = arena_array(&m->arena, (size_t)h->n, sizeof *m->header_attrs);
		if (!m->header_attrs)
			rc = loom(L);
		else
			memcpy(m->header_attrs, h->v, (size_t)h->n * sizeof *h->v);
		m->nheader_attrs = rc ? 0 : h->n;
	}
	hloi_free(h);
	return rc;
}

/* An instruction's id, as the loader kept it in its rest. */
static int64_t kept_id(const instr *in)
{
	int64_t id = 0;
	if (!in->pb_rest || proto_rest_id(in->pb_rest, in->pb_rest_len, &xla__hlo_instruction_proto__descriptor, &id))
		return -1;
	return id;
}

static int namepos_find(const namepos *v, size_t n, const char *name)
{
	namepos key = { name, -1 };
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v[mid].name, key.name);
		if (c == 0)
			return v[mid].pos;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Puts a computation's instructions in the order of its schedule; 0 when
 * the sequence is not a topological order of exactly its instructions. */
static int schedule_order(loader *L, computation *c, const Xla__HloScheduleProto__InstructionSequence *q)
{
	size_t n = (size_t)c->ninstrs;
	if (!q || q->n_instruction_ids != n)
		return 0;
	idpos *ids = hloi_calloc(n, sizeof *ids);
	namepos *names = hloi_calloc(n, sizeof *names);
	instr **order = hloi_calloc(n, sizeof *order);
	int *newpos = hloi_calloc(n, sizeof *newpos);
	int ok = 1;
	if (!ids || !names || !order || !newpos) {
		ok = loom(L);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		ids[i].id = kept_id(c->instrs[i]);
		ids[i].pos = (int)i;
		names[i].name = c->instrs[i]->name;
		names[i].pos = (int)i;
		newpos[i] = -1;
	}
	qsort(ids, n, sizeof *ids, idpos_cmp);
	qsort(names, n, sizeof *names, namepos_cmp);
	for (size_t i = 0; i < n && ok; i++) {
		int p = id_lookup(ids, n, q->instruction_ids[i]);
		if (p < 0 || newpos[p] >= 0)
			ok = 0;
		else {
			newpos[p] = (int)i;
			order[i] = c->instrs[p];
		}
	}
	/* operands and control predecessors first */
	for (size_t i = 0; i < n && ok; i++) {
		const instr *in = c->instrs[i];
		for (int k = 0; k < in->nops && ok; k++) {
			int p = namepos_find(names, n, in->ops[k].name);
			ok = p >= 0 && newpos[p] < newpos[i];
		}
		const attr *cp = instr_attr(in, ATTR_CONTROL_PREDECESSORS);
		for (int k = 0; cp && k < cp->u.words.n && ok; k++) {
			int p = namepos_find(names, n, cp->u.words.v[k]);
			ok = p >= 0 && newpos[p] < newpos[i];
		}
	}
	if (ok == 1) {
		for (size_t i = 0; i < n; i++) {
			c->instrs[i] = order[i];
			order[i]->position = (int)i;
		}
	}
out:
	hloi_free(ids);
	hloi_free(names);
	hloi_free(order);
	hloi_free(newpos);
	return ok;
}

/* is_scheduled=true stands for a schedule of every computation but the
 * fused ones in the order the text lists instructions: the computations
 * take their schedule's order, and a schedule that is not such is kept
 * whole (keep). */
static int schedule_in(loader *L, const Xla__HloModuleProto *mp, const idpos *cids, size_t ncids, uint64_t *keep)
{
	module *m = L->m;
	const Xla__HloScheduleProto *sp = mp->schedule;
	if (!sp)
		return 0;
	unsigned char *fused = hloi_calloc((size_t)m->ncomps, 1), *seen = hloi_calloc((size_t)m->ncomps, 1);
	int exact = 1, rc = 0;
	if (!fused || !seen) {
		rc = loom(L);
		goto out;
	}
	for (int i = 0; i < m->ncomps; i++)
		for (int k = 0; k < m->comps[i]->ninstrs; k++) {
			const instr *in = m->comps[i]->instrs[k];
			const char *callee = in->op == OP_FUSION ? instr_text(in, ATTR_CALLS) : NULL;
			computation *f = callee ? module_find_computation(m, callee) : NULL;
			for (int j = 0; f && j < m->ncomps; j++)
				if (m->comps[j] == f)
					fused[j] = 1;
		}
	for (size_t i = 0; i < sp->n_sequences; i++) {
		const Xla__HloScheduleProto__SequencesEntry *e = sp->sequences[i];
		int p = id_lookup(cids, ncids, e->key);
		if (p < 0 || seen[p] || fused[p]) {
			exact = 0;
			continue;
		}
		seen[p] = 1;
		int ok = schedule_order(L, m->comps[p], e->value);
		if (ok < 0) {
			rc = -1;
			goto out;
		}
		exact &= ok;
	}
	for (int i = 0; i < m->ncomps; i++)
		exact &= seen[i] || fused[i];
	if (!exact)
		set_bit(keep, 7);
out:
	hloi_free(fused);
	hloi_free(seen);
	return rc;
}

static int stack_frames_in(loader *L, const Xla__StackFrameIndexProto *s, uint64_t *keep)
{
	if (!s)
		return 0;
	if (!s->n_file_names && !s->n_function_names && !s->n_file_locations && !s->n_stack_frames) {
		set_bit(keep, 17);  /* present but empty: no text */
		return 0;
	}
	strbuf b = STRBUF_INIT;
	stack_frames_print(&b, s);
	int rc = b.oom ? loom(L) : 0;
	if (!rc && !(L->m->stack_frames = lstrdup(L, sb_str(&b))))
		rc = -1;
	sb_free(&b);
	return rc;
}

/* Puts the computations back in the order the HLO text had (callers may
 * come before callees there). */
static int text_order(loader *L, const char *list)
{
	module *m = L->m;
	if (!list)
		return 0;
	computation **v = hloi_calloc((size_t)m->ncomps, sizeof *v);
	if (!v)
		return loom(L);
	int n = 0, rc = 0;
	const char *p = list;
	while (*p && rc == 0) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int found = 0;
		for (int i = 0; i < m->ncomps && !found; i++) {
			const char *name = m->comps[i]->name;
			if (strlen(name) == len && memcmp(name, p, len) == 0) {
				found = 1;
				for (int k = 0; k < n; k++)
					if (v[k] == m->comps[i])
						found = 2;
				if (found == 1 && n < m->ncomps)
					v[n++] = m->comps[i];
			}
		}
		if (found != 1)
			rc = lfail(L, "invalid %s '%s'", HLOI_KEY_COMP_ORDER, list);
		p = e ? e + 1 : p + len;
	}
	if (rc == 0 && n != m->ncomps)
		rc = lfail(L, "invalid %s '%s'", HLOI_KEY_COMP_ORDER, list);
	if (rc == 0)
		memcpy(m->comps, v, (size_t)n * sizeof *v);
	hloi_free(v);
	return rc;
}

static int module_in(loader *L, const Xla__HloModuleProto *mp)
{
	module *m = L->m;
	size_t n = mp->n_computations;
	if (n == 0)
		return lfail(L, "the module has no computations");
	if (n > INT32_MAX)
		return lfail(L, "too many computations");
	if (n != L->sk->ncomps)
		return lfail(L, "computations do not match their instructions");
	if (control_byte(mp->name) >= 0)
		return lfail(L, "the module's name holds a control character (byte %ld)", control_byte(mp->name));
	if (!(m->name = lstrdup(L, mp->name)))
		return -1;
	if (alias_in(L, mp->input_output_alias))
		return -1;
	m->comps = arena_array(&m->arena, n, sizeof *m->comps);
	idpos *cids = hloi_calloc(n, sizeof *cids);
	namepos *names = hloi_calloc(n, sizeof *names);
	int rc = 0;
	if (!m->comps || !cids || !names) {
		rc = loom(L);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const Xla__HloComputationProto *cp = mp->computations[i];
		if (!cp->name[0] || control_byte(cp->name) >= 0) {
			rc = lfail(L, "computation %zu (id %" PRId64 ") has %s", i, cp->id,
				   cp->name[0] ? "a name with a control character" : "no name");
			goto out;
		}
		computation *c = arena_alloc(&m->arena, sizeof *c);
		if (!c || !(c->name = lstrdup(L, cp->name))) {
			rc = loom(L);
			goto out;
		}
		m->comps[i] = c;
		cids[i].id = cp->id;
		cids[i].pos = (int)i;
		names[i].name = c->name;
		names[i].pos = (int)i;
	}
	m->ncomps = (int)n;
	qsort(cids, n, sizeof *cids, idpos_cmp);
	for (size_t i = 1; i < n; i++) {
		if (cids[i].id == cids[i - 1].id) {
			L->comp = m->comps[cids[i].pos]->name;
			rc = lfail(L, "computation id %" PRId64 " is also used by '%s'", cids[i].id,
				   m->comps[cids[i - 1].pos]->name);
			goto out;
		}
	}
	qsort(names, n, sizeof *names, namepos_cmp);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(names[i].name, names[i - 1].name) == 0) {
			L->comp = names[i].name;
			rc = lfail(L, "computation name '%s' is used twice", names[i].name);
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		L->comp = m->comps[i]->name;
		if (computation_in(L, m->comps[i], mp->computations[i], m->comps, cids, n, (int)i,
				   mp->frontend_attributes)) {
			rc = -1;
			goto out;
		}
	}
	L->comp = NULL;
	/* The entry: by id, else by name. */
	int e = id_lookup(cids, n, mp->entry_computation_id);
	if (e >= 0 && mp->entry_computation_name[0] &&
	    strcmp(m->comps[e]->name, mp->entry_computation_name) != 0) {
		int by_name = -1;
		for (size_t i = 0; i < n; i++)
			if (strcmp(m->comps[i]->name, mp->entry_computation_name) == 0)
				by_name = (int)i;
		if (by_name >= 0 || mp->entry_computation_id != 0) {
			rc = lfail(L, "entry_computation_id %" PRId64 " names '%s' but entry_computation_name is '%s'",
				   mp->entry_computation_id, m->comps[e]->name, mp->entry_computation_name);
			goto out;
		}
	}
	if (e < 0 && mp->entry_computation_name[0])
		for (size_t i = 0; i < n; i++)
			if (strcmp(m->comps[i]->name, mp->entry_computation_name) == 0)
				e = (int)i;
	if (e < 0) {
		rc = lfail(L, "entry computation not found (entry_computation_id %" PRId64
			   ", entry_computation_name '%s')",
			   mp->entry_computation_id, mp->entry_computation_name);
		goto out;
	}
	m->entry = m->comps[e];
	m->entry->is_entry = !fa_get(mp->frontend_attributes, HLOI_KEY_IMPLICIT_ENTRY);
	uint64_t keep[2] = { 0, 0 };
	rc = schedule_in(L, mp, cids, n, keep);
	if (rc == 0)
		rc = header_in(L, mp, keep);
	if (rc == 0)
		rc = stack_frames_in(L, mp->stack_frame_index, keep);
	if (rc == 0)
		rc = text_order(L, fa_get(mp->frontend_attributes, HLOI_KEY_COMP_ORDER));
	if (rc == 0)
		module_mark_async_sugar(m);
	if (rc == 0)
		rc = rest_in(L, &mp->base, OP_COUNT, keep, NULL, &m->pb_rest, &m->pb_rest_len);
out:
	hloi_free(cids);
	hloi_free(names);
	return rc;
}

static int snapshot_args_in(loader *L, Xla__LiteralProto **args, size_t n)
{
	module *m = L->m;
	if (n == 0)
		return 0;
	if (n > INT32_MAX)
		return lfail(L, "too many snapshot arguments");
	m->snapshot_args = hloi_calloc(n, sizeof *m->snapshot_args);
	if (!m->snapshot_args)
		return loom(L);
	for (size_t i = 0; i < n; i++) {
		char what[64];
		snprintf(what, sizeof what, "shape of snapshot argument %zu", i);
		if (literal_in(L, args[i], &m->snapshot_args[i], what))
			return -1;
		m->nsnapshot_args = (int)i + 1;
	}
	return 0;
}

hloi_status proto_load_wire(module **out, hloi_context *ctx, const char *name,
			    const unsigned char *data, size_t len, proto_root root)
{
	*out = NULL;
	const ProtobufCMessageDescriptor *desc = proto_root_descriptor(root);
	strbuf where = STRBUF_INIT, what = STRBUF_INIT;
	if (wire_check(desc, data, len, &where, &what)) {
		strbuf w = STRBUF_INIT;
		sb_puts(&w, name);
		if (where.len)
			sb_printf(&w, ": %s", sb_str(&where));
		diag_error_where(ctx, sb_str(&w), "not a valid %s: %s", proto_root_name(root),
				 sb_str(&what));
		sb_free(&w);
		hloi_status st = where.oom || what.oom ? HLOI_ENOMEM : HLOI_EPARSE;
		sb_free(&where);
		sb_free(&what);
		return st;
	}
	sb_free(&where);
	sb_free(&what);

	/* Everything but the instructions is unpacked at once; each
	 * instruction is unpacked, read and freed in turn (computation_in). */
	proto_skeleton sk;
	int sr = wire_skeleton(&sk, root, data, len);
	if (sr) {
		if (sr == -1) {
			diag_error_where(ctx, name, "out of memory reading the proto");
			return HLOI_ENOMEM;
		}
		diag_error_where(ctx, name, "not a valid %s", proto_root_name(root));
		return HLOI_EPARSE;
	}
	proto_alloc pa;
	proto_alloc_init(&pa);
	ProtobufCMessage *msg = protobuf_c_message_unpack(desc, &pa.a, sk.len, sk.wire);
	if (!msg) {
		wire_skeleton_free(&sk);
		if (pa.failed) {
			diag_error_where(ctx, name, "out of memory reading the proto");
			return HLOI_ENOMEM;
		}
		diag_error_where(ctx, name, "not a valid %s", proto_root_name(root));
		return HLOI_EPARSE;
	}
	const Xla__HloModuleProto *mp = NULL;
	Xla__LiteralProto **args = NULL;
	size_t nargs = 0;
	const char *missing = NULL;
	if (root == PROOT_MODULE) {
		mp = (const Xla__HloModuleProto *)msg;
	} else if (root == PROOT_HLO) {
		mp = ((const Xla__HloProto *)msg)->hlo_module;
		missing = "HloProto has no hlo_module";
	} else {
		const Xla__HloSnapshot *sn = (const Xla__HloSnapshot *)msg;
		mp = sn->hlo ? sn->hlo->hlo_module : NULL;
		args = sn->arguments;
		nargs = sn->n_arguments;
		missing = "HloSnapshot has no hlo.hlo_module";
	}
	loader L;
	memset(&L, 0, sizeof L);
	L.ctx = ctx;
	L.file = name;
	L.sk = &sk;
	L.data = data;
	L.len = len;
	hloi_status st = HLOI_OK;
	if (!mp) {
		diag_error_where(ctx, name, "%s", missing);
		st = HLOI_EPARSE;
		goto done;
	}
	st = module_create(&L.m);
	if (st != HLOI_OK) {
		diag_error_where(ctx, name, "out of memory loading the module");
		goto done;
	}
	L.m->src = -1;
	if (!(L.m->filename = lstrdup(&L, name)) || module_in(&L, mp) ||
	    snapshot_args_in(&L, args, nargs)) {
		st = L.st != HLOI_OK ? L.st : HLOI_EPARSE;
		module_destroy(L.m);
		L.m = NULL;
		goto done;
	}
	if (L.loss.n) {
		strbuf w = STRBUF_INIT;
		if (L.loss.field)
			sb_printf(&w, "field %s of a %s", L.loss.field, L.loss.message);
		else
			sb_printf(&w, "an unknown field of a %s", L.loss.message);
		if (L.loss_comp)
			sb_printf(&w, " in computation '%s'", L.loss_comp);
		if (L.loss_comp && L.loss_inst)
			sb_printf(&w, ", instruction '%s'", L.loss_inst);
		if (!w.oom)
			diag_emit_where(ctx, DIAG_WARNING, name,
					"%zu proto field%s inside repeated shapes, tiles, literals or "
					"aliases %s nowhere for hloi to keep and %s dropped (the first: %s)",
					L.loss.n, L.loss.n == 1 ? "" : "s", L.loss.n == 1 ? "has" : "have",
					L.loss.n == 1 ? "is" : "are", sb_str(&w));
		sb_free(&w);
	}
	*out = L.m;
done:
	hloi_free(L.av);
	hloi_free(L.opshapes);
	arena_release(&L.scratch);
	arena_release(&L.unpack);
	protobuf_c_message_free_unpacked(msg, &pa.a);
	wire_skeleton_free(&sk);
	return st;
}

hloi_status proto_load_binary(module **out, hloi_context *ctx, const char *name,
			      const unsigned char *data, size_t len)
{
	return proto_load_wire(out, ctx, name, data, len, wire_classify(data, len));
}

hloi_status proto_load_text(module **out, hloi_context *ctx, const char *name, const char *text,
			    size_t len)
{
	*out = NULL;
	unsigned char *wire = NULL;
	size_t wlen = 0;
	proto_root root;
	hloi_status st = pbtxt_to_wire(&wire, &wlen, &root, ctx, name, text, len);
	if (st == HLOI_OK)
		st = proto_load_wire(out, ctx, name, wire, wlen, root);
	hloi_free(wire);
	return st;
}

hloi_status proto_literal_in(hloi_literal **out, hloi_context *ctx, const char *file, Xla__LiteralProto *lp,
			     const char *what)
{
	loader L;
	memset(&L, 0, sizeof L);
	L.ctx = ctx;
	L.file = file;
	*out = NULL;
	if (!lp) {
		lfail(&L, "%s is missing", what);
		return L.st;
	}
	if (literal_in(&L, lp, out, what))
		return L.st != HLOI_OK ? L.st : HLOI_EPARSE;
	return HLOI_OK;
}
