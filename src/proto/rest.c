/* The rest of a proto message: the fields hloi's IR does not model.
 *
 * The loader keeps, for the module, each computation and each instruction,
 * what its message says beyond what the IR holds (fields HLO text has no
 * form for, fields the IR holds in a spelling that would not give the same
 * bytes back, the ids, and the unknown fields a newer XLA writes, which
 * protobuf-c keeps) as wire bytes; the writer decodes them and merges them
 * into the message it builds: a field the rest holds whole replaces the one
 * built, the rest of a partly modeled message (a shape's layout's
 * split_configs, a metadata's profile_info) merges into it. So .pb -> .pb
 * keeps every field.
 *
 * Which fields the IR models is the rule tables below plus, for
 * instructions and the module, what the loader found the writer gives back
 * exactly (its `keep` set holds the others): a field in a rule is the
 * IR's; an instruction's other fields are the IR's unless kept; any other
 * field, and any unknown one, is the rest.
 *
 * HLO text has no form for the rest: proto_warn_text_drops says what a
 * conversion to text leaves out. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto_internal.h"
#include "util/alloc.h"
#include "util/diag.h"

/* --- the rules ------------------------------------------------------------------ */

enum {
	RF_PRESENCE = 1,      /* an emptied submessage stays: the writer may omit it */
	RF_IF_CONSTANT = 2,   /* the IR models the field (this way) for constants only */
	RF_IF_MASK = RF_IF_CONSTANT
};

typedef struct rule rule;
typedef struct rule_field {
	uint32_t num;
	const rule *sub;  /* message fields: the rule inside; NULL: the writer
			   * rebuilds the whole message (or the IR keeps it
			   * whole, as computations and instructions) */
	unsigned flags;
} rule_field;
struct rule {
	const rule_field *f;
	size_t n;
	int echo;         /* fields not in the rule are the IR's unless kept */
};

