/* Helpers shared by the commands: exit codes, colour, usage errors, option
 * values. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_exit_code(hloi_status st)
{
	switch (st) {
	case HLOI_OK:
		return EXIT_OK;
	case HLOI_EPARSE:
	case HLOI_ETYPE:
	case HLOI_EINVAL:
	case HLOI_EUNSUPPORTED:
		return EXIT_INVALID;
	case HLOI_ECHECK:
		return EXIT_MISMATCH;
	case HLOI_ENOMEM:
	case HLOI_EIO:
	case HLOI_ESTOPPED:
		return EXIT_RUNTIME;
	}
	return EXIT_RUNTIME;
}

int cli_set_color(cli_io *io, const char *when)
{
	int color;
	if (strcmp(when, "always") == 0) {
		color = 1;
	} else if (strcmp(when, "never") == 0) {
		color = 0;
	} else if (strcmp(when, "auto") == 0) {
		const char *no = getenv("NO_COLOR");
		const char *term = getenv("TERM");
		color = !io->in_test && io->err_tty && !(no && *no) &&
			!(term && strcmp(term, "dumb") == 0);
	} else {
		return -1;
	}
	if (color)
		io->diag_flags |= HLOI_DIAG_COLOR;
	else
		io->diag_flags &= ~(unsigned)HLOI_DIAG_COLOR;
	return 0;
}

int cli_usage_error(cli_io *io, const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(io->err, "hloi%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	vfprintf(io->err, fmt, ap);
	fprintf(io->err, "\nTry 'hloi %s%s--help' for more information.\n", cmd ? cmd : "", cmd ? " " : "");
	va_end(ap);
	return EXIT_USAGE;
}

void cli_print_diagnostics(cli_io *io, hloi_context *ctx)
{
	hloi_context_print_diagnostics(ctx, io->err, io->diag_flags);
}

int cli_parse_format(const char *s, hloi_format *out)
{
	if (strcmp(s, "hlo") == 0)
		*out = HLOI_FORMAT_HLO;
	else if (strcmp(s, "pb") == 0)
		*out = HLOI_FORMAT_PB;
	else if (strcmp(s, "pbtxt") == 0)
		*out = HLOI_FORMAT_PBTXT;
	else if (strcmp(s, "mlir") == 0)
		*out = HLOI_FORMAT_MLIR;
	else if (strcmp(s, "auto") == 0)
		*out = HLOI_FORMAT_AUTO;
	else
		return -1;
	return 0;
}

int cli_parse_int(const char *s, int64_t *out)
{
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	uint64_t mul = 1;
	if (*end == 'K' || *end == 'k')
		mul = 1024;
	else if (*end == 'M' || *end == 'm')
		mul = 1024 * 1024;
	else if (*end == 'G' || *end == 'g')
		mul = 1024ull * 1024 * 1024;
	else if (*end)
		return -1;
	if (mul != 1 && end[1])
		return -1;
	if (v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

void cli_set_budget(uint64_t budget)
{
	uint64_t ceiling = budget + HLOI_MEMORY_SLACK;
	hloi_set_memory_ceiling(ceiling < budget ? UINT64_MAX : ceiling);
}

int cli_module_printable(const hloi_module *m, cli_io *io, const char *cmd)
{
	const char *comp, *name;
	const hloi_literal *value;
	uint64_t total = hloi_module_empty_subarrays(m, &comp, &name, &value);
	if (total <= HLOI_PRINT_MAX_EMPTY_SUBARRAYS)
		return 1;
	uint64_t most = hloi_literal_empty_subarrays(value);
	const hloi_shape *s = hloi_literal_shape(value);
	size_t len = hloi_shape_to_string(s, 0, NULL, 0);
	char *text = malloc(len + 1);
	if (text)
		hloi_shape_to_string(s, 0, text, len + 1);
	if (most > HLOI_PRINT_MAX_EMPTY_SUBARRAYS)
		fprintf(io->err,
			"hloi %s: cannot print constant '%s' (%s) in computation '%s' as text: %" PRIu64
			" empty sub-arrays (the limit is %u)\n",
			cmd, name, text ? text : "?", comp, most, HLOI_PRINT_MAX_EMPTY_SUBARRAYS);
	else
		fprintf(io->err,
			"hloi %s: cannot print the program as text: its constants hold %" PRIu64
			" empty sub-arrays (the limit is %u), %" PRIu64 " of them in constant '%s' (%s) in computation '%s'\n",
			cmd, total, HLOI_PRINT_MAX_EMPTY_SUBARRAYS, most, name, text ? text : "?", comp);
	free(text);
	return 0;
}

int cli_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* `path` for participant p: r.npy -> r.p1.npy (r -> r.p1). */
char *cli_participant_path(const char *path, size_t p)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	size_t stem = dot && (!slash || dot > slash + 1) && dot != path ? (size_t)(dot - path) : strlen(path);
	size_t len = strlen(path) + 32;
	char *out = malloc(len);
	if (out)
		snprintf(out, len, "%.*s.p%zu%s", (int)stem, path, p, path + stem);
	return out;
}

