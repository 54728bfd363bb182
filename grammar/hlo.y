/* Grammar of HLO text (XLA's hlo_parser.cc as described in xla-facts §1.2-1.6)
 * with entry points chosen by a start token the driver injects: a whole
 * module, a list of literals with their shapes, a single shape, and the
 * attribute values parsed in place (a list of shapes, a computation body). Values
 * live in the parser's arena, so nothing needs a %destructor; the actions
 * call the helpers of src/text/parse.c. */
%code requires {
#include "text/parse_int.h"

#define YYLLOC_DEFAULT(Cur, Rhs, N)                                      \
	do {                                                             \
		if (N) {                                                 \
			(Cur).start = YYRHSLOC(Rhs, 1).start;            \
			(Cur).end = YYRHSLOC(Rhs, N).end;                \
		} else {                                                 \
			(Cur).start = (Cur).end = YYRHSLOC(Rhs, 0).end;  \
		}                                                        \
	} while (0)
}

%code provides {
int hlo_yylex(HLO_YYSTYPE *lval, loc *lloc, void *scanner, struct pstate *st);
void hlo_yyerror(loc *at, void *scanner, struct pstate *st, const char *msg);
}

%code {
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"

/* Bison's stacks go through hloi's allocator. The lexer bounds nesting to
 * PARSE_MAX_DEPTH levels, far below YYMAXDEPTH, so "memory exhausted" can
 * only mean that an allocation failed. */
#define YYMALLOC hloi_malloc
#define YYFREE hloi_free
#define YYSTACK_USE_ALLOCA 0

#define OOM(x) do { if (x) YYABORT; } while (0)
#define EMPTY(l) do { (l).head = (l).tail = NULL; (l).n = 0; } while (0)

static pnode *push(pstate *st, plist *l)
{
	pnode *n;
	return p_push(st, l, &n) ? NULL : n;
}

/* A fresh node of the arena, or NULL. */
static pnode *node(pstate *st, int kind, const tokval *t, loc at)
{
	pnode *n = p_alloc(st, sizeof *n);
	if (n) {
		n->kind = kind;
		if (t)
			n->tok = *t;
		n->at = at;
	}
	return n;
}

/* Appends the fresh node `n` itself to `l` (no copy: a million operands
 * would otherwise leave a million dead nodes in the arena); returns 0. */
static int append(pstate *st, plist *l, pnode *n)
{
	(void)st;
	n->next = NULL;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->tail = n;
	l->n++;
	return 0;
}
}

%define api.pure full
%define api.prefix {hlo_yy}
%define api.location.type {loc}
%define parse.error custom
%define parse.lac full
%locations
%param {void *scanner} {struct pstate *st}
%expect 0

%union {
	tokval tok;
	int flag;
	shape *shp;
	plist list;
	llist llist;
	pnode *node;
	lit_node *lit;
	instr *ins;
	opcall *oc;
	sigval *sig;
	attr_item *attr;
	layout_item *litem;
}

%token START_MODULE "start of module" START_LITERALS "start of literals" START_SHAPE "start of shape"
%token START_SHAPES "start of shapes" START_COMPUTATION "start of computation"
%token <tok> KW_HLOMODULE "HloModule" KW_ENTRY "ENTRY" KW_ROOT "ROOT" KW_TRUE "true" KW_FALSE "false"
%token <tok> IDENT "identifier" NAME "%name" LABEL "parameter name" TYPE "element type"
%token <tok> INT "integer" DECIMAL "decimal number" FLOATWORD "inf or nan" STRING "string"
%token <tok> RAWATTR "attribute"
%token <tok> KW_PARAMETER "parameter" KW_CONSTANT "constant"
%token <tok> KW_BUFFER "b"
%token <tok> ARROW "->" LE "<=" DOTS "..." LAYOUT_LBRACE "layout"
%token <tok> KW_STACKFRAMES "stack frame section"

%type <tok> name
%type <flag> entry root
%type <list> hattrs comp_attrs operands op_list ints gte_indices m2m groups gitems sig_params sig_list
%type <flag> instrs
%type <llist> attrs layout_suffix layout_items lit_items shape_list
%type <node> dim gitem group operand
%type <shp> shape dims dim_list opt_layout
%type <lit> literal
%type <ins> instruction
%type <oc> opcall
%type <sig> opt_sig
%type <attr> attribute
%type <litem> layout_item

