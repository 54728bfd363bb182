/* hloi layout: show how a shape's layout places its elements in memory —
 * strides, buffer size, and the linear order of the elements, padding
 * included (doc/sources.md B); for tiled layouts (XLA's T(...)) the shape at
 * every tile level and where one element lands in each. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"

static const char help[] =
	"usage: hloi layout SHAPE [--index I,J,...] [--linear N]\n"
	"\n"
	"Shows how SHAPE's layout (minor_to_major, padding, tiles) places its\n"
	"elements in the linear buffer: strides, buffer size, the memory order of\n"
	"the elements (labelled a, b, c, ... in row-major order for up to 26\n"
	"elements, by row-major position otherwise; padding shows its value), and\n"
	"the logical view. For a tiled layout (T(8,128)(2,1)) it shows the shape\n"
	"after each tile and the strides there (`-` where a later tile splits the\n"
	"dimension), and --index / --linear trace the element through every level.\n"
	"A shape without a layout gets the default {rank-1,...,0}.\n"
	"\n"
	"Options:\n"
	"  --index I,J,...   print the buffer position of one multi-index\n"
	"  --linear N        print the multi-index at buffer position N\n"
	"  --color WHEN      auto, always or never, for diagnostics\n"
	"  -h, --help        show this help\n"
	"\n"
	"Example:\n"
	"  hloi layout 'f32[2,3]{0,1:pad(3,5)}'\n"
	"  hloi layout 'bf16[5,300]{1,0:T(8,128)(2,1)}' --index 4,299\n";

typedef struct layout_args {
	const char *index;  /* --index I,J,... */
	const char *linear; /* --linear N */
} layout_args;

static const cli_opt options[] = {
	CLI_STRING_OPTION("index", layout_args, index),
	CLI_STRING_OPTION("linear", layout_args, linear),
	CLI_SHARED_OPTION("color", CLI_OPT_COLOR),
	CLI_OPTIONS_END,
};

enum { MAX_SHOWN = 4096, MAX_SHOWN_TILED = 1024, MAX_LINE = 64 };

static void print_list(FILE *f, const int64_t *v, int n, const char *open, const char *close)
{
	fputs(open, f);
	for (int i = 0; i < n; i++)
		fprintf(f, i ? ",%" PRId64 : "%" PRId64, v[i]);
	fputs(close, f);
}

/* `T(8,128)` (or `(8,128)` without the T) for tile t, into buf; returns
 * its length. */
static int tile_text(const hloi_shape *s, int t, char *buf, size_t size, int with_t)
{
	int64_t d[HLOI_MAX_RANK];
	int n = hloi_shape_tile(s, t, d);
	size_t len = 0;
	len += (size_t)snprintf(buf, size, with_t ? "T(" : "(");
	for (int i = 0; i < n && len < size; i++) {
		if (d[i] < 0)
			len += (size_t)snprintf(buf + len, size - len, i ? ",*" : "*");
		else
			len += (size_t)snprintf(buf + len, size - len, i ? ",%" PRId64 : "%" PRId64, d[i]);
	}
	if (len < size)
		len += (size_t)snprintf(buf + len, size - len, ")");
	return len < size ? (int)len : (int)size - 1;
}

/* `  T(8,128):` and blanks up to the value column. */
static void print_tile_label(FILE *f, const hloi_shape *s, int t)
{
	char label[HLOI_MAX_RANK * 22 + 4];
	int len = tile_text(s, t, label, sizeof label, 1);
	fprintf(f, "  %s:%*s", label, len < 13 ? 13 - len : 1, "");
}

/* Where dimension p of level `level` lands in the last level, or -1 when a
 * later tile splits or combines it. A later tile leaves a dimension alone
 * when it is more major than the dimensions the tile covers, or the tile's
 * entry for it is 1 (it then becomes a tile index, the within-tile index
 * being always 0). */
