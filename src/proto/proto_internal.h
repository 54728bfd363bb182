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
 * frontend_attributes, what XLA's fields cannot say (so hloi -> proto ->
 * hloi gives the same text back). XLA carries them along unread. */
#define HLOI_KEY_PREFIX "hloi."
#define HLOI_KEY_ATTR "hloi.attr."            /* + name: raw attribute text */
#define HLOI_KEY_ATTR_ORDER "hloi.attr_order" /* names, comma-separated */
#define HLOI_KEY_ELIDED "hloi.elided"         /* constant({...}) */
#define HLOI_KEY_NO_HEADER "hloi.no_header"
#define HLOI_KEY_HEADER_ATTR "hloi.header_attr." /* + 4-digit position + "." + name */
#define HLOI_KEY_BROADCAST_MODE "hloi.broadcast_mode"
#define HLOI_KEY_IMPLICIT_ENTRY "hloi.implicit_entry"
#define HLOI_KEY_IMPLICIT_ROOT "hloi.implicit_root" /* computation names */
#define HLOI_KEY_SIGNATURE "hloi.signature"         /* computation names */
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

/* Builds the HloModuleProto of a module; every allocation is in arena `a`.
 * Errors (unknown operand or callee, cycles) are recorded in ctx. */
hloi_status proto_build_module(Xla__HloModuleProto **out, arena *a, const module *m,
			       hloi_context *ctx);

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
 * not model, unknown fields included; *out is never NULL on success.
 * Returns -1 when out of memory. */
int proto_rest_take(arena *a, const ProtobufCMessage *m, opcode op, const uint8_t **out, size_t *len,
		    proto_loss *loss);
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

/* --- attrs.c: attributes that have XLA fields, as HLO text ------------------ */

/* `{op_type="add" op_name="x" source_line=3}` as XLA prints OpMetadata, or
 * nothing when every field is empty. */
void attr_render_metadata(strbuf *b, const Xla__OpMetadata *md);
/* Parses that text into *md (strings in arena `a`); -1 when it has a key or
 * value hloi does not map. */
int attr_parse_metadata(const char *text, Xla__OpMetadata *md, arena *a);
/* backend_config: a JSON object as written, anything else as a quoted
 * C-escaped string; nothing when empty. */
void attr_render_backend_config(strbuf *b, const uint8_t *data, size_t len);
int attr_parse_backend_config(const char *text, ProtobufCBinaryData *out, arena *a);
/* `{a="x",b="y"}`; keys that start with HLOI_KEY_PREFIX are left out. */
void attr_render_frontend(strbuf *b, const Xla__FrontendAttributes *fa);
/* Parses `{a="x", b="y"}` into key/value pairs in the arena. */
int attr_parse_frontend(const char *text, char ***keys, char ***values, size_t *n, arena *a);
/* The group a raw attribute falls in when the loader rebuilds an
 * instruction's attributes (callees, kind, others, control-predecessors,
 * frontend_attributes, metadata, backend_config: XLA's printing order). */
int attr_slot(const char *name);
/* The order the loader gives raw attributes: by slot, then (within the
 * slot of other attributes, whose order a map does not keep) by name. */
int attr_order_cmp(const char *a, const char *b);
/* Whether the opcode's text always carries `dimensions=` (so an empty list
 * is still written, and the proto's empty field means `dimensions={}`). */
int opcode_always_has_dimensions(opcode op);
/* "to_apply" or "calls" for opcodes whose one called computation the IR
 * keeps in instr->callee_name; NULL for the others. */
const char *callee_typed_attr(opcode op);
/* The raw attributes that name `n` called computations of an instruction
 * whose opcode has no typed callee (while: condition=, body=; conditional:
 * branch_computations={...}; else called_computations={...}). Fills up to
 * two names and arena-allocated values; returns the count, -1 when out of
 * memory. */
int callee_render(opcode op, const char *const *names, size_t n, const char **anames,
		  char **avalues, arena *a);
/* `{a, b}` lists of names (control-predecessors, branch_computations). */
void attr_render_names(strbuf *b, const char *const *names, size_t n);
int attr_parse_names(const char *text, char ***names, size_t *n, arena *a);

#endif
