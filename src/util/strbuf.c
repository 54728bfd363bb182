/* Growable string buffer, optionally writing through to a FILE in chunks. */
#include "util/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"

void sb_free(strbuf *b)
{
	hloi_free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

void sb_reset(strbuf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

static int grow(strbuf *b, size_t extra)
{
	if (b->oom)
		return 0;
	if (b->len + extra + 1 <= b->cap)
		return 1;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1) {
		if (cap > ((size_t)-1) / 2) {
			b->oom = 1;
			return 0;
		}
		cap *= 2;
	}
	char *s = hloi_realloc(b->s, cap);
	if (!s) {
		b->oom = 1;
		return 0;
	}
	b->s = s;
	b->cap = cap;
	return 1;
}

int sb_flush(strbuf *b)
{
	if (!b->sink)
		return 0;
	if (!b->werr && b->len > 0) {
		errno = 0;
		if (fwrite(b->s, 1, b->len, b->sink) != b->len)
			b->werr = errno ? errno : EIO;
	}
	sb_reset(b);
	return b->werr ? -1 : 0;
}

/* With a sink: writes the text out once a chunk's worth is buffered. */
static void maybe_flush(strbuf *b)
{
	if (b->sink && b->len >= SB_SINK_CHUNK)
		sb_flush(b);
}

void sb_putn(strbuf *b, const char *s, size_t n)
{
	if (b->sink && b->werr)
		return;
	if (!grow(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	maybe_flush(b);
}

void sb_put_int(strbuf *b, long long v)
{
	char tmp[24], *e = tmp + sizeof tmp, *p = e;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	sb_putn(b, p, (size_t)(e - p));
}

char *sb_extend(strbuf *b, size_t n)
{
	if (b->sink || !grow(b, n))
		return NULL;
	char *p = b->s + b->len;
	b->len += n;
	b->s[b->len] = '\0';
	return p;
}

void sb_puts(strbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

void sb_putc(strbuf *b, char c)
{
	sb_putn(b, &c, 1);
}

void sb_vprintf(strbuf *b, const char *fmt, va_list ap)
{
	if (b->sink && b->werr)
		return;
	va_list ap2;
	va_copy(ap2, ap);
	char small[256];
	int n = vsnprintf(small, sizeof small, fmt, ap);
	if (n < 0) {
		va_end(ap2);
		return;
	}
	if ((size_t)n < sizeof small) {
		sb_putn(b, small, (size_t)n);
	} else if (grow(b, (size_t)n)) {
		vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
		b->len += (size_t)n;
		maybe_flush(b);
	}
	va_end(ap2);
}

void sb_printf(strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

const char *sb_str(const strbuf *b)
{
	return b->s ? b->s : "";
}

char *sb_take(strbuf *b)
{
	if (b->oom) {
		sb_free(b);
		return NULL;
	}
	char *s = b->s ? b->s : hloi_strdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}