#define RULE(name, ...)                                                        \
	static const rule_field name##_fields[] = { __VA_ARGS__ };             \
	static const rule name = { name##_fields, sizeof name##_fields / sizeof name##_fields[0], 0 }
#define ECHO_RULE(name, ...)                                                   \
	static const rule_field name##_fields[] = { __VA_ARGS__ };             \
	static const rule name = { name##_fields, sizeof name##_fields / sizeof name##_fields[0], 1 }

static const rule shape_rule, literal_rule;

/* ShapeProto, LayoutProto, TileProto: src/core/shape.h's shape. */
RULE(tile_rule, { 1, NULL, 0 });
RULE(layout_rule, { 1, NULL, 0 }, { 2, NULL, 0 }, { 3, NULL, 0 }, { 6, &tile_rule, 0 }, { 7, NULL, 0 },
     { 8, NULL, 0 }, { 9, NULL, 0 }, { 15, NULL, 0 }, { 16, NULL, 0 });
RULE(shape_rule, { 2, NULL, 0 }, { 3, NULL, 0 }, { 4, &shape_rule, 0 }, { 5, &layout_rule, 0 },
     { 6, NULL, 0 });
/* LiteralProto: the shape and the values (sparse_indices are refused). */
RULE(literal_rule, { 1, &shape_rule, 0 }, { 2, NULL, 0 }, { 3, NULL, 0 }, { 4, NULL, 0 }, { 5, NULL, 0 },
     { 6, NULL, 0 }, { 7, NULL, 0 }, { 8, NULL, 0 }, { 9, NULL, 0 }, { 10, &literal_rule, 0 },
     { 11, NULL, 0 }, { 12, NULL, 0 }, { 13, NULL, 0 }, { 15, NULL, 0 }, { 16, NULL, 0 },
     { 17, NULL, 0 }, { 18, NULL, 0 }, { 19, NULL, 0 }, { 20, NULL, 0 }, { 21, NULL, 0 },
     { 22, NULL, 0 }, { 23, NULL, 0 }, { 24, NULL, 0 }, { 25, NULL, 0 }, { 26, NULL, 0 },
     { 27, NULL, 0 }, { 28, NULL, 0 }, { 29, NULL, 0 }, { 30, NULL, 0 }, { 31, NULL, 0 },
     { 32, NULL, 0 }, { 33, NULL, 0 });
/* OpMetadata: what metadata_print_body prints (not the sizes or
 * profile_info). */
RULE(metadata_rule, { 1, NULL, 0 }, { 2, NULL, 0 }, { 3, NULL, 0 }, { 4, NULL, 0 }, { 5, NULL, 0 },
     { 12, NULL, 0 }, { 15, NULL, 0 }, { 16, NULL, 0 }, { 17, NULL, 0 }, { 18, NULL, 0 }, { 19, NULL, 0 });
RULE(fa_entry_rule, { 1, NULL, 0 }, { 2, NULL, 0 });
RULE(fa_rule, { 1, &fa_entry_rule, 0 });
/* StatisticsViz and HloBufferDonorProto: text shows all of them (XLA
 * writes an empty statistics_viz on every instruction). */
RULE(statistic_rule, { 1, NULL, 0 }, { 2, NULL, 0 });
RULE(stats_rule, { 1, NULL, 0 }, { 2, &statistic_rule, 0 });
RULE(donor_entry_rule, { 1, NULL, 0 }, { 2, NULL, 0 });
RULE(donor_rule, { 1, &donor_entry_rule, 0 });
RULE(alias_entry_rule, { 1, NULL, 0 }, { 2, NULL, 0 }, { 3, NULL, 0 }, { 4, NULL, 0 });
RULE(alias_rule, { 1, &alias_entry_rule, 0 });

/* HloInstructionProto: name, opcode, shape, metadata, a constant's
 * literal, the ids of operands, control predecessors and callees,
 * frontend_attributes; every other field is an attribute's (fields.c),
 * the loader's echo saying which ones come back exactly. Its own id (35)
 * is the rest: the writer keeps it when it can. */
ECHO_RULE(instr_rule, { 1, NULL, 0 }, { 2, NULL, 0 }, { 3, &shape_rule, 0 },
	  { 7, &metadata_rule, RF_PRESENCE }, { 8, &literal_rule, RF_IF_CONSTANT }, { 36, NULL, 0 },
	  { 37, NULL, 0 }, { 38, NULL, 0 }, { 68, &fa_rule, RF_PRESENCE }, { 82, &stats_rule, RF_PRESENCE });
/* HloComputationProto: name, instructions, program_shape, root_id,
 * is_fusion_computation (the writer rebuilds the last three),
 * execution_thread. */
RULE(comp_rule, { 1, NULL, 0 }, { 2, NULL, 0 }, { 4, NULL, 0 }, { 6, NULL, 0 }, { 7, NULL, 0 },
     { 8, NULL, 0 });
/* HloModuleProto: name, the entry (by name and id), computations,
 * host_program_shape (entry_computation_layout=), schedule
 * (is_scheduled=), input_output_alias, stack_frame_index, buffer_donor,
 * frontend_attributes. */
RULE(module_rule, { 1, NULL, 0 }, { 2, NULL, 0 }, { 3, NULL, 0 }, { 4, NULL, 0 }, { 6, NULL, 0 },
     { 7, NULL, 0 }, { 8, &alias_rule, RF_PRESENCE }, { 17, NULL, 0 }, { 18, &donor_rule, RF_PRESENCE },
     { 19, &fa_rule, RF_PRESENCE });

static const rule_field *rule_find(const rule *r, uint32_t num)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->f[i].num == num)
			return &r->f[i];
	return NULL;
}

static const rule *root_rule(const ProtobufCMessageDescriptor *d)
{
	if (d == &xla__hlo_instruction_proto__descriptor)
		return &instr_rule;
	if (d == &xla__hlo_computation_proto__descriptor)
		return &comp_rule;
	return &module_rule;
}

/* The id field the writer sets itself. */
static uint32_t id_field(const ProtobufCMessageDescriptor *d)
{
	return d == &xla__hlo_instruction_proto__descriptor ? 35 : 5;
}

/* --- field access ------------------------------------------------------------------ */

size_t proto_elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		return 4;
	case PROTOBUF_C_TYPE_FLOAT:
		return sizeof(float);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return 8;
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	}
	return 0;
}

