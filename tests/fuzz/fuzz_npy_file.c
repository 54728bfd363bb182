/* Fuzz target: .npy bytes saved as a file, then the streaming paths of the
 * command line: npy_read (the header, then the data straight into the
 * literal) must agree with npy_parse on the same bytes (both fail, or both
 * give the same values); npy_write must write exactly the bytes
 * npy_serialize makes; `--input FILE.npy` (inputs_load, against a
 * parameter of the value's shape) must read the same values; `--output`
 * (output_write) as .npy must read back as the same values, and as text
 * must be written (or refused for its size, as the printer refuses). */
#include "cli/inputs.h"
#include "cli/output.h"
#include "fuzz_cli.h"
#include "io/npy.h"
#include "util/alloc.h"

/* The budget --input files are read under (inputs_load). */
#define FUZZ_NPY_MAX_MEMORY (64u << 20)

/* `a` and `b` hold the same values (types, dimensions, elements; NaN
 * equal to NaN), else abort saying what `what` compared. */
static void same_values(const hloi_literal *a, const hloi_literal *b, hloi_context *ctx, const char *what)
{
	size_t bad = 0;
	hloi_status st = hloi_literal_compare(a, b, ctx, 0, 0, stderr, 10, &bad);
	if (st != HLOI_OK || bad) {
		fprintf(stderr, "fuzz: %s: the values differ (status %d, %zu elements)\n", what, (int)st, bad);
		abort();
	}
}

/* A status of a reader or writer that may differ between two of them: the
 * memory budget. */
static int budget(hloi_status st)
{
	return st == HLOI_ENOMEM;
}

/* `--input PATH` for a program of one parameter of `lit`'s shape. */
static void through_inputs(const hloi_literal *lit, const char *path, hloi_context *ctx)
{
	char dims[1024], text[1200];
	if (!hloi_shape_to_string(hloi_literal_shape(lit), 0, dims, sizeof dims) || strlen(dims) >= 1000)
		return;
	int n = snprintf(text, sizeof text, "HloModule m\n\nENTRY e {\n  ROOT p = %s parameter(0)\n}\n", dims);
	hloi_module *m = NULL;
	hloi_literal **in = NULL;
	size_t nin = 0;
	cli_io io = fuzz_cli_io();
	if (hloi_module_parse(&m, ctx, "param.hlo", text, (size_t)n) != HLOI_OK ||
	    hloi_module_check(m, ctx, NULL) != HLOI_OK) {
		fuzz_flush(ctx);
		hloi_module_free(m);
		return;
	}
	input_args a;
	memset(&a, 0, sizeof a);
	const char *files[1] = { path };
	a.files = files;
	a.nfiles = 1;
	int rc = inputs_load(&in, &nin, &a, m, ctx, FUZZ_NPY_MAX_MEMORY, 0, "param.hlo", &io, "run");
	if (rc == EXIT_OK) {
		if (nin != 1) {
			fprintf(stderr, "fuzz: --input gave %zu inputs for one parameter\n", nin);
			abort();
		}
		same_values(lit, in[0], ctx, "--input");
		inputs_free(in, nin);
	} else if (rc != EXIT_RUNTIME) {
		fprintf(stderr, "fuzz: --input of a value npy_read read failed with exit %d\n", rc);
		hloi_context_print_diagnostics(ctx, stderr, HLOI_DIAG_BASENAME);
		abort();
	}
	fuzz_flush(ctx);
	hloi_module_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	hloi_literal *parsed = NULL, *read = NULL, *back = NULL;
	unsigned char *bytes = NULL, *written = NULL;
	size_t len = 0, wlen = 0;
	const char *in_path = fuzz_scratch_path(0, "in.npy");
	const char *out_path = fuzz_scratch_path(1, "out.npy");
	const char *cli_npy = fuzz_scratch_path(2, "cli.npy");
	const char *cli_txt = fuzz_scratch_path(3, "cli.txt");

	if (!in_path || !out_path || !cli_npy || !cli_txt || fuzz_save(in_path, data, size) != 0)
		return 0;
	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status sp = npy_parse(&parsed, ctx, "in.npy", data, size, NULL);
	fuzz_check_status(ctx, sp, parsed);
	fuzz_flush(ctx);
	hloi_status sr = npy_read(&read, ctx, in_path, NULL);
	fuzz_check_status(ctx, sr, read);
	fuzz_flush(ctx);
	if ((sp == HLOI_OK) != (sr == HLOI_OK) && !budget(sp) && !budget(sr)) {
		fprintf(stderr, "fuzz: npy_parse returned status %d, npy_read %d\n", (int)sp, (int)sr);
		abort();
	}
	if (sp != HLOI_OK || sr != HLOI_OK)
		goto cleanup;
	same_values(parsed, read, ctx, "npy_read against npy_parse");

	hloi_status st = npy_serialize(&bytes, &len, ctx, read);
	fuzz_check_status(ctx, st, bytes);
	hloi_status sw = npy_write(read, ctx, out_path);
	fuzz_check_status(ctx, sw, NULL);
	fuzz_flush(ctx);
	if (st == HLOI_OK && sw == HLOI_OK) {
		written = fuzz_load(out_path, &wlen);
		if (written && (wlen != len || memcmp(written, bytes, len) != 0)) {
			fprintf(stderr, "fuzz: npy_write wrote %zu bytes, npy_serialize made %zu others\n", wlen, len);
			abort();
		}
	} else if (!budget(st) && !budget(sw)) {
		fprintf(stderr, "fuzz: writing back a value read from .npy failed (%d, %d)\n", (int)st, (int)sw);
		abort();
	}

	through_inputs(read, in_path, ctx);

	cli_io io = fuzz_cli_io();
	int rc = output_write(read, cli_npy, ctx, &io, "run");
	if (rc == EXIT_OK) {
		st = npy_read(&back, ctx, cli_npy, hloi_literal_shape(read));
		fuzz_check_status(ctx, st, back);
		if (st == HLOI_OK)
			same_values(read, back, ctx, "--output .npy read back");
		else if (!budget(st)) {
			fprintf(stderr, "fuzz: --output .npy does not read back (status %d)\n", (int)st);
			abort();
		}
	} else if (rc != EXIT_RUNTIME) {
		fprintf(stderr, "fuzz: --output .npy failed with exit %d\n", rc);
		abort();
	}
	fuzz_flush(ctx);
	rc = output_write(read, cli_txt, ctx, &io, "run");
	int refused = hloi_literal_empty_subarrays(read) > HLOI_PRINT_MAX_EMPTY_SUBARRAYS;
	if (refused ? rc != EXIT_RUNTIME : rc != EXIT_OK && rc != EXIT_RUNTIME) {
		fprintf(stderr, "fuzz: --output as text failed with exit %d\n", rc);
		abort();
	}
cleanup:
	fuzz_flush(ctx);
	hloi_free(bytes);
	free(written);
	hloi_literal_free(back);
	hloi_literal_free(read);
	hloi_literal_free(parsed);
	hloi_context_free(ctx);
	return 0;
}
