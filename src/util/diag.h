/* Diagnostics: the context that collects errors, warnings and notes with
 * their source locations. Locations are byte offsets into a registered source
 * text; line and column are computed only when a diagnostic is printed
 * (jq's locfile). */
#ifndef HLOI_UTIL_DIAG_H
#define HLOI_UTIL_DIAG_H

#include <stddef.h>

#include "hloi.h"

/* A span of bytes [start, end) in a source text. */
typedef struct loc {
	size_t start, end;
} loc;

typedef enum diag_severity { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } diag_severity;

typedef struct diag {
	diag_severity severity;
	int source;    /* index into ctx->sources, or -1 for no location */
	loc at;
	char *where;   /* prefix when there is no location (a file name, ...) */
	char *message;
} diag;

typedef struct source {
	char *name;
	char *text;
	size_t len;
} source;

struct hloi_context {
	diag *diags;
	size_t ndiags, cap;
	size_t nerrors;
	size_t max_diags;  /* further diagnostics are counted but not kept */
	source *sources;
	size_t nsources;
	int oom;           /* a diagnostic could not be recorded */
};

/* Registers a source text (copied) and returns its id, or -1 when out of
 * memory (ctx->oom is then set). */
int diag_add_source(hloi_context *ctx, const char *name, const char *text, size_t len);
/* As diag_add_source, taking `text` (hloi_malloc'd, NUL at text[len])
 * instead of copying it; it is freed on failure. */
int diag_add_source_take(hloi_context *ctx, const char *name, char *text, size_t len);
/* The registered source, or NULL. */
const source *diag_source(const hloi_context *ctx, int id);

#if defined(__GNUC__)
#define DIAG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DIAG_PRINTF(a, b)
#endif

/* Records a diagnostic at `at` in source `src` (src < 0: no location). */
void diag_emit(hloi_context *ctx, diag_severity sev, int src, loc at, const char *fmt, ...)
	DIAG_PRINTF(5, 6);
void diag_error(hloi_context *ctx, int src, loc at, const char *fmt, ...) DIAG_PRINTF(4, 5);
void diag_warning(hloi_context *ctx, int src, loc at, const char *fmt, ...) DIAG_PRINTF(4, 5);
void diag_note(hloi_context *ctx, int src, loc at, const char *fmt, ...) DIAG_PRINTF(4, 5);
/* An error without a source location, printed as `where: error: message`
 * (`where` may be NULL: then `error: message`). */
void diag_error_where(hloi_context *ctx, const char *where, const char *fmt, ...)
	DIAG_PRINTF(3, 4);

/* A diagnostic of any severity without a source location. */
void diag_emit_where(hloi_context *ctx, diag_severity sev, const char *where, const char *fmt, ...)
	DIAG_PRINTF(4, 5);

/* Line (1-based) and column (1-based, in bytes) of an offset. */
/* Removes the last warning recorded at exactly `at` in source `src` (an
 * error about the same thing replaces it); returns 1 when there was one. */
int diag_drop_warning(hloi_context *ctx, int src, loc at);
void diag_line_col(const source *s, size_t off, size_t *line, size_t *col);

#endif