static size_t rep_count(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
	size_t n;
	memcpy(&n, (const char *)m + f->quantifier_offset, sizeof n);
	return n;
}

static void set_rep_count(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, size_t n)
{
	memcpy((char *)m + f->quantifier_offset, &n, sizeof n);
}

static uint32_t oneof_case(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
	uint32_t c;
	memcpy(&c, (const char *)m + f->quantifier_offset, sizeof c);
	return c;
}

int proto_field_set(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
	const char *p = (const char *)m + f->offset;
	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		return rep_count(m, f) > 0;
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		return oneof_case(m, f) == f->id;
	if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_MESSAGE &&
	    f->type != PROTOBUF_C_TYPE_STRING) {
		protobuf_c_boolean has;
		memcpy(&has, (const char *)m + f->quantifier_offset, sizeof has);
		return has != 0;
	}
	switch (f->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		return *(ProtobufCMessage *const *)p != NULL;
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(const char *const *)p;
		return s && (s[0] || f->label == PROTOBUF_C_LABEL_REQUIRED);
	}
	case PROTOBUF_C_TYPE_BYTES:
		return ((const ProtobufCBinaryData *)p)->len > 0;
	default: {
		/* any bit set: -0.0 is written too */
		size_t n = proto_elem_size(f->type);
		if (n == 8) {
			uint64_t v;
			memcpy(&v, p, 8);
			return v != 0;
		}
		if (n == 4) {
			uint32_t v;
			memcpy(&v, p, 4);
			return v != 0;
		}
		unsigned char zero[8] = { 0 };
		return memcmp(p, zero, n) != 0;
	}
	}
}

/* Unsets a field of a proto3 message. */
static void clear_field(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
	char *p = (char *)m + f->offset;
	if (f->label == PROTOBUF_C_LABEL_REPEATED) {
		set_rep_count(m, f, 0);
		*(void **)p = NULL;
		return;
	}
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
		if (oneof_case(m, f) != f->id)
			return;
		uint32_t none = 0;
		memcpy((char *)m + f->quantifier_offset, &none, sizeof none);
	}
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING:
		*(const char **)p = protobuf_c_empty_string;
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		*(void **)p = NULL;
		break;
	case PROTOBUF_C_TYPE_BYTES:
		memset(p, 0, sizeof(ProtobufCBinaryData));
		break;
	default:
		memset(p, 0, proto_elem_size(f->type));
		break;
	}
}

static ProtobufCMessage *shallow_copy(arena *a, const ProtobufCMessage *m)
{
	ProtobufCMessage *c = arena_alloc(a, m->descriptor->sizeof_message);
	if (c)
		memcpy(c, m, m->descriptor->sizeof_message);
	return c;
}

/* --- the loader's side: what the IR leaves out -------------------------------------- */

typedef struct rest_ctx {
	arena *a;          /* scratch, for the copies */
	unsigned active;   /* the RF_IF_* that hold */
	const uint64_t *keep;  /* top level: fields kept whole */
	int oom;
	proto_loss *loss;
} rest_ctx;

static int kept(const uint64_t *keep, uint32_t num)
{
	return keep && num < 128 && ((keep[num / 64] >> (num % 64)) & 1);
}

/* The rule of a field, or NULL when the rule does not model it (or its
 * RF_IF_* condition does not hold). */
static const rule_field *active_field(const rule *r, uint32_t num, unsigned active)
{
	const rule_field *rf = rule_find(r, num);
	if (rf && (rf->flags & RF_IF_MASK) && !(rf->flags & active))
		return NULL;
	return rf;
}

static void note_loss(rest_ctx *rc, const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
		      size_t n)
{
	if (!rc->loss->n) {
		rc->loss->message = d->short_name;
		rc->loss->field = f ? f->name : NULL;
	}
	rc->loss->n += n;
}

/* Inside a repeated message field the IR models (tuple shapes, tiles,
 * tuple literals, alias entries), what it cannot keep: a merge appends
 * repeated elements rather than merging them one by one, so such a rest
 * has nowhere to go. Counted for the loader's warning. */
