/* Any unpacked or built protobuf-c message -> protobuf text format, by
 * walking its descriptor: fields in number order, set fields only (proto3),
 * repeated scalars one per line, enums by name, strings and bytes C-escaped,
 * floats as the shortest of 6/9 (float) or 15/17 (double) digits that reads
 * back the same, map entries sorted by key, as protobuf's own printer does
 * (NaNs keep their sign but not their payload: the text format has no way
 * to write one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/pbtxt.h"
#include "proto/proto_internal.h"
#include "util/alloc.h"

static void indent(strbuf *b, int depth)
{
	for (int i = 0; i < depth; i++)
		sb_puts(b, "  ");
}

static void put_float(strbuf *b, double v, int is_float)
{
	if (isnan(v)) {
		/* the sign survives (protobuf itself drops it); a payload cannot */
		sb_puts(b, signbit(v) ? "-nan" : "nan");
		return;
	}
	if (isinf(v)) {
		sb_puts(b, v < 0 ? "-inf" : "inf");
		return;
	}
	char buf[64];
	if (is_float) {
		float f = (float)v;
		snprintf(buf, sizeof buf, "%.6g", (double)f);
		if (strtof(buf, NULL) != f)
			snprintf(buf, sizeof buf, "%.9g", (double)f);
	} else {
		snprintf(buf, sizeof buf, "%.15g", v);
		if (strtod(buf, NULL) != v)
			snprintf(buf, sizeof buf, "%.17g", v);
	}
	sb_puts(b, buf);
}

static void print_message_body(strbuf *b, const ProtobufCMessage *msg, int depth);

/* Prints `name: value` (or `name {...}`) for the value at p. */
static void print_value(strbuf *b, const ProtobufCFieldDescriptor *f, const void *p, int depth)
{
	indent(b, depth);
	sb_puts(b, f->name);
	if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
		const ProtobufCMessage *sub = *(ProtobufCMessage *const *)p;
		sb_puts(b, " {\n");
		if (sub)
			print_message_body(b, sub, depth + 1);
		indent(b, depth);
		sb_puts(b, "}\n");
		return;
	}
	sb_puts(b, ": ");
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32: {
		int32_t v;
		memcpy(&v, p, 4);
		sb_printf(b, "%d", (int)v);
		break;
	}
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32: {
		uint32_t v;
		memcpy(&v, p, 4);
		sb_printf(b, "%u", (unsigned)v);
		break;
	}
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64: {
		int64_t v;
		memcpy(&v, p, 8);
		sb_printf(b, "%lld", (long long)v);
		break;
	}
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64: {
		uint64_t v;
		memcpy(&v, p, 8);
		sb_printf(b, "%llu", (unsigned long long)v);
		break;
	}
	case PROTOBUF_C_TYPE_FLOAT: {
		float v;
		memcpy(&v, p, sizeof v);
		put_float(b, v, 1);
		break;
	}
	case PROTOBUF_C_TYPE_DOUBLE: {
		double v;
		memcpy(&v, p, sizeof v);
		put_float(b, v, 0);
		break;
	}
	case PROTOBUF_C_TYPE_BOOL: {
		protobuf_c_boolean v;
		memcpy(&v, p, sizeof v);
		sb_puts(b, v ? "true" : "false");
		break;
	}
	case PROTOBUF_C_TYPE_ENUM: {
		int32_t v;
		memcpy(&v, p, 4);
		const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
		if (ev)
			sb_puts(b, ev->name);
		else
			sb_printf(b, "%d", (int)v);
		break;
	}
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(const char *const *)p;
		sb_putc(b, '"');
		if (s)
			pbtxt_escape(b, s, strlen(s));
		sb_putc(b, '"');
		break;
	}
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *bd = p;
		sb_putc(b, '"');
		if (bd->len)
			pbtxt_escape(b, (const char *)bd->data, bd->len);
		sb_putc(b, '"');
		break;
	}
	case PROTOBUF_C_TYPE_MESSAGE:
		break;
	}
	sb_putc(b, '\n');
}

/* A map field's entries: messages named ...Entry with fields key = 1 and
 * value = 2 (protobuf-c does not mark them otherwise). */
static int is_map_entry(const ProtobufCFieldDescriptor *f)
{
	if (f->type != PROTOBUF_C_TYPE_MESSAGE || f->label != PROTOBUF_C_LABEL_REPEATED)
		return 0;
	const ProtobufCMessageDescriptor *e = f->descriptor;
	size_t n = strlen(e->short_name);
	return n > 5 && strcmp(e->short_name + n - 5, "Entry") == 0 && e->n_fields == 2 &&
	       e->fields[0].id == 1 && strcmp(e->fields[0].name, "key") == 0 && e->fields[1].id == 2 &&
	       strcmp(e->fields[1].name, "value") == 0 &&
	       (e->fields[0].type == PROTOBUF_C_TYPE_STRING || e->fields[0].type == PROTOBUF_C_TYPE_INT64 ||
		e->fields[0].type == PROTOBUF_C_TYPE_INT32);
}

static int entry_cmp(const void *x, const void *y)
{
	const ProtobufCMessage *a = *(ProtobufCMessage *const *)x;
	const ProtobufCMessage *b = *(ProtobufCMessage *const *)y;
	const ProtobufCFieldDescriptor *k = &a->descriptor->fields[0];
	const char *pa = (const char *)a + k->offset, *pb = (const char *)b + k->offset;
	if (k->type == PROTOBUF_C_TYPE_STRING)
		return strcmp(*(const char *const *)pa, *(const char *const *)pb);
	int64_t va, vb;
	if (k->type == PROTOBUF_C_TYPE_INT64) {
		memcpy(&va, pa, 8);
		memcpy(&vb, pb, 8);
	} else {
		int32_t x32, y32;
		memcpy(&x32, pa, 4);
		memcpy(&y32, pb, 4);
		va = x32;
		vb = y32;
	}
	return va < vb ? -1 : va > vb;
}

static void print_message_body(strbuf *b, const ProtobufCMessage *msg, int depth)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const char *base = (const char *)msg;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n;
			memcpy(&n, base + f->quantifier_offset, sizeof n);
			const char *arr = *(const char *const *)(base + f->offset);
			size_t w = proto_elem_size(f->type);
			ProtobufCMessage **sorted = NULL;
			if (n > 1 && is_map_entry(f)) {
				/* maps print sorted by key, as protobuf's printer does */
				sorted = hloi_malloc(n * sizeof *sorted);
				if (sorted) {
					memcpy(sorted, arr, n * sizeof *sorted);
					qsort(sorted, n, sizeof *sorted, entry_cmp);
					arr = (const char *)sorted;
				} else {
					b->oom = 1;
				}
			}
			for (size_t k = 0; k < n; k++)
				print_value(b, f, arr + k * w, depth);
			hloi_free(sorted);
		} else if (proto_field_set(msg, f)) {
			print_value(b, f, base + f->offset, depth);
		}
	}
}

void pbtxt_print_message(strbuf *b, const ProtobufCMessage *msg)
{
	print_message_body(b, msg, 0);
}
