/* hloi layout: show how a shape's layout places its elements in memory —
 * strides, buffer size, and the linear order of the elements, padding
 * included (SOURCES.md B). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
	"usage: hloi layout SHAPE [--index I,J,...] [--linear N]\n"
	"\n"
	"Shows how SHAPE's layout (minor_to_major, padding) places its elements\n"
	"in the linear buffer: strides, buffer size, the memory order of the\n"
	"elements (labelled a, b, c, ... in row-major order for up to 26 elements,\n"
	"by row-major position otherwise; padding shows its value), and the\n"
	"logical view. A shape without a layout gets the default {rank-1,...,0}.\n"
	"\n"
	"Options:\n"
	"  --index I,J,...   print the buffer position of one multi-index\n"
	"  --linear N        print the multi-index at buffer position N\n"
	"  --color WHEN      auto, always or never, for diagnostics\n"
	"  -h, --help        show this help\n"
	"\n"
	"Example:\n"
	"  hloi layout 'f32[2,3]{0,1:pad(3,5)}'\n";

enum { OPT_INDEX = 256, OPT_LINEAR };

static const struct option options[] = {
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "linear", required_argument, NULL, OPT_LINEAR },
	{ "color", required_argument, NULL, CLI_OPT_COLOR },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

enum { MAX_SHOWN = 4096 };

static void print_index(FILE *f, const int64_t *idx, int rank)
{
	fputc('(', f);
	for (int d = 0; d < rank; d++)
		fprintf(f, d ? ",%" PRId64 : "%" PRId64, idx[d]);
	fputc(')', f);
}

/* Row-major position of a logical multi-index. */
static int64_t row_major(const hloi_shape *s, const int64_t *idx)
{
	int64_t pos = 0;
	for (int d = 0; d < hloi_shape_rank(s); d++)
		pos = pos * hloi_shape_dim(s, d) + idx[d];
	return pos;
}

static void print_label(FILE *f, int64_t pos, int letters)
{
	if (letters)
		fputc('a' + (int)pos, f);
	else
		fprintf(f, "%" PRId64, pos);
}

static void print_logical(FILE *f, const hloi_shape *s, int letters, int64_t count)
{
	int rank = hloi_shape_rank(s);
	fputs("logical view:\n", f);
	if (count == 0) {
		fputs("  (no elements)\n", f);
		return;
	}
	if (count > MAX_SHOWN) {
		fputs("  (too many elements to show)\n", f);
		return;
	}
	if (rank == 0) {
		fputs("  ", f);
		print_label(f, 0, letters);
		fputc('\n', f);
		return;
	}
	int64_t cols = hloi_shape_dim(s, rank - 1);
	int64_t rows = rank >= 2 ? hloi_shape_dim(s, rank - 2) : 1;
	int64_t slice = rows * cols;
	int64_t idx[HLOI_MAX_RANK];
	for (int64_t base = 0; base < count; base += slice) {
		if (rank >= 3) {
			/* the leading indices of this 2-D slice */
			int64_t rest = base / slice;
			for (int d = rank - 3; d >= 0; d--) {
				idx[d] = rest % hloi_shape_dim(s, d);
				rest /= hloi_shape_dim(s, d);
			}
			fputc('[', f);
			for (int d = 0; d < rank - 2; d++)
				fprintf(f, "%" PRId64 ", ", idx[d]);
			fputs(":, :]\n", f);
		}
		for (int64_t r = 0; r < rows; r++) {
			fputs(" ", f);
			for (int64_t c = 0; c < cols; c++) {
				fputc(' ', f);
				print_label(f, base + r * cols + c, letters);
			}
			fputc('\n', f);
		}
	}
}