%%

/* input ::= START_MODULE module | START_LITERALS {shape literal} | START_SHAPE shape
 *         | START_SHAPES '{' [shape {',' shape}] '}' | START_COMPUTATION '{' {instruction} '}'
 * (the last two parse attribute values in place: operand_layout_constraints,
 * a computation written as to_apply={...}) */
input
	: START_MODULE module
	| START_LITERALS lit_entries
	| START_SHAPE shape			{ st->shape_out = $2; }
	| START_SHAPES '{' '}'
	| START_SHAPES '{' shape_list '}'	{ st->shape_list = $3; }
	| START_COMPUTATION '{' instrs '}'	{
		OOM(p_take_instrs(st, &st->sub_instrs));
		OOM(p_uniquify_gtes(st, &st->sub_instrs));
	}
	;

/* module ::= [header] {stack_frame_section} computation {computation} */
module
	: header stack_frames comps		{ OOM(p_stack_frames(st, @2)); }
	;

/* XLA's stack frame tables (FileNames, FunctionNames, FileLocations,
 * StackFrames), each entry `int (string | '{' {attribute} '}')`; kept as
 * written (the proto writer reads them).
 * section ::= keyword {int (string | '{' {attribute | ','} '}')} */
stack_frames
	: %empty
	| stack_frames KW_STACKFRAMES sf_entries
	;

sf_entries
	: %empty
	| sf_entries INT STRING
	| sf_entries INT '{' sf_attrs '}'
	;

sf_attrs
	: %empty
	| sf_attrs RAWATTR
	| sf_attrs ','
	;

/* header ::= 'HloModule' name [':'] {',' attribute}   (`HloModule m:` is an
 * older spelling XLA still reads) */
header
	: %empty
	| KW_HLOMODULE name hattrs		{ OOM(p_header(st, &$2, &$3)); }
	| KW_HLOMODULE LABEL hattrs		{ OOM(p_header(st, &$2, &$3)); }
	;

hattrs
	: %empty				{ EMPTY($$); }
	| hattrs ',' RAWATTR			{
		$$ = $1;
		pnode *n = node(st, 0, &$3, @3);
		OOM(!n || append(st, &$$, n));
	}
	;

/* name ::= identifier | '%' identifier */
name
	: IDENT
	| NAME
	;

comps
	: computation
	| comps computation
	;

/* computation ::= ['ENTRY'] name [signature] '{' {instruction} '}' {',' attribute} */
computation
	: entry name opt_sig '{' instrs '}' comp_attrs {
		OOM(p_computation(st, $1, @1, &$2, @2, $3));
		OOM(p_computation_attrs(st, &$7));
	}
	;

entry
	: %empty				{ $$ = 0; }
	| KW_ENTRY				{ $$ = 1; }
	;

/* Trailing computation attributes (`execution_thread="name"`). */
comp_attrs
	: %empty				{ EMPTY($$); }
	| comp_attrs ',' RAWATTR		{
		$$ = $1;
		pnode *n = node(st, 0, &$3, @3);
		OOM(!n || append(st, &$$, n));
	}
	;

/* signature ::= '(' [label shape {',' label shape}] ')' '->' shape */
opt_sig
	: %empty				{ $$ = NULL; }
	| '(' sig_params ')' ARROW shape	{
		$$ = p_alloc(st, sizeof *$$);
		OOM(!$$);
		$$->params = $2;
		$$->result = $5;
		$$->at = @$;
	}
	;

sig_params
	: %empty				{ EMPTY($$); }
	| sig_list
	;

sig_list
	: LABEL shape				{
		EMPTY($$);
		pnode *n = node(st, 0, &$1, @1);
		OOM(!n);
		n->p = $2;
		OOM(append(st, &$$, n));
	}
	| sig_list ',' LABEL shape		{
		$$ = $1;
		pnode *n = node(st, 0, &$3, @3);
		OOM(!n);
		n->p = $4;
		OOM(append(st, &$$, n));
	}
	;

