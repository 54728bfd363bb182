/* The StableHLO front end: a scannerless recursive-descent reader of MLIR
 * text that writes the HLO text XLA's StableHLO-to-HLO translation would
 * give, then hands it to the HLO front end (doc/stablehlo.md).
 *
 * MLIR's syntax depends on context in ways a separate token stream serves
 * badly (`2x3xf32` is three dimensions and a type; `#stablehlo.gather<...>`
 * nests its own grammar; every op has its own pretty form), so the reader
 * works on characters with the op at hand deciding what comes next. An op
 * is read into one uniform record (operands, `key = value` attributes,
 * bare words, brackets, regions, types), whatever its form, pretty or
 * generic; the lowering then looks attributes up by any of their names.
 *
 * Errors stop the read at the first one (longjmp back to mlir_to_hlo);
 * everything is allocated in one arena freed at the end. */
#include "mlir/mlir.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/float8.h"
#include "core/half.h"
#include "core/types.h"
#include "text/parse.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"

#define MAX_RANK HLOI_MAX_RANK

/* A tensor, tuple or token type. */
typedef struct ty {
	int kind;            /* 0 tensor, 1 tuple, 2 token */
	etype et;
	int rank;
	int64_t dims[MAX_RANK]; /* -1: `?` */
	int64_t bound[MAX_RANK]; /* a `?` dimension's bound, else -1 */
	int ntup;
	struct ty *tup;
} ty;

/* A value: its MLIR name (`0`, `arg0`, `x#1`), its HLO instruction name
 * and type, and where its line starts in its computation's text. */
typedef struct val {
	const char *mname;
	const char *hlo;
	ty t;
	size_t line;
	struct val *next;
} val;

/* A computation being written. Captures: values of an enclosing one a
 * region uses (if and case branches take them as a tuple parameter). */
typedef struct comp {
	strbuf b;
	val *vals;
	val **tab;           /* vals by name: open addressing, hloi_malloc'd */
	size_t cap, n;
	struct comp *parent;
	int capturing;       /* uses of outer values become captures */
	int ncap;
	val *caps[256];
	const char *cap_param; /* the tuple parameter's name, once made */
	size_t cap_insert;     /* where to write the capture parameters */
	int done;
	/* a while's condition or body: its state is its arguments and then
	 * the values either region captures (the body passes them on) */
	int is_while, is_body;
	int nargs;
	val **argv;
} comp;

typedef struct kv {
	const char *key;
	int used;            /* read by the lowering */
	size_t vs, ve;       /* the value's text */
	size_t at;
} kv;

typedef struct region {
	const char *name;    /* its computation */
	int ncap;
	val *caps[256];
	struct comp *c;      /* a while's region, finished by the while */
} region;

#define MAXN 64
typedef struct op {
	/* the counts and scalars, zeroed for each op (up to `ops`); the
	 * arrays after them are read only below their counts */
	const char *name;    /* without the dialect's quotes */
	size_t at;
	int generic;
	int nops, nkv, nwords, nbr, nbind, nin, nout, ntypes, nreg;
	const char *callee;   /* `@name` */
	size_t dense_s, dense_e; /* a bare `dense<...>` item */
	val *ops[MAXN];
	size_t op_at[MAXN];
	kv kvs[MAXN];
	const char *words[MAXN];
	size_t br_s[8], br_e[8];
	const char *bind[MAXN]; /* while's `%iterArg = %x` names */
	ty in[MAXN], out[MAXN];  /* nin/nout, or ntypes in `in` */
	region reg[16];
} op;

typedef struct P {
	hloi_context *ctx;
	int src;
	const char *t;
	size_t len, i;
	arena a;
	jmp_buf jb;
	int oom;
	strbuf out;          /* finished computations */
	int counter;
	size_t *offs;
	size_t noffs, capoffs;
	int nfuncs;
	const char *funcs[4096];
	int func_public[4096];
	const char *entry;
	comp *cur;
	comp **all;          /* every computation made, hloi_malloc'd */
	int nall, capall;
	struct op *pool[256]; /* an op record per nesting depth, reused */
	int nlive;            /* the depth */
} P;

static void die(P *p, size_t at, const char *fmt, ...) DIAG_PRINTF(3, 4);
static void die(P *p, size_t at, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	size_t e = at < p->len ? at + 1 : at;
	diag_error(p->ctx, p->src, (loc){ at, e }, "%s", buf);
	longjmp(p->jb, 1);
}

static void *alloc(P *p, size_t n)
{
	void *q = arena_alloc(&p->a, n);
	if (!q) {
		p->oom = 1;
		longjmp(p->jb, 2);
	}
	return q;
}

static char *dupn(P *p, const char *s, size_t n)
{
	char *q = alloc(p, n + 1);
	memcpy(q, s, n);
	q[n] = 0;
	return q;
}

static char *fmt(P *p, const char *f, ...) DIAG_PRINTF(2, 3);
static char *fmt(P *p, const char *f, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf, sizeof buf, f, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	return dupn(p, buf, (size_t)n);
}

/* --- characters ---------------------------------------------------------- */

static int at_end(P *p)
{
	return p->i >= p->len;
}

static char ch(P *p)
{
	return p->i < p->len ? p->t[p->i] : 0;
}

/* White space, `//` comments and `loc(...)` trailers. */
static void ws(P *p)
{
	for (;;) {
		while (p->i < p->len && isspace((unsigned char)p->t[p->i]))
			p->i++;
		if (p->i + 1 < p->len && p->t[p->i] == '/' && p->t[p->i + 1] == '/') {
			while (p->i < p->len && p->t[p->i] != '\n')
				p->i++;
			continue;
		}
		if (p->i + 4 <= p->len && strncmp(p->t + p->i, "loc(", 4) == 0) {
			int depth = 0;
			size_t start = p->i;
			p->i += 3;
			do {
				char c = ch(p);
				if (c == '"') {
					p->i++;
					while (p->i < p->len && p->t[p->i] != '"')
						p->i += p->t[p->i] == '\\' ? 2 : 1;
				} else if (c == '(') {
					depth++;
				} else if (c == ')') {
					depth--;
				}
				if (at_end(p))
					die(p, start, "unterminated loc(...)");
				p->i++;
			} while (depth > 0);
			continue;
		}
		break;
	}
}

static int peek(P *p, const char *s)
{
	ws(p);
	size_t n = strlen(s);
	return p->i + n <= p->len && strncmp(p->t + p->i, s, n) == 0;
}

static int is_idc(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$' || c == '-';
}

/* `s` as a whole word (not followed by an identifier character). */
static int peek_word(P *p, const char *s)
{
	if (!peek(p, s))
		return 0;
	size_t n = strlen(s);
	return p->i + n >= p->len || !is_idc(p->t[p->i + n]) || !is_idc(s[n - 1]);
}

static int eat(P *p, const char *s)
{
	if (!peek(p, s))
		return 0;
	p->i += strlen(s);
	return 1;
}

static void expect(P *p, const char *s)
{
	if (!eat(p, s))
		die(p, p->i, at_end(p) ? "unexpected end of file; expected '%s'" : "expected '%s'", s);
}

static const char *ident(P *p)
{
	ws(p);
	size_t s = p->i;
	if (s < p->len && (isalpha((unsigned char)p->t[s]) || p->t[s] == '_')) {
		while (p->i < p->len && (isalnum((unsigned char)p->t[p->i]) || p->t[p->i] == '_' ||
					 p->t[p->i] == '.' || p->t[p->i] == '$'))
			p->i++;
		return dupn(p, p->t + s, p->i - s);
	}
	die(p, s, at_end(p) ? "unexpected end of file; expected a name" : "expected a name");
	return NULL;
}

/* `"..."`: the text between the quotes. */
static const char *string(P *p)
{
	ws(p);
	size_t s = p->i;
	if (ch(p) != '"')
		die(p, s, "expected a string");
	p->i++;
	while (p->i < p->len && p->t[p->i] != '"')
		p->i += p->t[p->i] == '\\' ? 2 : 1;
	if (at_end(p))
		die(p, s, "unterminated string");
	p->i++;
	return dupn(p, p->t + s + 1, p->i - s - 2);
}

/* `@name` or `@"name"` */
static const char *symbol(P *p)
{
	ws(p);
	if (ch(p) != '@')
		die(p, p->i, "expected a symbol (@name)");
	p->i++;
	if (ch(p) == '"')
		return string(p);
	size_t s = p->i;
	while (p->i < p->len && is_idc(p->t[p->i]) && p->t[p->i] != '-')
		p->i++;
	if (p->i == s)
		die(p, s, "expected a symbol name");
	return dupn(p, p->t + s, p->i - s);
}

/* `%name`, `%name#k`: the text after `%`. */
static const char *valref(P *p)
{
	ws(p);
	if (ch(p) != '%')
		die(p, p->i, "expected a value (%%name)");
	p->i++;
	size_t s = p->i;
	while (p->i < p->len && (isalnum((unsigned char)p->t[p->i]) || p->t[p->i] == '_' ||
				 p->t[p->i] == '.' || p->t[p->i] == '$' || p->t[p->i] == '-'))
		p->i++;
	if (p->i == s)
		die(p, s - 1, "expected a value name after '%%'");
	if (ch(p) == '#') {
		p->i++;
		while (p->i < p->len && isdigit((unsigned char)p->t[p->i]))
			p->i++;
	}
	return dupn(p, p->t + s, p->i - s);
}

/* Skips a balanced group starting at the current opening bracket. */
static void skip_group(P *p)
{
	size_t start = p->i;
	char stack[256];
	int d = 0;
	do {
		char c = ch(p);
		if (c == '"') {
			p->i++;
			while (p->i < p->len && p->t[p->i] != '"')
				p->i += p->t[p->i] == '\\' ? 2 : 1;
		} else if (c == '(' || c == '[' || c == '{' || c == '<') {
			if (d == 256)
				die(p, p->i, "nesting too deep");
			stack[d++] = c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>';
		} else if (c == ')' || c == ']' || c == '}' || c == '>') {
			if (c == '>' && p->i > 0 && p->t[p->i - 1] == '-') {
				/* `->` inside a group */
			} else {
				if (d == 0 || stack[d - 1] != c)
					die(p, p->i, "unbalanced '%c'", c);
				d--;
			}
		}
		if (at_end(p))
			die(p, start, "unterminated group");
		p->i++;
	} while (d > 0);
}

/* --- types ---------------------------------------------------------------- */

static etype elem_type(P *p, size_t at, const char *w)
{
	static const struct {
		const char *m, *h;
	} map[] = { { "i1", "pred" },	   { "i2", "s2" },	   { "i4", "s4" },
		    { "i8", "s8" },	   { "i16", "s16" },	   { "i32", "s32" },
		    { "i64", "s64" },	   { "si2", "s2" },	   { "si4", "s4" },
		    { "si8", "s8" },	   { "si16", "s16" },	   { "si32", "s32" },
		    { "si64", "s64" },	   { "ui1", "u1" },	   { "ui2", "u2" },
		    { "ui4", "u4" },	   { "ui8", "u8" },	   { "ui16", "u16" },
		    { "ui32", "u32" },	   { "ui64", "u64" },	   { "f16", "f16" },
		    { "bf16", "bf16" },	   { "f32", "f32" },	   { "f64", "f64" },
		    { "f8E5M2", "f8e5m2" }, { "f8E4M3", "f8e4m3" }, { "f8E4M3FN", "f8e4m3fn" },
		    { "f8E4M3B11FNUZ", "f8e4m3b11fnuz" }, { "f8E3M4", "f8e3m4" },
		    { "f8E5M2FNUZ", "f8e5m2fnuz" }, { "f8E4M3FNUZ", "f8e4m3fnuz" },
		    { "f4E2M1FN", "f4e2m1fn" }, { "f8E8M0FNU", "f8e8m0fnu" } };
	for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
		if (strcmp(map[k].m, w) == 0)
			return etype_from_name(map[k].h, strlen(map[k].h));
	if (strcmp(w, "index") == 0)
		return ET_S64;
	die(p, at, "unsupported element type '%s'", w);
	return ET_INVALID;
}

static void parse_type(P *p, ty *t);

/* The element type after `tensor<dims x`: a word or complex<...>. */
static void parse_elem(P *p, ty *t)
{
	ws(p);
	size_t at = p->i;
	if (eat(p, "complex<")) {
		ty inner;
		memset(&inner, 0, sizeof inner);
		parse_elem(p, &inner);
		expect(p, ">");
		if (inner.et == ET_F32)
			t->et = ET_C64;
		else if (inner.et == ET_F64)
			t->et = ET_C128;
		else
			die(p, at, "unsupported complex element type");
		return;
	}
	if (peek(p, "!quant"))
		die(p, at, "unsupported: quantized types");
	size_t s = p->i;
	while (p->i < p->len && isalnum((unsigned char)p->t[p->i]))
		p->i++;
	if (p->i == s)
		die(p, s, "expected an element type");
	t->et = elem_type(p, s, dupn(p, p->t + s, p->i - s));
}

