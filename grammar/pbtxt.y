/* Grammar of protobuf text format (.pbtxt): fields `name: value`, nested
 * messages `name { ... }` / `name < ... >` (the colon optional), lists
 * `name: [a, b]`, `,` or `;` after a field optional. It builds a syntax tree
 * (src/proto/pbtxt.h) in an arena and knows no message types;
 * src/proto/pbtxt_read.c checks the tree against protobuf-c's descriptors.
 * Reentrant; locations are byte offsets. Stops at the first error. */
%code requires {
#include "proto/pbtxt.h"
#include "util/diag.h"

#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif
}

%code top {
#include <string.h>

#include "util/alloc.h"
}

%define api.pure full
%define api.prefix {pbtxt_yy}
%define api.location.type {loc}
%define parse.error detailed
%locations
%param {yyscan_t scanner}
%parse-param {pbtxt_parse *p}
%expect 0

%union {
	pt_str str;
	pt_field *field;
	pt_value *value;
}

%token <str> IDENT "identifier"
%token <str> NUMBER "number"
%token <str> STRING "string"

%type <field> fields field
%type <value> value scalar message list values strings

%code {
int pbtxt_yylex(PBTXT_YYSTYPE *lval, loc *lloc, yyscan_t scanner);

#define YYLLOC_DEFAULT(cur, rhs, n)                                     \
	do {                                                            \
		if (n) {                                                \
			(cur).start = YYRHSLOC(rhs, 1).start;           \
			(cur).end = YYRHSLOC(rhs, n).end;               \
		} else {                                                \
			(cur).start = (cur).end = YYRHSLOC(rhs, 0).end; \
		}                                                       \
	} while (0)

/* The parse stack lives on the C stack and never grows: PBTXT_MAX_DEPTH
 * bounds the nesting, and a few symbols per level fit in 2000 entries. */
#define YYINITDEPTH 2000
#define YYMAXDEPTH 2000
#define YYMALLOC hloi_malloc
#define YYFREE hloi_free

static void pbtxt_yyerror(loc *at, yyscan_t scanner, pbtxt_parse *p, const char *msg);

#define OOM(x)                                  \
	do {                                    \
		if (x) {                        \
			p->st = HLOI_ENOMEM;    \
			YYABORT;                \
		}                               \
	} while (0)

static pt_value *new_value(pbtxt_parse *p, pt_kind kind, loc at)
{
	pt_value *v = arena_alloc(p->a, sizeof *v);
	if (v) {
		v->kind = kind;
		v->at = at;
	}
	return v;
}

/* Lists are built reversed (prepending) and put in order when closed. */
static pt_field *reverse_fields(pt_field *f)
{
	pt_field *r = NULL;
	while (f) {
		pt_field *next = f->next;
		f->next = r;
		r = f;
		f = next;
	}
	return r;
}

static pt_value *reverse_values(pt_value *v)
{
	pt_value *r = NULL;
	while (v) {
		pt_value *next = v->next;
		v->next = r;
		r = v;
		v = next;
	}
	return r;
}
}

%%

/* start ::= field* */
start
	: fields				{ p->root = reverse_fields($1); }
	;

fields
	: %empty				{ $$ = NULL; }
	| fields field				{ $2->next = $1; $$ = $2; }
	;

/* field ::= IDENT ':' value [sep]
 *         | IDENT message [sep]
 *         | IDENT [':'] '[' [value (',' value)*] ']' [sep] */
field
	: IDENT ':' value sep			{
		$$ = arena_alloc(p->a, sizeof *$$);
		OOM(!$$);
		$$->name = $1;
		$$->name_at = @1;
		$$->values = $3;
	}
	| IDENT message sep			{
		$$ = arena_alloc(p->a, sizeof *$$);
		OOM(!$$);
		$$->name = $1;
		$$->name_at = @1;
		$$->values = $2;
	}
	| IDENT ':' '[' list ']' sep		{
		$$ = arena_alloc(p->a, sizeof *$$);
		OOM(!$$);
		$$->name = $1;
		$$->name_at = @1;
		$$->is_list = 1;
		$$->values = $4;
	}
	| IDENT '[' list ']' sep		{
		$$ = arena_alloc(p->a, sizeof *$$);
		OOM(!$$);
		$$->name = $1;
		$$->name_at = @1;
		$$->is_list = 1;
		$$->values = $3;
	}
	;

/* sep ::= ',' | ';' */
sep
	: %empty
	| ','
	| ';'
	;

list
	: %empty				{ $$ = NULL; }
	| values				{ $$ = reverse_values($1); }
	;

values
	: value					{ $$ = $1; }
	| values ',' value			{ $3->next = $1; $$ = $3; }
	;

/* value ::= scalar | message */
value
	: scalar				{ $$ = $1; }
	| message				{ $$ = $1; }
	;

/* scalar ::= ['-'] NUMBER | ['-'] IDENT | STRING+ */
scalar
	: NUMBER				{
		$$ = new_value(p, PT_NUMBER, @1);
		OOM(!$$);
		$$->text = $1;
	}
	| '-' NUMBER				{
		$$ = new_value(p, PT_NUMBER, @$);
		OOM(!$$);
		$$->text = $2;
		$$->neg = 1;
	}
	| IDENT					{
		$$ = new_value(p, PT_IDENT, @1);
		OOM(!$$);
		$$->text = $1;
	}
	| '-' IDENT				{
		$$ = new_value(p, PT_IDENT, @$);
		OOM(!$$);
		$$->text = $2;
		$$->neg = 1;
	}
	| strings				{ $$ = $1; }
	;

/* Adjacent strings are one value, as in C. */
strings
	: STRING				{
		$$ = new_value(p, PT_STRING, @1);
		OOM(!$$);
		$$->text = $1;
	}
	| strings STRING			{
		$$ = $1;
		$$->at.end = @2.end;
		char *s = arena_alloc(p->a, $1->text.len + $2.len + 1);
		OOM(!s);
		memcpy(s, $1->text.s, $1->text.len);
		memcpy(s + $1->text.len, $2.s, $2.len);
		s[$1->text.len + $2.len] = '\0';
		$$->text.s = s;
		$$->text.len += $2.len;
	}
	;

/* message ::= '{' field* '}' | '<' field* '>' */
message
	: open fields '}'			{
		p->depth--;
		$$ = new_value(p, PT_MESSAGE, @$);
		OOM(!$$);
		$$->fields = reverse_fields($2);
	}
	| open_angle fields '>'			{
		p->depth--;
		$$ = new_value(p, PT_MESSAGE, @$);
		OOM(!$$);
		$$->fields = reverse_fields($2);
	}
	;

open
	: '{'					{
		if (++p->depth > PBTXT_MAX_DEPTH) {
			diag_error(p->ctx, p->src, @1, "messages nested deeper than %d levels",
				   PBTXT_MAX_DEPTH);
			p->st = HLOI_EPARSE;
			YYABORT;
		}
	}
	;

open_angle
	: '<'					{
		if (++p->depth > PBTXT_MAX_DEPTH) {
			diag_error(p->ctx, p->src, @1, "messages nested deeper than %d levels",
				   PBTXT_MAX_DEPTH);
			p->st = HLOI_EPARSE;
			YYABORT;
		}
	}
	;

%%

static void pbtxt_yyerror(loc *at, yyscan_t scanner, pbtxt_parse *p, const char *msg)
{
	(void)scanner;
	if (p->st != HLOI_OK)
		return; /* the lexer reported it */
	/* bison says "memory exhausted" when its fixed stack is full */
	diag_error(p->ctx, p->src, *at, "%s", msg);
	p->st = HLOI_EPARSE;
}