static int final_position(const hloi_shape *s, int level, int p)
{
	int ntiles = hloi_shape_tile_count(s);
	int64_t dims[HLOI_MAX_TILED_RANK], tl[HLOI_MAX_RANK];
	for (int m = level; m < ntiles; m++) {
		int n = hloi_shape_tiled_dims(s, m, dims), k = hloi_shape_tile(s, m, tl);
		int ext = k > n ? k - n : 0, base = n + ext - k;
		p += ext;
		if (p < base)
			continue;
		int j = p - base;
		if (tl[j] != 1 || (j > 0 && tl[j - 1] < 0))
			return -1;
		p = base;
		for (int i = 0; i < j; i++)
			p += tl[i] > 0;
	}
	return p;
}

/* The tiles, level by level: the shape before and after, the tile grid,
 * and the strides in the buffer of each dimension after the tile. */
static void print_tiling(FILE *f, const hloi_shape *s)
{
	int ntiles = hloi_shape_tile_count(s), rank = hloi_shape_rank(s);
	int64_t dims[HLOI_MAX_TILED_RANK], out[HLOI_MAX_TILED_RANK], fin[HLOI_MAX_TILED_RANK];
	int64_t fstride[HLOI_MAX_TILED_RANK];
	int nfin = hloi_shape_tiled_dims(s, ntiles, fin);
	int64_t scale = 1;
	for (int j = nfin - 1; j >= 0; j--) {
		fstride[j] = scale;
		scale *= fin[j];
	}
	fputs("tiles:          ", f);
	for (int t = 0; t < ntiles; t++) {
		char text[HLOI_MAX_RANK * 22 + 4];
		tile_text(s, t, text, sizeof text, t == 0);
		fputs(text, f);
	}
	fputc('\n', f);
	int n = hloi_shape_tiled_dims(s, 0, dims);
	fputs("  physical:     ", f);
	print_list(f, dims, n, "[", "]");
	fputs(" (dimensions ", f);
	for (int i = 0; i < rank; i++)
		fprintf(f, i ? ",%d" : "%d", hloi_shape_minor_to_major(s, rank - 1 - i));
	fputs(rank ? ", most major first)\n" : "none: a scalar)\n", f);
	for (int t = 0; t < ntiles; t++) {
		int64_t tl[HLOI_MAX_RANK];
		int k = hloi_shape_tile(s, t, tl);
		int m = hloi_shape_tiled_dims(s, t + 1, out);
		int kc = 0;
		for (int i = 0; i < k; i++)
			kc += tl[i] > 0;
		print_tile_label(f, s, t);
		print_list(f, dims, n, "[", "]");
		fputs(" -> ", f);
		print_list(f, out, m, "[", "]");
		fputs(": tiles ", f);
		int base = m - 2 * kc;
		print_list(f, out + base, kc, "[", "]");
		fputs(" of ", f);
		for (int i = 0; i < kc; i++)
			fprintf(f, i ? "x%" PRId64 : "%" PRId64, out[base + kc + i]);
		fputs(", strides [", f);
		for (int p = 0; p < m; p++) {
			int q = final_position(s, t + 1, p);
			if (p)
				fputc(',', f);
			if (q >= 0)
				fprintf(f, "%" PRId64, fstride[q]);
			else
				fputc('-', f);
		}
		fputs("]\n", f);
		memcpy(dims, out, (size_t)m * sizeof *dims);
		n = m;
	}
}

/* The first nonzero coordinate. */
static int first_term(const int64_t *c, int n)
{
	for (int j = 0; j < n; j++)
		if (c[j])
			return j;
	return n;
}

/* Where buffer position `lin` lies at every tile level; `outside`: the
 * position has no physical coordinates (padding of a tile longer than the
 * shape). */