/* Error recovery: a bad instruction is dropped (the lexer skips the rest of
 * its line) and parsing goes on with the next one. */
/* The instructions gather in st->cur (p_push_instr) until the
 * computation takes them (p_take_instrs). */
instrs
	: %empty				{ $$ = 0; st->cur.n = st->cur.nroots = 0; st->cur.root = NULL; }
	| instrs instruction			{
		$$ = 0;
		/* nested operand instructions come first, in the order they
		 * were written inside out */
		for (lnode *h = st->hoisted.head; h; h = h->next)
			OOM(p_push_instr(st, h->p));
		EMPTY(st->hoisted);
		if ($2)
			OOM(p_push_instr(st, $2));
	}
	| instrs error				{ $$ = 0; EMPTY(st->hoisted); }
	;

/* instruction ::= ['ROOT'] name '=' [shape] opcall {',' attribute} */
instruction
	: root name '=' shape opcall attrs	{
		loc at = { $1 ? @1.start : @2.start, @$.end };
		OOM(p_instr(st, &$$, $1, &$2, @2, $4, $5, &$6, at));
	}
	| root name '=' opcall attrs		{
		loc at = { $1 ? @1.start : @2.start, @$.end };
		OOM(p_instr(st, &$$, $1, &$2, @2, NULL, $4, &$5, at));
	}
	;

root
	: %empty				{ $$ = 0; }
	| KW_ROOT				{ $$ = 1; }
	;

/* opcall ::= 'parameter' '(' int ')' | 'constant' '(' literal ')'
 *          | opcode '(' [operand {',' operand}] ')' */
opcall
	: KW_PARAMETER '(' INT ')'		{
		$$ = p_alloc(st, sizeof *$$);
		OOM(!$$);
		$$->kind = OC_PARAMETER;
		$$->op = $1;
		$$->op_at = @1;
		$$->call_at = @$;
		$$->num = $3;
		$$->num_at = @3;
	}
	| KW_CONSTANT '(' literal ')'		{
		$$ = p_alloc(st, sizeof *$$);
		OOM(!$$);
		$$->kind = OC_CONSTANT;
		$$->op = $1;
		$$->op_at = @1;
		$$->call_at = @$;
		$$->lit = $3;
	}
	| IDENT '(' operands ')'		{
		$$ = p_alloc(st, sizeof *$$);
		OOM(!$$);
		$$->kind = OC_GENERIC;
		$$->op = $1;
		$$->op_at = @1;
		$$->call_at = @$;
		$$->operands = $3;
	}
	;

operands
	: %empty				{ EMPTY($$); }
	| op_list
	;

op_list
	: operand				{ EMPTY($$); OOM(append(st, &$$, $1)); }
	| op_list ',' operand			{ $$ = $1; OOM(append(st, &$$, $3)); }
	;

/* operand ::= [shape] name {'#' int} | [shape] opcall   (a nested
 * instruction, no attributes: it becomes an instruction of its own before
 * its user; so does each get-tuple-element `name#i#j` stands for) */
operand
	: name					{ $$ = node(st, 0, &$1, @1); OOM(!$$); }
	| shape name				{ $$ = node(st, 0, &$2, @2); OOM(!$$); $$->p = $1; }
	| name gte_indices			{ OOM(p_gte_operand(st, &$$, NULL, &$1, &$2, @$)); }
	| shape name gte_indices		{
		loc at = { @2.start, @3.end };
		OOM(p_gte_operand(st, &$$, $1, &$2, &$3, at));
	}
	| opcall				{ OOM(p_nested(st, &$$, NULL, $1, @1)); }
	| shape opcall				{ OOM(p_nested(st, &$$, $1, $2, @$)); }
	;

/* The compact tuple-element operand `name#1#0`: gte_indices ::= '#' int {'#' int} */
gte_indices
	: '#' INT				{
		EMPTY($$);
		pnode *n = push(st, &$$);
		OOM(!n);
		n->at = @2;
		n->tok = $2;
	}
	| gte_indices '#' INT			{
		$$ = $1;
		pnode *n = push(st, &$$);
		OOM(!n);
		n->at = @3;
		n->tok = $3;
	}
	;

