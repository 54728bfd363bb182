/* Growable string buffer. On allocation failure it sets `oom`, keeps what it
 * had, and ignores further appends, so callers check once at the end. With a
 * sink (a FILE), the text is written out in chunks as it grows, so printing
 * a large value needs a small buffer only. */
#ifndef HLOI_UTIL_STRBUF_H
#define HLOI_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

typedef struct strbuf {
	char *s;    /* NUL-terminated once anything was appended; may be NULL */
	size_t len, cap;
	int oom;
	FILE *sink; /* optional: the text goes here once len reaches SB_SINK_CHUNK */
	int werr;   /* errno of the first failed write to the sink (0: none) */
} strbuf;

#define STRBUF_INIT { NULL, 0, 0, 0, NULL, 0 }
#define SB_SINK_CHUNK ((size_t)64 << 10)

void sb_free(strbuf *b);
void sb_reset(strbuf *b);
void sb_putc(strbuf *b, char c);
void sb_puts(strbuf *b, const char *s);
void sb_putn(strbuf *b, const char *s, size_t n);
/* Makes the text n bytes longer and returns where they go (to be filled
 * by the caller), or NULL when out of memory; not with a sink. */
char *sb_extend(strbuf *b, size_t n);
/* Appends a decimal integer (what "%lld" prints, without printf). */
void sb_put_int(strbuf *b, long long v);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void sb_printf(strbuf *b, const char *fmt, ...);
void sb_vprintf(strbuf *b, const char *fmt, va_list ap);
/* Returns b->s, or "" when nothing was appended. Borrowed. */
const char *sb_str(const strbuf *b);
/* Writes the buffered text to the sink and empties the buffer (no-op without
 * a sink). After a failed write, werr is set and further text is dropped.
 * Returns 0, or -1 once a write has failed. */
int sb_flush(strbuf *b);
/* Hands the string to the caller (free with hloi_free); NULL on oom. */
char *sb_take(strbuf *b);

#endif
