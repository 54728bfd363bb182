/* A cursor over the text of an attribute value (sharding, metadata,
 * statistics, ...) as XLA's lexer reads it: white space and comments
 * between tokens, C-escaped strings in double or single quotes, decimal
 * integers and floating-point numbers. The first failure is kept with its
 * offset, so a caller can locate it in the source. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/pbtxt.h"
#include "proto/proto_internal.h"
#include "util/alloc.h"

void tc_init(tcur *c, const char *s, size_t n)
{
	memset(c, 0, sizeof *c);
	c->s = s;
	c->n = n;
}

void tc_skip(tcur *c)
{
	while (c->i < c->n) {
		char ch = c->s[c->i];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f') {
			c->i++;
		} else if (ch == '/' && c->i + 1 < c->n && c->s[c->i + 1] == '*') {
			size_t q = c->i + 2;
			while (q + 1 < c->n && !(c->s[q] == '*' && c->s[q + 1] == '/'))
				q++;
			c->i = q + 2 <= c->n ? q + 2 : c->n;
		} else if (ch == '/' && c->i + 1 < c->n && c->s[c->i + 1] == '/') {
			while (c->i < c->n && c->s[c->i] != '\n')
				c->i++;
		} else {
			break;
		}
	}
}

int tc_fail(tcur *c, const char *expect)
{
	if (!c->bad) {
		c->bad = 1;
		c->bad_at = c->i;
		snprintf(c->expect, sizeof c->expect, "%s", expect ? expect : "");
	}
	return -1;
}

int tc_peek(tcur *c)
{
	tc_skip(c);
	return c->i < c->n ? (unsigned char)c->s[c->i] : -1;
}

int tc_eat(tcur *c, char ch)
{
	if (c->bad)
		return 0;
	if (tc_peek(c) == (unsigned char)ch) {
		c->i++;
		return 1;
	}
	return 0;
}

int tc_expect(tcur *c, char ch, const char *what)
{
	if (c->bad)
		return -1;
	return tc_eat(c, ch) ? 0 : tc_fail(c, what);
}

int tc_at_end(tcur *c)
{
	return tc_peek(c) < 0;
}

static int word_char(char ch, int first)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
	       (!first && ((ch >= '0' && ch <= '9') || ch == '.' || ch == '-'));
}

int tc_word(tcur *c, size_t *s, size_t *e)
{
	if (c->bad)
		return 0;
	tc_skip(c);
	size_t p = c->i;
	if (p >= c->n || !word_char(c->s[p], 1))
		return 0;
	*s = p;
	while (p < c->n && word_char(c->s[p], 0))
		p++;
	*e = p;
	c->i = p;
	return 1;
}

int tc_word_is(const tcur *c, size_t s, size_t e, const char *w)
{
	return strlen(w) == e - s && memcmp(c->s + s, w, e - s) == 0;
}

int tc_keyword(tcur *c, const char *kw)
{
	if (c->bad)
		return 0;
	size_t save = c->i, s, e;
	if (tc_word(c, &s, &e) && tc_word_is(c, s, e, kw))
		return 1;
	c->i = save;
	return 0;
}

int tc_int64(tcur *c, int64_t *out)
{
	if (c->bad)
		return -1;
	tc_skip(c);
	size_t p = c->i;
	int neg = 0;
	if (p < c->n && (c->s[p] == '-' || c->s[p] == '+')) {
		neg = c->s[p] == '-';
		p++;
	}
	size_t digits = p;
	uint64_t v = 0;
	while (p < c->n && c->s[p] >= '0' && c->s[p] <= '9') {
		unsigned d = (unsigned)(c->s[p] - '0');
		if (v > (UINT64_MAX - d) / 10 || v * 10 + d > (uint64_t)INT64_MAX + (uint64_t)neg)
			return tc_fail(c, "an integer in 64 bits");
		v = v * 10 + d;
		p++;
	}
	if (p == digits || (p < c->n && (c->s[p] == '.' || c->s[p] == 'e' || c->s[p] == 'E')))
		return tc_fail(c, "an integer");
	c->i = p;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int tc_int32(tcur *c, int32_t *out)
{
	size_t save = c->i;
	int64_t v;
	if (tc_int64(c, &v))
		return -1;
	if (v < INT32_MIN || v > INT32_MAX) {
		c->i = save;
		tc_skip(c);
		return tc_fail(c, "an integer in 32 bits");
	}
	*out = (int32_t)v;
	return 0;
}

int tc_double(tcur *c, double *out)
{
	if (c->bad)
		return -1;
	tc_skip(c);
	size_t p = c->i;
	char buf[80];
	size_t k = 0;
	while (p < c->n && k + 1 < sizeof buf && strchr("0123456789+-.eE", c->s[p]))
		buf[k++] = c->s[p++];
	/* inf and nan as XLA's lexer spells them */
	if (k == 0 || (k == 1 && (buf[0] == '-' || buf[0] == '+'))) {
		static const char *const words[] = { "inf", "nan" };
		for (size_t w = 0; w < 2; w++) {
			size_t l = strlen(words[w]);
			if (p + l <= c->n && memcmp(c->s + p, words[w], l) == 0 && k + l + 1 < sizeof buf) {
				memcpy(buf + k, words[w], l);
				k += l;
				p += l;
				break;
			}
		}
	}
	buf[k] = '\0';
	if (!k)
		return tc_fail(c, "a number");
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (*end || (errno == ERANGE && isfinite(v) && v != 0))
		return tc_fail(c, "a number");
	c->i = p;
	*out = v;
	return 0;
}

