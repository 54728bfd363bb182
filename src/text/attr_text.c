/* Attribute values in HLO text: the parser of each kind of ir/attrs.def
 * (XLA's hlo_parser.cc syntax, xla-facts §1.4) over the value text the lexer
 * captured, and the printer that writes them back as XLA does. Errors are
 * located at the offending byte of the value. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/attr_text.h"
#include "text/parse_int.h"
#include "util/alloc.h"

/* --- a cursor over a value's text --------------------------------------------- */

void vc_init(vcur *c, pstate *st, size_t s, size_t e, const char *what)
{
	c->st = st;
	c->p = s;
	c->end = e;
	c->bad = 0;
	c->what = what;
}

void vc_skip(vcur *c)
{
	const char *t = c->st->text;
	while (c->p < c->end) {
		char ch = t[c->p];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f') {
			c->p++;
		} else if (ch == '/' && c->p + 1 < c->end && t[c->p + 1] == '/') {
			while (c->p < c->end && t[c->p] != '\n')
				c->p++;
		} else if (ch == '/' && c->p + 1 < c->end && t[c->p + 1] == '*') {
			size_t q = c->p + 2;
			while (q + 1 < c->end && !(t[q] == '*' && t[q + 1] == '/'))
				q++;
			c->p = q + 2 <= c->end ? q + 2 : c->end;
		} else {
			break;
		}
	}
}

void vc_fail(vcur *c, const char *what)
{
	if (c->bad)
		return;
	c->bad = 1;
	loc at = { c->p, c->p < c->end ? c->p + 1 : c->p };
	diag_error(c->st->ctx, c->st->src, at, "malformed %s: expects %s", c->what, what);
}

int vc_peek(vcur *c)
{
	vc_skip(c);
	return c->p < c->end ? (unsigned char)c->st->text[c->p] : -1;
}

int vc_eat(vcur *c, char ch)
{
	if (vc_peek(c) == (unsigned char)ch) {
		c->p++;
		return 1;
	}
	return 0;
}

void vc_expect(vcur *c, char ch)
{
	if (!c->bad && !vc_eat(c, ch)) {
		char what[4] = { '\'', ch, '\'', '\0' };
		vc_fail(c, what);
	}
}

/* A decimal integer with an optional minus sign (no white space inside). */
int64_t vc_int(vcur *c)
{
	vc_skip(c);
	const char *t = c->st->text;
	size_t start = c->p;
	int neg = 0;
	if (c->p < c->end && t[c->p] == '-') {
		neg = 1;
		c->p++;
	}
	uint64_t v = 0;
	size_t digits = c->p;
	int ovf = 0;
	while (c->p < c->end && t[c->p] >= '0' && t[c->p] <= '9') {
		unsigned d = (unsigned)(t[c->p] - '0');
		if (v > (UINT64_MAX - d) / 10 || (v * 10 + d > (uint64_t)INT64_MAX + (uint64_t)neg))
			ovf = 1;
		else
			v = v * 10 + d;
		c->p++;
	}
	if (ovf && !c->bad) {
		c->bad = 1;
		diag_error(c->st->ctx, c->st->src, (loc){ start, c->p },
			   "integer %.*s is out of range (more than 64 bits)", (int)(c->p - start), t + start);
		return 0;
	}
	if (c->p == digits) {
		c->p = start;
		vc_fail(c, "an integer");
		return 0;
	}
	return neg ? (int64_t)(0 - v) : (int64_t)v;
}

static int word_char(char ch, int first)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
	       (!first && ((ch >= '0' && ch <= '9') || ch == '.' || ch == '-'));
}

/* A word `[A-Za-z_][A-Za-z0-9_.-]*`, or a `%name`; its span without `%`. */
int vc_word(vcur *c, size_t *s, size_t *e)
{
	vc_skip(c);
	const char *t = c->st->text;
	size_t p = c->p;
	if (p < c->end && t[p] == '%')
		p++;
	if (p >= c->end || !word_char(t[p], 1))
		return 0;
	*s = p;
	while (p < c->end && word_char(t[p], 0))
		p++;
	*e = p;
	c->p = p;
	return 1;
}

/* Whether the rest is blank; reports "the end of the value" otherwise. */
static void vc_end(vcur *c)
{
	vc_skip(c);
	if (!c->bad && c->p != c->end)
		vc_fail(c, "the end of the value");
}

/* --- growable arrays in the arena --------------------------------------------- */

typedef struct ibuf {
	int64_t small[16];
	int64_t *v;
	int n, cap;
} ibuf;

static void ib_init(ibuf *b)
{
	b->v = b->small;
	b->n = 0;
	b->cap = 16;
}

static int ib_push(ibuf *b, int64_t x)
{
	if (b->n == b->cap) {
		if (b->cap > (1 << 28))
			return -1;
		int64_t *nv = hloi_malloc((size_t)b->cap * 2 * sizeof *nv);
		if (!nv)
			return -1;
		memcpy(nv, b->v, (size_t)b->n * sizeof *nv);
		if (b->v != b->small)
			hloi_free(b->v);
		b->v = nv;
		b->cap *= 2;
	}
	b->v[b->n++] = x;
	return 0;
}

static void ib_free(ibuf *b)
{
	if (b->v != b->small)
		hloi_free(b->v);
}

/* The buffer's values copied into the arena (NULL for none). */
static int64_t *ib_copy(pstate *st, const ibuf *b)
{
	if (!b->n)
		return NULL;
	int64_t *v = arena_array(st->a, (size_t)b->n, sizeof *v);
	if (!v) {
		st->oom = 1;
		return NULL;
	}
	memcpy(v, b->v, (size_t)b->n * sizeof *v);
	return v;
}

/* `{1, 2, 3}` (possibly empty) into il; -1 when out of memory. */
static int parse_int_list(vcur *c, int_list *il)
{
	ibuf b;
	ib_init(&b);
	vc_skip(c);
	size_t start = c->p;
	vc_expect(c, '{');
	if (!c->bad && !vc_eat(c, '}')) {
		do {
			int64_t v = vc_int(c);
			if (c->bad)
				break;
			if (ib_push(&b, v)) {
				ib_free(&b);
				c->st->oom = 1;
				return -1;
			}
		} while (vc_eat(c, ','));
		vc_expect(c, '}');
	}
	il->present = 1;
	il->n = b.n;
	il->at = (loc){ start, c->p };
	il->v = ib_copy(c->st, &b);
	ib_free(&b);
	return b.n && !il->v ? -1 : 0;
}

