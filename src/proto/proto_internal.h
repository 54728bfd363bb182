/* Shared by the files of src/proto/ (the only ones that see protobuf-c's
 * generated types): the wire-format checker, the allocator, the text forms
 * of attributes that travel in structured fields, and the pieces the binary
 * and text front ends have in common. */
#ifndef HLOI_PROTO_INTERNAL_H
#define HLOI_PROTO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "hlo.pb-c.h"
#include "proto/proto.h"
#include "util/arena.h"
#include "util/strbuf.h"

/* Deepest message nesting accepted (protobuf-c 1.4 recurses without a limit;
 * a module is about 8 levels deep plus its tuple nesting). */
#define PROTO_MAX_DEPTH 100

/* Keys under which hloi keeps, in an instruction's or the module's
 * frontend_attributes, what HLO text says and XLA's fields cannot (so
 * hloi -> proto -> hloi gives the same text back). XLA carries them along
 * unread. doc/protos.md lists them. */
#define HLOI_KEY_PREFIX "hloi."
/* instructions */
#define HLOI_KEY_ATTR "hloi.attr."        /* + name: an attribute XLA has no field for, as text */
#define HLOI_KEY_EXPLICIT "hloi.explicit" /* attributes written with the value XLA leaves out */
#define HLOI_KEY_IMPLICIT "hloi.implicit" /* attributes XLA prints that the text left out */
#define HLOI_KEY_CALLEES "hloi.callees"   /* callee attributes spelled otherwise: name[:count],... */
#define HLOI_KEY_ELIDED "hloi.elided"     /* constant({...}) */
#define HLOI_KEY_NO_SHAPE "hloi.no_shape" /* the result shape was not written (inferred) */
#define HLOI_KEY_NO_LAYOUT "hloi.no_layout" /* per array leaf: 1 layout written, 0 filled in */
/* the module (also hloi.explicit / hloi.implicit, for header attributes) */
#define HLOI_KEY_NO_HEADER "hloi.no_header"
#define HLOI_KEY_HEADER_ATTR "hloi.header_attr." /* + name: a header attribute without a field */
#define HLOI_KEY_HEADER_ORDER "hloi.header_order" /* names, when not XLA's order */
#define HLOI_KEY_BROADCAST_MODE "hloi.broadcast_mode"
#define HLOI_KEY_IMPLICIT_ENTRY "hloi.implicit_entry"
#define HLOI_KEY_IMPLICIT_ROOT "hloi.implicit_root" /* computation names */
#define HLOI_KEY_SIGNATURE "hloi.signature"         /* computation names[:leaf layout mask] */
#define HLOI_KEY_COMP_ORDER "hloi.computation_order" /* names, when the text had callers first */

/* Which message a file holds. */
typedef enum proto_root { PROOT_MODULE, PROOT_HLO, PROOT_SNAPSHOT } proto_root;

const ProtobufCMessageDescriptor *proto_root_descriptor(proto_root r);
const char *proto_root_name(proto_root r);

/* An allocator through hloi_malloc / hloi_free that notes a failure. */
typedef struct proto_alloc {
	ProtobufCAllocator a;
	int failed;
} proto_alloc;
void proto_alloc_init(proto_alloc *pa);

/* An instruction's name and its position in the computation. */
typedef struct namepos {
	const char *name;
	int pos;
} namepos;
/* Whether the n names are distinct: 1, 0, or -1 out of memory. A hash set
 * (sorting a million names took 4% of a load); a caller sorts only to
 * report a duplicate. (load.c) */
int proto_names_distinct(const namepos *v, size_t n);

/* Well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF). */
int proto_utf8_valid(const unsigned char *s, size_t n);

/* --- wire.c ------------------------------------------------------------------ */