int tc_string(tcur *c, arena *a, char **out, size_t *len)
{
	if (c->bad)
		return -1;
	tc_skip(c);
	if (c->i >= c->n || (c->s[c->i] != '"' && c->s[c->i] != '\''))
		return tc_fail(c, "a quoted string");
	char q = c->s[c->i];
	size_t start = c->i + 1, p = start;
	while (p < c->n && c->s[p] != q)
		p += c->s[p] == '\\' ? 2 : 1;
	if (p >= c->n)
		return tc_fail(c, "a closing quote");
	size_t n = p - start, olen, bad;
	char *buf = arena_alloc(a, n + 1);
	if (!buf) {
		c->oom = 1;
		return tc_fail(c, "memory");
	}
	if (pbtxt_unescape(c->s + start, n, buf, &olen, &bad)) {
		c->i = start + bad;
		return tc_fail(c, "a valid escape sequence");
	}
	buf[olen] = '\0';
	c->i = p + 1;
	*out = buf;
	if (len)
		*len = olen;
	return 0;
}

int tc_text_string(tcur *c, arena *a, char **out)
{
	size_t save = c->i, len;
	if (tc_string(c, a, out, &len))
		return -1;
	if (strlen(*out) != len || !proto_utf8_valid((const unsigned char *)*out, len)) {
		c->i = save;
		tc_skip(c);
		return tc_fail(c, "a string of UTF-8 text without NUL bytes");
	}
	return 0;
}

int tc_braced(tcur *c, size_t *start, size_t *end)
{
	if (c->bad)
		return -1;
	tc_skip(c);
	if (c->i >= c->n || c->s[c->i] != '{')
		return tc_fail(c, "'{'");
	size_t p = c->i;
	int depth = 0;
	while (p < c->n) {
		char ch = c->s[p++];
		if (ch == '"' || ch == '\'') {
			while (p < c->n && c->s[p] != ch)
				p += c->s[p] == '\\' ? 2 : 1;
			if (p >= c->n)
				break;
			p++;
		} else if (ch == '{') {
			depth++;
		} else if (ch == '}' && --depth == 0) {
			*start = c->i;
			*end = p;
			c->i = p;
			return 0;
		}
	}
	return tc_fail(c, "a balanced '}'");
}

int tc_int_list(tcur *c, char open, char close, int64_t **out, size_t *n, arena *a)
{
	int64_t small[32], *v = small;
	size_t cap = 32, k = 0;
	int rc = 0;
	char what[4] = { '\'', open, '\'', '\0' };
	if (tc_expect(c, open, what))
		return -1;
	char cl[4] = { '\'', close, '\'', '\0' };
	if (!tc_eat(c, close)) {
		do {
			int64_t x;
			if (tc_int64(c, &x)) {
				rc = -1;
				goto out;
			}
			if (k == cap) {
				int64_t *nv = hloi_malloc(cap * 2 * sizeof *nv);
				if (!nv) {
					c->oom = 1;
					rc = tc_fail(c, "memory");
					goto out;
				}
				memcpy(nv, v, k * sizeof *nv);
				if (v != small)
					hloi_free(v);
				v = nv;
				cap *= 2;
			}
			v[k++] = x;
		} while (tc_eat(c, ','));
		if (tc_expect(c, close, cl)) {
			rc = -1;
			goto out;
		}
	}
	*n = k;
	*out = NULL;
	if (k) {
		*out = arena_array(a, k, sizeof **out);
		if (!*out) {
			c->oom = 1;
			rc = tc_fail(c, "memory");
			goto out;
		}
		memcpy(*out, v, k * sizeof **out);
	}
out:
	if (v != small)
		hloi_free(v);
	return rc;
}

/* --- printing ---------------------------------------------------------------- */

void put_quoted(strbuf *b, const char *s, size_t n)
{
	sb_putc(b, '"');
	pbtxt_escape(b, s, n);
	sb_putc(b, '"');
}

void put_double(strbuf *b, double v)
{
	char buf[40];
	if (isnan(v)) {
		sb_puts(b, "nan");
		return;
	}
	if (isinf(v)) {
		sb_puts(b, v < 0 ? "-inf" : "inf");
		return;
	}
	/* the shortest of %g's forms that reads back */
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	sb_puts(b, buf);
}

void put_int_list(strbuf *b, const int64_t *v, size_t n, char open, char close)
{
	sb_putc(b, open);
	for (size_t i = 0; i < n; i++)
		sb_printf(b, i ? ",%lld" : "%lld", (long long)v[i]);
	sb_putc(b, close);
}

void put_int_list_sep(strbuf *b, const char *prefix, const int64_t *v, size_t n, const char *sep,
		      const char *suffix)
{
	sb_puts(b, prefix);
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_puts(b, sep);
		sb_printf(b, "%lld", (long long)v[i]);
	}
	sb_puts(b, suffix);
}