/* `{{0,1},{2}}` */
static int parse_ints_list(vcur *c, ints_list *out)
{
	plist items = { NULL, NULL, 0 };
	vc_expect(c, '{');
	if (!c->bad && !vc_eat(c, '}')) {
		do {
			pnode *n;
			if (p_push(c->st, &items, &n))
				return -1;
			int_list *il = p_alloc(c->st, sizeof *il);
			if (!il || parse_int_list(c, il))
				return -1;
			n->p = il;
		} while (!c->bad && vc_eat(c, ','));
		vc_expect(c, '}');
	}
	out->n = items.n;
	out->v = NULL;
	if (items.n) {
		out->v = arena_array(c->st->a, (size_t)items.n, sizeof *out->v);
		if (!out->v) {
			c->st->oom = 1;
			return -1;
		}
		int i = 0;
		for (pnode *n = items.head; n; n = n->next)
			out->v[i++] = *(int_list *)n->p;
	}
	return 0;
}

/* `{a, %b}` (possibly empty): words into wl. */
static int parse_word_list(vcur *c, word_list *wl, const char *what)
{
	plist items = { NULL, NULL, 0 };
	vc_expect(c, '{');
	if (!c->bad && !vc_eat(c, '}')) {
		do {
			size_t s, e;
			if (!vc_word(c, &s, &e)) {
				vc_fail(c, what);
				break;
			}
			pnode *n;
			if (p_push(c->st, &items, &n))
				return -1;
			n->at = (loc){ s, e };
		} while (vc_eat(c, ','));
		vc_expect(c, '}');
	}
	wl->n = items.n;
	wl->v = NULL;
	wl->at = NULL;
	if (items.n) {
		wl->v = arena_array(c->st->a, (size_t)items.n, sizeof *wl->v);
		wl->at = arena_array(c->st->a, (size_t)items.n, sizeof *wl->at);
		if (!wl->v || !wl->at) {
			c->st->oom = 1;
			return -1;
		}
		int i = 0;
		for (pnode *n = items.head; n; n = n->next, i++) {
			wl->v[i] = p_text(c->st, n->at.start, n->at.end);
			wl->at[i] = n->at;
			if (!wl->v[i])
				return -1;
		}
	}
	return 0;
}

/* `AxBxC` (window sizes): integers joined by `x`. */
static int parse_dxd(vcur *c, ibuf *b)
{
	do {
		int64_t v = vc_int(c);
		if (c->bad)
			return 0;
		if (ib_push(b, v)) {
			c->st->oom = 1;
			return -1;
		}
	} while (c->p < c->end && c->st->text[c->p] == 'x' && ++c->p);
	return 0;
}

/* `A<sep>B` with no white space around sep (`0_1` of a padding, `1x4` of a
 * sparsity); what names the separator in the message when it is missing.
 * Nonzero (c->bad set) on failure. */
static int vc_int_pair(vcur *c, char sep, const char *what, int64_t *a, int64_t *b)
{
	*a = vc_int(c);
	if (c->bad)
		return 1;
	if (!(c->p < c->end && c->st->text[c->p] == sep)) {
		vc_fail(c, what);
		return 1;
	}
	c->p++;
	*b = vc_int(c);
	return c->bad;
}

/* `lo_hi[_interior]x...`: pairs (window pad, `interior` NULL) or triples
 * (padding, the interior optional). */
static int parse_pads(vcur *c, ibuf *lo, ibuf *hi, ibuf *interior)
{
	do {
		int64_t l, h;
		if (vc_int_pair(c, '_', "'_' between low and high padding", &l, &h))
			return 0;
		int64_t in = 0;
		if (interior && c->p < c->end && c->st->text[c->p] == '_') {
			c->p++;
			in = vc_int(c);
			if (c->bad)
				return 0;
		}
		if (ib_push(lo, l) || ib_push(hi, h) || (interior && ib_push(interior, in))) {
			c->st->oom = 1;
			return -1;
		}
	} while (c->p < c->end && c->st->text[c->p] == 'x' && ++c->p);
	return 0;
}

static int key_is(const pstate *st, size_t s, size_t e, const char *k)
{
	return strlen(k) == e - s && memcmp(st->text + s, k, e - s) == 0;
}

/* window={size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=2x2
 * rhs_reversal=0x1}: every field optional, all of one length. */
static int parse_window(vcur *c, window *w)
{
	enum { SIZE, STRIDE, PAD, LHS, RHS, REV, NFIELDS };
	static const char *const keys[NFIELDS] = { "size", "stride", "pad", "lhs_dilate", "rhs_dilate",
						   "rhs_reversal" };
	ibuf f[NFIELDS], hi;
	int seen[NFIELDS] = { 0 };
	int rc = 0;
	for (int i = 0; i < NFIELDS; i++)
		ib_init(&f[i]);
	ib_init(&hi);
	memset(w, 0, sizeof *w);
	vc_expect(c, '{');
	while (!c->bad && !vc_eat(c, '}')) {
		size_t s, e;
		if (!vc_word(c, &s, &e)) {
			vc_fail(c, "size=, stride=, pad=, lhs_dilate=, rhs_dilate= or rhs_reversal=");
			break;
		}
		int k = 0;
		while (k < NFIELDS && !key_is(c->st, s, e, keys[k]))
			k++;
		if (k == NFIELDS) {
			c->p = s;
			vc_fail(c, "size=, stride=, pad=, lhs_dilate=, rhs_dilate= or rhs_reversal=");
			break;
		}
		if (seen[k]) {
			c->p = s;
			vc_fail(c, "each window field once");
			break;
		}
		seen[k] = 1;
		if (!(c->p < c->end && c->st->text[c->p] == '=')) {
			vc_fail(c, "'='");
			break;
		}
		c->p++;
		rc = k == PAD ? parse_pads(c, &f[PAD], &hi, NULL) : parse_dxd(c, &f[k]);
		if (rc)
			goto done;
		vc_eat(c, ',');
	}
	if (c->bad)
		goto done;
	int n = -1;
	for (int k = 0; k < NFIELDS; k++) {
		if (!seen[k])
			continue;
		if (n >= 0 && f[k].n != n) {
			vc_fail(c, "window fields of one length");
			goto done;
		}
		n = f[k].n;
	}
	w->n = n < 0 ? 0 : n;
	if (w->n) {
		w->d = arena_array(c->st->a, (size_t)w->n, sizeof *w->d);
		if (!w->d) {
			c->st->oom = 1;
			rc = -1;
			goto done;
		}
		for (int i = 0; i < w->n; i++) {
			window_dim *d = &w->d[i];
			d->size = seen[SIZE] ? f[SIZE].v[i] : 1;
			d->stride = seen[STRIDE] ? f[STRIDE].v[i] : 1;
			d->pad_lo = seen[PAD] ? f[PAD].v[i] : 0;
			d->pad_hi = seen[PAD] ? hi.v[i] : 0;
			d->lhs_dilate = seen[LHS] ? f[LHS].v[i] : 1;
			d->rhs_dilate = seen[RHS] ? f[RHS].v[i] : 1;
			d->reversal = seen[REV] ? f[REV].v[i] != 0 : 0;
		}
	}
done:
	for (int i = 0; i < NFIELDS; i++)
		ib_free(&f[i]);
	ib_free(&hi);
	return rc;
}

