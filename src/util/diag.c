/* Diagnostics: recording, and printing with the source line and a caret. */
#include "util/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hloi/tool.h"
#include "util/alloc.h"
#include "util/strbuf.h"

hloi_status hloi_context_new(hloi_context **out)
{
	*out = hloi_calloc(1, sizeof **out);
	if (!*out)
		return HLOI_ENOMEM;
	(*out)->max_diags = 100;
	return HLOI_OK;
}

static void free_diags(hloi_context *ctx)
{
	for (size_t i = 0; i < ctx->ndiags; i++) {
		hloi_free(ctx->diags[i].where);
		hloi_free(ctx->diags[i].message);
	}
	hloi_free(ctx->diags);
	ctx->diags = NULL;
	ctx->ndiags = ctx->cap = 0;
}

void hloi_context_clear(hloi_context *ctx)
{
	if (!ctx)
		return;
	free_diags(ctx);
	for (size_t i = 0; i < ctx->nsources; i++) {
		hloi_free(ctx->sources[i].name);
		hloi_free(ctx->sources[i].text);
	}
	hloi_free(ctx->sources);
	ctx->sources = NULL;
	ctx->nsources = 0;
	ctx->nerrors = 0;
	ctx->oom = 0;
}

void hloi_context_free(hloi_context *ctx)
{
	if (!ctx)
		return;
	hloi_context_clear(ctx);
	hloi_free(ctx);
}

size_t hloi_context_error_count(const hloi_context *ctx)
{
	return ctx->nerrors;
}

const char *hloi_context_last_error(const hloi_context *ctx)
{
	for (size_t i = ctx->ndiags; i-- > 0;)
		if (ctx->diags[i].severity == DIAG_ERROR)
			return ctx->diags[i].message;
	if (ctx->nerrors)
		return ctx->oom ? "out of memory" : "too many errors";
	return NULL;
}

int diag_add_source_take(hloi_context *ctx, const char *name, char *text, size_t len)
{
	source *s = hloi_realloc(ctx->sources, (ctx->nsources + 1) * sizeof *s);
	if (!s) {
		hloi_free(text);
		ctx->oom = 1;
		return -1;
	}
	ctx->sources = s;
	s = &ctx->sources[ctx->nsources];
	s->name = hloi_strdup(name ? name : "<input>");
	if (!s->name) {
		hloi_free(text);
		ctx->oom = 1;
		return -1;
	}
	s->text = text;
	s->len = len;
	return (int)ctx->nsources++;
}