static void lost_in(rest_ctx *rc, const ProtobufCMessage *m, const rule *r)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	if (m->n_unknown_fields)
		note_loss(rc, d, NULL, m->n_unknown_fields);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (!proto_field_set(m, f))
			continue;
		const rule_field *rf = rule_find(r, f->id);
		if (!rf) {
			note_loss(rc, d, f, 1);
			continue;
		}
		if (f->type != PROTOBUF_C_TYPE_MESSAGE || !rf->sub)
			continue;
		const char *p = (const char *)m + f->offset;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			ProtobufCMessage *const *v = *(ProtobufCMessage *const *const *)p;
			for (size_t k = 0; k < rep_count(m, f); k++)
				lost_in(rc, v[k], rf->sub);
		} else {
			lost_in(rc, *(ProtobufCMessage *const *)p, rf->sub);
		}
	}
}

/* A copy of `m` without the fields rule `r` gives the IR; NULL when
 * nothing is left (unless `presence`). `top`: the message's own keep set
 * and echo rule apply. */
static ProtobufCMessage *residual(rest_ctx *rc, const ProtobufCMessage *m, const rule *r, int presence, int top)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	ProtobufCMessage *c = shallow_copy(rc->a, m);
	if (!c) {
		rc->oom = 1;
		return NULL;
	}
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (!proto_field_set(c, f))
			continue;
		if (top && kept(rc->keep, f->id))
			continue;  /* whole */
		const rule_field *rf = active_field(r, f->id, top ? rc->active : 0);
		if (!rf) {
			if (top && r->echo && f->id != id_field(d))
				clear_field(c, f);
			continue;
		}
		char *p = (char *)c + f->offset;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			if (f->type == PROTOBUF_C_TYPE_MESSAGE && rf->sub) {
				ProtobufCMessage **v = *(ProtobufCMessage ***)p;
				for (size_t k = 0; k < rep_count(c, f); k++)
					lost_in(rc, v[k], rf->sub);
			}
			clear_field(c, f);
		} else if (f->type == PROTOBUF_C_TYPE_MESSAGE && rf->sub) {
			ProtobufCMessage *sub = *(ProtobufCMessage **)p;
			*(ProtobufCMessage **)p = residual(rc, sub, rf->sub, (rf->flags & RF_PRESENCE) != 0, 0);
			if (rc->oom)
				return NULL;
		} else {
			clear_field(c, f);
		}
	}
	if (!presence && protobuf_c_message_get_packed_size(c) == 0)
		return NULL;
	return c;
}

/* Whether all `m` holds beyond what rule `r` models is its id (`top`: the
 * id field and the keep set count) and the presence of RF_PRESENCE
 * submessages: the common case, which takes no copies. */
static int only_modeled(const ProtobufCMessage *m, const rule *r, unsigned active, const uint64_t *keep,
			const uint64_t *present, int top)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	if (m->n_unknown_fields)
		return 0;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (present && f->id < 128 && !(present[f->id / 64] >> (f->id % 64) & 1))
			continue;
		if (!proto_field_set(m, f))
			continue;
		if (top && f->id == id_field(d))
			continue;
		if (top && kept(keep, f->id))
			return 0;
		const rule_field *rf = active_field(r, f->id, top ? active : 0);
		if (!rf) {
			if (top && r->echo)
				continue;
			return 0;
		}
		if (f->type != PROTOBUF_C_TYPE_MESSAGE || !rf->sub)
			continue;
		const char *p = (const char *)m + f->offset;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			ProtobufCMessage *const *v = *(ProtobufCMessage *const *const *)p;
			for (size_t k = 0; k < rep_count(m, f); k++)
				if (!only_modeled(v[k], rf->sub, 0, NULL, NULL, 0))
					return 0;
		} else if (!only_modeled(*(ProtobufCMessage *const *)p, rf->sub, 0, NULL, NULL, 0)) {
			return 0;
		}
	}
	return 1;
}

/* The rest of such a message written directly: its id, then an empty
 * submessage for each RF_PRESENCE field present. */