/* Checks wire-format bytes against message type `d` before protobuf-c sees
 * them: well-formed keys, varints and lengths, wire types that fit the
 * declared fields, packed payloads, strings that are UTF-8 without NUL
 * bytes, nesting at most PROTO_MAX_DEPTH deep. On failure returns -1 and
 * writes where (`computation 'main', instruction 'add.3'`, possibly empty)
 * and what into the buffers. */
int wire_check(const ProtobufCMessageDescriptor *d, const unsigned char *data, size_t len,
	       strbuf *where, strbuf *what);
/* Tells HloModuleProto, HloProto and HloSnapshot apart by content. */
proto_root wire_classify(const unsigned char *data, size_t len);

/* One field of wire-format bytes: its number and wire type, the value of a
 * varint (or a length), the payload of a length-delimited field, and the
 * offsets of its key and value. */
typedef struct wire_field {
	uint32_t num;
	int wt;
	uint64_t v;
	const unsigned char *p;
	size_t n;
	size_t start, vstart;
} wire_field;
/* Reads the field at *pos and moves past it: 0, or -1 when the bytes end
 * or are malformed. */
int wire_next(const unsigned char *p, size_t len, size_t *pos, wire_field *f);
static inline size_t wire_varint_len(uint64_t v)
{
	size_t n = 1;
	while (v > 0x7f) {
		v >>= 7;
		n++;
	}
	return n;
}
/* Sets bit k of present[k / 64] for each field number k < 128 the message's
 * bytes hold (a field not there is unset once unpacked). */
void wire_present(const unsigned char *p, size_t len, uint64_t present[2]);
/* Writes v as a varint; returns the byte after it. */
static inline unsigned char *wire_put_varint(unsigned char *p, uint64_t v)
{
	while (v > 0x7f) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* A root message whose instructions are read one at a time: `wire` is the
 * message without the computations' `instructions` fields (what protobuf-c
 * unpacks as a whole), and spans[first[c] .. first[c + 1]) locate the
 * instructions of computation c (in unpack order) in the original bytes.
 * A module's instruction protos never exist all at once. */
typedef struct proto_skeleton {
	unsigned char *wire;
	size_t len;
	size_t *spans, nspans; /* offsets of each instruction's length */
	size_t *first, ncomps; /* ncomps + 1 entries */
} proto_skeleton;
/* Builds the skeleton of bytes that passed wire_check: 0, -1 out of
 * memory, -2 malformed. */
int wire_skeleton(proto_skeleton *sk, proto_root root, const unsigned char *data, size_t len);
void wire_skeleton_free(proto_skeleton *sk);
/* Instruction i's bytes and their length, or NULL. */
const unsigned char *wire_skeleton_span(const proto_skeleton *sk, const unsigned char *data, size_t len,
					size_t i, size_t *n);
/* An HloInstructionProto's name (not NUL-terminated) and id, without
 * unpacking it. */
void wire_name_id(const unsigned char *p, size_t len, const char **name, size_t *name_len, int64_t *id);

/* --- load.c ------------------------------------------------------------------ */

/* The binary loader once the root message type is known. */
hloi_status proto_load_wire(module **out, hloi_context *ctx, const char *name,
			    const unsigned char *data, size_t len, proto_root root);

/* --- pbtxt_read.c / pbtxt_write.c --------------------------------------------- */

/* Parses proto text (registered in ctx as source `name`), picks the root type
 * from its top-level field names, and encodes it as wire-format bytes into
 * *wire (hloi_malloc'd). Errors are located in the text. */
hloi_status pbtxt_to_wire(unsigned char **wire, size_t *wire_len, proto_root *root,
			  hloi_context *ctx, const char *name, const char *text, size_t len);
/* The same for a message type the caller names. */
hloi_status pbtxt_to_wire_as(unsigned char **wire, size_t *wire_len, const ProtobufCMessageDescriptor *d,
			     hloi_context *ctx, const char *name, const char *text, size_t len);
/* Appends a message in text format, fields in number order, nested
 * messages indented by two spaces. */
void pbtxt_print_message(strbuf *b, const ProtobufCMessage *msg);