attrs
	: %empty				{ EMPTY($$); }
	| attrs ',' attribute			{ $$ = $1; OOM(p_lpush(st, &$$, $3)); }
	;

/* attribute ::= name '=' value   (the lexer captures the value's text; its
 * syntax depends on the attribute: text/attr_text.c) */
attribute
	: RAWATTR				{
		$$ = p_alloc(st, sizeof *$$);
		OOM(!$$);
		$$->name = $1;
		$$->at = @$;
	}
	;

ints
	: INT					{
		EMPTY($$);
		pnode *n = push(st, &$$);
		OOM(!n);
		n->at = @1;
		p_int64(st, &$1, @1, &n->i);
	}
	| ints ',' INT				{
		$$ = $1;
		pnode *n = push(st, &$$);
		OOM(!n);
		n->at = @3;
		p_int64(st, &$3, @3, &n->i);
	}
	;

/* shape ::= type '[' [dim {',' dim}] ']' [layout] | '(' [shape {',' shape}] ')'
 *         | 'b' '(' shape ')'   (XLA's buffer shape of an array) */
shape
	: TYPE '[' dims ']' opt_layout		{
		loc at = { @1.start, $5 ? @5.end : @4.end };
		OOM(p_array_shape(st, &$$, $3, (etype)$1.u, at));
		if ($5) {
			$$->has_layout = 1;
			$$->layout = $5->layout;
			p_shape_free(st, $5);
		}
	}
	| IDENT '[' dims ']' opt_layout		{
		char *t = p_text(st, $1.s, $1.e);
		OOM(!t);
		diag_error(st->ctx, st->src, @1, "unknown element type '%s'", t);
		loc at = { @1.start, $5 ? @5.end : @4.end };
		OOM(p_array_shape(st, &$$, $3, ET_F32, at));
		if ($5)
			p_shape_free(st, $5);
	}
	| '(' ')'				{
		llist none;
		EMPTY(none);
		OOM(p_tuple_shape(st, &$$, &none));
	}
	| '(' shape_list ')'			{ OOM(p_tuple_shape(st, &$$, &$2)); }
	| KW_BUFFER '(' shape ')'		{ $$ = $3; p_buffer_shape(st, $$, @3); }
	;

shape_list
	: shape					{ EMPTY($$); OOM(p_lpush(st, &$$, $1)); }
	| shape_list ',' shape			{ $$ = $1; OOM(p_lpush(st, &$$, $3)); }
	;

dims
	: %empty				{ $$ = NULL; }
	| dim_list
	;

dim_list
	: dim					{ $$ = NULL; OOM(p_dim(st, &$$, &$1->tok, $1->at, $1->kind)); p_recycle(st, $1, sizeof *$1); }
	| dim_list ',' dim			{ $$ = $1; OOM(p_dim(st, &$$, &$3->tok, $3->at, $3->kind)); p_recycle(st, $3, sizeof *$3); }
	;

/* dim ::= int | '<=' int | '?' */
dim
	: INT					{ $$ = node(st, DIM_STATIC, &$1, @1); OOM(!$$); }
	| LE INT				{ $$ = node(st, DIM_BOUNDED, &$2, @$); OOM(!$$); }
	| '?'					{ $$ = node(st, DIM_UNBOUNDED, NULL, @1); OOM(!$$); }
	;

/* layout ::= '{' [int {',' int}] [':' {item}] '}'  (only where `{` is
 * followed by an int or `:`; the lexer decides) */
opt_layout
	: %empty				{ $$ = NULL; }
	| LAYOUT_LBRACE m2m layout_suffix '}'	{
		$$ = p_shape_new(st);
		OOM(!$$);
		OOM(p_layout(st, $$, &$2, &$3, @$));
		p_recycle_list(st, &$2);
	}
	;

m2m
	: %empty				{ EMPTY($$); }
	| ints
	;

layout_suffix
	: %empty				{ EMPTY($$); }
	| ':' layout_items			{ $$ = $2; }
	;

layout_items
	: %empty				{ EMPTY($$); }
	| layout_items layout_item		{ $$ = $1; OOM(p_lpush(st, &$$, $2)); }
	;