static int simple_rest(arena *a, const ProtobufCMessage *m, const rule *r, uint32_t id, const uint8_t **out,
		       size_t *len)
{
	uint8_t buf[64], *q = buf;
	const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(m->descriptor, id);
	int64_t v;
	memcpy(&v, (const char *)m + f->offset, sizeof v);
	if (v) {
		q = wire_put_varint(q, (uint64_t)id << 3 | PROTOBUF_C_WIRE_TYPE_VARINT);
		q = wire_put_varint(q, (uint64_t)v);
	}
	for (size_t i = 0; i < r->n; i++) {
		if (!(r->f[i].flags & RF_PRESENCE))
			continue;
		f = protobuf_c_message_descriptor_get_field(m->descriptor, r->f[i].num);
		if (!proto_field_set(m, f))
			continue;
		q = wire_put_varint(q, (uint64_t)f->id << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
		*q++ = 0;
	}
	size_t n = (size_t)(q - buf);
	uint8_t *blob = arena_alloc(a, n ? n : 1);
	if (!blob)
		return -1;
	memcpy(blob, buf, n);
	*out = blob;
	*len = n;
	return 0;
}

int proto_rest_take(arena *a, const ProtobufCMessage *m, opcode op, const uint64_t *keep,
		    const uint64_t *present, const uint8_t **out, size_t *len, proto_loss *loss)
{
	*out = NULL;
	*len = 0;
	unsigned active = op == OP_CONSTANT ? RF_IF_CONSTANT : 0;
	const rule *root = root_rule(m->descriptor);
	uint32_t id = id_field(m->descriptor);
	if (only_modeled(m, root, active, keep, present, 1))
		return simple_rest(a, m, root, id, out, len);
	arena scratch;
	arena_init(&scratch);
	rest_ctx rc = { &scratch, active, keep, 0, loss };
	ProtobufCMessage *r = residual(&rc, m, root, 0, 1);
	int rc_ret = -1;
	if (!rc.oom) {
		size_t n = r ? protobuf_c_message_get_packed_size(r) : 0;
		/* never NULL: a module part read from a proto has a rest, if empty */
		uint8_t *buf = arena_alloc(a, n ? n : 1);
		if (buf) {
			if (n)
				protobuf_c_message_pack(r, buf);
			*out = buf;
			*len = n;
			rc_ret = 0;
		}
	}
	arena_release(&scratch);
	return rc_ret;
}

/* Whether a submessage holds anything its rule models (a residual holds
 * only the path to what it does not). */
static int has_modeled(const ProtobufCMessage *m, const rule *r)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const rule_field *rf;
		if (!proto_field_set(m, f) || !(rf = rule_find(r, f->id)))
			continue;
		if (rf->sub && f->type == PROTOBUF_C_TYPE_MESSAGE && f->label != PROTOBUF_C_LABEL_REPEATED) {
			if (has_modeled(*(ProtobufCMessage *const *)((const char *)m + f->offset), rf->sub))
				return 1;
			continue;
		}
		return 1;
	}
	return 0;
}

void proto_rest_clear_whole(ProtobufCMessage *built, const ProtobufCMessage *rest)
{
	const ProtobufCMessageDescriptor *d = built->descriptor;
	const rule *root = root_rule(d);
	int constant = 0;
	if (d == &xla__hlo_instruction_proto__descriptor) {
		const char *op = ((const Xla__HloInstructionProto *)built)->opcode;
		constant = op && strcmp(op, "constant") == 0;
	}
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (!proto_field_set(rest, f) || f->id == id_field(d))
			continue;
		const rule_field *rf = active_field(root, f->id, constant ? RF_IF_CONSTANT : 0);
		if (rf && rf->sub && f->type == PROTOBUF_C_TYPE_MESSAGE && f->label != PROTOBUF_C_LABEL_REPEATED &&
		    !has_modeled(*(ProtobufCMessage *const *)((const char *)rest + f->offset), rf->sub))
			continue;  /* the rest of a partly modeled message: merged */
		clear_field(built, f);
	}
}

/* --- the writer's side: merging the rest back --------------------------------------- */

static void *arena_pb_alloc(void *data, size_t n)
{
	return arena_alloc(data, n ? n : 1);
}

static void arena_pb_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