/* Reads one LiteralProto (what: "argument 0", for errors) into a new
 * literal, with the checks the module loader makes. */
hloi_status proto_literal_in(hloi_literal **out, hloi_context *ctx, const char *file, Xla__LiteralProto *lp,
			     const char *what);

/* --- save.c ------------------------------------------------------------------ */

/* A literal as a LiteralProto allocated in arena `a`; NULL with *st set
 * (an error naming `file` recorded) on failure. */
Xla__LiteralProto *proto_literal_out(arena *a, hloi_context *ctx, const char *file, const hloi_literal *lit,
				     hloi_status *st);

/* Bytes appended in chunks that never move (a computation's packed
 * instructions: tens of megabytes in a big dump, never copied to grow). */
typedef struct chunk_piece chunk_piece;
typedef struct chunkbuf {
	chunk_piece *head, *tail;
	size_t len;            /* bytes in all chunks */
} chunkbuf;
/* Room for n more bytes in one piece, or NULL when out of memory. */
unsigned char *chunkbuf_extend(chunkbuf *b, size_t n);
/* Calls put(arg, bytes, n) for each chunk in order: 0, or put's failure. */
int chunkbuf_emit(const chunkbuf *b, int (*put)(void *arg, const void *data, size_t n), void *arg);
void chunkbuf_free(chunkbuf *b);

/* Builds the HloModuleProto of a module; every allocation is in arena `a`.
 * Errors (unknown operand or callee, cycles) are recorded in ctx. With a
 * `stream` (save.c's; room for every computation), the computations come
 * without instructions, which are kept for the writer as they are built:
 * one instruction's proto exists at a time, and a plain one's bytes only
 * as they are written. */
typedef struct proto_stream proto_stream;
hloi_status proto_build_module(Xla__HloModuleProto **out, arena *a, const module *m,
			       hloi_context *ctx, proto_stream *stream);
/* Whether the writer packs plain instructions itself (the default) or
 * builds every instruction as a message (tests compare the two). */
extern int proto_plain_writer;
/* Instructions the plain writer has written (for tests). */
extern unsigned long proto_plain_written;

/* --- rest.c: the fields the IR does not model ---------------------------------- */

/* What a load could not keep anywhere (fields inside repeated messages the
 * IR models, such as a tuple element's layout split_configs): how many,
 * and the first one's message and field (NULL: an unknown field). */
typedef struct proto_loss {
	size_t n;
	const char *message, *field;
} proto_loss;

/* Packs into arena `a` the fields of a module, computation or instruction
 * message (op: the instruction's opcode, else OP_COUNT) that the IR does
 * not model, unknown fields included, and the fields numbered in `keep`
 * (a 128-bit set; NULL: none) whole; *out is never NULL on success.
 * `present` (wire_present of the message's bytes, or NULL) spares looking
 * at the fields the bytes did not hold. Returns -1 when out of memory. */
int proto_rest_take(arena *a, const ProtobufCMessage *m, opcode op, const uint64_t *keep,
		    const uint64_t *present, const uint8_t **out, size_t *len, proto_loss *loss);
/* Clears in `built` each field `rest` holds whole (all but the rest of a
 * partly modeled message), so that merging the rest puts it back as it
 * was read. */
void proto_rest_clear_whole(ProtobufCMessage *built, const ProtobufCMessage *rest);
/* Unpacks such bytes as message type `d`, allocating in `a`; NULL when out
 * of memory. */
ProtobufCMessage *proto_rest_decode(arena *a, const ProtobufCMessageDescriptor *d, const uint8_t *p,
				    size_t n);
/* The id those bytes hold for message type `d` (instruction: field 35,
 * computation and module: 5), 0 when absent; -1 when malformed. */
int proto_rest_id(const uint8_t *p, size_t n, const ProtobufCMessageDescriptor *d, int64_t *id);
/* Merges the rest of a module, computation or instruction into `dst`
 * without unpacking it, when it holds only the id and empty submessages
 * (the common case): 1 when done, 0 when the rest needs
 * proto_rest_decode and proto_merge, -1 when out of memory. */