/* sparsity_config={lhs={sparsity=1x4 dimension=0 stride=1} rhs={...}}
 * (XLA's ParseSparsityConfig): a side for each of lhs and rhs at most once;
 * inside, `sparsity=NxM` (N values kept per block of M) is required,
 * `dimension` (default 0), `stride` (default 1) and `idx` (the metadata
 * operand, XLA's newer form) are optional, each once. */
static int parse_sparsity_side(vcur *c, sparsity_side *sd)
{
	enum { SPARSITY, DIMENSION, STRIDE, IDX, NFIELDS };
	static const char *const keys[NFIELDS] = { "sparsity", "dimension", "stride", "idx" };
	int seen[NFIELDS] = { 0 };
	sd->present = 1;
	sd->dim = 0;
	sd->stride = 1;
	sd->idx = -1;
	vc_expect(c, '{');
	while (!c->bad && !vc_eat(c, '}')) {
		size_t s, e;
		int k = 0;
		if (vc_word(c, &s, &e))
			while (k < NFIELDS && !key_is(c->st, s, e, keys[k]))
				k++;
		else
			k = NFIELDS;
		if (k == NFIELDS || seen[k]) {
			if (k < NFIELDS)
				c->p = s;
			vc_fail(c, k < NFIELDS ? "each of sparsity=, dimension=, stride= and idx= once"
					       : "sparsity=, dimension=, stride= or idx=");
			return 0;
		}
		seen[k] = 1;
		vc_expect(c, '=');
		if (c->bad)
			return 0;
		if (k == SPARSITY) {
			vc_int_pair(c, 'x', "'x' between the values kept and the block size (sparsity=1x4)", &sd->nnz,
				    &sd->block);
		} else if (k == DIMENSION) {
			sd->dim = vc_int(c);
		} else if (k == STRIDE) {
			sd->stride = vc_int(c);
		} else {
			size_t at = c->p;
			sd->idx = vc_int(c);
			if (!c->bad && sd->idx < 0) {
				c->p = at;
				vc_fail(c, "an operand number of 0 or more");
				return 0;
			}
		}
		vc_eat(c, ',');
	}
	if (!c->bad && !seen[SPARSITY])
		vc_fail(c, "sparsity=NxM in the side");
	return 0;
}

static int parse_sparsity_config(vcur *c, sparsity_config **out)
{
	sparsity_config *sp = arena_alloc(c->st->a, sizeof *sp);
	if (!sp) {
		c->st->oom = 1;
		return -1;
	}
	*out = sp;
	vc_expect(c, '{');
	while (!c->bad && !vc_eat(c, '}')) {
		size_t s, e;
		int k = -1;
		if (vc_word(c, &s, &e))
			k = key_is(c->st, s, e, "lhs") ? 0 : key_is(c->st, s, e, "rhs") ? 1 : -1;
		if (k < 0 || sp->side[k].present) {
			if (k >= 0)
				c->p = s;
			vc_fail(c, k >= 0 ? "each of lhs= and rhs= once" : "lhs= or rhs=");
			return 0;
		}
		vc_expect(c, '=');
		if (c->bad)
			return 0;
		int rc = parse_sparsity_side(c, &sp->side[k]);
		if (rc)
			return rc;
		vc_eat(c, ',');
	}
	return 0;
}

/* One part of dim_labels: letters a and b once each, digits 0..n-1 once
 * each (n = length - 2 - the count of `?`, dimensions XLA leaves out of the
 * dimension numbers). Returns n, or -1 when malformed. */
static int labels_part(const char *t, size_t s, size_t e, char a, char b, int64_t *pa, int64_t *pb,
		       int64_t *spatial)
{
	size_t n = e - s, nq = 0;
	for (size_t i = 0; i < n; i++)
		nq += t[s + i] == '?';
	if (n - nq < 2 || n - nq - 2 > HLOI_MAX_RANK)
		return -1;
	int ns = (int)(n - nq - 2);
	int seen_a = 0, seen_b = 0;
	uint32_t digits = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = t[s + i];
		if (ch == '?') {
			continue;
		} else if (ch == a && !seen_a) {
			seen_a = 1;
			*pa = (int64_t)i;
		} else if (ch == b && !seen_b) {
			seen_b = 1;
			*pb = (int64_t)i;
		} else if (ch >= '0' && ch <= '9' && ch - '0' < ns && !(digits & (1u << (ch - '0')))) {
			digits |= 1u << (ch - '0');
			spatial[ch - '0'] = (int64_t)i;
		} else {
			return -1;
		}
	}
	return seen_a && seen_b ? ns : -1;
}

/* dim_labels=b01f_01io->b01f (input _ kernel -> output). */
static int parse_dim_labels(vcur *c, attr *a)
{
	const pstate *st = c->st;
	vc_skip(c);
	size_t s = c->p, e = c->end;
	while (e > s && (st->text[e - 1] == ' ' || st->text[e - 1] == '\n' || st->text[e - 1] == '\t' ||
			 st->text[e - 1] == '\r'))
		e--;
	const char *t = st->text;
	size_t us = s, ar = s;
	while (us < e && t[us] != '_')
		us++;
	ar = us;
	while (ar + 1 < e && !(t[ar] == '-' && t[ar + 1] == '>'))
		ar++;
	conv_dims *d = p_alloc(c->st, sizeof *d);
	if (!d)
		return -1;
	int n1 = -1, n2 = -1, n3 = -1;
	if (us < e && ar + 1 < e) {
		n1 = labels_part(t, s, us, 'b', 'f', &d->input_batch, &d->input_feature, d->input_spatial);
		n2 = labels_part(t, us + 1, ar, 'i', 'o', &d->kernel_input_feature, &d->kernel_output_feature,
				 d->kernel_spatial);
		n3 = labels_part(t, ar + 2, e, 'b', 'f', &d->output_batch, &d->output_feature, d->output_spatial);
	}
	if (n1 < 0 || n1 != n2 || n1 != n3) {
		vc_fail(c, "dimension labels like b01f_01io->b01f (b and f, i and o once each, spatial "
			   "dimensions 0..n-1 once each, the same count in all three parts)");
		return 0;
	}
	d->nspatial = n1;
	a->conv = d;
	a->u.s = p_text(c->st, s, e);
	c->p = e;
	return a->u.s ? 0 : -1;
}

