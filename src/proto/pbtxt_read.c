/* Protobuf text format -> wire format, for any message type: the syntax
 * tree from grammar/pbtxt.y is checked against protobuf-c's descriptors
 * (field names, value kinds, ranges, enum names, UTF-8) with located errors
 * and encoded as the bytes the binary loader reads. One generic walker, no
 * code per message; fields of a newer XLA known by name are skipped with a
 * warning (binary files keep them as unknown fields). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/pbtxt.h"
#include "proto/proto_internal.h"
/* the generated scanner header wants the parser's types under flex's names */
#include "pbtxt.tab.h"
#define YYSTYPE PBTXT_YYSTYPE
#define YYLTYPE PBTXT_YYLTYPE
#include "pbtxt.lex.h"
#include "util/alloc.h"
#include "util/diag.h"

/* --- the parser driver --------------------------------------------------------- */

hloi_status pbtxt_parse_text(pbtxt_parse *p, const char *text, size_t len)
{
	yyscan_t scanner = NULL;
	p->st = HLOI_OK;
	p->off = 0;
	p->depth = 0;
	p->root = NULL;
	if (len > (size_t)INT_MAX - 2) {
		diag_error_where(p->ctx, NULL, "the file is too large (%zu bytes)", len);
		return HLOI_EPARSE;
	}
	/* protobuf's own tokenizer refuses a raw NUL too (inside a string it
	 * ends it). Refused before scanning: flex takes each NUL for the end of
	 * its buffer and rescans the token so far, so a long token full of
	 * them took quadratic time. */
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		size_t off = (size_t)(nul - text);
		diag_error(p->ctx, p->src, (loc){ off, off + 1 }, "invalid NUL byte in input");
		return HLOI_EPARSE;
	}
	p->nflex = 0;
	if (pbtxt_yylex_init_extra(p, &scanner)) {
		while (p->nflex > 0)
			hloi_free(p->flex_live[--p->nflex]);
		return HLOI_ENOMEM;
	}
	p->scanner = scanner;
	if (setjmp(p->fatal)) {
		pbtxt_yylex_destroy(scanner);
		while (p->nflex > 0)
			hloi_free(p->flex_live[--p->nflex]);
		return p->st != HLOI_OK ? p->st : HLOI_EPARSE;
	}
	if (!pbtxt_yy_scan_bytes(text, (int)len, scanner)) {
		pbtxt_yylex_destroy(scanner);
		return HLOI_ENOMEM;
	}
	int rc = pbtxt_yyparse(scanner, p);
	pbtxt_yylex_destroy(scanner);
	if (rc == 2 && p->st == HLOI_OK)
		p->st = HLOI_ENOMEM;
	if (rc && p->st == HLOI_OK)
		p->st = HLOI_EPARSE;
	return p->st;
}

/* --- encoding -------------------------------------------------------------------- */

typedef struct enc {
	hloi_context *ctx;
	int src;
	hloi_status st;
} enc;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int efail(enc *e, loc at, const char *fmt, ...)
{
	strbuf b = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	diag_error(e->ctx, e->src, at, "%s", sb_str(&b));
	sb_free(&b);
	if (e->st == HLOI_OK)
		e->st = HLOI_EPARSE;
	return -1;
}

static void put_varint(strbuf *b, uint64_t v)
{
	char buf[10];
	int n = 0;
	do {
		buf[n] = (char)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] = (char)(buf[n] | 0x80);
		n++;
	} while (v);
	sb_putn(b, buf, (size_t)n);
}

static void put_fixed(strbuf *b, uint64_t v, int bytes)
{
	char buf[8];
	for (int i = 0; i < bytes; i++)
		buf[i] = (char)((v >> (8 * i)) & 0xff);
	sb_putn(b, buf, (size_t)bytes);
}

static void put_key(strbuf *b, uint32_t field, int wire_type)
{
	put_varint(b, ((uint64_t)field << 3) | (unsigned)wire_type);
}

static const char *type_name(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32: return "int32";
	case PROTOBUF_C_TYPE_SINT32: return "sint32";
	case PROTOBUF_C_TYPE_SFIXED32: return "sfixed32";
	case PROTOBUF_C_TYPE_INT64: return "int64";
	case PROTOBUF_C_TYPE_SINT64: return "sint64";
	case PROTOBUF_C_TYPE_SFIXED64: return "sfixed64";
	case PROTOBUF_C_TYPE_UINT32: return "uint32";
	case PROTOBUF_C_TYPE_FIXED32: return "fixed32";
	case PROTOBUF_C_TYPE_UINT64: return "uint64";
	case PROTOBUF_C_TYPE_FIXED64: return "fixed64";
	case PROTOBUF_C_TYPE_FLOAT: return "float";
	case PROTOBUF_C_TYPE_DOUBLE: return "double";
	case PROTOBUF_C_TYPE_BOOL: return "bool";
	case PROTOBUF_C_TYPE_ENUM: return "enum";
	case PROTOBUF_C_TYPE_STRING: return "string";
	case PROTOBUF_C_TYPE_BYTES: return "bytes";
	case PROTOBUF_C_TYPE_MESSAGE: return "message";
	}
	return "?";
}

