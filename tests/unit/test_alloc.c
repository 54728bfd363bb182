/* Allocation-failure sweep (SQLite's OOM loop): for representative programs,
 * make the 1st, 2nd, ... Nth allocation and every later one fail, and check
 * that each stage of the pipeline (context, parse, check, inputs, run,
 * printing) returns HLOI_ENOMEM or its normal error, never crashes, and
 * frees everything (LeakSanitizer in the sanitizer build reports leaks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hloi.h"
#include "unit.h"
#include "util/alloc.h"

/* doc/sources.md A: |1 2 3; 4 5 6| + |7 8 9| with broadcast_dimensions={1}. */
static const char prog_matrix_vector[] =
	"HloModule matrix_plus_vector\n"
	"\n"
	"ENTRY main {\n"
	"  x = s32[2,3] parameter(0)\n"
	"  y = s32[3] parameter(1)\n"
	"  ROOT r = s32[2,3] add(x, y), broadcast_dimensions={1}\n"
	"}\n";
static const char inputs_matrix_vector[] = "s32[2,3] {{1,2,3},{4,5,6}}\ns32[3] {7,8,9}\n";
static const char result_matrix_vector[] = "s32[2,3] {\n  { 8, 10, 12 },\n  { 11, 13, 15 }\n}\n";

/* Padded layouts on a parameter, a constant and the result. */
static const char prog_padded[] =
	"HloModule padded\n"
	"\n"
	"ENTRY main {\n"
	"  a = f32[2,3]{0,1:pad(3,5)} parameter(0)\n"
	"  b = f32[3]{0:pad(4)padval(highest)} constant({0.5, 0.25, 0.125})\n"
	"  c = f32[2,3] add(a, b), broadcast_dimensions={1}\n"
	"  ROOT r = f32[2,3]{0,1:pad(3,5)} multiply(c, a)\n"
	"}\n";

/* Two independent type errors: check must report both, or run out of memory. */
static const char prog_errors[] =
	"HloModule two_errors\n"
	"\n"
	"ENTRY main {\n"
	"  a = pred[2] constant({1, 0})\n"
	"  b = f32[2] constant({1, 2})\n"
	"  s = pred[2] subtract(a, a)\n"
	"  ROOT t = f32[2] and(b, b)\n"
	"}\n";

/* A program with a parse error. */
static const char prog_parse_error[] =
	"HloModule bad\n"
	"ENTRY main {\n"
	"  x = f32[2] parameter(0)\n"
	"  ROOT r = f32[2] add(x, x\n"
	"}\n";

typedef struct outcome {
	hloi_status st;     /* status of the first stage that failed, or HLOI_OK */
	int stage;          /* that stage (0 context .. 6 printing), 7 when all ran */
	char text[512];     /* the printed result or diagnostics */
} outcome;