static void parse_type(P *p, ty *t)
{
	memset(t, 0, sizeof *t);
	ws(p);
	size_t at = p->i;
	if (eat(p, "tensor<")) {
		t->kind = 0;
		for (;;) {
			ws(p);
			size_t s = p->i;
			if (ch(p) == '?' || isdigit((unsigned char)ch(p))) {
				/* a dimension, if an `x` follows */
				int64_t d = -1;
				if (ch(p) == '?') {
					p->i++;
				} else {
					d = 0;
					while (isdigit((unsigned char)ch(p)))
						d = d * 10 + (ch(p) - '0'), p->i++;
				}
				if (ch(p) != 'x') {
					p->i = s;
					break;
				}
				p->i++;
				if (t->rank == MAX_RANK)
					die(p, s, "too many dimensions");
				t->bound[t->rank] = -1;
				t->dims[t->rank++] = d;
				continue;
			}
			break;
		}
		parse_elem(p, t);
		if (eat(p, ",")) {
			/* an encoding: #stablehlo.bounds<...> */
			ws(p);
			size_t es = p->i;
			if (eat(p, "#stablehlo.bounds<")) {
				for (int d = 0; d < t->rank; d++) {
					if (d)
						expect(p, ",");
					ws(p);
					if (eat(p, "?"))
						continue;
					int64_t b = strtoll(p->t + p->i, NULL, 10);
					while (isdigit((unsigned char)ch(p)))
						p->i++;
					t->bound[d] = b;
				}
				expect(p, ">");
			} else {
				die(p, es, "unsupported tensor encoding");
			}
		}
		expect(p, ">");
		return;
	}
	if (eat(p, "tuple<")) {
		t->kind = 1;
		ty tmp[MAXN];
		int n = 0;
		if (!eat(p, ">")) {
			do {
				if (n == MAXN)
					die(p, p->i, "tuple too long");
				parse_type(p, &tmp[n++]);
			} while (eat(p, ","));
			expect(p, ">");
		}
		t->ntup = n;
		t->tup = alloc(p, sizeof(ty) * (size_t)(n ? n : 1));
		memcpy(t->tup, tmp, sizeof(ty) * (size_t)n);
		return;
	}
	if (eat(p, "!stablehlo.token") || eat(p, "!mhlo.token")) {
		t->kind = 2;
		return;
	}
	/* a bare element type stands for a scalar tensor here (reducer
	 * arguments are tensors; a few attributes use bare types) */
	if (isalpha((unsigned char)ch(p)) || peek(p, "complex<")) {
		t->kind = 0;
		t->rank = 0;
		parse_elem(p, t);
		return;
	}
	die(p, at, at_end(p) ? "unexpected end of file; expected a type" : "expected a type");
}

static void put_shape(strbuf *b, const ty *t)
{
	if (t->kind == 2) {
		sb_puts(b, "token[]");
		return;
	}
	if (t->kind == 1) {
		sb_putc(b, '(');
		for (int k = 0; k < t->ntup; k++) {
			if (k)
				sb_puts(b, ", ");
			put_shape(b, &t->tup[k]);
		}
		sb_putc(b, ')');
		return;
	}
	sb_puts(b, etype_name(t->et));
	sb_putc(b, '[');
	for (int d = 0; d < t->rank; d++) {
		if (d)
			sb_putc(b, ',');
		if (t->dims[d] >= 0)
			sb_put_int(b, t->dims[d]);
		else if (t->bound[d] >= 0)
			sb_printf(b, "<=%" PRId64, t->bound[d]);
		else
			sb_putc(b, '?');
	}
	sb_putc(b, ']');
}

/* `(t, ...) -> t` or `-> (t, ...)`; a bare type list; fills in/out. */
static int type_list(P *p, ty *v, int max)
{
	int n = 0;
	if (eat(p, "(")) {
		if (eat(p, ")"))
			return 0;
		do {
			if (n == max)
				die(p, p->i, "too many types");
			parse_type(p, &v[n++]);
			ws(p);
			if (ch(p) == '{')
				skip_group(p); /* result attributes */
		} while (eat(p, ","));
		expect(p, ")");
		return n;
	}
	parse_type(p, &v[0]);
	return 1;
}

/* --- values and emission ---------------------------------------------------- */