/* An integer token: decimal, 0x hex or 0 octal. -1 when it is not one,
 * -2 when it does not fit 64 bits. */
static int parse_uint(const char *s, uint64_t *out)
{
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	} else if (s[0] == '0' && s[1]) {
		base = 8;
		s += 1;
	}
	if (!*s)
		return -1;
	uint64_t v = 0;
	for (; *s; s++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		if (d >= base)
			return -1;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -2;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* An integer value for a field of type t, range-checked. */
static int int_value(enc *e, const ProtobufCFieldDescriptor *f, const pt_value *v, uint64_t *out)
{
	if (v->kind != PT_NUMBER)
		return efail(e, v->at, "expected an integer for field '%s' (%s)", f->name, type_name(f->type));
	uint64_t mag;
	int r = parse_uint(v->text.s, &mag);
	if (r == -1)
		return efail(e, v->at, "expected an integer for field '%s' (%s)", f->name, type_name(f->type));
	int is_signed = 1;
	uint64_t max = 0;
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		max = INT32_MAX;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		max = UINT32_MAX;
		is_signed = 0;
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		max = UINT64_MAX;
		is_signed = 0;
		break;
	default:
		max = INT64_MAX;
		break;
	}
	if (r == -2 || (v->neg && !is_signed) || (v->neg ? mag > max + 1 : mag > max)) {
		if (v->neg && !is_signed && mag == 0) {
			*out = 0;
			return 0;
		}
		return efail(e, v->at, "integer out of range for field '%s' (%s)", f->name, type_name(f->type));
	}
	*out = v->neg ? (uint64_t)0 - mag : mag;
	return 0;
}