static void print_trace(FILE *f, const hloi_shape *s, int64_t lin, int outside)
{
	int ntiles = hloi_shape_tile_count(s);
	int64_t c[HLOI_MAX_TILED_RANK], d[HLOI_MAX_TILED_RANK];
	for (int level = 0; level <= ntiles; level++) {
		int n = hloi_shape_tiled_coords(s, lin, level, c);
		int m = hloi_shape_tiled_dims(s, level, d);
		if (n < 0 || m != n)
			return;
		if (level == 0 && outside) {
			fputs("  physical:     none: outside ", f);
			print_list(f, d, n, "[", "]\n");
			continue;
		}
		if (level == 0)
			fputs("  physical:     ", f);
		else
			print_tile_label(f, s, level - 1);
		print_list(f, c, n, "(", ")");
		fputs(" in ", f);
		print_list(f, d, n, "[", "]");
		fputc('\n', f);
		if (level == ntiles) {
			/* the position as the sum of coordinate times stride */
			int64_t scale = 1, st[HLOI_MAX_TILED_RANK];
			for (int j = n - 1; j >= 0; j--) {
				st[j] = scale;
				scale *= d[j];
			}
			fprintf(f, "  linear:       %" PRId64, lin);
			int terms = 0, plain = 0;
			for (int j = 0; j < n; j++) {
				terms += c[j] != 0;
				plain += c[j] != 0 && st[j] == 1;
			}
			if (terms == 1 && plain == 1)
				terms = 0; /* `5 = 5` says nothing */
			for (int j = 0; j < n && terms; j++) {
				if (!c[j])
					continue;
				fputs(j == first_term(c, n) ? " = " : " + ", f);
				if (st[j] == 1)
					fprintf(f, "%" PRId64, c[j]);
				else
					fprintf(f, "%" PRId64 "*%" PRId64, c[j], st[j]);
			}
			fputc('\n', f);
		}
	}
}

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

/* The memory order of a tiled buffer, in lines the size of the first
 * tile (at most MAX_LINE positions), when it is small enough to read. */