/* item ::= word group {group} | '*' group | '#' group  (T(8,128)(2,1), pad(3,5), ...) */
layout_item
	: IDENT groups				{
		$$ = p_alloc(st, sizeof *$$);
		OOM(!$$);
		$$->name = $1;
		$$->at = @$;
		$$->groups = $2;
	}
	| '*' groups				{
		$$ = p_alloc(st, sizeof *$$);
		OOM(!$$);
		$$->sym = '*';
		$$->at = @$;
		$$->groups = $2;
	}
	| '#' groups				{
		$$ = p_alloc(st, sizeof *$$);
		OOM(!$$);
		$$->sym = '#';
		$$->at = @$;
		$$->groups = $2;
	}
	;

groups
	: group					{ EMPTY($$); OOM(append(st, &$$, $1)); }
	| groups group				{ $$ = $1; OOM(append(st, &$$, $2)); }
	;

/* group ::= '(' {item} ')' */
group
	: '(' gitems ')'			{
		$$ = node(st, 0, NULL, @$);
		OOM(!$$);
		plist *l = p_alloc(st, sizeof *l);
		OOM(!l);
		*l = $2;
		$$->p = l;
	}
	;

gitems
	: %empty				{ EMPTY($$); }
	| gitems gitem				{ $$ = $1; if ($2) OOM(append(st, &$$, $2)); }
	;

gitem
	: INT					{ $$ = node(st, INT, &$1, @1); OOM(!$$); }
	| IDENT					{ $$ = node(st, IDENT, &$1, @1); OOM(!$$); }
	| TYPE					{ $$ = node(st, TYPE, &$1, @1); OOM(!$$); }
	| '*'					{ $$ = node(st, '*', NULL, @1); OOM(!$$); }
	| '+'					{ $$ = node(st, '+', NULL, @1); OOM(!$$); }
	| '~'					{ $$ = node(st, '~', NULL, @1); OOM(!$$); }
	| ':'					{ $$ = node(st, ':', NULL, @1); OOM(!$$); }
	| '['					{ $$ = node(st, '[', NULL, @1); OOM(!$$); }
	| ']'					{ $$ = node(st, ']', NULL, @1); OOM(!$$); }
	| ','					{ $$ = NULL; }
	;

/* literal ::= number | word | '{' {literal | ','} '}' | '{' '...' '}'
 *           | '(' {literal | ','} ')' */
literal
	: INT					{ OOM(p_lit_scalar(st, &$$, LIT_NUMBER, @1)); }
	| DECIMAL				{ OOM(p_lit_scalar(st, &$$, LIT_NUMBER, @1)); }
	| FLOATWORD				{ OOM(p_lit_scalar(st, &$$, LIT_WORD, @1)); }
	| KW_TRUE				{ OOM(p_lit_scalar(st, &$$, LIT_WORD, @1)); }
	| KW_FALSE				{ OOM(p_lit_scalar(st, &$$, LIT_WORD, @1)); }
	| '{' lit_items '}'			{ OOM(p_lit_list(st, &$$, LIT_LIST, &$2, @$)); }
	| '{' DOTS '}'				{ OOM(p_lit_list(st, &$$, LIT_ELIDED, NULL, @$)); }
	| '(' lit_items ')'			{ OOM(p_lit_list(st, &$$, LIT_TUPLE, &$2, @$)); }
	;

lit_items
	: %empty				{ EMPTY($$); }
	| lit_items literal			{ $$ = $1; OOM(p_lpush(st, &$$, $2)); }
	| lit_items ','				{ $$ = $1; }
	;

/* literals ::= {shape literal} */
lit_entries
	: %empty
	| lit_entries shape literal		{ OOM(p_literal_entry(st, $2, $3)); }
	;

%%