static int parse_index(const char *text, const hloi_shape *s, int64_t *idx)
{
	int rank = hloi_shape_rank(s);
	const char *p = text;
	int n = 0;
	if (rank == 0)
		return *text ? -1 : 0;
	while (*p) {
		char *end;
		if (n >= rank || !(*p >= '0' && *p <= '9'))
			return -1;
		idx[n++] = strtoll(p, &end, 10);
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return n == rank ? 0 : -1;
}

int cmd_layout(int argc, char **argv, cli_io *io)
{
	const char *index_text = NULL, *linear_text = NULL;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (c) {
		case OPT_INDEX:
			index_text = optarg;
			break;
		case OPT_LINEAR:
			linear_text = optarg;
			break;
		case CLI_OPT_COLOR:
		{
			int e = cli_common_option(c, optarg, io, "layout", NULL, NULL, NULL);
			if (e)
				return e;
			break;
		}
		case 'h':
			fputs(help, io->out);
			return EXIT_OK;
		default:
			return cli_bad_option(c, argv, io, "layout");
		}
	}
	if (optind >= argc)
		return cli_usage_error(io, "layout", "missing SHAPE");
	if (optind + 1 < argc)
		return cli_usage_error(io, "layout", "unexpected argument '%s'", argv[optind + 1]);
	if (index_text && linear_text)
		return cli_usage_error(io, "layout", "give --index or --linear, not both");

	hloi_context *ctx = NULL;
	hloi_shape *s = NULL;
	int rc = EXIT_OK;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	hloi_status st = hloi_shape_parse(&s, ctx, "<shape>", argv[optind]);
	cli_print_diagnostics(io, ctx);
	if (st != HLOI_OK) {
		rc = cli_exit_code(st);
		goto cleanup;
	}
	int rank = hloi_shape_rank(s);
	if (rank < 0) {
		rc = cli_usage_error(io, "layout", "a tuple shape has no single layout; give an array shape");
		goto cleanup;
	}
	FILE *f = io->out;
	int64_t idx[HLOI_MAX_RANK];
	int64_t buffer = hloi_shape_buffer_elements(s);
	int64_t count = hloi_shape_element_count(s);
	if (index_text) {
		int64_t lin;
		if (parse_index(index_text, s, idx) || hloi_shape_index_to_linear(s, idx, &lin) != HLOI_OK) {
			rc = cli_usage_error(io, "layout", "invalid --index '%s' for this shape", index_text);
			goto cleanup;
		}
		fputs("index ", f);
		print_index(f, idx, rank);
		fprintf(f, " -> linear %" PRId64 "\n", lin);
		goto cleanup;
	}
	if (linear_text) {
		int64_t lin;
		int pad;
		if (cli_parse_int(linear_text, &lin) || hloi_shape_linear_to_index(s, lin, idx, &pad) != HLOI_OK) {
			rc = cli_usage_error(io, "layout", "invalid --linear '%s' (the buffer has %" PRId64 " elements)",
					     linear_text, buffer);
			goto cleanup;
		}
		fprintf(f, "linear %" PRId64 " -> %s", lin, pad ? "padding at index " : "index ");
		print_index(f, idx, rank);
		fputc('\n', f);
		goto cleanup;
	}

	char text[1024];
	hloi_shape_to_string(s, 1, text, sizeof text);
	fprintf(f, "shape:          %s\n", text);
	fputs("minor_to_major: {", f);
	for (int i = 0; i < rank; i++)
		fprintf(f, i ? ",%d" : "%d", hloi_shape_minor_to_major(s, i));
	fputc('}', f);
	if (rank > 0)
		fprintf(f, " (dimension %d is most minor)", hloi_shape_minor_to_major(s, 0));
	fputc('\n', f);
	char padval[64];
	hloi_shape_padding_value_to_string(s, padval, sizeof padval);
	if (hloi_shape_has_padding(s)) {
		fputs("padding:        padded to [", f);
		for (int d = 0; d < rank; d++)
			fprintf(f, d ? ",%" PRId64 : "%" PRId64, hloi_shape_padded_dim(s, d));
		fprintf(f, "], padding value %s\n", padval);
	} else {
		fputs("padding:        none\n", f);
	}
	fputs("strides:        [", f);
	for (int d = 0; d < rank; d++)
		fprintf(f, d ? ",%" PRId64 : "%" PRId64, hloi_shape_stride(s, d));
	fputs("] (in elements)\n", f);
	fprintf(f, "buffer:         %" PRId64 " elements, %" PRId64 " bytes (%" PRId64 " logical elements)\n",
		buffer, buffer * hloi_shape_element_bytes(s), count);

	int letters = count <= 26;
	fputs("memory order:  ", f);
	for (int64_t lin = 0; lin < buffer && lin < MAX_SHOWN; lin++) {
		int pad;
		hloi_shape_linear_to_index(s, lin, idx, &pad);
		fputc(' ', f);
		if (pad)
			fprintf(f, letters ? "%s" : "[%s]", padval);
		else
			print_label(f, row_major(s, idx), letters);
	}
	if (buffer > MAX_SHOWN)
		fputs(" ...", f);
	fputc('\n', f);
	print_logical(f, s, letters, count);
cleanup:
	hloi_shape_free(s);
	hloi_context_free(ctx);
	return rc;
}