/* Reads a stream back into `buf` (NUL-terminated). */
static void read_back(FILE *f, char *buf, size_t size)
{
	size_t n = 0;
	rewind(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
}

/* Runs the whole pipeline on `prog` with inputs from `inputs` (literal text)
 * or random ones when NULL. Frees everything it made. */
static outcome pipeline(const char *prog, const char *inputs)
{
	outcome o;
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;
	hloi_literal **in = NULL;
	size_t nin = 0;
	hloi_literal *out = NULL;
	FILE *f = tmpfile();

	memset(&o, 0, sizeof o);
	o.stage = 0;
	o.st = hloi_context_new(&ctx);
	if (o.st != HLOI_OK) {
		CU_ASSERT_PTR_NULL(ctx);
		goto cleanup;
	}
	o.stage = 1;
	o.st = hloi_module_parse(&m, ctx, "prog.hlo", prog, strlen(prog));
	if (o.st != HLOI_OK) {
		CU_ASSERT_PTR_NULL(m);
		goto cleanup;
	}
	o.stage = 2;
	o.st = hloi_module_check(m, ctx, NULL);
	if (o.st != HLOI_OK)
		goto cleanup;
	o.stage = 3;
	if (inputs)
		o.st = hloi_literal_parse_list(&in, &nin, ctx, "prog.inputs", inputs, strlen(inputs));
	else
		o.st = hloi_module_random_inputs(&in, &nin, m, ctx, 42);
	if (o.st != HLOI_OK) {
		CU_ASSERT_PTR_NULL(in);
		goto cleanup;
	}
	o.stage = 4;
	hloi_run_options opts = HLOI_RUN_OPTIONS_INIT;
	opts.threads = 1;
	o.st = hloi_module_run(m, ctx, in, nin, &opts, &out);
	if (o.st != HLOI_OK) {
		CU_ASSERT_PTR_NULL(out);
		goto cleanup;
	}
	o.stage = 5;
	o.st = f ? hloi_literal_print(out, f) : HLOI_EIO;
	if (o.st != HLOI_OK)
		goto cleanup;
	o.stage = 7;
cleanup:
	if (f && ctx && o.st != HLOI_OK) {
		/* Printing diagnostics must cope with a failed allocation too. */
		rewind(f);
		hloi_context_print_diagnostics(ctx, f, HLOI_DIAG_BASENAME);
	}
	if (f) {
		fflush(f);
		read_back(f, o.text, sizeof o.text);
		fclose(f);
	}
	hloi_literal_free(out);
	hloi_literal_array_free(in, nin);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return o;
}

/* Sweeps N = 0, 1, ... until a run sees no injected failure, and checks
 * that every run ends like the baseline or with HLOI_ENOMEM. */
static void sweep(const char *prog, const char *inputs, int want_stage, hloi_status want_st)
{
	alloc_fail_after(-1);
	outcome base = pipeline(prog, inputs);
	CU_ASSERT_EQUAL(base.stage, want_stage);
	CU_ASSERT_EQUAL(base.st, want_st);
	long total = alloc_count();
	CU_ASSERT_TRUE(total > 0);

	long n;
	int enomem_seen = 0;
	for (n = 0; n < 100000; n++) {
		alloc_fail_after(n);
		outcome o = pipeline(prog, inputs);
		long attempts = alloc_count();
		alloc_fail_after(-1);
		if (attempts <= n) {
			/* Nothing failed: the run must equal the baseline. */
			CU_ASSERT_EQUAL(o.stage, base.stage);
			CU_ASSERT_EQUAL(o.st, base.st);
			CU_ASSERT_STRING_EQUAL(o.text, base.text);
			break;
		}
		/* Something failed: a clean ENOMEM, or the program's own error
		 * (an error found before the failing allocation). */
		if (o.st == HLOI_ENOMEM) {
			enomem_seen++;
			CU_ASSERT_TRUE(o.stage <= want_stage);
		} else if (o.st == HLOI_OK) {
			/* A failure the pipeline absorbed (e.g. an optional
			 * cache): the result must still be right. */
			CU_ASSERT_EQUAL(o.stage, base.stage);
			CU_ASSERT_STRING_EQUAL(o.text, base.text);
		} else {
			if (o.stage != base.stage || o.st != base.st)
				fprintf(stderr, "alloc sweep: fail after %ld: stage %d status %d (%s)\n", n,
					o.stage, (int)o.st, o.text);
			CU_ASSERT_EQUAL(o.stage, base.stage);
			CU_ASSERT_EQUAL(o.st, base.st);
		}
	}
	if (getenv("HLOI_ALLOC_VERBOSE"))
		fprintf(stderr, "alloc sweep: %ld allocations, %d ENOMEM runs\n", total, enomem_seen);
	CU_ASSERT_TRUE(n < 100000);
	CU_ASSERT_TRUE(enomem_seen > 0);
}

static void test_matrix_plus_vector(void)
{
	sweep(prog_matrix_vector, inputs_matrix_vector, 7, HLOI_OK);
	alloc_fail_after(-1);
	outcome o = pipeline(prog_matrix_vector, inputs_matrix_vector);
	CU_ASSERT_STRING_EQUAL(o.text, result_matrix_vector);
}

static void test_matrix_plus_vector_random(void)
{
	sweep(prog_matrix_vector, NULL, 7, HLOI_OK);
}

static void test_padded(void)
{
	sweep(prog_padded, NULL, 7, HLOI_OK);
}

static void test_type_errors(void)
{
	sweep(prog_errors, NULL, 2, HLOI_ETYPE);
	alloc_fail_after(-1);
	outcome o = pipeline(prog_errors, NULL);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.text, "subtract"));
	CU_ASSERT_PTR_NOT_NULL(strstr(o.text, "and/or/xor"));
}

static void test_parse_error(void)
{
	sweep(prog_parse_error, NULL, 1, HLOI_EPARSE);
}

/* The hook itself: n successes, then failures until reset. */
static void test_hook(void)
{
	alloc_fail_after(2);
	void *a = hloi_malloc(8), *b = hloi_malloc(8), *c = hloi_malloc(8);
	CU_ASSERT_PTR_NOT_NULL(a);
	CU_ASSERT_PTR_NOT_NULL(b);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_PTR_NULL(hloi_aligned_alloc(64));
	CU_ASSERT_EQUAL(alloc_count(), 4);
	alloc_fail_after(-1);
	hloi_free(a);
	hloi_free(b);
}

static const unit_test alloc_tests[] = {
	{ "hook", test_hook },
	{ "matrix_plus_vector", test_matrix_plus_vector },
	{ "matrix_plus_vector_random", test_matrix_plus_vector_random },
	{ "padded", test_padded },
	{ "type_errors", test_type_errors },
	{ "parse_error", test_parse_error },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "alloc", alloc_tests },
	{ NULL, NULL },
};