/* How a token is named in "expects ..." messages (NULL: not mentioned). */
static const char *sym_display(yysymbol_kind_t k)
{
	switch (k) {
	case YYSYMBOL_YYEOF: return "end of input";
	case YYSYMBOL_IDENT:
	case YYSYMBOL_NAME: return "name";
	case YYSYMBOL_LAYOUT_LBRACE: return "'{'";
	case YYSYMBOL_KW_HLOMODULE: return "'HloModule'";
	case YYSYMBOL_KW_ENTRY: return "'ENTRY'";
	case YYSYMBOL_KW_ROOT: return "'ROOT'";
	case YYSYMBOL_KW_TRUE: return "'true'";
	case YYSYMBOL_KW_FALSE: return "'false'";
	case YYSYMBOL_ARROW: return "'->'";
	case YYSYMBOL_LE: return "'<='";
	case YYSYMBOL_DOTS: return "'...'";
	case YYSYMBOL_KW_PARAMETER: return "'parameter'";
	case YYSYMBOL_KW_CONSTANT: return "'constant'";
	case YYSYMBOL_KW_STACKFRAMES: return NULL; /* rare; not worth suggesting */
	case YYSYMBOL_KW_BUFFER: return NULL;      /* `b(`: a shape, as element types are */
	default: break;
	}
	return yysymbol_name(k);
}

static int yyreport_syntax_error(const yypcontext_t *pctx, void *scanner, struct pstate *st)
{
	(void)scanner;
	if (st->fatal || st->oom)
		return 0;
	enum { MAXEXP = 12 };
	yysymbol_kind_t exp[MAXEXP];
	int n = yypcontext_expected_tokens(pctx, exp, MAXEXP);
	yysymbol_kind_t la = yypcontext_token(pctx);
	const loc *at = yypcontext_location(pctx);
	char seen[64];
	if (la == YYSYMBOL_YYEOF || at->end <= at->start) {
		snprintf(seen, sizeof seen, "end of input");
	} else {
		size_t len = at->end - at->start;
		const char *s = st->text + at->start;
		size_t cut = 0;
		while (cut < len && cut < 40 && s[cut] != '\n' && s[cut] != '\r')
			cut++;
		snprintf(seen, sizeof seen, "'%.*s%s'", (int)cut, s, cut < len ? "..." : "");
	}
	if (n > 0) {
		const char *shown[MAXEXP];
		int ns = 0;
		/* In an operand list, nested instructions (`add(constant(1), x)`)
		 * are rare: the usual ',' and ')' are what to suggest. */
		int in_operands = st->before_tok == '(' || st->before_tok == ',';
		for (int i = 0; i < n; i++) {
			const char *d = sym_display(exp[i]);
			in_operands |= d && !strcmp(d, "')'");
		}
		for (int i = 0; i < n; i++) {
			const char *d = sym_display(exp[i]);
			if (!d)
				continue;
			/* `name#1` and layout items `#(...)` are rare: not suggested */
			if (!strcmp(d, "'#'"))
				continue;
			/* `name[` is only accepted to report an unknown element type */
			if (st->before_tok == IDENT && !strcmp(d, "'['"))
				continue;
			if (in_operands && (!strcmp(d, "'parameter'") || !strcmp(d, "'constant'") ||
					    (!strcmp(d, "'('") && (st->before_tok == IDENT || st->before_tok == NAME))))
				continue;
			int dup = 0;
			for (int j = 0; j < ns; j++)
				dup |= strcmp(shown[j], d) == 0;
			if (!dup)
				shown[ns++] = d;
		}
		char want[200] = "";
		size_t w = 0;
		for (int i = 0; i < ns && w < sizeof want; i++)
			w += (size_t)snprintf(want + w, sizeof want - w, "%s%s",
					      i == 0 ? "" : (i == ns - 1 ? " or " : ", "), shown[i]);
		diag_error(st->ctx, st->src, *at, "expects %s but sees %s", want, seen);
	} else {
		diag_error(st->ctx, st->src, *at, "unexpected %s", seen);
	}
	/* Recovery resumes at the next token that starts a line. */
	st->skip = !st->last_bol;
	st->nsyntax++;
	return 0;
}

/* Bison calls this only for "memory exhausted" (syntax errors go through
 * yyreport_syntax_error). */
void hlo_yyerror(loc *at, void *scanner, struct pstate *st, const char *msg)
{
	(void)scanner;
	if (!st->oom)
		diag_error(st->ctx, st->src, *at, "%s", msg);
	st->oom = 1;
}