/* slice={[0:2], [1:9:2]} */
static int parse_slice(vcur *c, slice_dims *sd)
{
	ibuf st, li, sr;
	int rc = 0;
	ib_init(&st);
	ib_init(&li);
	ib_init(&sr);
	vc_expect(c, '{');
	if (!c->bad && !vc_eat(c, '}')) {
		do {
			vc_expect(c, '[');
			int64_t a = vc_int(c);
			vc_expect(c, ':');
			int64_t b = vc_int(c);
			int64_t k = 1;
			if (vc_eat(c, ':'))
				k = vc_int(c);
			vc_expect(c, ']');
			if (c->bad)
				break;
			if (ib_push(&st, a) || ib_push(&li, b) || ib_push(&sr, k)) {
				c->st->oom = 1;
				rc = -1;
				goto done;
			}
		} while (vc_eat(c, ','));
		vc_expect(c, '}');
	}
	sd->n = st.n;
	sd->start = ib_copy(c->st, &st);
	sd->limit = ib_copy(c->st, &li);
	sd->stride = ib_copy(c->st, &sr);
	if (st.n && (!sd->start || !sd->limit || !sd->stride))
		rc = -1;
done:
	ib_free(&st);
	ib_free(&li);
	ib_free(&sr);
	return rc;
}

static int parse_padding(vcur *c, pad_dims *pd)
{
	ibuf lo, hi, in;
	ib_init(&lo);
	ib_init(&hi);
	ib_init(&in);
	int rc = parse_pads(c, &lo, &hi, &in);
	if (!rc && !c->bad) {
		pd->n = lo.n;
		pd->lo = ib_copy(c->st, &lo);
		pd->hi = ib_copy(c->st, &hi);
		pd->interior = ib_copy(c->st, &in);
		if (lo.n && (!pd->lo || !pd->hi || !pd->interior))
			rc = -1;
	}
	ib_free(&lo);
	ib_free(&hi);
	ib_free(&in);
	return rc;
}

/* `[a,b]` into a fresh arena array. */
static int parse_bracket_ints(vcur *c, int64_t **out, int *n)
{
	ibuf b;
	ib_init(&b);
	vc_expect(c, '[');
	if (!c->bad && !vc_eat(c, ']')) {
		do {
			int64_t v = vc_int(c);
			if (c->bad)
				break;
			if (ib_push(&b, v)) {
				ib_free(&b);
				c->st->oom = 1;
				return -1;
			}
		} while (vc_eat(c, ','));
		vc_expect(c, ']');
	}
	*n = b.n;
	*out = ib_copy(c->st, &b);
	ib_free(&b);
	return b.n && !*out ? -1 : 0;
}

/* A quoted axis name 'a' (or "a"). */
static void vc_quoted(vcur *c)
{
	vc_skip(c);
	int q = vc_peek(c);
	if (q != '\'' && q != '"') {
		vc_fail(c, "a quoted axis name");
		return;
	}
	const char *t = c->st->text;
	size_t p = c->p + 1;
	while (p < c->end && t[p] != q)
		p += t[p] == '\\' ? 2 : 1;
	if (p >= c->end) {
		vc_fail(c, "a quoted axis name");
		return;
	}
	c->p = p + 1;
}

/* Whether the word `w` comes next (consumed if so). */
static int vc_keyword(vcur *c, const char *w)
{
	size_t s, e, save = c->p;
	if (vc_word(c, &s, &e) && e - s == strlen(w) && !memcmp(c->st->text + s, w, e - s))
		return 1;
	c->p = save;
	return 0;
}

/* XLA's mesh replica groups, checked and kept as written (the proto writer
 * reads them again):
 *   mesh '[' [axis '=' int {',' axis '=' int}] ']'
 *        [',' 'device_ids' '=' '(' ('[' ints ']' ['T' '(' ints ')'] | [ints]) ')']
 *        '{' [ref {',' ref}] '}'
 * | maximal_mesh '[' 'device_id' '=' int ']' '{' [ref {',' ref}] '}'
 *   ref ::= axis [':' '(' int ')' int]
 * Returns nonzero (reported) when the value is not of this form. */
static int check_mesh_groups(vcur *c)
{
	if (vc_keyword(c, "maximal_mesh")) {
		vc_expect(c, '[');
		if (!c->bad && !vc_keyword(c, "device_id"))
			vc_fail(c, "'device_id'");
		vc_expect(c, '=');
		if (!c->bad)
			(void)vc_int(c);
		vc_expect(c, ']');
	} else if (vc_keyword(c, "mesh")) {
		vc_expect(c, '[');
		vc_skip(c);
		if (!c->bad && !vc_eat(c, ']')) {
			do {
				vc_quoted(c);
				vc_skip(c);
				vc_expect(c, '=');
				if (!c->bad)
					(void)vc_int(c);
				vc_skip(c);
			} while (!c->bad && vc_eat(c, ','));
			vc_expect(c, ']');
		}
		vc_skip(c);
		if (!c->bad && vc_eat(c, ',')) {
			vc_skip(c);
			if (!vc_keyword(c, "device_ids"))
				vc_fail(c, "'device_ids'");
			vc_expect(c, '=');
			vc_expect(c, '(');
			vc_skip(c);
			if (!c->bad && vc_peek(c) == '[') {
				int64_t *v;
				int n;
				if (parse_bracket_ints(c, &v, &n))
					return 1;
				if (!c->bad && vc_eat(c, 'T')) {
					vc_expect(c, '(');
					do {
						vc_skip(c);
						(void)vc_int(c);
						vc_skip(c);
					} while (!c->bad && vc_eat(c, ','));
					vc_expect(c, ')');
				}
			} else if (!c->bad && vc_peek(c) != ')') {
				do {
					(void)vc_int(c);
					vc_skip(c);
				} while (!c->bad && vc_eat(c, ','));
			}
			vc_skip(c);
			vc_expect(c, ')');
		}
	} else {
		vc_fail(c, "'{', '[', 'mesh' or 'maximal_mesh'");
		return 1;
	}
	vc_skip(c);
	vc_expect(c, '{');
	vc_skip(c);
	if (!c->bad && !vc_eat(c, '}')) {
		do {
			vc_quoted(c);
			vc_skip(c);
			if (!c->bad && vc_eat(c, ':')) {
				vc_expect(c, '(');
				if (!c->bad)
					(void)vc_int(c);
				vc_expect(c, ')');
				if (!c->bad)
					(void)vc_int(c);
			}
			vc_skip(c);
		} while (!c->bad && vc_eat(c, ','));
		vc_expect(c, '}');
	}
	vc_end(c);
	return c->bad;
}