ProtobufCMessage *proto_rest_decode(arena *a, const ProtobufCMessageDescriptor *d, const uint8_t *p,
				    size_t n)
{
	ProtobufCAllocator al = { arena_pb_alloc, arena_pb_free, a };
	return protobuf_c_message_unpack(d, &al, n, p);
}

int proto_rest_id(const uint8_t *p, size_t n, const ProtobufCMessageDescriptor *d, int64_t *id)
{
	uint32_t num = id_field(d);
	*id = 0;
	size_t pos = 0;
	wire_field f;
	while (pos < n) {
		if (wire_next(p, n, &pos, &f))
			return -1;
		if (f.num == num && f.wt == PROTOBUF_C_WIRE_TYPE_VARINT)
			*id = (int64_t)f.v;
	}
	return 0;
}

/* The writer's common case: a rest that holds only the id and empty
 * RF_PRESENCE submessages (what simple_rest writes) is merged without
 * unpacking it. 1: done; 0: not such a rest; -1: out of memory. */
int proto_rest_merge_simple(arena *a, ProtobufCMessage *dst, const uint8_t *p, size_t n)
{
	const ProtobufCMessageDescriptor *d = dst->descriptor;
	const rule *r = root_rule(d);
	uint32_t id = id_field(d);
	/* first pass: only such fields? */
	for (int pass = 0; pass < 2; pass++) {
		size_t pos = 0;
		while (pos < n) {
			uint64_t key = 0, v = 0;
			for (int shift = 0; pos < n && shift < 64; shift += 7) {
				key |= (uint64_t)(p[pos] & 0x7f) << shift;
				if (!(p[pos++] & 0x80))
					break;
			}
			uint32_t num = (uint32_t)(key >> 3);
			int wt = (int)(key & 7);
			if (wt != PROTOBUF_C_WIRE_TYPE_VARINT && wt != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
				return 0;
			for (int shift = 0; pos < n && shift < 64; shift += 7) {
				v |= (uint64_t)(p[pos] & 0x7f) << shift;
				if (!(p[pos++] & 0x80))
					break;
			}
			if (wt == PROTOBUF_C_WIRE_TYPE_VARINT) {
				if (num != id)
					return 0;
				continue;
			}
			const rule_field *rf = rule_find(r, num);
			if (v != 0 || !rf || !(rf->flags & RF_PRESENCE))
				return 0;
			if (pass == 0)
				continue;
			const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, num);
			ProtobufCMessage **sub = (ProtobufCMessage **)((char *)dst + f->offset);
			if (*sub)
				continue;
			const ProtobufCMessageDescriptor *sd = f->descriptor;
			*sub = arena_alloc(a, sd->sizeof_message);
			if (!*sub)
				return -1;
			sd->message_init(*sub);
		}
	}
	return 1;
}

/* Merges `src` into `dst` (both of the same type) the way protobuf merges
 * a message read after another: set scalars replace, repeated fields
 * append, submessages merge (into a copy, as the writer shares some), and
 * unknown fields append. */