static int float_value(enc *e, const ProtobufCFieldDescriptor *f, const pt_value *v, double *out)
{
	double d;
	if (v->kind == PT_IDENT) {
		const char *s = v->text.s;
		if (strcasecmp(s, "inf") == 0 || strcasecmp(s, "infinity") == 0)
			d = INFINITY;
		else if (strcasecmp(s, "nan") == 0)
			d = NAN;
		else
			return efail(e, v->at, "expected a number for field '%s' (%s)", f->name,
				     type_name(f->type));
	} else if (v->kind == PT_NUMBER) {
		const char *s = v->text.s;
		size_t n = v->text.len;
		char buf[128];
		if (n >= sizeof buf)
			return efail(e, v->at, "number too long for field '%s'", f->name);
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (n > 1 && (buf[n - 1] == 'f' || buf[n - 1] == 'F') &&
		    !(buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')))
			buf[n - 1] = '\0';
		uint64_t u;
		if (parse_uint(buf, &u) == 0) {
			d = (double)u;
		} else {
			char *end;
			errno = 0;
			d = strtod(buf, &end);
			if (*end || (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')))
				return efail(e, v->at, "expected a number for field '%s' (%s)", f->name,
					     type_name(f->type));
		}
	} else {
		return efail(e, v->at, "expected a number for field '%s' (%s)", f->name, type_name(f->type));
	}
	*out = v->neg ? -d : d;
	return 0;
}

static int encode_fields(enc *e, const ProtobufCMessageDescriptor *d, const pt_field *fields,
			 strbuf *out, int depth);

/* Encodes one value of field f. */
static int encode_value(enc *e, const ProtobufCFieldDescriptor *f, const pt_value *v, strbuf *out,
			int depth)
{
	if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
		if (v->kind != PT_MESSAGE)
			return efail(e, v->at, "field '%s' holds a message (%s): write it as { ... }", f->name,
				     ((const ProtobufCMessageDescriptor *)f->descriptor)->name);
		strbuf sub = STRBUF_INIT;
		int rc = encode_fields(e, f->descriptor, v->fields, &sub, depth + 1);
		if (rc == 0) {
			put_key(out, f->id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
			put_varint(out, sub.len);
			sb_putn(out, sub.s ? sub.s : "", sub.len);
			if (sub.oom)
				out->oom = 1;
		}
		sb_free(&sub);
		return rc;
	}
	if (v->kind == PT_MESSAGE)
		return efail(e, v->at, "field '%s' is a %s, not a message", f->name, type_name(f->type));
	uint64_t u;
	double dv;
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_UINT64:
		if (int_value(e, f, v, &u))
			return -1;
		if (f->type == PROTOBUF_C_TYPE_INT32)
			u = (uint64_t)(int64_t)(int32_t)(uint32_t)u; /* sign-extended on the wire */
		put_key(out, f->id, PROTOBUF_C_WIRE_TYPE_VARINT);
		put_varint(out, u);
		return 0;
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SINT64: {
		if (int_value(e, f, v, &u))
			return -1;
		int64_t s = (int64_t)u;
		put_key(out, f->id, PROTOBUF_C_WIRE_TYPE_VARINT);
		put_varint(out, ((uint64_t)s << 1) ^ (uint64_t)(s >> 63));
		return 0;
	}
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
		if (int_value(e, f, v, &u))
			return -1;
		put_key(out, f->id, PROTOBUF_C_WIRE_TYPE_32BIT);
		put_fixed(out, u, 4);
		return 0;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
		if (int_value(e, f, v, &u))
			return -1;
		put_key(out, f->id, PROTOBUF_C_WIRE_TYPE_64BIT);
		put_fixed(out, u, 8);
		return 0;
	case PROTOBUF_C_TYPE_FLOAT: {
		if (float_value(e, f, v, &dv))
			return -1;
		float fl = (float)dv;
		uint32_t bits;
		memcpy(&bits, &fl, 4);
		put_key(out, f->id, PROTOBUF_C_WIRE_TYPE_32BIT);
		put_fixed(out, bits, 4);
		return 0;
	}
	case PROTOBUF_C_TYPE_DOUBLE: {
		if (float_value(e, f, v, &dv))
			return -1;
		uint64_t bits;
		memcpy(&bits, &dv, 8);
		put_key(out, f->id, PROTOBUF_C_WIRE_TYPE_64BIT);
		put_fixed(out, bits, 8);
		return 0;
	}
	case PROTOBUF_C_TYPE_BOOL: {
		int b = -1;
		if (v->kind == PT_IDENT && !v->neg) {
			const char *s = v->text.s;
			if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "t") == 0)
				b = 1;
			else if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "f") == 0)
				b = 0;
		} else if (v->kind == PT_NUMBER && !v->neg) {
			if (strcmp(v->text.s, "0") == 0)
				b = 0;
			else if (strcmp(v->text.s, "1") == 0)
				b = 1;
		}
		if (b < 0)
			return efail(e, v->at, "expected true or false for field '%s'", f->name);
		put_key(out, f->id, PROTOBUF_C_WIRE_TYPE_VARINT);
		put_varint(out, (uint64_t)b);
		return 0;
	}
	case PROTOBUF_C_TYPE_ENUM: {
		const ProtobufCEnumDescriptor *ed = f->descriptor;
		int64_t val;
		if (v->kind == PT_IDENT && !v->neg) {
			const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(ed, v->text.s);
			if (!ev)
				return efail(e, v->at, "unknown value '%s' for enum %s", v->text.s, ed->name);
			val = ev->value;
		} else {
			if (int_value(e, f, v, &u))
				return -1;
			val = (int64_t)u;
		}
		put_key(out, f->id, PROTOBUF_C_WIRE_TYPE_VARINT);
		put_varint(out, (uint64_t)val);
		return 0;
	}
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
		if (v->kind != PT_STRING)
			return efail(e, v->at, "expected a quoted string for field '%s' (%s)", f->name,
				     type_name(f->type));
		if (f->type == PROTOBUF_C_TYPE_STRING &&
		    (memchr(v->text.s, '\0', v->text.len) ||
		     !proto_utf8_valid((const unsigned char *)v->text.s, v->text.len)))
			return efail(e, v->at, "string field '%s' must be UTF-8 text without NUL bytes",
				     f->name);
		put_key(out, f->id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
		put_varint(out, v->text.len);
		sb_putn(out, v->text.s, v->text.len);
		return 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		break;
	}
	return efail(e, v->at, "field '%s' has a type hloi cannot read", f->name);
}

/* Fields of a newer XLA than the one hloi's schema follows (proto/), known
 * by name. A .pbtxt such an XLA dumped has them; text gives no field number
 * to keep them by, so they are skipped with a warning. Any other unknown
 * name is an error (a typo, most likely). */
static int newer_xla_field(const char *message, const char *field)
{
	static const char *const meta[] = { "metadata_payload", NULL };
	static const char *const lit[] = { "f6e3m2fns", "f6e2m3fns", "dynamic_sizes", NULL };
	static const struct {
		const char *message;
		const char *const *fields;
	} table[] = {
		{ "xla.OpMetadata", meta },
		{ "xla.LiteralProto", lit },
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].message, message) == 0)
			for (const char *const *f = table[i].fields; *f; f++)
				if (strcmp(*f, field) == 0)
					return 1;
	return 0;
}