/* replica_groups={{0,1},{2,3}} | [G,S]<=[d...] | [G,S]<=[d...]T(p...) |
 * anything else, kept as written. */
static int parse_replica_groups(vcur *c, attr *a)
{
	replica_groups *rg = p_alloc(c->st, sizeof *rg);
	if (!rg)
		return -1;
	a->u.rg = rg;
	int ch = vc_peek(c);
	if (ch == '{') {
		rg->form = RG_LIST;
		return parse_ints_list(c, &rg->list);
	}
	if (ch == '[') {
		size_t save = c->p;
		rg->form = RG_IOTA;
		if (parse_bracket_ints(c, &rg->group_dims, &rg->ngroup_dims))
			return -1;
		vc_expect(c, '<');
		vc_expect(c, '=');
		if (!c->bad && parse_bracket_ints(c, &rg->reshape_dims, &rg->nreshape))
			return -1;
		if (!c->bad && vc_peek(c) == 'T') {
			c->p++;
			vc_expect(c, '(');
			ibuf b;
			ib_init(&b);
			if (!c->bad && !vc_eat(c, ')')) {
				do {
					int64_t v = vc_int(c);
					if (c->bad)
						break;
					if (ib_push(&b, v)) {
						ib_free(&b);
						c->st->oom = 1;
						return -1;
					}
				} while (vc_eat(c, ','));
				vc_expect(c, ')');
			}
			rg->nperm = b.n;
			rg->perm = ib_copy(c->st, &b);
			ib_free(&b);
			if (b.n && !rg->perm)
				return -1;
		}
		if (c->bad)
			return 0;
		vc_skip(c);
		if (c->p == c->end)
			return 0;
		c->p = save;  /* not an iota form after all: keep it as written */
	}
	rg->form = RG_RAW;
	vc_skip(c);
	size_t start = c->p;
	if (check_mesh_groups(c))
		return 0;
	rg->raw = p_text(c->st, start, c->end);
	c->p = c->end;
	return rg->raw ? 0 : -1;
}

/* --- sub-parsers: shapes, literals and computations in a value ----------------- */

static int parse_shape_value(vcur *c, shape **out)
{
	vc_skip(c);
	pstate *sub = NULL;
	int rc = p_subparse(c->st, P_SUB_SHAPE, c->p, c->end, &sub);
	if (rc == 0 && sub) {
		if (sub->shape_out) {
			*out = sub->shape_out;
		} else {
			c->bad = 1;
		}
	} else if (rc > 0) {
		c->bad = 1;
	}
	hloi_free(sub);
	c->p = c->end;
	return rc < 0 ? -1 : 0;
}

static int parse_shapes_value(vcur *c, shape_list *out)
{
	vc_skip(c);
	pstate *sub = NULL;
	int rc = p_subparse(c->st, P_SUB_SHAPES, c->p, c->end, &sub);
	if (rc == 0 && sub) {
		out->n = sub->shape_list.n;
		out->v = out->n ? arena_array(c->st->a, (size_t)out->n, sizeof *out->v) : NULL;
		if (out->n && !out->v) {
			c->st->oom = 1;
			rc = -1;
		} else {
			int i = 0;
			for (lnode *n = sub->shape_list.head; n; n = n->next)
				out->v[i++] = *(shape *)n->p;
		}
	} else if (rc > 0) {
		c->bad = 1;
	}
	hloi_free(sub);
	c->p = c->end;
	return rc < 0 ? -1 : 0;
}

static int parse_literal_at(vcur *c, attr_literal *out, int depth);

/* The end of the element of a tuple literal starting at p: the next ',' or
 * ')' outside brackets and strings. */
static size_t tuple_elem_end(const vcur *c, size_t p)
{
	const char *t = c->st->text;
	int depth = 0;
	for (; p < c->end; p++) {
		char ch = t[p];
		if (ch == '"' || ch == '\'') {
			for (p++; p < c->end && t[p] != ch; p++)
				if (t[p] == '\\')
					p++;
		} else if (ch == '(' || ch == '[' || ch == '{') {
			depth++;
		} else if ((ch == ')' || ch == ']' || ch == '}') && depth) {
			depth--;
		} else if ((ch == ',' || ch == ')') && !depth) {
			break;
		}
	}
	return p < c->end ? p : c->end;
}

/* literal ::= '(' [literal {',' literal}] ')' | shape value: XLA's
 * ParseLiteral, a tuple of literals each with its own shape. */
static int parse_tuple_literal(vcur *c, attr_literal *out, int depth)
{
	if (depth > 64) {
		vc_fail(c, "a tuple literal nested at most 64 deep");
		return 0;
	}
	c->p++;  /* '(' */
	size_t first = c->p;
	int n = 0;
	/* count the elements */
	for (size_t p = c->p;;) {
		while (p < c->end && strchr(" \t\r\n", c->st->text[p]))
			p++;
		if (p >= c->end || c->st->text[p] == ')')
			break;
		n++;
		p = tuple_elem_end(c, p);
		if (p < c->end && c->st->text[p] == ',')
			p++;
		else
			break;
	}
	shape *s = p_alloc(c->st, sizeof *s);
	lit_node *t = p_alloc(c->st, sizeof *t);
	if (!s || !t)
		return -1;
	memset(s, 0, sizeof *s);
	memset(t, 0, sizeof *t);
	s->type = ET_TUPLE;
	t->kind = LIT_TUPLE;
	t->at = (loc){ first - 1, c->end };
	if (n) {
		s->tuple = arena_array(c->st->a, (size_t)n, sizeof *s->tuple);
		t->kids = arena_array(c->st->a, (size_t)n, sizeof *t->kids);
		if (!s->tuple || !t->kids) {
			c->st->oom = 1;
			return -1;
		}
	}
	c->p = first;
	for (int i = 0; i < n; i++) {
		vc_skip(c);
		vcur sub = *c;
		sub.end = tuple_elem_end(c, c->p);
		attr_literal el = { NULL, NULL, NULL };
		if (parse_literal_at(&sub, &el, depth + 1))
			return -1;
		if (sub.bad || !el.shp || !el.tree) {
			c->bad = 1;
			return 0;
		}
		s->tuple[i] = *el.shp;
		t->kids[i] = el.tree;
		c->p = sub.end;
		if (i + 1 < n)
			vc_expect(c, ',');
	}
	s->ntuple = n;
	t->n = n;
	vc_skip(c);
	vc_expect(c, ')');
	vc_end(c);
	if (c->bad)
		return 0;
	out->shp = s;
	out->tree = t;
	return 0;
}