int proto_merge(arena *a, ProtobufCMessage *dst, const ProtobufCMessage *src, int depth)
{
	const ProtobufCMessageDescriptor *d = src->descriptor;
	if (depth > PROTO_MAX_DEPTH)
		return -1;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (!proto_field_set(src, f))
			continue;
		char *dp = (char *)dst + f->offset;
		const char *sp = (const char *)src + f->offset;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t ns = rep_count(src, f), nd = rep_count(dst, f);
			size_t w = proto_elem_size(f->type);
			if (nd == 0) {
				memcpy(dp, sp, sizeof(void *));
			} else {
				char *v = arena_array(a, nd + ns, w);
				if (!v)
					return -1;
				memcpy(v, *(char *const *)dp, nd * w);
				memcpy(v + nd * w, *(char *const *)sp, ns * w);
				*(char **)dp = v;
			}
			set_rep_count(dst, f, nd + ns);
			continue;
		}
		int same_member = 1;
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			same_member = oneof_case(dst, f) == f->id;
			memcpy((char *)dst + f->quantifier_offset, &f->id, sizeof f->id);
		} else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_MESSAGE &&
			   f->type != PROTOBUF_C_TYPE_STRING) {
			protobuf_c_boolean has = 1;
			memcpy((char *)dst + f->quantifier_offset, &has, sizeof has);
		}
		if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
			ProtobufCMessage *ds = same_member ? *(ProtobufCMessage **)dp : NULL;
			const ProtobufCMessage *ss = *(ProtobufCMessage *const *)sp;
			if (!ds) {
				*(const ProtobufCMessage **)dp = ss;
				continue;
			}
			ProtobufCMessage *copy = shallow_copy(a, ds);
			if (!copy || proto_merge(a, copy, ss, depth + 1))
				return -1;
			*(ProtobufCMessage **)dp = copy;
			continue;
		}
		size_t w = f->type == PROTOBUF_C_TYPE_BYTES ? sizeof(ProtobufCBinaryData) : proto_elem_size(f->type);
		memcpy(dp, sp, w);
	}
	if (src->n_unknown_fields) {
		size_t n = (size_t)dst->n_unknown_fields + src->n_unknown_fields;
		if (n > UINT32_MAX)
			return -1;
		ProtobufCMessageUnknownField *u = arena_array(a, n, sizeof *u);
		if (!u)
			return -1;
		if (dst->n_unknown_fields)
			memcpy(u, dst->unknown_fields, dst->n_unknown_fields * sizeof *u);
		memcpy(u + dst->n_unknown_fields, src->unknown_fields, src->n_unknown_fields * sizeof *u);
		dst->unknown_fields = u;
		dst->n_unknown_fields = (unsigned)n;
	}
	return 0;
}

size_t proto_count_unknown(const ProtobufCMessage *m, uint32_t *first)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	size_t n = m->n_unknown_fields;
	if (n && first && !*first)
		*first = m->unknown_fields[0].tag;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE || !proto_field_set(m, f))
			continue;
		const char *p = (const char *)m + f->offset;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			ProtobufCMessage *const *v = *(ProtobufCMessage *const *const *)p;
			for (size_t k = 0; k < rep_count(m, f); k++)
				n += proto_count_unknown(v[k], first);
		} else {
			n += proto_count_unknown(*(ProtobufCMessage *const *)p, first);
		}
	}
	return n;
}

/* --- what HLO text leaves out ---------------------------------------------------------- */

enum { AT_MODULE, AT_COMPUTATION, AT_INSTRUCTION };

typedef struct drop {
	char *name;         /* "window", "metadata.profile_info", "unknown field 1000" */
	int unknown;
	size_t count[3];    /* by AT_* */
} drop;

typedef struct drops {
	drop *v;
	size_t n, cap;
	int oom;
} drops;

static void drop_add(drops *ds, const char *parent, const char *name, uint32_t unknown_num, int at)
{
	strbuf b = STRBUF_INIT;
	if (name && parent)
		sb_printf(&b, "%s.%s", parent, name);
	else if (name)
		sb_puts(&b, name);
	else if (parent)
		sb_printf(&b, "unknown field %" PRIu32 " in %s", unknown_num, parent);
	else
		sb_printf(&b, "unknown field %" PRIu32, unknown_num);
	if (b.oom) {
		ds->oom = 1;
		sb_free(&b);
		return;
	}
	for (size_t i = 0; i < ds->n; i++) {
		if (strcmp(ds->v[i].name, sb_str(&b)) == 0) {
			ds->v[i].count[at]++;
			sb_free(&b);
			return;
		}
	}
	if (ds->n == ds->cap) {
		size_t ncap = ds->cap ? 2 * ds->cap : 16;
		drop *nv = hloi_realloc(ds->v, ncap * sizeof *nv);
		if (!nv) {
			ds->oom = 1;
			sb_free(&b);
			return;
		}
		ds->v = nv;
		ds->cap = ncap;
	}
	drop *e = &ds->v[ds->n++];
	memset(e, 0, sizeof *e);
	e->name = sb_take(&b);
	e->unknown = name == NULL;
	e->count[at] = 1;
	if (!e->name) {
		ds->oom = 1;
		ds->n--;
	}
}

/* The fields a rest holds, by name; inside the partly modeled messages
 * (metadata, shapes, frontend_attributes, ...) by their own names. */