static int encode_fields(enc *e, const ProtobufCMessageDescriptor *d, const pt_field *fields,
			 strbuf *out, int depth)
{
	if (depth > PBTXT_MAX_DEPTH)
		return efail(e, fields ? fields->name_at : (loc){ 0, 0 },
			     "messages nested deeper than %d levels", PBTXT_MAX_DEPTH);
	unsigned char seen[256];
	memset(seen, 0, sizeof seen);
	for (const pt_field *pf = fields; pf; pf = pf->next) {
		const ProtobufCFieldDescriptor *f =
			memchr(pf->name.s, '\0', pf->name.len) ? NULL :
			protobuf_c_message_descriptor_get_field_by_name(d, pf->name.s);
		if (!f && newer_xla_field(d->name, pf->name.s)) {
			diag_warning(e->ctx, e->src, pf->name_at,
				     "%s.%s is a newer XLA's field, not in hloi's schema; it is skipped",
				     d->name, pf->name.s);
			continue;
		}
		if (!f)
			return efail(e, pf->name_at, "%s has no field named '%s'", d->name, pf->name.s);
		size_t idx = (size_t)(f - d->fields);
		int repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
		if (!repeated) {
			if (pf->is_list)
				return efail(e, pf->name_at, "field '%s' is not repeated; a [ ] list is only for repeated fields",
					     f->name);
			if (idx < sizeof seen && seen[idx]++)
				return efail(e, pf->name_at, "field '%s' is given more than once", f->name);
		}
		if (pf->is_list && f->type != PROTOBUF_C_TYPE_MESSAGE) {
			for (const pt_value *v = pf->values; v; v = v->next)
				if (v->kind == PT_MESSAGE)
					return efail(e, v->at, "field '%s' is a %s, not a message", f->name,
						     type_name(f->type));
		}
		for (const pt_value *v = pf->values; v; v = v->next)
			if (encode_value(e, f, v, out, depth))
				return -1;
	}
	return 0;
}

/* --- the root message type ------------------------------------------------------- */

/* HloSnapshot's fields are hlo, arguments, result, execution_platform;
 * HloProto's hlo_module; anything else is read as an HloModuleProto. */
static proto_root text_root(const pt_field *fields)
{
	for (const pt_field *f = fields; f; f = f->next) {
		const char *n = f->name.s;
		if (strcmp(n, "hlo") == 0 || strcmp(n, "arguments") == 0 || strcmp(n, "result") == 0 ||
		    strcmp(n, "execution_platform") == 0)
			return PROOT_SNAPSHOT;
		if (strcmp(n, "hlo_module") == 0)
			return PROOT_HLO;
	}
	return PROOT_MODULE;
}

/* Parses the text and encodes it as message `d`, or, when `d` is NULL, as
 * the root type text_root picks (in *root). */
static hloi_status to_wire(unsigned char **wire, size_t *wire_len, const ProtobufCMessageDescriptor *d,
			   proto_root *root, hloi_context *ctx, const char *name, const char *text, size_t len)
{
	*wire = NULL;
	*wire_len = 0;
	int src = diag_add_source(ctx, name, text, len);
	if (src < 0)
		return HLOI_ENOMEM;
	arena a;
	arena_init(&a);
	pbtxt_parse p;
	memset(&p, 0, sizeof p);
	p.a = &a;
	p.ctx = ctx;
	p.src = src;
	hloi_status st = pbtxt_parse_text(&p, text, len);
	if (st != HLOI_OK)
		goto out;
	if (!d) {
		*root = text_root(p.root);
		d = proto_root_descriptor(*root);
	}
	enc e = { ctx, src, HLOI_OK };
	strbuf b = STRBUF_INIT;
	if (encode_fields(&e, d, p.root, &b, 0)) {
		st = e.st;
		sb_free(&b);
		goto out;
	}
	if (b.oom) {
		sb_free(&b);
		st = HLOI_ENOMEM;
		goto out;
	}
	*wire_len = b.len;
	*wire = (unsigned char *)b.s;
	if (!*wire) {
		*wire = hloi_malloc(1);
		if (!*wire)
			st = HLOI_ENOMEM;
	}
out:
	arena_release(&a);
	return st;
}

hloi_status pbtxt_to_wire(unsigned char **wire, size_t *wire_len, proto_root *root,
			  hloi_context *ctx, const char *name, const char *text, size_t len)
{
	*root = PROOT_MODULE;
	return to_wire(wire, wire_len, NULL, root, ctx, name, text, len);
}

hloi_status pbtxt_to_wire_as(unsigned char **wire, size_t *wire_len, const ProtobufCMessageDescriptor *d,
			     hloi_context *ctx, const char *name, const char *text, size_t len)
{
	proto_root unused;
	return to_wire(wire, wire_len, d, &unused, ctx, name, text, len);
}