static int parse_literal_value(vcur *c, attr_literal *out)
{
	return parse_literal_at(c, out, 0);
}

static int parse_literal_at(vcur *c, attr_literal *out, int depth)
{
	vc_skip(c);
	if (vc_peek(c) == '(')
		return parse_tuple_literal(c, out, depth);
	pstate *sub = NULL;
	int rc = p_subparse(c->st, P_SUB_LITERAL, c->p, c->end, &sub);
	if (rc == 0 && sub) {
		if (sub->lits.n == 1) {
			out->shp = sub->lit_shapes.head->p;
			out->tree = sub->lits.head->p;
		} else {
			vc_fail(c, "one shape and its value");
		}
	} else if (rc > 0) {
		c->bad = 1;
	}
	hloi_free(sub);
	c->p = c->end;
	return rc < 0 ? -1 : 0;
}

/* to_apply={ x = f32[] parameter(0) ... }: a computation written in place.
 * It joins the module under a name made from the instruction's and the
 * attribute's, and the attribute names it. */
static int parse_inline_computation(vcur *c, attr *a, const char *instr_name, const char *attr_text)
{
	size_t start = c->p;
	pstate *sub = NULL;
	int rc = p_subparse(c->st, P_SUB_COMPUTATION, c->p, c->end, &sub);
	if (rc != 0 || !sub) {
		if (rc > 0)
			c->bad = 1;
		hloi_free(sub);
		return rc < 0 ? -1 : 0;
	}
	size_t n = strlen(instr_name) + strlen(attr_text) + 2;
	char *name = arena_alloc(c->st->a, n);
	if (!name) {
		hloi_free(sub);
		c->st->oom = 1;
		return -1;
	}
	snprintf(name, n, "%s.%s", instr_name, attr_text);
	rc = p_computation_named(c->st, name, (loc){ start, c->end }, &sub->sub_instrs);
	hloi_free(sub);
	a->u.s = name;
	c->p = c->end;
	return rc;
}

/* --- one attribute --------------------------------------------------------------- */

static int known_word(const char *w, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(w, *set))
			return 1;
	return 0;
}

int p_attr_value(pstate *st, attr *a, const char *name, const char *instr_name, size_t vs, size_t ve)
{
	vcur c;
	vc_init(&c, st, vs, ve, name);
	attr_kind kind = attr_table_kind((attr_id)a->id);
	a->kind = (uint8_t)kind;
	int rc = 0;
	switch (kind) {
	case AK_INT:
		a->u.i = vc_int(&c);
		break;
	case AK_BOOL: {
		size_t s, e;
		if (vc_word(&c, &s, &e) && key_is(st, s, e, "true"))
			a->u.i = 1;
		else if (key_is(st, s, e, "false") && s < e)
			a->u.i = 0;
		else {
			c.p = vs;
			vc_fail(&c, "true or false");
		}
		break;
	}
	case AK_FLOAT: {
		vc_skip(&c);
		size_t s = c.p;
		char buf[64];
		size_t n = 0;
		while (c.p < c.end && n + 1 < sizeof buf && strchr("0123456789+-.eE", st->text[c.p]))
			buf[n++] = st->text[c.p++];
		buf[n] = '\0';
		char *endp;
		errno = 0;
		a->u.f = n ? strtod(buf, &endp) : 0;
		if (!n || *endp || errno == ERANGE || !isfinite(a->u.f)) {
			c.p = s;
			vc_fail(&c, "a finite number");
		}
		break;
	}
	case AK_STRING: {
		vc_skip(&c);
		char q = c.p < c.end ? st->text[c.p] : 0;
		size_t s = c.p;
		if (q != '"' && q != '\'') {
			vc_fail(&c, "a quoted string");
			break;
		}
		c.p++;
		while (c.p < c.end && st->text[c.p] != q)
			c.p += st->text[c.p] == '\\' ? 2 : 1;
		if (c.p >= c.end) {
			c.p = s;
			vc_fail(&c, "a closing quote");
			break;
		}
		c.p++;
		a->u.s = p_text(st, s, c.p);
		if (!a->u.s)
			return -1;
		break;
	}
	case AK_WORD: {
		size_t s, e;
		if (!vc_word(&c, &s, &e)) {
			vc_fail(&c, a->id == ATTR_DIRECTION ? "EQ, NE, LT, LE, GT or GE"
				    : a->id == ATTR_TYPE    ? "FLOAT, TOTALORDER, SIGNED or UNSIGNED"
							    : "a word");
			break;
		}
		a->u.s = p_text(st, s, e);
		if (!a->u.s)
			return -1;
		if (a->id == ATTR_DIRECTION && cmp_direction_from_name(a->u.s, strlen(a->u.s)) == CMP_NONE) {
			diag_error(st->ctx, st->src, (loc){ s, e }, "Unknown comparison direction: %s", a->u.s);
			c.bad = 1;
		} else if (a->id == ATTR_TYPE && cmp_type_from_name(a->u.s, strlen(a->u.s)) == CMPT_NONE) {
			diag_error(st->ctx, st->src, (loc){ s, e }, "Unknown comparison type: %s", a->u.s);
			c.bad = 1;
		} else if (a->id == ATTR_FFT_TYPE &&
			   !known_word(a->u.s, (const char *const[]){ "FFT", "IFFT", "RFFT", "IRFFT", NULL })) {
			diag_error(st->ctx, st->src, (loc){ s, e }, "Unknown FFT type: %s", a->u.s);
			c.bad = 1;
		} else if (a->id == ATTR_TRANSPOSE_A &&
			   !known_word(a->u.s, (const char *const[]){ "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT",
								      "TRANSPOSE_INVALID", NULL })) {
			diag_error(st->ctx, st->src, (loc){ s, e }, "Unknown transpose type: %s", a->u.s);
			c.bad = 1;
		} else if (a->id == ATTR_DISTRIBUTION &&
			   !known_word(a->u.s, (const char *const[]){ "rng_uniform", "rng_normal", NULL })) {
			diag_error(st->ctx, st->src, (loc){ s, e }, "Unknown distribution: %s", a->u.s);
			c.bad = 1;
		}
		break;
	}
	case AK_INTS:
		vc_skip(&c);
		if (c.p + 1 < c.end && st->text[c.p] == '{') {
			vcur k = c;
			k.p++;
			if (vc_peek(&k) == '{') {
				a->kind = AK_INTS_LIST;
				rc = parse_ints_list(&c, &a->u.lists);
				break;
			}
		}
		rc = parse_int_list(&c, &a->u.ints);
		break;
	case AK_INTS_LIST:
		rc = parse_ints_list(&c, &a->u.lists);
		break;
	case AK_COMP: {
		if (vc_peek(&c) == '{') {
			rc = parse_inline_computation(&c, a, instr_name, name);
			break;
		}
		size_t s, e;
		if (!vc_word(&c, &s, &e)) {
			vc_fail(&c, "a computation name");
			break;
		}
		a->u.s = p_text(st, s, e);
		a->vat = (loc){ s, e };
		if (!a->u.s)
			return -1;
		break;
	}
	case AK_COMPS:
		rc = parse_word_list(&c, &a->u.words, "a computation name");
		break;
	case AK_NAMES:
		rc = parse_word_list(&c, &a->u.words, "an instruction name");
		break;
	case AK_PRECISION:
		rc = parse_word_list(&c, &a->u.words, "a precision (default, high, highest)");
		break;
	case AK_WINDOW:
		rc = parse_window(&c, &a->u.win);
		break;
	case AK_DIM_LABELS:
		rc = parse_dim_labels(&c, a);
		break;
	case AK_SLICE:
		rc = parse_slice(&c, &a->u.slice);
		break;
	case AK_PADDING:
		rc = parse_padding(&c, &a->u.pad);
		break;
	case AK_SHAPE:
		rc = parse_shape_value(&c, &a->u.shp);
		break;
	case AK_SHAPES:
		rc = parse_shapes_value(&c, &a->u.shapes);
		break;
	case AK_LITERAL:
		rc = parse_literal_value(&c, &a->u.lit);
		break;
	case AK_REPLICA_GROUPS:
		rc = parse_replica_groups(&c, a);
		break;
	case AK_SPARSITY:
		rc = parse_sparsity_config(&c, &a->u.sp);
		break;
	case AK_RAW:
		a->u.s = p_text(st, vs, ve);
		if (!a->u.s)
			return -1;
		c.p = ve;
		break;
	}
	if (rc)
		return rc;
	vc_end(&c);
	return c.bad ? 1 : 0;
}