static void print_tiled_order(FILE *f, const hloi_shape *s, int64_t buffer, int letters, const char *padval)
{
	if (buffer > MAX_SHOWN_TILED) {
		fprintf(f, "memory order:   not shown (%" PRId64 " positions); give --index I,J,... or --linear N\n",
			buffer);
		return;
	}
	int64_t tl[HLOI_MAX_RANK], width = 1;
	int k = hloi_shape_tile(s, 0, tl);
	for (int i = 0; i < k; i++)
		width *= tl[i] > 0 ? tl[i] : 1;
	char label[HLOI_MAX_RANK * 22 + 4];
	tile_text(s, 0, label, sizeof label, 1);
	if (width > MAX_LINE) {
		width = MAX_LINE;
		fprintf(f, "memory order:   (lines of %" PRId64 " positions)\n", width);
	} else {
		fprintf(f, "memory order:   (lines of %" PRId64 " positions, the size of a %s tile)\n", width, label);
	}
	int digits = 1;
	for (int64_t v = buffer - 1; v >= 10; v /= 10)
		digits++;
	int64_t idx[HLOI_MAX_RANK];
	for (int64_t lin = 0; lin < buffer; lin++) {
		if (lin % width == 0)
			fprintf(f, "%s  %*" PRId64 ":", lin ? "\n" : "", digits, lin);
		int pad;
		hloi_shape_linear_to_index(s, lin, idx, &pad);
		fputc(' ', f);
		if (pad)
			fprintf(f, letters ? "%s" : "[%s]", padval);
		else
			print_label(f, row_major(s, idx), letters);
	}
	fputc('\n', f);
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
	layout_args a = { NULL, NULL };
	cli_parser p = { "layout", help, options, io, &a, NULL, NULL, NULL };
	int e = cli_parse_options(&p, argc, argv);
	if (e)
		return e < 0 ? EXIT_OK : e;
	const char *index_text = a.index, *linear_text = a.linear, *shape_text = NULL;
	e = cli_one_operand(argc, argv, io, "layout", "SHAPE", &shape_text);
	if (e)
		return e;
	if (index_text && linear_text)
		return cli_usage_error(io, "layout", "give --index or --linear, not both");

	hloi_context *ctx = NULL;
	hloi_shape *s = NULL;
	int rc = EXIT_OK;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		fputs("hloi: out of memory\n", io->err);
		return EXIT_RUNTIME;
	}
	hloi_status st = hloi_shape_parse(&s, ctx, "<shape>", shape_text);
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
	int tiled = hloi_shape_tile_count(s) > 0;
	if (index_text) {
		int64_t lin;
		if (parse_index(index_text, s, idx) || hloi_shape_index_to_linear(s, idx, &lin) != HLOI_OK) {
			rc = cli_usage_error(io, "layout", "invalid --index '%s' for this shape", index_text);
			goto cleanup;
		}
		fputs("index ", f);
		print_index(f, idx, rank);
		fprintf(f, " -> linear %" PRId64 "\n", lin);
		if (tiled)
			print_trace(f, s, lin, 0);
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
		fprintf(f, "linear %" PRId64 " -> ", lin);
		if (pad == 2) {
			fprintf(f, "tail padding (L(%" PRId64 ") rounds the buffer up to a multiple of %" PRId64
				   " elements)\n",
				hloi_shape_tail_padding_alignment(s), hloi_shape_tail_padding_alignment(s));
		} else if (pad == 3) {
			fputs("padding (outside the array: a tile longer than the shape adds leading dimensions)\n", f);
		} else {
			fputs(pad ? "padding at index " : "index ", f);
			print_index(f, idx, rank);
			fputc('\n', f);
		}
		if (tiled && pad != 2)
			print_trace(f, s, lin, pad == 3);
		goto cleanup;
	}

	char text[1024];
	if (!hloi_shape_to_string(s, 1, text, sizeof text)) {
		fputs("hloi layout: out of memory\n", io->err);
		rc = EXIT_RUNTIME;
		goto cleanup;
	}
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
	if (tiled) {
		print_tiling(f, s);
		fputs("strides:        none per dimension: the tiles place the elements (strides above)\n", f);
	} else {
		fputs("strides:        [", f);
		for (int d = 0; d < rank; d++)
			fprintf(f, d ? ",%" PRId64 : "%" PRId64, hloi_shape_stride(s, d));
		fputs("] (in elements)\n", f);
	}
	int64_t align = hloi_shape_tail_padding_alignment(s), bits = hloi_shape_element_bits(s);
	if (align > 1)
		fprintf(f, "tail padding:   the buffer is a multiple of %" PRId64 " elements (L(%" PRId64 "))\n", align,
			align);
	char type[32];
	snprintf(type, sizeof type, "%.*s", (int)strcspn(text, "["), text);
	int64_t written = hloi_shape_element_size_in_bits(s);
	if (written && written != bits)
		fprintf(f, "element size:   %" PRId64 " bits (E(%" PRId64 "), the type's width: XLA packs such device "
			   "buffers; hloi holds the values one per byte, as XLA's literals do)\n",
			written, written);
	else if (bits != 8 * hloi_shape_element_bytes(s))
		fprintf(f, "element size:   %" PRId64 " bits (E(%" PRId64 ")), packed; hloi evaluates %s in %" PRId64
			   " bits, so programs with this layout are refused\n",
			bits, bits, type, 8 * hloi_shape_element_bytes(s));
	else if (text[0] && strstr(text, "E("))
		fprintf(f, "element size:   %" PRId64 " bits (E(%" PRId64 "), the type's own)\n", bits, bits);
	if (hloi_shape_memory_space(s))
		fprintf(f, "memory space:   %" PRId64 " (S(%" PRId64 "); evaluation does not depend on it)\n",
			hloi_shape_memory_space(s), hloi_shape_memory_space(s));
	fprintf(f, "buffer:         %" PRId64 " elements, %" PRId64 " bytes (%" PRId64 " logical elements)\n",
		buffer, hloi_shape_byte_size(s), count);

	int letters = count <= 26;
	if (tiled) {
		print_tiled_order(f, s, buffer, letters, padval);
	} else {
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
	}
	if (tiled && buffer > MAX_SHOWN_TILED)
		fputs("logical view:\n  (not shown with the memory order)\n", f);
	else
		print_logical(f, s, letters, count);
cleanup:
	hloi_shape_free(s);
	hloi_context_free(ctx);
	return rc;
}
