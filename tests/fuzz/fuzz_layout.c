/* Fuzz target: a shape with its layout, as `hloi layout` takes it (a
 * .shape case: leading `//` lines skipped, the rest trimmed). The parsed
 * shape prints as text that parses to a shape printing the same; buffer
 * positions and multi-indices convert back and forth; and `hloi layout`
 * itself runs on it: plainly, with --linear at the buffer's first, middle,
 * last and one-past-the-end positions, and with --index at the first and
 * last elements. */
#include <inttypes.h>

#include "fuzz_cli.h"

#define FUZZ_MAX_SHAPE 4096

/* The shape text of the input (NUL-terminated in buf), or NULL when too
 * long. */
static char *shape_text(const uint8_t *data, size_t size, char *buf)
{
	size_t i = 0;
	while (i + 1 < size && data[i] == '/' && data[i + 1] == '/') {
		while (i < size && data[i] != '\n')
			i++;
		if (i < size)
			i++;
	}
	while (i < size && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r'))
		i++;
	size_t n = size - i;
	while (n && (data[i + n - 1] == ' ' || data[i + n - 1] == '\n' || data[i + n - 1] == '\t' ||
		     data[i + n - 1] == '\r'))
		n--;
	if (n >= FUZZ_MAX_SHAPE)
		return NULL;
	memcpy(buf, data + i, n);
	buf[n] = '\0';
	return buf;
}

/* Runs `hloi layout SHAPE [OPTION VALUE]`. */
static void run_layout(char *shape_arg, const char *option, const char *value)
{
	char cmd[] = "layout", opt[32], val[HLOI_MAX_RANK * 24 + 32];
	char *argv[5] = { cmd, NULL, NULL, NULL, NULL };
	int argc = 1;
	cli_io io = fuzz_cli_io();

	if (option) {
		snprintf(opt, sizeof opt, "%s", option);
		snprintf(val, sizeof val, "%s", value);
		argv[argc++] = opt;
		argv[argc++] = val;
	}
	argv[argc++] = shape_arg;
	int rc = cmd_layout(argc, argv, &io);
	if (rc != EXIT_OK && rc != EXIT_USAGE && rc != EXIT_INVALID && rc != EXIT_RUNTIME) {
		fprintf(stderr, "fuzz: hloi layout exited %d\n", rc);
		abort();
	}
}

/* The shape's text printed with its layout parses to a shape printing the
 * same text. */
static void round_trip(const hloi_shape *s, hloi_context *ctx)
{
	char a[FUZZ_MAX_SHAPE * 2], b[FUZZ_MAX_SHAPE * 2];
	size_t na = hloi_shape_to_string(s, 1, a, sizeof a);
	if (na == 0 || na >= sizeof a)
		return;
	hloi_shape *s2 = NULL;
	hloi_status st = hloi_shape_parse(&s2, ctx, "printed", a);
	fuzz_check_status(ctx, st, s2);
	if (st != HLOI_OK && st != HLOI_ENOMEM) {
		fprintf(stderr, "fuzz: the printed shape '%s' does not parse\n", a);
		hloi_context_print_diagnostics(ctx, stderr, HLOI_DIAG_BASENAME);
		abort();
	}
	if (st == HLOI_OK) {
		size_t nb = hloi_shape_to_string(s2, 1, b, sizeof b);
		if (nb != na || strcmp(a, b) != 0) {
			fprintf(stderr, "fuzz: the shape '%s' prints as '%s' once parsed\n", a, b);
			abort();
		}
	}
	hloi_shape_free(s2);
}

/* Position `lin` of the buffer gives back `lin` through its index, when it
 * is an element. */
static void linear_round_trip(const hloi_shape *s, int64_t lin)
{
	int64_t idx[HLOI_MAX_RANK], back;
	int pad;
	if (hloi_shape_linear_to_index(s, lin, idx, &pad) != HLOI_OK) {
		fprintf(stderr, "fuzz: position %" PRId64 " of a buffer of %" PRId64 " has no index\n", lin,
			hloi_shape_buffer_elements(s));
		abort();
	}
	if (pad)
		return;
	if (hloi_shape_index_to_linear(s, idx, &back) != HLOI_OK || back != lin) {
		fprintf(stderr, "fuzz: position %" PRId64 " comes back as %" PRId64 "\n", lin, back);
		abort();
	}
}

/* `idx` formatted as --index takes it. */
static void index_text(const hloi_shape *s, const int64_t *idx, char *buf, size_t size)
{
	int rank = hloi_shape_rank(s);
	size_t n = 0;
	buf[0] = '\0';
	for (int d = 0; d < rank && n < size; d++)
		n += (size_t)snprintf(buf + n, size - n, d ? ",%" PRId64 : "%" PRId64, idx[d]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[FUZZ_MAX_SHAPE], num[32], idx_text[HLOI_MAX_RANK * 24 + 1];
	hloi_context *ctx = NULL;
	hloi_shape *s = NULL;

	if (!shape_text(data, size, text) || hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = hloi_shape_parse(&s, ctx, "fuzz.shape", text);
	fuzz_check_status(ctx, st, s);
	fuzz_flush(ctx);
	run_layout(text, NULL, NULL);
	if (st != HLOI_OK || hloi_shape_rank(s) < 0)
		goto cleanup;
	round_trip(s, ctx);
	fuzz_flush(ctx);
	int64_t buffer = hloi_shape_buffer_elements(s), count = hloi_shape_element_count(s);
	int rank = hloi_shape_rank(s);
	if (buffer > 0) {
		int64_t probes[3] = { 0, buffer / 2, buffer - 1 };
		for (int i = 0; i < 3; i++) {
			linear_round_trip(s, probes[i]);
			snprintf(num, sizeof num, "%" PRId64, probes[i]);
			run_layout(text, "--linear", num);
		}
	}
	snprintf(num, sizeof num, "%" PRId64, buffer);
	run_layout(text, "--linear", num);
	if (count > 0) {
		int64_t idx[HLOI_MAX_RANK], lin;
		for (int last = 0; last < 2; last++) {
			for (int d = 0; d < rank; d++)
				idx[d] = last ? hloi_shape_dim(s, d) - 1 : 0;
			if (hloi_shape_index_to_linear(s, idx, &lin) != HLOI_OK) {
				fprintf(stderr, "fuzz: an index within the shape has no position\n");
				abort();
			}
			linear_round_trip(s, lin);
			index_text(s, idx, idx_text, sizeof idx_text);
			run_layout(text, "--index", idx_text);
		}
	}
cleanup:
	fuzz_flush(ctx);
	hloi_shape_free(s);
	hloi_context_free(ctx);
	return 0;
}
