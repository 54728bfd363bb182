/* Protobuf text format (.pbtxt): the syntax tree grammar/pbtxt.y builds,
 * with no knowledge of any message type, and the reader that turns it into
 * wire-format bytes by walking protobuf-c's descriptors (pbtxt_read.c). The
 * writer goes the other way from an unpacked message (pbtxt_write.c). */
#ifndef HLOI_PROTO_PBTXT_H
#define HLOI_PROTO_PBTXT_H

#include <setjmp.h>
#include <stddef.h>

#include "hloi.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/strbuf.h"

/* Deepest `{ }` / `< >` nesting the text reader accepts. */
#define PBTXT_MAX_DEPTH 100

typedef struct pt_str {
	const char *s;   /* arena copy, NUL-terminated (strings may hold NULs) */
	size_t len;
} pt_str;

typedef enum pt_kind {
	PT_IDENT,    /* an identifier: enum value name, true, inf, ... */
	PT_NUMBER,   /* an integer or floating-point token, as written */
	PT_STRING,   /* one or more adjacent quoted strings, unescaped */
	PT_MESSAGE   /* { fields } or < fields > */
} pt_kind;

typedef struct pt_field pt_field;

typedef struct pt_value {
	pt_kind kind;
	int neg;                   /* written with a leading '-' */
	pt_str text;               /* PT_IDENT, PT_NUMBER, PT_STRING */
	pt_field *fields;          /* PT_MESSAGE */
	loc at;
	struct pt_value *next;     /* next value of a `[a, b]` list */
} pt_value;

struct pt_field {
	pt_str name;
	loc name_at;
	int is_list;               /* written as name: [ ... ] */
	pt_value *values;          /* one value, or the list's values */
	pt_field *next;
};

/* The parser's state (the scanner's extra data). */
typedef struct pbtxt_parse {
	arena *a;
	hloi_context *ctx;
	int src;                   /* source id in ctx */
	void *scanner;
	size_t off;                /* byte offset of the next token */
	int depth;
	pt_field *root;            /* the result */
	hloi_status st;            /* first failure */
	jmp_buf fatal;             /* YY_FATAL_ERROR lands here */
	void *flex_live[8];        /* flex's live blocks, freed after a fatal error */
	int nflex;
} pbtxt_parse;

/* Parses `len` bytes registered as source `src` into p->root. Errors are
 * recorded in ctx; returns HLOI_EPARSE or HLOI_ENOMEM then. */
hloi_status pbtxt_parse_text(pbtxt_parse *p, const char *text, size_t len);

/* Decodes the body of a quoted string token (without its quotes): C escapes
 * \n \t \r \a \b \f \v \\ \' \" \? , octal \ooo, hex \xHH, \uXXXX and
 * \UXXXXXXXX (as UTF-8). Returns 0, or -1 with *bad set to the offset of the
 * bad escape within `s`. `out` needs `n + 1` bytes. */
int pbtxt_unescape(const char *s, size_t n, char *out, size_t *outlen, size_t *bad);

/* Appends `n` bytes C-escaped the way protobuf's text format does (\n \r \t
 * \" \' \\ ; other bytes below 0x20 or from 0x7f as three octal digits). */
void pbtxt_escape(strbuf *b, const char *s, size_t n);

#endif