int proto_rest_merge_simple(arena *a, ProtobufCMessage *dst, const uint8_t *p, size_t n);
/* Merges `src` into `dst` (the same type) as protobuf merges a message read
 * after another; new arrays and copies come from `a`. -1 when out of
 * memory. */
int proto_merge(arena *a, ProtobufCMessage *dst, const ProtobufCMessage *src, int depth);
/* How many unknown fields a message holds, nested ones included; *first
 * gets the first one's number when it is 0. */
size_t proto_count_unknown(const ProtobufCMessage *m, uint32_t *first);
/* Whether a field of a message is set (proto3: not its zero value; -0.0
 * is set), and the size of one value of a type in a message struct. */
int proto_field_set(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f);
size_t proto_elem_size(ProtobufCType t);

/* --- textcur.c: a cursor over attribute text ------------------------------------ */

/* The text of a value being read, with the first failure: where (offset
 * into s) and what was expected there. */
typedef struct tcur {
	const char *s;
	size_t i, n;
	int bad, oom;
	size_t bad_at;
	char expect[256];  /* a copy: callers pass texts built on their stack */
} tcur;

void tc_init(tcur *c, const char *s, size_t n);
/* Skips white space and comments. */
void tc_skip(tcur *c);
/* Records a failure (the first one only); returns -1. */
int tc_fail(tcur *c, const char *expect);
/* The next character after white space, or -1 at the end. */
int tc_peek(tcur *c);
int tc_eat(tcur *c, char ch);
/* 0, or -1 having recorded `what` as expected. */
int tc_expect(tcur *c, char ch, const char *what);
int tc_at_end(tcur *c);
/* A word [A-Za-z_][A-Za-z0-9_.-]*: its span. */
int tc_word(tcur *c, size_t *s, size_t *e);
int tc_word_is(const tcur *c, size_t s, size_t e, const char *w);
/* Consumes `kw` when it is the next word. */
int tc_keyword(tcur *c, const char *kw);
int tc_int64(tcur *c, int64_t *out);
int tc_int32(tcur *c, int32_t *out);
int tc_double(tcur *c, double *out);
/* A quoted, C-escaped string, unescaped into the arena (may hold NULs). */
int tc_string(tcur *c, arena *a, char **out, size_t *len);
/* The same, required to be UTF-8 without NUL bytes (a proto string). */
int tc_text_string(tcur *c, arena *a, char **out);
/* A balanced `{...}` taken as written (quotes respected). */
int tc_braced(tcur *c, size_t *start, size_t *end);
/* `open` int {',' int} `close` (possibly empty) into the arena. */
int tc_int_list(tcur *c, char open, char close, int64_t **out, size_t *n, arena *a);

/* `"..."` C-escaped as XLA's CEscape does. */
void put_quoted(strbuf *b, const char *s, size_t n);
/* The shortest %g spelling that reads back as v. */
void put_double(strbuf *b, double v);
/* `{1,2,3}` with the given brackets. */
void put_int_list(strbuf *b, const int64_t *v, size_t n, char open, char close);
/* prefix v0 sep v1 ... suffix */
void put_int_list_sep(strbuf *b, const char *prefix, const int64_t *v, size_t n, const char *sep,
		      const char *suffix);

/* --- attrs.c: attribute values that are proto messages, as HLO text -------------- */

/* OpMetadata: the inside of `metadata={...}` as XLA prints it (fields in
 * XLA's order, empty ones left out), and `{...}` parsed. */