static size_t name_hash(const char *s)
{
	size_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static val *lookup_in(comp *c, const char *name)
{
	if (!c->cap)
		return NULL;
	for (size_t i = name_hash(name) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		val *v = c->tab[i];
		if (!v)
			return NULL;
		if (strcmp(v->mname, name) == 0)
			return v;
	}
}

/* Enters v in c's table (a later value of the same name replaces it). */
static void enter(P *p, comp *c, val *v)
{
	if (2 * (c->n + 1) > c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		val **t = hloi_calloc(cap, sizeof *t);
		if (!t) {
			p->oom = 1;
			longjmp(p->jb, 2);
		}
		for (size_t k = 0; k < c->cap; k++) {
			val *w = c->tab[k];
			if (!w)
				continue;
			size_t i = name_hash(w->mname) & (cap - 1);
			while (t[i])
				i = (i + 1) & (cap - 1);
			t[i] = w;
		}
		hloi_free(c->tab);
		c->tab = t;
		c->cap = cap;
	}
	size_t i = name_hash(v->mname) & (c->cap - 1);
	while (c->tab[i] && strcmp(c->tab[i]->mname, v->mname) != 0)
		i = (i + 1) & (c->cap - 1);
	if (!c->tab[i])
		c->n++;
	c->tab[i] = v;
}

static val *define(P *p, comp *c, const char *mname, const char *hlo, const ty *t, size_t line)
{
	val *v = alloc(p, sizeof *v);
	v->mname = mname;
	v->hlo = hlo;
	v->t = *t;
	v->line = line;
	v->next = c->vals;
	c->vals = v;
	enter(p, c, v);
	return v;
}

static const char *new_name(P *p, const char *base, size_t at)
{
	if (p->noffs == p->capoffs) {
		size_t cap = p->capoffs ? p->capoffs * 2 : 256;
		size_t *n = hloi_realloc(p->offs, cap * sizeof *n);
		if (!n) {
			p->oom = 1;
			longjmp(p->jb, 2);
		}
		p->offs = n;
		p->capoffs = cap;
	}
	p->offs[p->noffs] = at;
	return fmt(p, "%s.%zu", base, p->noffs++);
}

/* Starts an instruction line `  name = shape opcode(`; the caller writes
 * the rest and the line's end with end_line. Returns the value. */
static val *begin(P *p, comp *c, const char *mname, const char *opc, const ty *t, size_t at)
{
	const char *nm = new_name(p, opc, at);
	size_t line = c->b.len;
	sb_printf(&c->b, "  %s = ", nm);
	put_shape(&c->b, t);
	sb_printf(&c->b, " %s(", opc);
	return define(p, c, mname ? mname : "", nm, t, line);
}

static void end_line(P *p, comp *c)
{
	(void)p;
	sb_putc(&c->b, '\n');
}

/* The value `name` names here; a value of an enclosing computation is
 * captured where this one captures (if/case branches), else refused. */
static val *use(P *p, const char *name, size_t at)
{
	comp *c = p->cur;
	val *v = lookup_in(c, name);
	if (!v) {
		/* `%x#0` of a one-result op written `%x:1` */
		const char *hash = strchr(name, '#');
		if (hash && strcmp(hash, "#0") == 0)
			v = lookup_in(c, dupn(p, name, (size_t)(hash - name)));
	}
	if (v)
		return v;
	for (int k = 0; k < c->ncap; k++)
		if (strcmp(c->caps[k]->mname, name) == 0)
			return lookup_in(c, fmt(p, "cap:%s", name));
	if (c->capturing && c->parent) {
		comp *save = p->cur;
		p->cur = c->parent;
		val *outer = use(p, name, at);
		p->cur = save;
		if (c->ncap == 256)
			die(p, at, "too many values captured by one region");
		c->caps[c->ncap++] = outer;
		/* its get-tuple-element from the capture parameter, written
		 * where the parameters go once the region is done */
		return define(p, c, fmt(p, "cap:%s", name), new_name(p, "get-tuple-element", at), &outer->t,
			      (size_t)-1);
	}
	if (c->parent) {
		comp *o = c->parent;
		while (o) {
			if (lookup_in(o, name))
				die(p, at, "unsupported: a region of this op using %%%s, defined outside it", name);
			o = o->parent;
		}
	}
	die(p, at, "use of undefined value '%%%s'", name);
	return NULL;
}

static void put_operands(strbuf *b, val *const *v, int n)
{
	for (int k = 0; k < n; k++) {
		if (k)
			sb_puts(b, ", ");
		sb_printf(b, "%s", v[k]->hlo);
	}
}

/* --- attribute values ------------------------------------------------------ */

static const kv *kv_of(const op *o, const char *a, const char *b)
{
	for (int k = 0; k < o->nkv; k++)
		if (strcmp(o->kvs[k].key, a) == 0 || (b && strcmp(o->kvs[k].key, b) == 0)) {
			((op *)o)->kvs[k].used = 1;
			return &o->kvs[k];
		}
	return NULL;
}

/* Attributes that do not change what an op computes on one CPU: precision
 * and layout hints, sharding and frontend annotations. */
static int ignorable(const char *key)
{
	static const char *const keys[] = { "precision_config", "precision", "result_accuracy", "has_side_effect",
					    "backend_config", "api_version", "called_computations", "sharding",
					    "algorithm", "known_expanding_dimensions", "known_nonexpanding_dimensions",
					    "indices_are_sorted", "unique_indices", "is_stable", NULL };
	for (int k = 0; keys[k]; k++)
		if (strcmp(key, keys[k]) == 0)
			return 1;
	return strncmp(key, "mhlo.", 5) == 0 || strncmp(key, "jax.", 4) == 0;
}

/* Refuses an attribute the lowering did not read: its meaning would be
 * lost, and the answer wrong. */
static void unread_attrs(P *p, const op *o)
{
	for (int k = 0; k < o->nkv; k++)
		if (!o->kvs[k].used && !ignorable(o->kvs[k].key))
			die(p, o->kvs[k].at, "unsupported: attribute '%s' of op '%s'", o->kvs[k].key, o->name);
}

static int has_word(const op *o, const char *w)
{
	for (int k = 0; k < o->nwords; k++)
		if (strcmp(o->words[k], w) == 0)
			return 1;
	return 0;
}

/* Integers in text [s, e): `[1, 2]`, `array<i64: 1, 2>`, `dense<[1, 2]> :
 * tensor<2xi64>`, `3 : i64`, `[[0, 0], [1, 1]]`; type words and anything
 * after a `:` at depth 0 are skipped. Returns the count. */
static int ints_in(P *p, size_t s, size_t e, int64_t *v, int max)
{
	int n = 0, depth = 0;
	size_t i = s;
	if (e - s >= 6 && strncmp(p->t + s, "array<", 6) == 0) {
		while (i < e && p->t[i] != ':' && p->t[i] != '>')
			i++;
		if (i < e && p->t[i] == ':')
			i++;
	}
	while (i < e) {
		char c = p->t[i];
		if (c == '[' || c == '<' || c == '(') {
			depth++;
		} else if (c == ']' || c == '>' || c == ')') {
			depth--;
		} else if (c == ':' && depth <= 0) {
			break;
		} else if (isalpha((unsigned char)c) || c == '_') {
			size_t w = i;
			while (i < e && (isalnum((unsigned char)p->t[i]) || p->t[i] == '_'))
				i++;
			if ((i - w == 4 && strncmp(p->t + w, "true", 4) == 0) ||
			    (i - w == 5 && strncmp(p->t + w, "false", 5) == 0)) {
				if (n == max)
					die(p, w, "too many values");
				v[n++] = p->t[w] == 't';
			}
			continue;
		} else if (isdigit((unsigned char)c) || (c == '-' && i + 1 < e && isdigit((unsigned char)p->t[i + 1]))) {
			char *end;
			long long x = strtoll(p->t + i, &end, 10);
			if (n == max)
				die(p, i, "too many values");
			v[n++] = x;
			i = (size_t)(end - p->t);
			continue;
		}
		i++;
	}
	return n;
}

/* Within a `#stablehlo.xxx<k = v, ...>` or `{k = v}` text, the value of k. */
static int sub_attr(P *p, size_t s, size_t e, const char *key, size_t *vs, size_t *ve)
{
	size_t n = strlen(key);
	int depth = 0;
	for (size_t i = s; i < e; i++) {
		char c = p->t[i];
		if (c == '<' || c == '[' || c == '{' || c == '(') {
			depth++;
			continue;
		}
		if (c == '>' || c == ']' || c == '}' || c == ')') {
			if (!(c == '>' && i > 0 && p->t[i - 1] == '-'))
				depth--;
			continue;
		}
		if (depth != 1 || i + n > e || strncmp(p->t + i, key, n) != 0 || (i > 0 && is_idc(p->t[i - 1])))
			continue;
		size_t j = i + n;
		while (j < e && p->t[j] == ' ')
			j++;
		if (j >= e || p->t[j] != '=')
			continue;
		j++;
		while (j < e && p->t[j] == ' ')
			j++;
		*vs = j;
		int d = 0;
		while (j < e) {
			char x = p->t[j];
			if (x == '[' || x == '<' || x == '{' || x == '(')
				d++;
			else if ((x == ']' || x == '>' || x == '}' || x == ')') && !(x == '>' && p->t[j - 1] == '-')) {
				if (d == 0)
					break;
				d--;
			} else if (x == ',' && d == 0) {
				break;
			}
			j++;
		}
		*ve = j;
		return 1;
	}
	return 0;
}

static void put_ints(strbuf *b, const int64_t *v, int n)
{
	sb_putc(b, '{');
	for (int k = 0; k < n; k++) {
		if (k)
			sb_putc(b, ',');
		sb_put_int(b, v[k]);
	}
	sb_putc(b, '}');
}

/* `, name={...}` from attribute a (or b) of o; absent: nothing, or `{}`
 * when `always`. */
static int put_ints_attr(P *p, comp *c, const op *o, const char *a, const char *b, const char *hlo, int always)
{
	const kv *x = kv_of(o, a, b);
	if (!x && !always)
		return 0;
	int64_t v[MAXN * 2];
	int n = x ? ints_in(p, x->vs, x->ve, v, MAXN * 2) : 0;
	sb_printf(&c->b, ", %s=", hlo);
	put_ints(&c->b, v, n);
	return 1;
}

static int put_sub_ints(P *p, comp *c, size_t s, size_t e, const char *key, const char *hlo)
{
	size_t vs, ve;
	if (!sub_attr(p, s, e, key, &vs, &ve))
		return 0;
	int64_t v[MAXN];
	int n = ints_in(p, vs, ve, v, MAXN);
	sb_printf(&c->b, ", %s=", hlo);
	put_ints(&c->b, v, n);
	return 1;
}

/* The word of `#stablehlo<comparison_direction LT>` or a bare `LT`. */
static const char *enum_word(P *p, const kv *x)
{
	size_t i = x->ve;
	while (i > x->vs && !isalnum((unsigned char)p->t[i - 1]) && p->t[i - 1] != '_')
		i--;
	size_t e = i;
	while (i > x->vs && (isalnum((unsigned char)p->t[i - 1]) || p->t[i - 1] == '_'))
		i--;
	return dupn(p, p->t + i, e - i);
}

/* --- dense literals ----------------------------------------------------------- */

static void put_float_bits(strbuf *b, etype et, uint64_t bits)
{
	double d;
	switch (et) {
	case ET_F64: {
		memcpy(&d, &bits, 8);
		break;
	}
	case ET_F32: {
		uint32_t u = (uint32_t)bits;
		float f;
		memcpy(&f, &u, 4);
		d = f;
		break;
	}
	case ET_F16:
		d = f16_to_f32((uint16_t)bits);
		break;
	case ET_BF16:
		d = bf16_to_f32((uint16_t)bits);
		break;
	default: {
		const f8_format *f = f8_format_of(et);
		d = f ? f8_to_f64(f, (uint8_t)bits) : 0;
		break;
	}
	}
	if (isnan(d))
		sb_puts(b, signbit(d) ? "-nan" : "nan");
	else if (isinf(d))
		sb_puts(b, d < 0 ? "-inf" : "inf");
	else
		sb_printf(b, "%.17g", d);
}

static etype part_type(etype et)
{
	return et == ET_C64 ? ET_F32 : et == ET_C128 ? ET_F64 : et;
}

/* One scalar of a dense literal at p->i, written as HLO's literal text. */
static void put_scalar(P *p, strbuf *b, etype et)
{
	ws(p);
	size_t s = p->i;
	if (ch(p) == '(') {
		p->i++;
		sb_putc(b, '(');
		put_scalar(p, b, part_type(et));
		expect(p, ",");
		sb_puts(b, ", ");
		put_scalar(p, b, part_type(et));
		expect(p, ")");
		sb_putc(b, ')');
		return;
	}
	if (eat(p, "true")) {
		sb_puts(b, et == ET_PRED ? "true" : "1");
		return;
	}
	if (eat(p, "false")) {
		sb_puts(b, et == ET_PRED ? "false" : "0");
		return;
	}
	if (ch(p) == '-' || ch(p) == '+')
		p->i++;
	if (p->i + 1 < p->len && p->t[p->i] == '0' && (p->t[p->i + 1] == 'x' || p->t[p->i + 1] == 'X')) {
		p->i += 2;
		uint64_t u = 0;
		while (isxdigit((unsigned char)ch(p))) {
			char c = ch(p);
			u = u * 16 + (uint64_t)(isdigit((unsigned char)c) ? c - '0' : tolower(c) - 'a' + 10);
			p->i++;
		}
		if (etype_is_float(et))
			put_float_bits(b, et, u);
		else
			sb_printf(b, "%" PRIu64, u);
		return;
	}
	while (p->i < p->len && (isalnum((unsigned char)p->t[p->i]) || p->t[p->i] == '.' ||
				 ((p->t[p->i] == '-' || p->t[p->i] == '+') &&
				  (p->t[p->i - 1] == 'e' || p->t[p->i - 1] == 'E'))))
		p->i++;
	if (p->i == s)
		die(p, s, "expected a number");
	if (et == ET_PRED) {
		/* i1 written 0 / 1 */
		sb_puts(b, p->t[s] == '0' ? "false" : "true");
		return;
	}
	sb_putn(b, p->t + s, p->i - s);
}

static void put_list(P *p, strbuf *b, etype et, int depth, int rank, int64_t *count)
{
	ws(p);
	if (ch(p) == '[') {
		p->i++;
		sb_putc(b, '{');
		int first = 1;
		ws(p);
		if (ch(p) != ']') {
			do {
				if (!first)
					sb_puts(b, ", ");
				first = 0;
				put_list(p, b, et, depth + 1, rank, count);
			} while (eat(p, ","));
		}
		expect(p, "]");
		sb_putc(b, '}');
		return;
	}
	(*count)++;
	put_scalar(p, b, et);
}

static int hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

/* A hex blob's element k (little-endian bytes). */
static uint64_t blob_elem(const uint8_t *bytes, int w, int64_t k)
{
	uint64_t u = 0;
	for (int j = w - 1; j >= 0; j--)
		u = u << 8 | bytes[k * w + j];
	return u;
}

static void put_blob_elem(strbuf *b, etype et, const uint8_t *bytes, int64_t k)
{
	if (et == ET_C64 || et == ET_C128) {
		etype pt = part_type(et);
		int w = etype_byte_width(pt);
		sb_putc(b, '(');
		put_float_bits(b, pt, blob_elem(bytes, w, 2 * k));
		sb_puts(b, ", ");
		put_float_bits(b, pt, blob_elem(bytes, w, 2 * k + 1));
		sb_putc(b, ')');
		return;
	}
	int w = etype_byte_width(et);
	uint64_t u = blob_elem(bytes, w, k);
	if (et == ET_PRED) {
		sb_puts(b, u ? "true" : "false");
	} else if (etype_is_float(et)) {
		put_float_bits(b, et, u);
	} else if (etype_is_signed(et)) {
		int bits = etype_bit_width(et);
		if (bits > 8 * w)
			bits = 8 * w;
		int64_t x = bits >= 64 ? (int64_t)u : (int64_t)(u << (64 - bits)) >> (64 - bits);
		sb_printf(b, "%" PRId64, x);
	} else {
		sb_printf(b, "%" PRIu64, u);
	}
}

static void put_blob_dims(strbuf *b, etype et, const uint8_t *bytes, const ty *t, int d, int64_t *k, int splat)
{
	if (d == t->rank) {
		put_blob_elem(b, et, bytes, splat ? 0 : *k);
		(*k)++;
		return;
	}
	sb_putc(b, '{');
	for (int64_t j = 0; j < t->dims[d]; j++) {
		if (j)
			sb_puts(b, ", ");
		put_blob_dims(b, et, bytes, t, d + 1, k, splat);
	}
	sb_putc(b, '}');
}

static int64_t elems(const ty *t)
{
	int64_t n = 1;
	for (int d = 0; d < t->rank; d++)
		n *= t->dims[d] < 0 ? 0 : t->dims[d];
	return n;
}

/* Skips to the `>` closing a `dense<`. */
static void skip_to_close(P *p)
{
	int d = 0;
	while (p->i < p->len) {
		char c = p->t[p->i];
		if (c == '<' || c == '[' || c == '(')
			d++;
		else if ((c == ']' || c == ')') || (c == '>' && d > 0))
			d--;
		else if (c == '>')
			return;
		p->i++;
	}
}

/* The constant `dense<...>` at [s, e) (from `dense<` on) of type t as
 * instructions of c: a constant, or a scalar constant broadcast for a
 * splat. */
static val *emit_dense(P *p, comp *c, const char *mname, size_t s, const ty *t, size_t at)
{
	if (t->kind != 0)
		die(p, at, "unsupported: a constant of tuple or token type");
	for (int d = 0; d < t->rank; d++)
		if (t->dims[d] < 0)
			die(p, at, "a constant needs a static shape");
	size_t save = p->i;
	p->i = s;
	expect(p, "dense<");
	ws(p);
	strbuf lit = { 0 };
	int splat = 0;
	if (elems(t) == 0) {
		/* no elements: a zero broadcast to the shape */
		skip_to_close(p);
		sb_puts(&lit, t->et == ET_PRED ? "false" : etype_get_kind(t->et) == KIND_COMPLEX ? "(0, 0)" : "0");
		splat = 1;
	} else if (ch(p) == '"') {
		size_t hs = p->i;
		const char *h = string(p);
		size_t hn = strlen(h);
		if (hn < 2 || h[0] != '0' || (h[1] != 'x' && h[1] != 'X') || (hn % 2) != 0)
			die(p, hs, "expected a hex blob \"0x...\"");
		size_t nb = (hn - 2) / 2;
		uint8_t *bytes = alloc(p, nb + 1);
		for (size_t k = 0; k < nb; k++) {
			if (!isxdigit((unsigned char)h[2 + 2 * k]) || !isxdigit((unsigned char)h[3 + 2 * k]))
				die(p, hs, "bad hex digit in a dense blob");
			bytes[k] = (uint8_t)(hexval(h[2 + 2 * k]) * 16 + hexval(h[3 + 2 * k]));
		}
		int w = etype_byte_width(t->et);
		if (w == 0)
			w = 1;
		int64_t n = elems(t);
		if ((int64_t)nb == (int64_t)w && n != 1)
			splat = 1;
		else if ((int64_t)nb != n * w)
			die(p, hs, "the hex blob holds %zu bytes; the type needs %" PRId64, nb, n * w);
		int64_t k = 0;
		put_blob_dims(&lit, t->et, bytes, t, 0, &k, splat);
	} else if (ch(p) == '[') {
		int64_t count = 0;
		put_list(p, &lit, t->et, 0, t->rank, &count);
		if (count == 1 && elems(t) != 1) {
			/* `dense<[1]>`-like splat is not MLIR; refuse */
			die(p, s, "the literal holds 1 element; the type needs %" PRId64, elems(t));
		}
	} else {
		put_scalar(p, &lit, t->et);
		splat = t->rank > 0;
	}
	expect(p, ">");
	p->i = save;
	if (lit.oom) {
		sb_free(&lit);
		p->oom = 1;
		longjmp(p->jb, 2);
	}
	val *v;
	if (splat && t->rank > 0) {
		ty sc = *t;
		sc.rank = 0;
		val *k = begin(p, c, NULL, "constant", &sc, at);
		/* the splat's text is one scalar; for a blob it was written as
		 * nested braces of one repeated value: take the first */
		const char *txt = lit.s;
		size_t n = lit.len;
		if (txt[0] == '{') {
			size_t j = 0;
			while (txt[j] == '{')
				j++;
			size_t e = j;
			int d = 0;
			while (e < n && !(d == 0 && (txt[e] == ',' || txt[e] == '}'))) {
				if (txt[e] == '(')
					d++;
				else if (txt[e] == ')')
					d--;
				e++;
			}
			sb_putn(&c->b, txt + j, e - j);
		} else {
			sb_putn(&c->b, txt, n);
		}
		sb_putc(&c->b, ')');
		end_line(p, c);
		v = begin(p, c, mname, "broadcast", t, at);
		sb_printf(&c->b, "%s), dimensions={}", k->hlo);
		end_line(p, c);
	} else {
		v = begin(p, c, mname, "constant", t, at);
		sb_putn(&c->b, lit.s, lit.len);
		sb_putc(&c->b, ')');
		end_line(p, c);
	}
	sb_free(&lit);
	return v;
}

/* --- reading an op ------------------------------------------------------------- */

/* A value's text [vs, ve) from the current position: up to a `,` or a
 * closing bracket at depth 0, or (items, not dictionaries) a `:`. */
static void value_range(P *p, kv *x, int in_dict)
{
	ws(p);
	x->vs = p->i;
	int d = 0;
	while (p->i < p->len) {
		char c = p->t[p->i];
		if (c == '"') {
			p->i++;
			while (p->i < p->len && p->t[p->i] != '"')
				p->i += p->t[p->i] == '\\' ? 2 : 1;
			p->i++;
			continue;
		}
		if (c == '(' || c == '[' || c == '{' || c == '<') {
			d++;
		} else if ((c == ')' || c == ']' || c == '}' || c == '>') && !(c == '>' && p->i > 0 && p->t[p->i - 1] == '-')) {
			if (d == 0)
				break;
			if (--d == 0 && !in_dict) {
				/* a whole group ends the value unless `x [` or
				 * `->` continues it; an attribute dictionary may
				 * follow (`window = {...} {...}`) */
				size_t j = p->i + 1;
				while (j < p->len && (p->t[j] == ' ' || p->t[j] == '\t' || p->t[j] == '\n'))
					j++;
				if (j < p->len && p->t[j] == '{') {
					p->i++;
					break;
				}
			}
		} else if (d == 0 && (c == ',' || (c == ':' && !in_dict))) {
			break;
		} else if (d == 0 && c == '\n' && !in_dict) {
			break;
		}
		p->i++;
	}
	if (d != 0)
		die(p, x->vs, "unterminated attribute value");
	x->ve = p->i;
	while (x->ve > x->vs && isspace((unsigned char)p->t[x->ve - 1]))
		x->ve--;
}

/* `{k = v, ...}` (or the inside of `<{...}>`), at `{`. */
static void parse_dict(P *p, op *o, const char *close)
{
	expect(p, "{");
	if (eat(p, close))
		return;
	do {
		ws(p);
		size_t at = p->i;
		const char *k = ch(p) == '"' ? string(p) : ident(p);
		if (o->nkv == MAXN)
			die(p, at, "too many attributes");
		kv *x = &o->kvs[o->nkv++];
		x->key = k;
		x->used = 0;
		x->at = at;
		if (eat(p, "=")) {
			value_range(p, x, 1);
		} else {
			x->vs = x->ve = p->i; /* a unit attribute */
		}
	} while (eat(p, ","));
	expect(p, close);
}

/* Whether the `{` at p->i opens a region (not an attribute dictionary). */
static int opens_region(P *p)
{
	size_t save = p->i;
	p->i++;
	ws(p);
	int r;
	char c = ch(p);
	if (c == '^' || c == '%' || c == '"')
		r = 1;
	else if (c == '}')
		r = 0;
	else if (isalpha((unsigned char)c)) {
		while (p->i < p->len && is_idc(p->t[p->i]))
			p->i++;
		ws(p);
		r = ch(p) != '=';
	} else
		r = 0;
	p->i = save;
	return r;
}

enum { R_SCALAR, R_TUPLE, R_CAPTURE };
static int region_mode(const char *name)
{
	if (strcmp(name, "while") == 0)
		return R_TUPLE;
	if (strcmp(name, "if") == 0 || strcmp(name, "case") == 0)
		return R_CAPTURE;
	return R_SCALAR;
}

static const char *short_name(const char *n)
{
	if (strncmp(n, "stablehlo.", 10) == 0)
		return n + 10;
	if (strncmp(n, "mhlo.", 5) == 0)
		return n + 5;
	return n;
}

static void parse_block(P *p, comp *c, int tuple_root);

static void mark_root(P *p, comp *c, val *v)
{
	if (v->line == (size_t)-1 || v->line > c->b.len) {
		ty t = v->t;
		val *r = begin(p, c, NULL, "copy", &t, 0);
		sb_printf(&c->b, "%s)", v->hlo);
		end_line(p, c);
		v = r;
	}
	/* `  name = ...` becomes `  ROOT name = ...` */
	sb_extend(&c->b, 5);
	if (c->b.oom) {
		p->oom = 1;
		longjmp(p->jb, 2);
	}
	memmove(c->b.s + v->line + 7, c->b.s + v->line + 2, c->b.len - 5 - v->line - 2);
	memcpy(c->b.s + v->line + 2, "ROOT ", 5);
	c->b.s[c->b.len] = 0;
}

static comp *comp_new(P *p)
{
	if (p->nall == p->capall) {
		int cap = p->capall ? 2 * p->capall : 64;
		comp **a = hloi_realloc(p->all, (size_t)cap * sizeof *a);
		if (!a) {
			p->oom = 1;
			longjmp(p->jb, 2);
		}
		p->all = a;
		p->capall = cap;
	}
	comp *c = hloi_calloc(1, sizeof *c);
	if (!c) {
		p->oom = 1;
		longjmp(p->jb, 2);
	}
	p->all[p->nall++] = c;
	return c;
}

/* Writes the finished computation c named `name` to the output. */
static void comp_finish(P *p, comp *c, const char *name, int entry, size_t at)
{
	(void)at;
	if (entry)
		sb_puts(&p->out, "ENTRY ");
	sb_printf(&p->out, "%s {\n", name);
	sb_putn(&p->out, c->b.s ? c->b.s : "", c->b.len);
	sb_puts(&p->out, "}\n\n");
	c->done = 1;
}

/* A region at `{`: a computation whose parameters are its block's
 * arguments (written `^bb0(...)`, or `names`/`types` given outside it). */
static void parse_region(P *p, op *o, int mode, int nargs, const char *const *names, const ty *types)
{
	if (o->nreg == 16)
		die(p, p->i, "too many regions");
	region *r = &o->reg[o->nreg++];
	r->ncap = 0;
	r->c = NULL;
	comp *c = comp_new(p);
	c->parent = p->cur;
	c->capturing = mode == R_CAPTURE;
	size_t at = p->i;
	expect(p, "{");
	const char *an[MAXN];
	ty at_[MAXN];
	int n = nargs;
	for (int k = 0; k < n; k++)
		an[k] = names[k], at_[k] = types[k];
	ws(p);
	if (ch(p) == '^') {
		while (p->i < p->len && p->t[p->i] != '(' && p->t[p->i] != ':')
			p->i++;
		n = 0;
		if (eat(p, "(") && !eat(p, ")")) {
			do {
				if (n == MAXN)
					die(p, p->i, "too many block arguments");
				an[n] = valref(p);
				expect(p, ":");
				parse_type(p, &at_[n]);
				n++;
			} while (eat(p, ","));
			expect(p, ")");
		}
		expect(p, ":");
	}
	comp *save = p->cur;
	p->cur = c;
	if (mode == R_TUPLE) {
		/* the parameter and its elements are written by the while
		 * (finish_while), once both regions' captures are known */
		c->capturing = 1;
		c->is_while = 1;
		c->is_body = o->nreg == 2;
		c->nargs = n;
		c->argv = alloc(p, sizeof(val *) * (size_t)(n ? n : 1));
		for (int k = 0; k < n; k++)
			c->argv[k] = define(p, c, an[k], new_name(p, "get-tuple-element", at), &at_[k], (size_t)-1);
		if (c->is_body) {
			/* the condition's captures come first, in its order */
			comp *cond = o->reg[0].c;
			for (int k = 0; k < cond->ncap; k++) {
				c->caps[c->ncap++] = cond->caps[k];
				define(p, c, fmt(p, "cap:%s", cond->caps[k]->mname),
				       new_name(p, "get-tuple-element", at), &cond->caps[k]->t, (size_t)-1);
			}
		}
	} else if (mode == R_SCALAR) {
		for (int k = 0; k < n; k++) {
			begin(p, c, an[k], "parameter", &at_[k], at);
			c->b.len--;
			sb_printf(&c->b, "(%d)", k);
			end_line(p, c);
		}
	}
	parse_block(p, c, mode == R_TUPLE && p->cur == c && strcmp(short_name(o->name), "while") == 0 &&
				  o->nreg == 2);
	if (mode == R_CAPTURE) {
		/* the tuple parameter of the captured values, and their
		 * elements, before everything else */
		strbuf pre = { 0 };
		ty tt = { 0 };
		tt.kind = 1;
		tt.ntup = c->ncap;
		tt.tup = alloc(p, sizeof(ty) * (size_t)(c->ncap ? c->ncap : 1));
		for (int k = 0; k < c->ncap; k++)
			tt.tup[k] = c->caps[k]->t;
		const char *pn = new_name(p, "parameter", at);
		sb_printf(&pre, "  %s = ", pn);
		put_shape(&pre, &tt);
		sb_puts(&pre, " parameter(0)\n");
		for (int k = 0; k < c->ncap; k++) {
			val *g = lookup_in(c, fmt(p, "cap:%s", c->caps[k]->mname));
			sb_printf(&pre, "  %s = ", g->hlo);
			put_shape(&pre, &g->t);
			sb_printf(&pre, " get-tuple-element(%s), index=%d\n", pn, k);
		}
		sb_putn(&pre, c->b.s ? c->b.s : "", c->b.len);
		sb_free(&c->b);
		c->b = pre;
		r->ncap = c->ncap;
		memcpy(r->caps, c->caps, sizeof(val *) * (size_t)c->ncap);
	}
	p->cur = save;
	r->name = new_name(p, "region", at);
	r->c = c;
	if (!c->is_while)
		comp_finish(p, c, r->name, 0, at);
}

/* A while's region: its tuple parameter (the arguments, then the
 * captures `caps`) and the elements before its text; then finished. */
static void finish_while(P *p, region *r, val *const *caps, int ncap, size_t at)
{
	comp *c = r->c;
	strbuf pre = { 0 };
	ty tt = { 0 };
	tt.kind = 1;
	tt.ntup = c->nargs + ncap;
	tt.tup = alloc(p, sizeof(ty) * (size_t)(tt.ntup ? tt.ntup : 1));
	for (int k = 0; k < c->nargs; k++)
		tt.tup[k] = c->argv[k]->t;
	for (int k = 0; k < ncap; k++)
		tt.tup[c->nargs + k] = caps[k]->t;
	const char *pn = new_name(p, "parameter", at);
	sb_printf(&pre, "  %s = ", pn);
	put_shape(&pre, &tt);
	sb_puts(&pre, " parameter(0)\n");
	for (int k = 0; k < c->nargs; k++) {
		sb_printf(&pre, "  %s = ", c->argv[k]->hlo);
		put_shape(&pre, &c->argv[k]->t);
		sb_printf(&pre, " get-tuple-element(%s), index=%d\n", pn, k);
	}
	for (int k = 0; k < c->ncap; k++) {
		val *g = lookup_in(c, fmt(p, "cap:%s", c->caps[k]->mname));
		sb_printf(&pre, "  %s = ", g->hlo);
		put_shape(&pre, &g->t);
		sb_printf(&pre, " get-tuple-element(%s), index=%d\n", pn, c->nargs + k);
	}
	sb_putn(&pre, c->b.s ? c->b.s : "", c->b.len);
	sb_free(&c->b);
	c->b = pre;
	comp_finish(p, c, r->name, 0, at);
}

static void parse_stmt(P *p, comp *c, int tuple_root, int *returned);

/* Statements up to `}`; the terminator's values become the root (a tuple
 * when there are several, none, or tuple_root). */
static void parse_block(P *p, comp *c, int tuple_root)
{
	int returned = 0;
	while (!eat(p, "}")) {
		if (at_end(p))
			die(p, p->i, "unexpected end of file; expected '}'");
		if (returned)
			die(p, p->i, "an op after the block's terminator");
		parse_stmt(p, c, tuple_root, &returned);
	}
	if (!returned)
		die(p, p->i - 1, "a block without a terminator (return)");
}

/* The op's items: operands, `key = value`, words, brackets, dictionaries,
 * regions, up to its types. */
static void parse_items(P *p, op *o)
{
	int depth = 0;
	int mode = region_mode(short_name(o->name));
	for (;;) {
		ws(p);
		char c = ch(p);
		size_t at = p->i;
		if (at_end(p))
			break;
		if (c == '%') {
			const char *n = valref(p);
			ws(p);
			if (depth > 0 && ch(p) == '=' && p->t[p->i + 1] != '=') {
				p->i++;
				if (o->nbind == MAXN)
					die(p, at, "too many operands");
				o->bind[o->nbind++] = n;
				continue;
			}
			if (depth == 0 && (ch(p) == '=' || (ch(p) == ':' && p->i + 1 < p->len && isdigit((unsigned char)p->t[p->i + 1])))) {
				p->i = at; /* the next statement */
				break;
			}
			if (o->nops == MAXN)
				die(p, at, "too many operands");
			o->op_at[o->nops] = at;
			o->ops[o->nops++] = use(p, n, at);
			continue;
		}
		if (c == ',') {
			p->i++;
			continue;
		}
		if (c == '(') {
			depth++;
			p->i++;
			continue;
		}
		if (c == ')') {
			if (depth == 0)
				break;
			depth--;
			p->i++;
			continue;
		}
		if (c == '[') {
			if (o->nbr == 8)
				die(p, at, "too many bracket groups");
			o->br_s[o->nbr] = p->i;
			skip_group(p);
			o->br_e[o->nbr++] = p->i;
			continue;
		}
		if (c == '<' && p->i + 1 < p->len && p->t[p->i + 1] == '{') {
			p->i++;
			parse_dict(p, o, "}");
			expect(p, ">");
			continue;
		}
		if (c == '{') {
			if (opens_region(p)) {
				parse_region(p, o, mode, 0, NULL, NULL);
				continue;
			}
			parse_dict(p, o, "}");
			continue;
		}
		if (c == '@') {
			o->callee = symbol(p);
			continue;
		}
		if (c == ':' || c == '}' || c == '"' || c == '^')
			break;
		if (peek(p, "dense<")) {
			o->dense_s = p->i;
			p->i += 5;
			skip_group(p);
			o->dense_e = p->i;
			continue;
		}
		if (isalpha((unsigned char)c) || c == '_') {
			size_t s = p->i;
			while (p->i < p->len && is_idc(p->t[p->i]) && p->t[p->i] != '-')
				p->i++;
			const char *w = dupn(p, p->t + s, p->i - s);
			ws(p);
			if (ch(p) == '=' && p->t[p->i + 1] != '=') {
				p->i++;
				if (o->nkv == MAXN)
					die(p, s, "too many attributes");
				kv *x = &o->kvs[o->nkv++];
				x->key = w;
				x->used = 0;
				x->at = s;
				value_range(p, x, 0);
				continue;
			}
			if (strcmp(w, "init") == 0 && ch(p) == ':') {
				p->i++;
				o->words[o->nwords < MAXN ? o->nwords++ : MAXN - 1] = "init";
				continue;
			}
			int applies = o->nwords > 0 && strcmp(o->words[o->nwords - 1], "applies") == 0;
			if (depth == 0 && !applies && (strchr(w, '.') || strcmp(w, "return") == 0)) {
				p->i = s; /* the next statement */
				break;
			}
			if (o->nwords == MAXN)
				die(p, s, "too many words");
			o->words[o->nwords++] = w;
			continue;
		}
		if (isdigit((unsigned char)c) || c == '-') {
			/* a bare number (after a word, as `dim = 0` is not) */
			while (p->i < p->len && (isalnum((unsigned char)p->t[p->i]) || p->t[p->i] == '-' || p->t[p->i] == '.'))
				p->i++;
			continue;
		}
		die(p, at, "unexpected '%c' in op '%s'", c, o->name);
	}
	if (depth != 0)
		die(p, p->i, "expected ')'");
}

/* After `:`: a function type `(a, b) -> c` or a type list. */
static void parse_types(P *p, op *o)
{
	ws(p);
	if (ch(p) == '(') {
		o->nin = type_list(p, o->in, MAXN);
		expect(p, "->");
		o->nout = type_list(p, o->out, MAXN);
		return;
	}
	int n = 0;
	do {
		if (n == MAXN)
			die(p, p->i, "too many types");
		parse_type(p, &o->in[n++]);
	} while (eat(p, ","));
	o->ntypes = n;
	if (eat(p, "->")) {
		o->nin = n;
		o->ntypes = 0;
		o->nout = type_list(p, o->out, MAXN);
	}
}

/* Whether the op's pretty type list (`: t1, t2`) is its results' types
 * (ops whose results are their operands' types), not operands then result. */
static int types_are_results(const op *o)
{
	const char *s = short_name(o->name);
	return strcmp(s, "while") == 0 || strcmp(s, "optimization_barrier") == 0;
}

/* The k-th result type. */
static const ty *result_type(P *p, const op *o, int k)
{
	if (o->nout > k)
		return &o->out[k];
	if (o->nout == 0 && o->ntypes > 0) {
		if (types_are_results(o) && k < o->ntypes)
			return &o->in[k];
		if (k == 0)
			return &o->in[o->ntypes - 1];
	}
	die(p, o->at, "op '%s': its result type is not written", o->name);
	return NULL;
}

static int result_count(const op *o)
{
	if (o->nout)
		return o->nout;
	if (types_are_results(o))
		return o->ntypes;
	return o->ntypes ? 1 : 0;
}

/* --- lowering ----------------------------------------------------------------- */

/* StableHLO names whose HLO opcode is not the name with `-` for `_`. */
static const char *hlo_opcode(P *p, const char *s)
{
	static const struct {
		const char *m, *h;
	} map[] = { { "count_leading_zeros", "clz" },
		    { "popcnt", "popcnt" },
		    { "optimization_barrier", "opt-barrier" },
		    { "broadcast_in_dim", "broadcast" },
		    { "dot_general", "dot" },
		    { "exponential", "exponential" },
		    { "not", "not" },
		    { "get_tuple_element", "get-tuple-element" },
		    { "uniform_quantize", NULL },
		    { "uniform_dequantize", NULL } };
	for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
		if (strcmp(map[k].m, s) == 0)
			return map[k].h;
	char *h = dupn(p, s, strlen(s));
	for (char *q = h; *q; q++)
		if (*q == '_')
			*q = '-';
	if (opcode_from_name(h, strlen(h)) == OP_COUNT)
		return NULL;
	return h;
}

/* Results of an op returning a tuple: each element by name. */
static void split_results(P *p, comp *c, const char *mname, val *t, int n, size_t at)
{
	for (int k = 0; k < n; k++) {
		begin(p, c, mname ? fmt(p, "%s#%d", mname, k) : NULL, "get-tuple-element", &t->t.tup[k], at);
		sb_printf(&c->b, "%s), index=%d", t->hlo, k);
		end_line(p, c);
	}
}

static ty tuple_of(P *p, const ty *v, int n)
{
	ty t = { 0 };
	t.kind = 1;
	t.ntup = n;
	t.tup = alloc(p, sizeof(ty) * (size_t)(n ? n : 1));
	memcpy(t.tup, v, sizeof(ty) * (size_t)n);
	return t;
}

static ty results_type(P *p, const op *o)
{
	int n = result_count(o);
	ty v[MAXN];
	for (int k = 0; k < n; k++)
		v[k] = *result_type(p, o, k);
	return tuple_of(p, v, n);
}

static val *make_tuple(P *p, comp *c, val *const *v, int n, size_t at)
{
	ty e[MAXN];
	for (int k = 0; k < n; k++)
		e[k] = v[k]->t;
	ty t = tuple_of(p, e, n);
	val *r = begin(p, c, NULL, "tuple", &t, at);
	put_operands(&c->b, v, n);
	sb_putc(&c->b, ')');
	end_line(p, c);
	return r;
}

/* An op of one result or a tuple split into its results, by o's names. */
static val *emit_op(P *p, comp *c, const op *o, const char *mname, int nres, const char *opc, val *const *ops,
		    int nops)
{
	ty t = nres == 1 ? *result_type(p, o, 0) : results_type(p, o);
	val *v = begin(p, c, nres == 1 ? mname : NULL, opc, &t, o->at);
	put_operands(&c->b, ops, nops);
	sb_putc(&c->b, ')');
	return v;
}

static void window_attr(P *p, comp *c, const op *o, int rank)
{
	int64_t size[MAX_RANK], stride[MAX_RANK], pad[2 * MAX_RANK], lhs[MAX_RANK], rhs[MAX_RANK];
	for (int d = 0; d < rank; d++)
		size[d] = stride[d] = lhs[d] = rhs[d] = 1, pad[2 * d] = pad[2 * d + 1] = 0;
	const kv *x;
	if ((x = kv_of(o, "window_dimensions", NULL)))
		ints_in(p, x->vs, x->ve, size, rank);
	if ((x = kv_of(o, "window_strides", NULL)))
		ints_in(p, x->vs, x->ve, stride, rank);
	if ((x = kv_of(o, "base_dilations", NULL)))
		ints_in(p, x->vs, x->ve, lhs, rank);
	if ((x = kv_of(o, "window_dilations", NULL)))
		ints_in(p, x->vs, x->ve, rhs, rank);
	if ((x = kv_of(o, "padding", NULL)))
		ints_in(p, x->vs, x->ve, pad, 2 * rank);
	if (rank == 0) {
		sb_puts(&c->b, ", window={}");
		return;
	}
	sb_puts(&c->b, ", window={size=");
	for (int d = 0; d < rank; d++)
		sb_printf(&c->b, "%s%" PRId64, d ? "x" : "", size[d]);
	sb_puts(&c->b, " stride=");
	for (int d = 0; d < rank; d++)
		sb_printf(&c->b, "%s%" PRId64, d ? "x" : "", stride[d]);
	sb_puts(&c->b, " pad=");
	for (int d = 0; d < rank; d++)
		sb_printf(&c->b, "%s%" PRId64 "_%" PRId64, d ? "x" : "", pad[2 * d], pad[2 * d + 1]);
	sb_puts(&c->b, " lhs_dilate=");
	for (int d = 0; d < rank; d++)
		sb_printf(&c->b, "%s%" PRId64, d ? "x" : "", lhs[d]);
	sb_puts(&c->b, " rhs_dilate=");
	for (int d = 0; d < rank; d++)
		sb_printf(&c->b, "%s%" PRId64, d ? "x" : "", rhs[d]);
	sb_putc(&c->b, '}');
}

/* convolution's `dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`
 * (or `#stablehlo.conv<...>`) as dim_labels, its `window = {stride = [..],
 * pad = [[..]], lhs_dilate, rhs_dilate, reverse}` (or window_strides,
 * padding, lhs_dilation, rhs_dilation, window_reversal) as HLO's window,
 * the window's size being the kernel's spatial dimensions. */
static void conv_attrs(P *p, comp *c, const op *o)
{
	const kv *dn = kv_of(o, "dim_numbers", "dimension_numbers");
	if (!dn)
		die(p, o->at, "convolution needs dim_numbers");
	char lab[3][MAX_RANK + 1];
	int g = -1, n = 0, inside = 0;
	for (size_t i = dn->vs; i < dn->ve; i++) {
		char ch_ = p->t[i];
		if (ch_ == '[') {
			if (++g == 3)
				break;
			n = 0;
			inside = 1;
		} else if (ch_ == ']') {
			if (g >= 0 && g < 3)
				lab[g][n] = 0;
			inside = 0;
		} else if (inside && isalnum((unsigned char)ch_)) {
			if (n == MAX_RANK)
				die(p, dn->at, "too many dimensions in dim_numbers");
			lab[g][n++] = ch_;
		}
	}
	if (g != 2)
		die(p, dn->at, "unsupported: dim_numbers not written [..]x[..]->[..]");
	int nsp = (int)strlen(lab[1]) - 2;
	if (nsp < 0 || o->nops != 2 || (int)strlen(lab[1]) != o->ops[1]->t.rank)
		die(p, dn->at, "dim_numbers do not match the kernel");
	int64_t size[MAX_RANK], stride[MAX_RANK], pad[2 * MAX_RANK], lhs[MAX_RANK], rhs[MAX_RANK], rev[MAX_RANK];
	for (int d = 0; d < nsp; d++) {
		const char *q = strchr(lab[1], '0' + d);
		if (!q)
			die(p, dn->at, "the kernel has no spatial dimension %d", d);
		size[d] = o->ops[1]->t.dims[q - lab[1]];
		stride[d] = lhs[d] = rhs[d] = 1, rev[d] = 0, pad[2 * d] = pad[2 * d + 1] = 0;
	}
	const kv *w = kv_of(o, "window", NULL);
	size_t vs, ve;
	static const char *const wk[5] = { "stride", "pad", "lhs_dilate", "rhs_dilate", "reverse" };
	static const char *const gk[5] = { "window_strides", "padding", "lhs_dilation", "rhs_dilation",
					   "window_reversal" };
	int64_t *dst[5] = { stride, pad, lhs, rhs, rev };
	for (int k = 0; k < 5; k++) {
		int max = k == 1 ? 2 * nsp : nsp;
		if (w && sub_attr(p, w->vs, w->ve, wk[k], &vs, &ve))
			ints_in(p, vs, ve, dst[k], max);
		const kv *x = kv_of(o, gk[k], NULL);
		if (x)
			ints_in(p, x->vs, x->ve, dst[k], max);
	}
	if (nsp > 0) {
		sb_puts(&c->b, ", window={size=");
		for (int d = 0; d < nsp; d++)
			sb_printf(&c->b, "%s%" PRId64, d ? "x" : "", size[d]);
		sb_puts(&c->b, " stride=");
		for (int d = 0; d < nsp; d++)
			sb_printf(&c->b, "%s%" PRId64, d ? "x" : "", stride[d]);
		sb_puts(&c->b, " pad=");
		for (int d = 0; d < nsp; d++)
			sb_printf(&c->b, "%s%" PRId64 "_%" PRId64, d ? "x" : "", pad[2 * d], pad[2 * d + 1]);
		sb_puts(&c->b, " lhs_dilate=");
		for (int d = 0; d < nsp; d++)
			sb_printf(&c->b, "%s%" PRId64, d ? "x" : "", lhs[d]);
		sb_puts(&c->b, " rhs_dilate=");
		for (int d = 0; d < nsp; d++)
			sb_printf(&c->b, "%s%" PRId64, d ? "x" : "", rhs[d]);
		sb_puts(&c->b, " rhs_reversal=");
		for (int d = 0; d < nsp; d++)
			sb_printf(&c->b, "%s%d", d ? "x" : "", rev[d] ? 1 : 0);
		sb_putc(&c->b, '}');
	}
	sb_printf(&c->b, ", dim_labels=%s_%s->%s", lab[0], lab[1], lab[2]);
	int64_t fg = 1, bg = 1;
	const kv *x = kv_of(o, "feature_group_count", NULL);
	if (x)
		ints_in(p, x->vs, x->ve, &fg, 1);
	x = kv_of(o, "batch_group_count", NULL);
	if (x)
		ints_in(p, x->vs, x->ve, &bg, 1);
	if (fg != 1)
		sb_printf(&c->b, ", feature_group_count=%" PRId64, fg);
	if (bg != 1)
		sb_printf(&c->b, ", batch_group_count=%" PRId64, bg);
}

/* `applies stablehlo.add`: the reducer (acc, x) -> op(acc, x) on scalars of
 * type et. */
static const char *applies_region(P *p, const op *o, etype et)
{
	const char *w = NULL;
	for (int k = 0; k + 1 < o->nwords; k++)
		if (strcmp(o->words[k], "applies") == 0)
			w = o->words[k + 1];
	if (!w)
		die(p, o->at, "op '%s' needs a reducer region", o->name);
	const char *h = hlo_opcode(p, short_name(w));
	if (!h)
		die(p, o->at, "unsupported reducer '%s'", w);
	comp *c = comp_new(p);
	ty s = { 0 };
	s.et = et;
	val *a = begin(p, c, NULL, "parameter", &s, o->at);
	c->b.len--;
	sb_puts(&c->b, "(0)\n");
	val *b = begin(p, c, NULL, "parameter", &s, o->at);
	c->b.len--;
	sb_puts(&c->b, "(1)\n");
	sb_puts(&c->b, "  ROOT ");
	const char *nm = new_name(p, h, o->at);
	sb_printf(&c->b, "%s = %s[] %s(%s, %s)\n", nm, etype_name(et), h, a->hlo, b->hlo);
	const char *rn = new_name(p, "region", o->at);
	comp_finish(p, c, rn, 0, o->at);
	return rn;
}

static void need_ops(P *p, const op *o, int n)
{
	if (o->nops != n)
		die(p, o->at, "op '%s' takes %d operand%s; %d given", o->name, n, n == 1 ? "" : "s", o->nops);
}

static void need_regions(P *p, const op *o, int n)
{
	if (o->nreg != n)
		die(p, o->at, "op '%s' takes %d region%s; %d given", o->name, n, n == 1 ? "" : "s", o->nreg);
}

static const char *cmp_word(P *p, const op *o, const char *key, const char *const *choices)
{
	const kv *x = kv_of(o, key, NULL);
	if (x)
		return enum_word(p, x);
	for (int k = 0; k < o->nwords; k++)
		for (int j = 0; choices[j]; j++)
			if (strcmp(o->words[k], choices[j]) == 0)
				return choices[j];
	return NULL;
}

/* Lowers op o with results named mname (NULL: none), count nres. */
static void lower(P *p, comp *c, op *o, const char *mname, int nres)
{
	const char *s = short_name(o->name);
	val *v = NULL;
	int multi = nres > 1;
	/* function calls */
	if (strcmp(s, "func.call") == 0 || strcmp(s, "call") == 0) {
		if (!o->callee)
			die(p, o->at, "call without a callee (@name)");
		if (nres == 1) {
			v = emit_op(p, c, o, mname, 1, "call", o->ops, o->nops);
		} else {
			v = emit_op(p, c, o, mname, 2, "call", o->ops, o->nops);
			multi = 1;
		}
		sb_printf(&c->b, ", to_apply=%s", o->callee);
		end_line(p, c);
		if (multi || nres == 0)
			split_results(p, c, mname, v, nres, o->at);
		return;
	}
	if (strncmp(s, "check.", 6) == 0 || (strcmp(s, "custom_call") == 0 && o->callee &&
					    strncmp(o->callee, "check.", 6) == 0)) {
		const char *kind = strncmp(s, "check.", 6) == 0 ? s + 6 : o->callee + 6;
		val *ops[2];
		int n = o->nops;
		if (n < 1 || n > 2)
			die(p, o->at, "op '%s' takes 1 or 2 operands", o->name);
		ops[0] = o->ops[0];
		char target[64];
		snprintf(target, sizeof target, "%s", kind);
		size_t kl = strlen(target);
		if (kl > 6 && strcmp(target + kl - 6, "_const") == 0) {
			if (!o->dense_s)
				die(p, o->at, "op '%s' needs a dense<...> value", o->name);
			ops[1] = emit_dense(p, c, NULL, o->dense_s, &o->ops[0]->t, o->at);
			n = 2;
			target[kl - 6] = 0;
		} else if (n == 2) {
			ops[1] = o->ops[1];
		}
		if (strcmp(target, "expect_eq") && strcmp(target, "expect_almost_eq") &&
		    strcmp(target, "expect_close") && strcmp(target, "eq"))
			die(p, o->at, "unsupported check op '%s'", o->name);
		if (n != 2)
			die(p, o->at, "op '%s' takes 2 operands", o->name);
		ty t = { 0 };
		t.kind = 1;
		v = begin(p, c, mname, "custom-call", &t, o->at);
		put_operands(&c->b, ops, 2);
		sb_printf(&c->b, "), custom_call_target=\"check.%s\", custom_call_has_side_effect=true", target);
		const kv *x = kv_of(o, "max_ulp_difference", NULL);
		const kv *tol = kv_of(o, "tolerance", NULL);
		int64_t ulp = 0;
		if (x && ints_in(p, x->vs, x->ve, &ulp, 1) == 1)
			sb_printf(&c->b, ", backend_config=\"{max_ulp_difference = %" PRId64 "}\"", ulp);
		else if (tol) {
			size_t e = tol->vs;
			while (e < tol->ve && p->t[e] != ':' && p->t[e] != ' ')
				e++;
			sb_printf(&c->b, ", backend_config=\"{tolerance = %.*s}\"", (int)(e - tol->vs), p->t + tol->vs);
		}
		end_line(p, c);
		return;
	}
	if (strcmp(s, "constant") == 0) {
		size_t ds = o->dense_s;
		const kv *x = kv_of(o, "value", NULL);
		if (!ds && x && x->ve - x->vs > 6 && strncmp(p->t + x->vs, "dense<", 6) == 0)
			ds = x->vs;
		if (!ds)
			die(p, o->at, "unsupported constant value (expected dense<...>)");
		emit_dense(p, c, mname, ds, result_type(p, o, 0), o->at);
		return;
	}
	if (strcmp(s, "custom_call") == 0)
		die(p, o->at, "unsupported: custom_call target '%s'", o->callee ? o->callee : "?");
	if (strcmp(s, "composite") == 0 || strncmp(s, "chlo.", 5) == 0)
		die(p, o->at, "unsupported op '%s'", o->name);
	const char *h = hlo_opcode(p, s);
	int control = strcmp(s, "while") == 0 || strcmp(s, "if") == 0 || strcmp(s, "case") == 0;
	if ((!h && !control) || strchr(s, '.'))
		die(p, o->at, "unsupported op '%s'", o->name);
	if (strcmp(s, "reduce") == 0 || strcmp(s, "reduce_window") == 0) {
		int n = o->nops / 2;
		if (o->nops % 2 || n == 0)
			die(p, o->at, "op '%s' takes inputs and as many init values", o->name);
		val *ops[MAXN];
		if (has_word(o, "init")) {
			for (int k = 0; k < n; k++)
				ops[k] = o->ops[2 * k], ops[n + k] = o->ops[2 * k + 1];
		} else {
			memcpy(ops, o->ops, sizeof(val *) * (size_t)o->nops);
		}
		const char *rn;
		if (o->nreg == 1)
			rn = o->reg[0].name;
		else if (o->nreg == 0 && n == 1)
			rn = applies_region(p, o, ops[n]->t.et);
		else
			die(p, o->at, "op '%s' needs one reducer region", o->name);
		v = emit_op(p, c, o, mname, n == 1 ? 1 : 2, h, ops, o->nops);
		if (strcmp(s, "reduce") == 0)
			put_ints_attr(p, c, o, "dimensions", NULL, "dimensions", 1);
		else
			window_attr(p, c, o, ops[0]->t.rank);
		sb_printf(&c->b, ", to_apply=%s", rn);
		unread_attrs(p, o);
		end_line(p, c);
		if (n > 1)
			split_results(p, c, mname, v, n, o->at);
		return;
	}
	if (strcmp(s, "while") == 0) {
		need_regions(p, o, 2);
		comp *body = o->reg[1].c;
		if (o->reg[0].c->ncap > body->ncap)
			die(p, o->at, "unsupported: the while's condition captures what its body does not read");
		val *state[MAXN];
		int ns = 0;
		for (int k = 0; k < o->nops; k++)
			state[ns++] = o->ops[k];
		for (int k = 0; k < body->ncap; k++) {
			if (ns == MAXN)
				die(p, o->at, "a while with too many values");
			state[ns++] = body->caps[k];
		}
		finish_while(p, &o->reg[0], body->caps, body->ncap, o->at);
		finish_while(p, &o->reg[1], body->caps, body->ncap, o->at);
		val *t = make_tuple(p, c, state, ns, o->at);
		ty tt = t->t;
		v = begin(p, c, NULL, "while", &tt, o->at);
		sb_printf(&c->b, "%s), condition=%s, body=%s", t->hlo, o->reg[0].name, o->reg[1].name);
		end_line(p, c);
		split_results(p, c, mname, v, o->nops, o->at);
		return;
	}
	if (strcmp(s, "if") == 0 || strcmp(s, "case") == 0) {
		need_ops(p, o, 1);
		if (o->nreg < 1 || (strcmp(s, "if") == 0 && o->nreg != 2))
			die(p, o->at, "op '%s' needs its branches", o->name);
		val *ops[17];
		ops[0] = o->ops[0];
		for (int k = 0; k < o->nreg; k++)
			ops[k + 1] = make_tuple(p, c, o->reg[k].caps, o->reg[k].ncap, o->at);
		ty t = nres == 1 ? *result_type(p, o, 0) : results_type(p, o);
		v = begin(p, c, nres == 1 ? mname : NULL, "conditional", &t, o->at);
		put_operands(&c->b, ops, o->nreg + 1);
		sb_putc(&c->b, ')');
		if (strcmp(s, "if") == 0) {
			sb_printf(&c->b, ", true_computation=%s, false_computation=%s", o->reg[0].name,
				  o->reg[1].name);
		} else {
			sb_puts(&c->b, ", branch_computations={");
			for (int k = 0; k < o->nreg; k++)
				sb_printf(&c->b, "%s%s", k ? ", " : "", o->reg[k].name);
			sb_putc(&c->b, '}');
		}
		end_line(p, c);
		if (nres != 1)
			split_results(p, c, mname, v, nres, o->at);
		return;
	}
	if (strcmp(s, "sort") == 0 || strcmp(s, "scatter") == 0 || strcmp(s, "map") == 0 ||
	    strcmp(s, "select_and_scatter") == 0) {
		int two = strcmp(s, "select_and_scatter") == 0;
		need_regions(p, o, two ? 2 : 1);
		v = emit_op(p, c, o, mname, multi ? 2 : 1, h, o->ops, o->nops);
		if (strcmp(s, "sort") == 0) {
			const kv *x = kv_of(o, "dimension", "dim");
			int64_t d = -1;
			if (x)
				ints_in(p, x->vs, x->ve, &d, 1);
			if (d < 0)
				d += o->ops[0]->t.rank;
			sb_printf(&c->b, ", dimensions={%" PRId64 "}", d);
			x = kv_of(o, "is_stable", NULL);
			if (x && x->ve - x->vs == 4 && strncmp(p->t + x->vs, "true", 4) == 0)
				sb_puts(&c->b, ", is_stable=true");
			sb_printf(&c->b, ", to_apply=%s", o->reg[0].name);
		} else if (strcmp(s, "map") == 0) {
			put_ints_attr(p, c, o, "dimensions", NULL, "dimensions", 1);
			sb_printf(&c->b, ", to_apply=%s", o->reg[0].name);
		} else if (two) {
			window_attr(p, c, o, o->ops[0]->t.rank);
			sb_printf(&c->b, ", select=%s, scatter=%s", o->reg[0].name, o->reg[1].name);
		} else {
			const kv *x = kv_of(o, "scatter_dimension_numbers", NULL);
			if (!x)
				die(p, o->at, "scatter needs scatter_dimension_numbers");
			put_sub_ints(p, c, x->vs, x->ve, "update_window_dims", "update_window_dims") ||
				(sb_puts(&c->b, ", update_window_dims={}"), 0);
			put_sub_ints(p, c, x->vs, x->ve, "inserted_window_dims", "inserted_window_dims") ||
				(sb_puts(&c->b, ", inserted_window_dims={}"), 0);
			put_sub_ints(p, c, x->vs, x->ve, "scatter_dims_to_operand_dims", "scatter_dims_to_operand_dims") ||
				(sb_puts(&c->b, ", scatter_dims_to_operand_dims={}"), 0);
			put_sub_ints(p, c, x->vs, x->ve, "input_batching_dims", "input_batching_dims");
			put_sub_ints(p, c, x->vs, x->ve, "scatter_indices_batching_dims",
				     "scatter_indices_batching_dims");
			size_t vs, ve;
			int64_t ivd = 0;
			if (sub_attr(p, x->vs, x->ve, "index_vector_dim", &vs, &ve))
				ints_in(p, vs, ve, &ivd, 1);
			sb_printf(&c->b, ", index_vector_dim=%" PRId64, ivd);
			x = kv_of(o, "indices_are_sorted", NULL);
			if (x && strncmp(p->t + x->vs, "true", 4) == 0)
				sb_puts(&c->b, ", indices_are_sorted=true");
			x = kv_of(o, "unique_indices", NULL);
			if (x && strncmp(p->t + x->vs, "true", 4) == 0)
				sb_puts(&c->b, ", unique_indices=true");
			sb_printf(&c->b, ", to_apply=%s", o->reg[0].name);
		}
		unread_attrs(p, o);
		end_line(p, c);
		if (multi)
			split_results(p, c, mname, v, nres, o->at);
		return;
	}
	if (o->nreg)
		die(p, o->at, "unsupported: op '%s' with a region", o->name);
	if (strcmp(s, "optimization_barrier") == 0 || strcmp(s, "rng_bit_generator") == 0 ||
	    strcmp(s, "tuple") == 0 || strcmp(s, "after_all") == 0)
		;
	else if (multi)
		die(p, o->at, "unsupported: op '%s' with %d results", o->name, nres);
	if (strcmp(s, "optimization_barrier") == 0 && o->nops != 1) {
		val *t = make_tuple(p, c, o->ops, o->nops, o->at);
		v = begin(p, c, NULL, h, &t->t, o->at);
		sb_printf(&c->b, "%s)", t->hlo);
		end_line(p, c);
		split_results(p, c, mname, v, o->nops, o->at);
		return;
	}
	if (strcmp(s, "dot") == 0) {
		h = "dot";
		v = emit_op(p, c, o, mname, 1, h, o->ops, o->nops);
		need_ops(p, o, 2);
		sb_printf(&c->b, ", lhs_contracting_dims={%d}, rhs_contracting_dims={0}", o->ops[0]->t.rank - 1);
		end_line(p, c);
		return;
	}
	if (strcmp(s, "broadcast") == 0) {
		need_ops(p, o, 1);
		const ty *rt = result_type(p, o, 0);
		v = emit_op(p, c, o, mname, 1, h, o->ops, o->nops);
		sb_puts(&c->b, ", dimensions={");
		int r = o->ops[0]->t.rank;
		for (int d = 0; d < r; d++)
			sb_printf(&c->b, "%s%d", d ? "," : "", rt->rank - r + d);
		sb_putc(&c->b, '}');
		end_line(p, c);
		return;
	}
	v = emit_op(p, c, o, mname, multi ? 2 : 1, h, o->ops, o->nops);
	if (strcmp(s, "compare") == 0) {
		static const char *const dirs[] = { "EQ", "NE", "LT", "LE", "GT", "GE", NULL };
		static const char *const types[] = { "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", NULL };
		const char *d = cmp_word(p, o, "comparison_direction", dirs);
		if (!d)
			die(p, o->at, "compare without a comparison direction");
		sb_printf(&c->b, ", direction=%s", d);
		const char *t = cmp_word(p, o, "compare_type", types);
		if (t && strcmp(t, "NOTYPE") != 0)
			sb_printf(&c->b, ", type=%s", t);
	} else if (strcmp(s, "iota") == 0) {
		const kv *x = kv_of(o, "dim", "iota_dimension");
		int64_t d = 0;
		if (x)
			ints_in(p, x->vs, x->ve, &d, 1);
		sb_printf(&c->b, ", iota_dimension=%" PRId64, d);
	} else if (strcmp(s, "broadcast_in_dim") == 0) {
		put_ints_attr(p, c, o, "dims", "broadcast_dimensions", "dimensions", 1);
	} else if (strcmp(s, "transpose") == 0) {
		put_ints_attr(p, c, o, "dims", "permutation", "dimensions", 1);
	} else if (strcmp(s, "reverse") == 0) {
		put_ints_attr(p, c, o, "dims", "dimensions", "dimensions", 1);
	} else if (strcmp(s, "concatenate") == 0) {
		put_ints_attr(p, c, o, "dim", "dimension", "dimensions", 1);
	} else if (strcmp(s, "get_dimension_size") == 0) {
		put_ints_attr(p, c, o, "dim", "dimension", "dimensions", 1);
	} else if (strcmp(s, "dynamic_slice") == 0) {
		put_ints_attr(p, c, o, "sizes", "slice_sizes", "dynamic_slice_sizes", 1);
	} else if (strcmp(s, "get_tuple_element") == 0) {
		int64_t k = 0;
		const kv *x = kv_of(o, "index", NULL);
		if (x)
			ints_in(p, x->vs, x->ve, &k, 1);
		else if (o->nbr)
			ints_in(p, o->br_s[0], o->br_e[0], &k, 1);
		sb_printf(&c->b, ", index=%" PRId64, k);
	} else if (strcmp(s, "reduce_precision") == 0) {
		int64_t e = 0, m = 0;
		const kv *x = kv_of(o, "exponent_bits", "exponent");
		if (x)
			ints_in(p, x->vs, x->ve, &e, 1);
		x = kv_of(o, "mantissa_bits", "mantissa");
		if (x)
			ints_in(p, x->vs, x->ve, &m, 1);
		/* the pretty form's `format = e5m10` */
		x = kv_of(o, "format", NULL);
		if (x && (x->ve - x->vs < 4 || p->t[x->vs] != 'e' ||
			  sscanf(p->t + x->vs, "e%" SCNd64 "m%" SCNd64, &e, &m) != 2))
			die(p, x->at, "expected a format eNmM");
		sb_printf(&c->b, ", exponent_bits=%" PRId64 ", mantissa_bits=%" PRId64, e, m);
	} else if (strcmp(s, "rng_bit_generator") == 0) {
		const kv *x = kv_of(o, "rng_algorithm", NULL);
		const char *w = x ? enum_word(p, x) : o->nwords ? o->words[0] : "DEFAULT";
		sb_printf(&c->b, ", algorithm=%s",
			  strcmp(w, "THREE_FRY") == 0 ? "rng_three_fry" : strcmp(w, "PHILOX") == 0 ? "rng_philox" : "rng_default");
	} else if (strcmp(s, "slice") == 0) {
		int64_t st[MAX_RANK] = { 0 }, li[MAX_RANK] = { 0 }, sd[MAX_RANK];
		int r = o->ops[0]->t.rank;
		for (int d = 0; d < MAX_RANK; d++)
			sd[d] = 1;
		const kv *x;
		if ((x = kv_of(o, "start_indices", NULL))) {
			ints_in(p, x->vs, x->ve, st, r);
			if ((x = kv_of(o, "limit_indices", NULL)))
				ints_in(p, x->vs, x->ve, li, r);
			if ((x = kv_of(o, "strides", NULL)))
				ints_in(p, x->vs, x->ve, sd, r);
		} else if (o->nbr) {
			/* [a:b, c:d:e] */
			int64_t v3[3 * MAX_RANK];
			size_t i = o->br_s[0] + 1;
			for (int d = 0; d < r; d++) {
				size_t e = i;
				while (e < o->br_e[0] - 1 && p->t[e] != ',')
					e++;
				int n = ints_in(p, i, e, v3, 3);
				/* ints_in stops at ':' at depth 0: read the parts */
				int64_t part[3] = { 0, 0, 1 };
				int np = 0;
				size_t a = i;
				for (size_t q = i; q <= e && np < 3; q++) {
					if (q == e || p->t[q] == ':') {
						part[np++] = strtoll(p->t + a, NULL, 10);
						a = q + 1;
					}
				}
				(void)n;
				st[d] = part[0], li[d] = part[1], sd[d] = np == 3 ? part[2] : 1;
				i = e + 1;
			}
		}
		sb_puts(&c->b, ", slice={");
		for (int d = 0; d < r; d++)
			sb_printf(&c->b, "%s[%" PRId64 ":%" PRId64 ":%" PRId64 "]", d ? ", " : "", st[d], li[d], sd[d]);
		sb_putc(&c->b, '}');
	} else if (strcmp(s, "pad") == 0) {
		int r = o->ops[0]->t.rank;
		int64_t lo[MAX_RANK] = { 0 }, hi[MAX_RANK] = { 0 }, in[MAX_RANK] = { 0 };
		const kv *x;
		if ((x = kv_of(o, "low", "edge_padding_low")))
			ints_in(p, x->vs, x->ve, lo, r);
		if ((x = kv_of(o, "high", "edge_padding_high")))
			ints_in(p, x->vs, x->ve, hi, r);
		if ((x = kv_of(o, "interior", "interior_padding")))
			ints_in(p, x->vs, x->ve, in, r);
		sb_puts(&c->b, ", padding=");
		for (int d = 0; d < r; d++)
			sb_printf(&c->b, "%s%" PRId64 "_%" PRId64 "_%" PRId64, d ? "x" : "", lo[d], hi[d], in[d]);
		if (r == 0)
			sb_puts(&c->b, "{}");
	} else if (strcmp(s, "dot_general") == 0) {
		const kv *x = kv_of(o, "dot_dimension_numbers", NULL);
		if (x) {
			put_sub_ints(p, c, x->vs, x->ve, "lhs_batching_dimensions", "lhs_batch_dims");
			put_sub_ints(p, c, x->vs, x->ve, "rhs_batching_dimensions", "rhs_batch_dims");
			put_sub_ints(p, c, x->vs, x->ve, "lhs_contracting_dimensions", "lhs_contracting_dims");
			put_sub_ints(p, c, x->vs, x->ve, "rhs_contracting_dimensions", "rhs_contracting_dims");
		}
		static const char *const pk[2] = { "batching_dims", "contracting_dims" };
		static const char *const hk[2][2] = { { "lhs_batch_dims", "rhs_batch_dims" },
						      { "lhs_contracting_dims", "rhs_contracting_dims" } };
		for (int j = 0; j < 2; j++) {
			x = kv_of(o, pk[j], NULL);
			if (!x)
				continue;
			/* `[a] x [b]` */
			size_t mid = x->vs;
			int d = 0;
			while (mid < x->ve) {
				char q = p->t[mid];
				if (q == '[')
					d++;
				else if (q == ']' && --d == 0)
					break;
				mid++;
			}
			int64_t a[MAX_RANK], b[MAX_RANK];
			int na = ints_in(p, x->vs, mid + 1, a, MAX_RANK);
			int nb = ints_in(p, mid + 1, x->ve, b, MAX_RANK);
			sb_printf(&c->b, ", %s=", hk[j][0]);
			put_ints(&c->b, a, na);
			sb_printf(&c->b, ", %s=", hk[j][1]);
			put_ints(&c->b, b, nb);
		}
	} else if (strcmp(s, "gather") == 0) {
		const kv *x = kv_of(o, "dimension_numbers", NULL);
		if (!x)
			die(p, o->at, "gather needs dimension_numbers");
		put_sub_ints(p, c, x->vs, x->ve, "offset_dims", "offset_dims") || (sb_puts(&c->b, ", offset_dims={}"), 0);
		put_sub_ints(p, c, x->vs, x->ve, "collapsed_slice_dims", "collapsed_slice_dims") ||
			(sb_puts(&c->b, ", collapsed_slice_dims={}"), 0);
		put_sub_ints(p, c, x->vs, x->ve, "start_index_map", "start_index_map") ||
			(sb_puts(&c->b, ", start_index_map={}"), 0);
		put_sub_ints(p, c, x->vs, x->ve, "operand_batching_dims", "operand_batching_dims");
		put_sub_ints(p, c, x->vs, x->ve, "start_indices_batching_dims", "start_indices_batching_dims");
		size_t vs, ve;
		int64_t ivd = 0;
		if (sub_attr(p, x->vs, x->ve, "index_vector_dim", &vs, &ve))
			ints_in(p, vs, ve, &ivd, 1);
		sb_printf(&c->b, ", index_vector_dim=%" PRId64, ivd);
		put_ints_attr(p, c, o, "slice_sizes", NULL, "slice_sizes", 1);
		x = kv_of(o, "indices_are_sorted", NULL);
		if (x && strncmp(p->t + x->vs, "true", 4) == 0)
			sb_puts(&c->b, ", indices_are_sorted=true");
	} else if (strcmp(s, "convolution") == 0) {
		conv_attrs(p, c, o);
	} else if (strcmp(s, "triangular_solve") == 0) {
		static const char *const flags[] = { "left_side", "lower", "unit_diagonal", NULL };
		for (int k = 0; flags[k]; k++) {
			const kv *x = kv_of(o, flags[k], NULL);
			if (x && strncmp(p->t + x->vs, "true", 4) == 0)
				sb_printf(&c->b, ", %s=true", flags[k]);
		}
		const kv *x = kv_of(o, "transpose_a", NULL);
		sb_printf(&c->b, ", transpose_a=%s", x ? enum_word(p, x) : "NO_TRANSPOSE");
	} else if (strcmp(s, "cholesky") == 0) {
		const kv *x = kv_of(o, "lower", NULL);
		if (x && strncmp(p->t + x->vs, "true", 4) == 0)
			sb_puts(&c->b, ", lower=true");
	} else if (strcmp(s, "fft") == 0) {
		const kv *x = kv_of(o, "fft_type", "type");
		if (!x)
			die(p, o->at, "fft needs fft_type");
		sb_printf(&c->b, ", fft_type=%s", enum_word(p, x));
		put_ints_attr(p, c, o, "fft_length", "length", "fft_length", 1);
	} else if (strcmp(s, "all_gather") == 0 || strcmp(s, "all_to_all") == 0 || strcmp(s, "collective_permute") == 0 ||
		   strcmp(s, "collective_broadcast") == 0) {
		die(p, o->at, "unsupported op '%s'", o->name);
	}
	unread_attrs(p, o);
	end_line(p, c);
	if (multi)
		split_results(p, c, mname, v, nres, o->at);
}

/* One statement of a block: `%r = op ...`, `%r:2 = ...`, or an op without
 * results; a terminator sets the computation's root. */
static void parse_stmt(P *p, comp *c, int tuple_root, int *returned)
{
	if (p->nlive == 256)
		die(p, p->i, "regions nested too deep");
	op *o = p->pool[p->nlive];
	if (!o) {
		/* large (its arrays): made once per depth, not per op */
		o = p->pool[p->nlive] = hloi_malloc(sizeof *o);
		if (!o) {
			p->oom = 1;
			longjmp(p->jb, 2);
		}
	}
	memset(o, 0, offsetof(op, ops));
	p->nlive++;
	ws(p);
	const char *mname = NULL;
	int nres = 0, nlist = 0;
	const char *list[MAXN];
	size_t at = p->i;
	if (ch(p) == '%') {
		mname = valref(p);
		nres = 1;
		if (ch(p) == ':') {
			p->i++;
			nres = (int)strtol(p->t + p->i, NULL, 10);
			while (isdigit((unsigned char)ch(p)))
				p->i++;
			if (nres < 1 || nres > MAXN)
				die(p, at, "bad result count");
			if (nres == 1)
				nres = -1; /* `%x:1`: named `x#0` */
		}
		if (peek(p, ",")) {
			/* `%a, %b = ...`: named as `%tmp:2`, then each alias */
			if (nres != 1)
				die(p, p->i, "expected '='");
			nlist = 0;
			list[nlist++] = mname;
			while (eat(p, ",")) {
				if (nlist == MAXN)
					die(p, p->i, "too many results");
				list[nlist++] = valref(p);
			}
			nres = nlist;
			mname = fmt(p, "results.%zu", p->noffs);
		}
		expect(p, "=");
	}
	ws(p);
	o->at = p->i;
	if (ch(p) == '"') {
		o->name = string(p);
		o->generic = 1;
	} else {
		o->name = ident(p);
	}
	const char *s = short_name(o->name);
	comp *save = p->cur;
	p->cur = c;
	parse_items(p, o);
	if (eat(p, ":"))
		parse_types(p, o);
	/* a reducer's arguments and regions written after the types */
	for (;;) {
		ws(p);
		if (ch(p) == '{' && !opens_region(p)) {
			parse_dict(p, o, "}"); /* an attribute dictionary after the types */
			continue;
		}
		if (peek_word(p, "reducer")) {
			p->i += 7;
			/* (%a: t, %b: t) per input: the block takes every input's
			 * first, then every second */
			const char *first[MAXN], *second[MAXN];
			ty ft[MAXN], st[MAXN];
			int n = 0;
			while (eat(p, "(")) {
				first[n] = valref(p);
				expect(p, ":");
				parse_type(p, &ft[n]);
				expect(p, ",");
				second[n] = valref(p);
				expect(p, ":");
				parse_type(p, &st[n]);
				expect(p, ")");
				if (++n == MAXN / 2)
					die(p, p->i, "too many reducer arguments");
			}
			const char *names[MAXN];
			ty types[MAXN];
			for (int k = 0; k < n; k++)
				names[k] = first[k], types[k] = ft[k], names[n + k] = second[k], types[n + k] = st[k];
			ws(p);
			if (ch(p) != '{')
				die(p, p->i, "expected the reducer's region");
			parse_region(p, o, R_SCALAR, 2 * n, names, types);
			continue;
		}
		if (peek_word(p, "cond") || peek_word(p, "do")) {
			p->i += peek_word(p, "cond") ? 4 : 2;
			ws(p);
			ty types[MAXN];
			int n = o->nbind;
			for (int k = 0; k < n; k++)
				types[k] = *result_type(p, o, k);
			parse_region(p, o, R_TUPLE, n, o->bind, types);
			continue;
		}
		break;
	}
	if (strcmp(s, "return") == 0 || strcmp(o->name, "func.return") == 0 || strcmp(o->name, "return") == 0) {
		if (mname)
			die(p, at, "return has no results");
		if (c->is_body) {
			/* the next state: the values returned, then the captures
			 * unchanged */
			val *all[2 * MAXN];
			int n = 0;
			for (int k = 0; k < o->nops; k++)
				all[n++] = o->ops[k];
			for (int k = 0; k < c->ncap && n < 2 * MAXN; k++)
				all[n++] = lookup_in(c, fmt(p, "cap:%s", c->caps[k]->mname));
			if (n > MAXN)
				die(p, o->at, "a while with too many values");
			mark_root(p, c, make_tuple(p, c, all, n, o->at));
		} else if (o->nops == 1 && !tuple_root) {
			mark_root(p, c, o->ops[0]);
		} else {
			val *t = make_tuple(p, c, o->ops, o->nops, o->at);
			mark_root(p, c, t);
		}
		*returned = 1;
	} else {
		int n = nres < 0 ? 1 : nres;
		if (mname && result_count(o) != n && !(strcmp(s, "func.call") == 0 || strcmp(s, "call") == 0))
			die(p, at, "op '%s' gives %d result%s; %d named", o->name, result_count(o),
			    result_count(o) == 1 ? "" : "s", n);
		if (nres < 0) {
			lower(p, c, o, fmt(p, "%s#0", mname), 1);
		} else {
			lower(p, c, o, mname, n);
		}
		for (int k = 0; k < nlist; k++) {
			val *v = lookup_in(c, n == 1 ? mname : fmt(p, "%s#%d", mname, k));
			if (!v)
				die(p, at, "op '%s' does not give %d results", o->name, n);
			define(p, c, list[k], v->hlo, &v->t, v->line);
		}
	}
	p->cur = save;
	p->nlive--;
}

/* `func.func [public|private] @name(%a: t {attrs}, ...) -> (t {attrs}) attributes {...} { body }` */
static void parse_func(P *p)
{
	size_t at = p->i;
	ws(p);
	if (peek_word(p, "public") || peek_word(p, "private") || peek_word(p, "nested")) {
		ident(p);
	}
	size_t name_at = p->i;
	const char *name = symbol(p);
	expect(p, "(");
	const char *an[MAXN];
	ty at_[MAXN];
	int n = 0;
	if (!eat(p, ")")) {
		do {
			if (n == MAXN)
				die(p, p->i, "too many arguments");
			an[n] = valref(p);
			expect(p, ":");
			parse_type(p, &at_[n]);
			ws(p);
			if (ch(p) == '{')
				skip_group(p);
			n++;
		} while (eat(p, ","));
		expect(p, ")");
	}
	ty rt[MAXN];
	int nr = 0;
	if (eat(p, "->"))
		nr = type_list(p, rt, MAXN);
	if (peek_word(p, "attributes")) {
		p->i += 10;
		ws(p);
		skip_group(p);
	}
	ws(p);
	if (ch(p) != '{')
		return; /* a declaration */
	comp *c = comp_new(p);
	comp *save = p->cur;
	p->cur = c;
	expect(p, "{");
	for (int k = 0; k < n; k++) {
		begin(p, c, an[k], "parameter", &at_[k], at);
		c->b.len--;
		sb_printf(&c->b, "(%d)", k);
		end_line(p, c);
	}
	parse_block(p, c, nr != 1);
	p->cur = save;
	(void)name_at;
	int entry = p->entry && strcmp(p->entry, name) == 0;
	comp_finish(p, c, name, entry, at);
}

/* The entry: @main, else the only function, else the last public one. */
static void find_entry(P *p)
{
	const char *last_public = NULL;
	for (int k = 0; k < p->nfuncs; k++) {
		if (strcmp(p->funcs[k], "main") == 0) {
			p->entry = p->funcs[k];
			return;
		}
		if (p->func_public[k])
			last_public = p->funcs[k];
	}
	p->entry = last_public ? last_public : p->nfuncs ? p->funcs[p->nfuncs - 1] : NULL;
}

/* A first pass: the functions' names, to choose the entry before the
 * computations are written. */
static void scan_funcs(P *p)
{
	const char *t = p->t;
	for (size_t i = 0; i + 9 < p->len; i++) {
		if (strncmp(t + i, "func.func", 9) != 0 || (i > 0 && is_idc(t[i - 1])))
			continue;
		size_t j = i + 9;
		while (j < p->len && isspace((unsigned char)t[j]))
			j++;
		int pub = 1;
		if (strncmp(t + j, "private", 7) == 0)
			pub = 0;
		while (j < p->len && t[j] != '@' && t[j] != '\n')
			j++;
		if (j >= p->len || t[j] != '@')
			continue;
		size_t save = p->i;
		p->i = j;
		const char *nm = symbol(p);
		p->i = save;
		if (p->nfuncs == 4096)
			die(p, i, "too many functions");
		p->func_public[p->nfuncs] = pub;
		p->funcs[p->nfuncs++] = nm;
	}
	find_entry(p);
	if (!p->entry)
		die(p, 0, "no function (func.func) in the module");
}

static void parse_top(P *p)
{
	int in_module = 0;
	for (;;) {
		ws(p);
		if (at_end(p))
			break;
		size_t at = p->i;
		if (peek_word(p, "module")) {
			if (in_module)
				die(p, at, "unsupported: nested modules");
			p->i += 6;
			ws(p);
			if (ch(p) == '@')
				symbol(p);
			if (peek_word(p, "attributes")) {
				p->i += 10;
				ws(p);
				skip_group(p);
			}
			expect(p, "{");
			in_module = 1;
			continue;
		}
		if (in_module && eat(p, "}")) {
			in_module = 2;
			continue;
		}
		if (peek_word(p, "func.func")) {
			p->i += 9;
			parse_func(p);
			continue;
		}
		if (ch(p) == '#' || ch(p) == '!') {
			/* an alias definition: `#name = ...` */
			while (p->i < p->len && p->t[p->i] != '\n')
				p->i++;
			continue;
		}
		die(p, at, "expected 'module' or 'func.func'");
	}
	if (in_module == 1)
		die(p, p->len, "unexpected end of file; expected '}' closing the module");
}

hloi_status mlir_to_hlo(strbuf *hlo, size_t **offs, size_t *noffs, hloi_context *ctx, int src,
			const char *text, size_t len)
{
	P *p = hloi_calloc(1, sizeof *p);
	if (!p)
		return HLOI_ENOMEM;
	p->ctx = ctx;
	p->src = src;
	p->t = text;
	p->len = len;
	arena_init(&p->a);
	hloi_status st = HLOI_OK;
	int r = setjmp(p->jb);
	if (r == 0) {
		scan_funcs(p);
		sb_puts(&p->out, "HloModule mlir\n\n");
		parse_top(p);
		if (p->out.oom)
			p->oom = 1;
	} else {
		st = p->oom ? HLOI_ENOMEM : HLOI_EPARSE;
	}
	if (p->oom)
		st = HLOI_ENOMEM;
	for (int k = 0; k < 256; k++)
		hloi_free(p->pool[k]);
	for (int k = 0; k < p->nall; k++) {
		sb_free(&p->all[k]->b);
		hloi_free(p->all[k]->tab);
		hloi_free(p->all[k]);
	}
	hloi_free(p->all);
	arena_release(&p->a);
	if (st == HLOI_OK) {
		*hlo = p->out;
		*offs = p->offs;
		*noffs = p->noffs;
	} else {
		sb_free(&p->out);
		hloi_free(p->offs);
	}
	hloi_free(p);
	return st;
}

int mlir_looks_like(const char *t, size_t len)
{
	size_t i = 0;
	for (;;) {
		while (i < len && isspace((unsigned char)t[i]))
			i++;
		if (i + 1 < len && t[i] == '/' && t[i + 1] == '/') {
			while (i < len && t[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	static const char *const starts[] = { "module", "func.func", "#", "\"builtin.module\"" };
	for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
		size_t n = strlen(starts[k]);
		if (len - i >= n && strncmp(t + i, starts[k], n) == 0)
			return 1;
	}
	return 0;
}