static void list_rest(drops *ds, const ProtobufCMessage *m, const rule *r, const char *parent, int at,
		      int top)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	for (size_t i = 0; i < m->n_unknown_fields; i++)
		drop_add(ds, parent, NULL, m->unknown_fields[i].tag, at);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (!proto_field_set(m, f) || (top && f->id == id_field(d)))
			continue;
		const rule_field *rf = r ? rule_find(r, f->id) : NULL;
		if (rf && (rf->flags & RF_IF_MASK))
			rf = NULL; /* there only because the opcode is not the one */
		if (rf && rf->sub && f->type == PROTOBUF_C_TYPE_MESSAGE && f->label != PROTOBUF_C_LABEL_REPEATED) {
			const ProtobufCMessage *sub = *(ProtobufCMessage *const *)((const char *)m + f->offset);
			if (top && has_modeled(sub, rf->sub)) {
				/* kept whole: the IR's spelling would not give it back */
				drop_add(ds, parent, f->name, 0, at);
				continue;
			}
			strbuf b = STRBUF_INIT;
			if (parent)
				sb_printf(&b, "%s.", parent);
			sb_puts(&b, f->name);
			if (b.oom)
				ds->oom = 1;
			else
				list_rest(ds, sub, rf->sub, sb_str(&b), at, 0);
			sb_free(&b);
			continue;
		}
		drop_add(ds, parent, f->name, 0, at);
	}
}

static void list_blob(drops *ds, arena *a, const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n,
		      int at)
{
	if (!p || n == 0)
		return;
	ProtobufCMessage *m = proto_rest_decode(a, d, p, n);
	if (!m) {
		ds->oom = 1;
		return;
	}
	list_rest(ds, m, root_rule(d), NULL, at, 1);
}

void proto_warn_text_drops(const module *m, hloi_context *ctx, const char *where)
{
	drops ds = { NULL, 0, 0, 0 };
	arena a;
	arena_init(&a);
	list_blob(&ds, &a, &xla__hlo_module_proto__descriptor, m->pb_rest, m->pb_rest_len, AT_MODULE);
	for (int c = 0; c < m->ncomps; c++) {
		const computation *cp = m->comps[c];
		list_blob(&ds, &a, &xla__hlo_computation_proto__descriptor, cp->pb_rest, cp->pb_rest_len,
			  AT_COMPUTATION);
		for (int i = 0; i < cp->ninstrs; i++) {
			const instr *in = cp->instrs[i];
			list_blob(&ds, &a, &xla__hlo_instruction_proto__descriptor, in->pb_rest, in->pb_rest_len,
				  AT_INSTRUCTION);
		}
	}
	arena_release(&a);
	if (ds.n) {
		static const char *const one[] = { "the module", "computation", "instruction" };
		static const char *const many[] = { "the module", "computations", "instructions" };
		strbuf b = STRBUF_INIT;
		size_t nunknown = 0;
		for (size_t i = 0; i < ds.n; i++) {
			sb_printf(&b, "%s%s (", i ? ", " : "", ds.v[i].name);
			int first = 1;
			for (int k = 0; k < 3; k++) {
				size_t c = ds.v[i].count[k];
				if (!c)
					continue;
				if (k == AT_MODULE)
					sb_printf(&b, "%s%s", first ? "" : ", ", one[k]);
				else
					sb_printf(&b, "%s%zu %s", first ? "" : ", ", c, c == 1 ? one[k] : many[k]);
				first = 0;
				if (ds.v[i].unknown)
					nunknown += c;
			}
			sb_putc(&b, ')');
		}
		if (nunknown)
			sb_printf(&b, "; %zu of them %s unknown to hloi's schema (a newer XLA's)", nunknown,
				  nunknown == 1 ? "is" : "are");
		if (!b.oom)
			diag_emit_where(ctx, DIAG_WARNING, where,
					"HLO text cannot give back these fields of the proto as they are (it drops them, or shows them as XLA prints them): %s",
					sb_str(&b));
		sb_free(&b);
	}
	for (size_t i = 0; i < ds.n; i++)
		hloi_free(ds.v[i].name);
	hloi_free(ds.v);
}