/* --- printing ---------------------------------------------------------------------- */

static void put_ints(strbuf *b, const int_list *l)
{
	sb_putc(b, '{');
	for (int i = 0; i < l->n; i++)
		sb_printf(b, i ? ",%lld" : "%lld", (long long)l->v[i]);
	sb_putc(b, '}');
}

static void put_ints_list(strbuf *b, const ints_list *l)
{
	sb_putc(b, '{');
	for (int i = 0; i < l->n; i++) {
		if (i)
			sb_putc(b, ',');
		put_ints(b, &l->v[i]);
	}
	sb_putc(b, '}');
}

static void put_words(strbuf *b, const word_list *w, const char *sep, int names)
{
	sb_putc(b, '{');
	for (int i = 0; i < w->n; i++) {
		if (i)
			sb_puts(b, sep);
		if (names)
			text_put_name(b, w->v[i]);
		else
			sb_puts(b, w->v[i]);
	}
	sb_putc(b, '}');
}

/* `AxB` of one window field */
static void put_dxd(strbuf *b, const char *key, const window *w, size_t off)
{
	sb_printf(b, "%s=", key);
	for (int i = 0; i < w->n; i++) {
		const int64_t *f = (const int64_t *)(const void *)((const char *)&w->d[i] + off);
		sb_printf(b, i ? "x%lld" : "%lld", (long long)*f);
	}
}

/* As XLA's SparsityConfigToString: `lhs={sparsity=NxM dimension=D stride=S}`
 * (` idx=I` before the brace in the newer form) then rhs, joined by a
 * space, inside braces. */
void attr_print_sparsity(strbuf *b, const sparsity_config *sp)
{
	int n = 0;
	sb_putc(b, '{');
	for (int k = 0; k < 2; k++) {
		const sparsity_side *sd = &sp->side[k];
		if (!sd->present)
			continue;
		sb_printf(b, "%s%s={sparsity=%lldx%lld dimension=%lld stride=%lld", n++ ? " " : "", k ? "rhs" : "lhs",
			  (long long)sd->nnz, (long long)sd->block, (long long)sd->dim, (long long)sd->stride);
		if (sd->idx >= 0)
			sb_printf(b, " idx=%lld", (long long)sd->idx);
		sb_putc(b, '}');
	}
	sb_putc(b, '}');
}

void attr_print_window(strbuf *b, const window *w)
{
	int stride = 0, pad = 0, lhs = 0, rhs = 0, rev = 0;
	for (int i = 0; i < w->n; i++) {
		stride |= w->d[i].stride != 1;
		pad |= w->d[i].pad_lo != 0 || w->d[i].pad_hi != 0;
		lhs |= w->d[i].lhs_dilate != 1;
		rhs |= w->d[i].rhs_dilate != 1;
		rev |= w->d[i].reversal != 0;
	}
	sb_putc(b, '{');
	if (w->n) {
		put_dxd(b, "size", w, offsetof(window_dim, size));
		if (stride) {
			sb_putc(b, ' ');
			put_dxd(b, "stride", w, offsetof(window_dim, stride));
		}
		if (pad) {
			sb_puts(b, " pad=");
			for (int i = 0; i < w->n; i++)
				sb_printf(b, i ? "x%lld_%lld" : "%lld_%lld", (long long)w->d[i].pad_lo,
					  (long long)w->d[i].pad_hi);
		}
		if (lhs) {
			sb_putc(b, ' ');
			put_dxd(b, "lhs_dilate", w, offsetof(window_dim, lhs_dilate));
		}
		if (rhs) {
			sb_putc(b, ' ');
			put_dxd(b, "rhs_dilate", w, offsetof(window_dim, rhs_dilate));
		}
		if (rev) {
			sb_puts(b, " rhs_reversal=");
			for (int i = 0; i < w->n; i++)
				sb_printf(b, i ? "x%d" : "%d", w->d[i].reversal ? 1 : 0);
		}
	}
	sb_putc(b, '}');
}

static void put_labels(strbuf *b, int64_t pa, char a, int64_t pb, char bch, const int64_t *spatial, int ns)
{
	for (int64_t pos = 0; pos < ns + 2; pos++) {
		if (pos == pa) {
			sb_putc(b, a);
			continue;
		}
		if (pos == pb) {
			sb_putc(b, bch);
			continue;
		}
		for (int i = 0; i < ns; i++)
			if (spatial[i] == pos)
				sb_printf(b, "%d", i);
	}
}