int diag_add_source(hloi_context *ctx, const char *name, const char *text, size_t len)
{
	char *copy = hloi_malloc(len + 1);
	if (!copy) {
		ctx->oom = 1;
		return -1;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	return diag_add_source_take(ctx, name, copy, len);
}

const source *diag_source(const hloi_context *ctx, int id)
{
	if (id < 0 || (size_t)id >= ctx->nsources)
		return NULL;
	return &ctx->sources[id];
}

static void record(hloi_context *ctx, diag_severity sev, int src, loc at, const char *where,
		   const char *fmt, va_list ap)
{
	if (sev == DIAG_ERROR)
		ctx->nerrors++;
	if (ctx->ndiags >= ctx->max_diags)
		return;
	if (ctx->ndiags == ctx->cap) {
		size_t cap = ctx->cap ? ctx->cap * 2 : 8;
		diag *d = hloi_realloc(ctx->diags, cap * sizeof *d);
		if (!d) {
			ctx->oom = 1;
			return;
		}
		ctx->diags = d;
		ctx->cap = cap;
	}
	strbuf b = STRBUF_INIT;
	sb_vprintf(&b, fmt, ap);
	char *msg = sb_take(&b);
	char *w = where ? hloi_strdup(where) : NULL;
	if (!msg || (where && !w)) {
		hloi_free(msg);
		hloi_free(w);
		ctx->oom = 1;
		return;
	}
	diag *d = &ctx->diags[ctx->ndiags++];
	d->severity = sev;
	d->source = src;
	d->at = at;
	d->where = w;
	d->message = msg;
}

int diag_drop_warning(hloi_context *ctx, int src, loc at)
{
	for (size_t i = ctx->ndiags; i-- > 0;) {
		diag *d = &ctx->diags[i];
		if (d->severity != DIAG_WARNING || d->source != src || d->at.start != at.start ||
		    d->at.end != at.end)
			continue;
		hloi_free(d->where);
		hloi_free(d->message);
		memmove(d, d + 1, (ctx->ndiags - i - 1) * sizeof *d);
		ctx->ndiags--;
		return 1;
	}
	return 0;
}

void diag_emit(hloi_context *ctx, diag_severity sev, int src, loc at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	record(ctx, sev, src, at, NULL, fmt, ap);
	va_end(ap);
}

#define DEFINE_EMITTER(fn, sev)                                                    \
	void fn(hloi_context *ctx, int src, loc at, const char *fmt, ...)          \
	{                                                                          \
		va_list ap;                                                        \
		va_start(ap, fmt);                                                 \
		record(ctx, sev, src, at, NULL, fmt, ap);                          \
		va_end(ap);                                                        \
	}
DEFINE_EMITTER(diag_error, DIAG_ERROR)
DEFINE_EMITTER(diag_warning, DIAG_WARNING)
DEFINE_EMITTER(diag_note, DIAG_NOTE)

void diag_error_where(hloi_context *ctx, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	loc none = { 0, 0 };
	record(ctx, DIAG_ERROR, -1, none, where, fmt, ap);
	va_end(ap);
}

void diag_emit_where(hloi_context *ctx, diag_severity sev, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	loc none = { 0, 0 };
	record(ctx, sev, -1, none, where, fmt, ap);
	va_end(ap);
}

void hloi_context_error(hloi_context *ctx, const char *where, const char *message)
{
	diag_error_where(ctx, where, "%s", message);
}

void diag_line_col(const source *s, size_t off, size_t *line, size_t *col)
{
	if (off > s->len)
		off = s->len;
	size_t ln = 1, start = 0;
	for (size_t i = 0; i < off; i++) {
		if (s->text[i] == '\n') {
			ln++;
			start = i + 1;
		} else if (s->text[i] == '\r' && (i + 1 >= s->len || s->text[i + 1] != '\n')) {
			/* a lone CR ends a line too */
			ln++;
			start = i + 1;
		}
	}
	*line = ln;
	*col = off - start + 1;
}

static const char *sev_name(diag_severity s)
{
	switch (s) {
	case DIAG_ERROR: return "error";
	case DIAG_WARNING: return "warning";
	default: return "note";
	}
}

static const char *sev_color(diag_severity s)
{
	switch (s) {
	case DIAG_ERROR: return "\033[1;31m";
	case DIAG_WARNING: return "\033[1;35m";
	default: return "\033[1;36m";
	}
}

/* The file name without its directories. A `where` prefix may go on after
 * the file name (`dir/f.pb: computation 'a/b'`): only the part before the
 * first ": " is a path. */
static const char *base_name(const char *p)
{
	const char *end = strstr(p, ": ");
	const char *base = p;
	for (const char *q = p; *q && (!end || q < end); q++)
		if (*q == '/')
			base = q + 1;
	return base;
}

/* Lines longer than this are shown as a window of DIAG_WINDOW bytes around
 * the column (as GCC does), with "..." where they are cut. */
#define DIAG_LONG_LINE 200
#define DIAG_WINDOW 120

/* Appends the line holding `at` and a caret line marking [start, end) to
 * b. Tabs in the source are echoed in the caret line so the marks stay
 * aligned. `ls` and `le` are the line's start and end. */
static void excerpt(strbuf *b, const source *s, loc at, size_t ls, size_t le, int color)
{
	size_t off = at.start > s->len ? s->len : at.start;
	size_t from = ls, to = le;
	if (le - ls > DIAG_LONG_LINE) {
		from = off - ls > DIAG_WINDOW / 3 ? off - DIAG_WINDOW / 3 : ls;
		to = from + DIAG_WINDOW < le ? from + DIAG_WINDOW : le;
		if (to == le && le - ls >= DIAG_WINDOW)
			from = le - DIAG_WINDOW;
	}
	const char *cut_left = from > ls ? "..." : "", *cut_right = to < le ? "..." : "";
	sb_puts(b, cut_left);
	for (size_t i = from; i < to; i++) {
		char c = s->text[i];
		sb_putc(b, c == '\0' ? ' ' : c);
	}
	sb_puts(b, cut_right);
	sb_putc(b, '\n');
	for (size_t i = 0; i < strlen(cut_left); i++)
		sb_putc(b, ' ');
	for (size_t i = from; i < off; i++)
		sb_putc(b, s->text[i] == '\t' ? '\t' : ' ');
	if (color)
		sb_puts(b, "\033[1;32m");
	sb_putc(b, '^');
	size_t end = at.end < to ? at.end : to;
	for (size_t i = off + 1; i < end; i++)
		sb_putc(b, '~');
	if (color)
		sb_puts(b, "\033[0m");
	sb_putc(b, '\n');
}

/* Where the last diagnostic's line was found, so that diagnostics in
 * increasing order cost one pass over the source in all. */
typedef struct line_cursor {
	int source;
	size_t off, line, start;
} line_cursor;

/* Line, column and line start of `off` in s, scanning on from the cursor
 * when it is before `off` in the same source. */
static void locate(line_cursor *cur, int src, const source *s, size_t off, size_t *line, size_t *col,
		   size_t *start)
{
	if (off > s->len)
		off = s->len;
	size_t i = 0, ln = 1, st = 0;
	if (cur->source == src && cur->off <= off) {
		i = cur->off;
		ln = cur->line;
		st = cur->start;
	}
	for (; i < off; i++) {
		if (s->text[i] == '\n') {
			ln++;
			st = i + 1;
		} else if (s->text[i] == '\r' && (i + 1 >= s->len || s->text[i + 1] != '\n')) {
			/* a lone CR ends a line too */
			ln++;
			st = i + 1;
		}
	}
	cur->source = src;
	cur->off = off;
	cur->line = ln;
	cur->start = st;
	*line = ln;
	*col = off - st + 1;
	*start = st;
}

hloi_status hloi_context_print_diagnostics(hloi_context *ctx, FILE *f, unsigned flags)
{
	int color = (flags & HLOI_DIAG_COLOR) != 0;
	int base = (flags & HLOI_DIAG_BASENAME) != 0;
	line_cursor cur = { -1, 0, 1, 0 };
	strbuf b = STRBUF_INIT;
	int werr = 0;
	for (size_t i = 0; i < ctx->ndiags; i++) {
		const diag *d = &ctx->diags[i];
		const source *s = diag_source(ctx, d->source);
		sb_reset(&b);
		if (color)
			sb_puts(&b, "\033[1m");
		size_t line = 0, col = 0, ls = 0;
		if (s) {
			locate(&cur, d->source, s, d->at.start, &line, &col, &ls);
			sb_printf(&b, "%s:%zu:%zu: ", base ? base_name(s->name) : s->name, line, col);
		} else if (d->where) {
			sb_printf(&b, "%s: ", base ? base_name(d->where) : d->where);
		}
		if (color)
			sb_printf(&b, "%s%s:\033[0m\033[1m %s\033[0m\n", sev_color(d->severity), sev_name(d->severity),
				  d->message);
		else
			sb_printf(&b, "%s: %s\n", sev_name(d->severity), d->message);
		if (s) {
			size_t off = d->at.start > s->len ? s->len : d->at.start;
			size_t le = off;
			while (le < s->len && s->text[le] != '\n' && s->text[le] != '\r')
				le++;
			excerpt(&b, s, d->at, ls, le, color);
		}
		/* one write per diagnostic: stderr is unbuffered */
		if (b.oom)
			fputs("error: out of memory printing a diagnostic\n", f);
		else if (fwrite(sb_str(&b), 1, b.len, f) != b.len)
			werr = 1;
	}
	sb_free(&b);
	size_t dropped = ctx->nerrors > ctx->max_diags ? ctx->nerrors - ctx->max_diags : 0;
	if (ctx->oom)
		fputs("error: out of memory while recording diagnostics\n", f);
	else if (dropped)
		fprintf(f, "note: %zu more errors not shown\n", dropped);
	free_diags(ctx);
	ctx->oom = 0;
	return werr || ferror(f) ? HLOI_EIO : HLOI_OK;
}

size_t hloi_alloc_last_failure(void)
{
	return alloc_last_failure();
}

void hloi_set_memory_ceiling(uint64_t bytes)
{
	alloc_set_ceiling(bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes);
}

uint64_t hloi_memory_ceiling(void)
{
	return alloc_ceiling();
}

uint64_t hloi_memory_held(void)
{
	return alloc_live();
}

int hloi_alloc_failure_was_ceiling(void)
{
	return alloc_ceiling_hit();
}

uint64_t hloi_alloc_failure_held(void)
{
	return alloc_held_at_failure();
}

const char *hloi_status_name(hloi_status st)
{
	switch (st) {
	case HLOI_OK: return "ok";
	case HLOI_EPARSE: return "parse error";
	case HLOI_ETYPE: return "type error";
	case HLOI_EINVAL: return "invalid argument";
	case HLOI_EUNSUPPORTED: return "unsupported";
	case HLOI_ENOMEM: return "out of memory";
	case HLOI_EIO: return "I/O error";
	case HLOI_ESTOPPED: return "stopped";
	case HLOI_ECHECK: return "check failed";
	}
	return "unknown status";
}