void metadata_print_body(strbuf *b, const Xla__OpMetadata *md);
int metadata_parse(tcur *c, Xla__OpMetadata *md, arena *a);
/* backend_config: a JSON object as written, anything else quoted. */
void backend_config_print(strbuf *b, const uint8_t *data, size_t len);
int backend_config_parse(tcur *c, ProtobufCBinaryData *out, arena *a);
/* frontend_attributes: `{a="x",b={...}}` (sorted; hloi's keys left out). */
int proto_is_hloi_key(const char *key);
size_t frontend_user_count(const Xla__FrontendAttributes *fa);
void frontend_print(strbuf *b, const Xla__FrontendAttributes *fa);
int frontend_parse(tcur *c, char ***keys, char ***values, size_t *n, arena *a);
/* StatisticsViz: `{visualizing_index=1,count_nan=0,...}`. */
void statistics_print(strbuf *b, const Xla__StatisticsViz *st);
int statistics_parse(tcur *c, Xla__StatisticsViz *st, arena *a);
/* ResultAccuracy: `{mode=highest}`, `{tolerance={atol=..,rtol=..,ulps=..}}`;
 * the printer returns 0 (and prints nothing) for the default. */
int accuracy_print(strbuf *b, const Xla__ResultAccuracy *ra);
int accuracy_parse(tcur *c, Xla__ResultAccuracy *ra, arena *a);
/* ParameterReplication: `{true,false}`. */
void replication_print(strbuf *b, const Xla__ParameterReplication *r);
int replication_parse(tcur *c, Xla__ParameterReplication *r, arena *a);
/* output_to_operand_aliasing: `{{0}: (1, {}), ...}`. */
void aliasing_print(strbuf *b, Xla__OutputOperandAliasing *const *v, size_t n);
int aliasing_parse(tcur *c, Xla__OutputOperandAliasing ***out, size_t *n, arena *a);
/* OriginalValueProto: `{{"x.1" {0}}}`, `{({"a"}, {"b"})}`,
 * `{[synthetic_call]}`; the printer returns -1 for indices it cannot show. */
int origin_print(strbuf *b, const Xla__OriginalValueProto *ov);
int origin_parse(tcur *c, Xla__OriginalValueProto *ov, arena *a);
/* domain={kind="sharding", entry=S, exit=S}: XLA keeps exit= in
 * domain_entry_sharding and entry= in domain_exit_sharding. */
void domain_print(strbuf *b, const Xla__OpSharding *entry_field, const Xla__OpSharding *exit_field);
int domain_parse(tcur *c, Xla__OpSharding **entry_field, Xla__OpSharding **exit_field, arena *a);

/* --- sharding.c ------------------------------------------------------------------------ */

/* XLA's sharding text <-> OpSharding (tuples, iota and explicit tile
 * assignments, subgroups, shard groups, metadata, named shardings over a
 * mesh). */
int sharding_parse(tcur *c, arena *a, Xla__OpSharding **out);
/* Whether the proto has a text form (the printer needs it). */
int sharding_printable(const Xla__OpSharding *s);
void sharding_print(strbuf *b, const Xla__OpSharding *s);
/* replica_groups=mesh['x'=2] {'x'} <-> MeshAxesReplicaGroupListProto. */
int mesh_groups_parse(tcur *c, arena *a, Xla__MeshAxesReplicaGroupListProto **out);
int mesh_groups_printable(const Xla__MeshAxesReplicaGroupListProto *g);
void mesh_groups_print(strbuf *b, const Xla__MeshAxesReplicaGroupListProto *g);

/* --- fields.c: typed attributes <-> HloInstructionProto fields --------------------- */

/* What the mapping needs of an instruction's operands (a compare's default
 * type, a conditional's predicate, collective-permute's slice sizes). */
typedef struct fields_ops {
	int nops;
	const shape *const *shapes;  /* NULL entries: not known */
} fields_ops;

/* Conversions of shapes and literals, which need the loader's or the
 * saver's checks. NULL hooks: attributes are made without those values
 * (enough to know which attributes there are). */