void attr_print_dim_labels(strbuf *b, const conv_dims *d)
{
	put_labels(b, d->input_batch, 'b', d->input_feature, 'f', d->input_spatial, d->nspatial);
	sb_putc(b, '_');
	put_labels(b, d->kernel_input_feature, 'i', d->kernel_output_feature, 'o', d->kernel_spatial, d->nspatial);
	sb_puts(b, "->");
	put_labels(b, d->output_batch, 'b', d->output_feature, 'f', d->output_spatial, d->nspatial);
}

static void put_float(strbuf *b, double v)
{
	char buf[40];
	float f = (float)v;
	if ((double)f == v) {
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

/* custom-call's `literal=`: `shape value` with the layout as written, or a
 * tuple of such, `( s32[2]{0} {1, 2}, pred[] true )` (XLA's one-line form). */
static void put_attr_literal(strbuf *b, const shape *s, const lit_node *t)
{
	if (shape_is_tuple(s) && t->kind == LIT_TUPLE && t->n == s->ntuple) {
		if (!t->n) {
			sb_puts(b, "()");
			return;
		}
		sb_puts(b, "( ");
		for (int i = 0; i < t->n; i++) {
			if (i)
				sb_puts(b, ", ");
			put_attr_literal(b, &s->tuple[i], t->kids[i]);
		}
		sb_puts(b, " )");
		return;
	}
	shape_print(b, s, 1);
	sb_putc(b, ' ');
	text_put_literal(b, t);
}

/* The same for a typed value (from a proto): XLA prints it with its layout. */
static void put_value_literal(strbuf *b, const hloi_literal *v)
{
	if (shape_is_tuple(&v->shape)) {
		if (!v->nelems) {
			sb_puts(b, "()");
			return;
		}
		sb_puts(b, "( ");
		for (size_t i = 0; i < v->nelems; i++) {
			if (i)
				sb_puts(b, ", ");
			put_value_literal(b, v->elems[i]);
		}
		sb_puts(b, " )");
		return;
	}
	shape_print(b, &v->shape, 1);
	sb_putc(b, ' ');
	literal_print(b, v, 0, 1);
}

void attr_print_value(strbuf *b, const attr *a)
{
	switch ((attr_kind)a->kind) {
	case AK_INT:
		sb_printf(b, "%lld", (long long)a->u.i);
		break;
	case AK_BOOL:
		sb_puts(b, a->u.i ? "true" : "false");
		break;
	case AK_FLOAT:
		put_float(b, a->u.f);
		break;
	case AK_STRING:
	case AK_WORD:
	case AK_RAW:
		sb_puts(b, a->u.s);
		break;
	case AK_COMP:
		text_put_name(b, a->u.s);
		break;
	case AK_INTS:
		put_ints(b, &a->u.ints);
		break;
	case AK_INTS_LIST:
		put_ints_list(b, &a->u.lists);
		break;
	case AK_COMPS:
	case AK_NAMES:
		put_words(b, &a->u.words, ", ", 1);
		break;
	case AK_PRECISION:
		put_words(b, &a->u.words, ",", 0);
		break;
	case AK_WINDOW:
		attr_print_window(b, &a->u.win);
		break;
	case AK_SPARSITY:
		attr_print_sparsity(b, a->u.sp);
		break;
	case AK_DIM_LABELS:
		/* with `?` dimensions, as written (the numbers leave them out) */
		if (a->conv && !strchr(a->u.s, '?'))
			attr_print_dim_labels(b, a->conv);
		else
			sb_puts(b, a->u.s);
		break;
	case AK_SLICE:
		sb_putc(b, '{');
		for (int i = 0; i < a->u.slice.n; i++) {
			if (i)
				sb_puts(b, ", ");
			sb_printf(b, "[%lld:%lld", (long long)a->u.slice.start[i], (long long)a->u.slice.limit[i]);
			if (a->u.slice.stride[i] != 1)
				sb_printf(b, ":%lld", (long long)a->u.slice.stride[i]);
			sb_putc(b, ']');
		}
		sb_putc(b, '}');
		break;
	case AK_PADDING: {
		int interior = 0;
		for (int i = 0; i < a->u.pad.n; i++)
			interior |= a->u.pad.interior[i] != 0;
		for (int i = 0; i < a->u.pad.n; i++) {
			sb_printf(b, i ? "x%lld_%lld" : "%lld_%lld", (long long)a->u.pad.lo[i],
				  (long long)a->u.pad.hi[i]);
			if (interior)
				sb_printf(b, "_%lld", (long long)a->u.pad.interior[i]);
		}
		break;
	}
	case AK_SHAPE:
		shape_print(b, a->u.shp, 1);
		break;
	case AK_SHAPES:
		sb_putc(b, '{');
		for (int i = 0; i < a->u.shapes.n; i++) {
			if (i)
				sb_puts(b, ", ");
			shape_print(b, &a->u.shapes.v[i], 1);
		}
		sb_putc(b, '}');
		break;
	case AK_LITERAL:
		if (a->u.lit.tree) {
			put_attr_literal(b, a->u.lit.shp, a->u.lit.tree);
		} else if (a->u.lit.value) {
			put_value_literal(b, a->u.lit.value);
		} else {
			shape_print(b, a->u.lit.shp, 1);
		}
		break;
	case AK_REPLICA_GROUPS: {
		const replica_groups *rg = a->u.rg;
		if (rg->form == RG_LIST) {
			put_ints_list(b, &rg->list);
		} else if (rg->form == RG_IOTA) {
			sb_putc(b, '[');
			for (int i = 0; i < rg->ngroup_dims; i++)
				sb_printf(b, i ? ",%lld" : "%lld", (long long)rg->group_dims[i]);
			sb_puts(b, "]<=[");
			for (int i = 0; i < rg->nreshape; i++)
				sb_printf(b, i ? ",%lld" : "%lld", (long long)rg->reshape_dims[i]);
			sb_putc(b, ']');
			if (rg->nperm) {
				sb_puts(b, "T(");
				for (int i = 0; i < rg->nperm; i++)
					sb_printf(b, i ? ",%lld" : "%lld", (long long)rg->perm[i]);
				sb_putc(b, ')');
			}
		} else {
			sb_puts(b, rg->raw);
		}
		break;
	}
	}
}

void attr_print(strbuf *b, const attr *a)
{
	sb_puts(b, attr_text_name(a));
	sb_putc(b, '=');
	attr_print_value(b, a);
}