typedef struct fields_hooks {
	void *ctx;
	int (*shape_in)(void *ctx, const Xla__ShapeProto *sp, shape *out);  /* -1: reported */
	Xla__ShapeProto *(*shape_out)(void *ctx, const shape *s);           /* NULL: out of memory */
	Xla__LiteralProto *(*literal_out)(void *ctx, const attr *a);         /* NULL: reported */
} fields_hooks;

/* The attributes XLA's printer shows for the fields of `ip` (see fields.c),
 * in attrs.def's order, into `out` (room for ATTR_COUNT), their values in
 * arena `a`: callees, control predecessors and literals aside. `force[id]` shows an attribute although its field holds
 * the default (hloi.explicit), `suppress[id]` leaves one out
 * (hloi.implicit); either may be NULL. Returns 0; 1 when some field has
 * no text form (it is left out); -1 when out of memory. */
int fields_in(arena *a, opcode op, const Xla__HloInstructionProto *ip, const fields_ops *ops,
	      const fields_hooks *hooks, const uint8_t *force, const uint8_t *suppress, attr *out, int *nout);

/* Writing attributes into fields. */
typedef struct fout {
	arena *a;
	opcode op;
	const fields_hooks *hooks;
	uint64_t taken[2];    /* field numbers already written (attributes sharing one) */
	int api_version_set;
	strbuf *err;          /* FO_BAD: the message */
	size_t err_off;       /* FO_BAD: offset in the value's text, or SIZE_MAX */
} fout;

typedef enum fo_result {
	FO_OK,
	FO_NOFIELD,   /* no XLA field holds it */
	FO_TAKEN,     /* its field holds another attribute's value */
	FO_BAD,       /* its value cannot be written (message in o->err) */
	FO_OOM
} fo_result;

fo_result field_out(fout *o, const attr *at, Xla__HloInstructionProto *ip);
/* The fields XLA's writer sets for the opcode that no attribute gave (a
 * compare's comparison_type, a dot's dimension numbers and
 * precision_config, a collective's device list, ...). -1 when out of
 * memory. */
int fields_defaults(fout *o, Xla__HloInstructionProto *ip, const fields_ops *ops);
int fields_taken(const uint64_t *taken, uint32_t field);
/* XLA's spelling of an opcode's n called computations (pred: a
 * conditional's predicate is a pred): up to two attributes, each taking
 * counts[i] computations in order. Returns how many attributes. */
int fields_canon_callees(opcode op, size_t n, int pred, attr_id *ids, size_t *counts);
int fields_is_callee(attr_id id);
/* Opcodes whose text always carries dimensions={...}. */
int fields_always_dimensions(opcode op);
/* "FLOAT", "SIGNED", "UNSIGNED" (NULL for tuples and tokens). */
const char *fields_default_comparison_type(etype t);

/* --- module_fields.c: the module's fields as header text -------------------------- */

/* input_output_alias={ {0}: (0, {}, may-alias), ... } (`{}` when empty). */
void alias_text(strbuf *b, const alias_entry *v, int n);
/* buffer_donor={ (0, {}), (1, {0}) } */
void donor_print(strbuf *b, const Xla__HloBufferDonorProto *d);
int donor_parse(tcur *c, Xla__HloBufferDonorProto *d, arena *a);
/* FileNames ... StackFrames, trimmed (parent_frame_id: the proto's + 1). */
void stack_frames_print(strbuf *b, const Xla__StackFrameIndexProto *s);
int stack_frames_parse(tcur *c, Xla__StackFrameIndexProto *s, arena *a);

/* Where a header attribute goes in XLA's printing order. */
int proto_header_rank(const char *name);

/* --- save.c: what the writer makes of an instruction, for the loader ------------- */

/* The fields the writer gives `in` (attributes, defaults, frontend
 * attributes with hloi's keys, parameter_number; not the ids, operands,
 * callees' ids, control predecessors, shape or a constant's literal), in
 * arena `a`, without diagnostics; NULL when they cannot be written. */
Xla__HloInstructionProto *proto_echo_instr(arena *a, const module *m, const instr *in, const fields_ops *ops);

#endif
