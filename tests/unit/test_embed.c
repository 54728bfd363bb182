/* Unit tests for the calls a language binding needs (the Python package
 * uses them): literals over the caller's memory (hloi_literal_wrap; never
 * written by a run, an aliased result goes into a copy; released once),
 * modules loaded from memory (hloi_module_load_memory), the result shape
 * and element type names, and runs of one module on several threads at
 * once (which a ThreadSanitizer build, HLOI_TSAN, checks for races). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hloi.h"
#include "unit.h"

static const char add_text[] =
	"HloModule add\n"
	"ENTRY main {\n"
	"  x = f32[2,3] parameter(0)\n"
	"  y = f32[2,3] parameter(1)\n"
	"  ROOT r = f32[2,3] add(x, y)\n"
	"}\n";

static const char alias_text[] =
	"HloModule inplace, input_output_alias={ {}: (0, {}, must-alias) }\n"
	"ENTRY main {\n"
	"  x = f32[4] parameter(0)\n"
	"  y = f32[4] parameter(1)\n"
	"  ROOT r = f32[4] multiply(x, y)\n"
	"}\n";

static hloi_module *load(hloi_context *ctx, const char *text)
{
	hloi_module *m = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_module_load_memory(&m, ctx, "t.hlo", text, strlen(text), HLOI_FORMAT_AUTO),
			      HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_module_check(m, ctx, NULL), HLOI_OK);
	return m;
}

typedef struct released {
	int calls;
	void *data;
} released;

static void on_release(void *user, void *data)
{
	released *r = user;
	r->calls++;
	r->data = data;
}

static void test_wrap_input_and_release(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	hloi_module *m = load(ctx, add_text);
	float x[6] = { 1, 2, 3, 4, 5, 6 }, y[6] = { 10, 20, 30, 40, 50, 60 };
	released rx = { 0, NULL }, ry = { 0, NULL };
	hloi_literal *in[2] = { NULL, NULL }, *out = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_literal_wrap(&in[0], ctx, hloi_module_parameter_shape(m, 0), x, sizeof x,
						on_release, &rx),
			      HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_literal_wrap(&in[1], ctx, hloi_module_parameter_shape(m, 1), y, sizeof y,
						on_release, &ry),
			      HLOI_OK);
	CU_ASSERT_PTR_EQUAL(hloi_literal_data(in[0]), x); /* no copy */
	CU_ASSERT_EQUAL(hloi_literal_size_bytes(in[0]), sizeof x);
	CU_ASSERT_EQUAL(hloi_module_run(m, ctx, in, 2, NULL, &out), HLOI_OK);
	const float *r = out ? hloi_literal_data(out) : NULL;
	CU_ASSERT_FATAL(r != NULL);
	for (int i = 0; i < 6; i++)
		CU_ASSERT(r[i] == x[i] + y[i]);
	CU_ASSERT(x[0] == 1 && y[5] == 60);
	hloi_literal_free(out);
	CU_ASSERT_EQUAL(rx.calls, 0);
	hloi_literal_free(in[0]);
	hloi_literal_free(in[1]);
	CU_ASSERT(rx.calls == 1 && rx.data == x);
	CU_ASSERT(ry.calls == 1 && ry.data == y);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static void test_wrap_refused(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	hloi_shape *s = NULL, *t = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_shape_parse(&s, ctx, "s", "f32[2,3]{0,1}"), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_shape_parse(&t, ctx, "t", "(f32[2], s32[])"), HLOI_OK);
	float buf[6] = { 0 };
	released rel = { 0, NULL };
	hloi_literal *lit = (hloi_literal *)1;
	CU_ASSERT_EQUAL(hloi_literal_wrap(&lit, ctx, s, buf, sizeof buf - 4, on_release, &rel), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(lit);
	const char *msg = hloi_context_last_error(ctx);
	CU_ASSERT(msg && strstr(msg, "cannot wrap 20 bytes as a literal of 24 bytes"));
	CU_ASSERT_EQUAL(hloi_literal_wrap(&lit, ctx, t, buf, sizeof buf, on_release, &rel), HLOI_EINVAL);
	CU_ASSERT_EQUAL(hloi_literal_wrap(&lit, ctx, s, NULL, sizeof buf, on_release, &rel), HLOI_EINVAL);
	CU_ASSERT_EQUAL(rel.calls, 0);
	/* a column-major layout addresses the caller's buffer in its order */
	CU_ASSERT_EQUAL_FATAL(hloi_literal_wrap(&lit, ctx, s, buf, sizeof buf, NULL, NULL), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_shape_minor_to_major(hloi_literal_shape(lit), 0), 0);
	hloi_literal_free(lit);
	hloi_shape_free(s);
	hloi_shape_free(t);
	hloi_context_free(ctx);
}

/* input_output_alias over a borrowed input: the result goes into a copy;
 * the caller's buffer keeps its values and the literal its data. */
static void test_wrap_aliased_input_is_not_written(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	hloi_module *m = load(ctx, alias_text);
	CU_ASSERT_EQUAL(hloi_module_aliased_input(m), 0);
	float x[4] = { 1, 2, 3, 4 }, y[4] = { 2, 2, 2, 2 };
	hloi_literal *in[2] = { NULL, NULL }, *out = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_literal_wrap(&in[0], ctx, hloi_module_parameter_shape(m, 0), x, sizeof x, NULL, NULL),
			      HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_literal_wrap(&in[1], ctx, hloi_module_parameter_shape(m, 1), y, sizeof y, NULL, NULL),
			      HLOI_OK);
	for (int k = 0; k < 2; k++) {
		CU_ASSERT_EQUAL_FATAL(hloi_module_run(m, ctx, in, 2, NULL, &out), HLOI_OK);
		const float *r = hloi_literal_data(out);
		CU_ASSERT(r != x);
		CU_ASSERT(r[0] == 2 && r[1] == 4 && r[2] == 6 && r[3] == 8);
		CU_ASSERT(x[0] == 1 && x[1] == 2 && x[2] == 3 && x[3] == 4);
		CU_ASSERT_PTR_EQUAL(hloi_literal_data(in[0]), x);
		hloi_literal_free(out);
	}
	hloi_literal_free(in[0]);
	hloi_literal_free(in[1]);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

/* hloi_module_run_into a wrapped result: the run writes the caller's
 * memory. */
static void test_wrap_result_of_run_into(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	hloi_module *m = load(ctx, add_text);
	const hloi_shape *rs = hloi_module_result_shape(m);
	CU_ASSERT_FATAL(rs != NULL);
	CU_ASSERT_STRING_EQUAL(hloi_shape_element_type(rs), "f32");
	CU_ASSERT(hloi_shape_rank(rs) == 2 && hloi_shape_dim(rs, 0) == 2 && hloi_shape_dim(rs, 1) == 3);
	float x[6] = { 1, 2, 3, 4, 5, 6 }, res[6] = { 0 };
	hloi_literal *in[2] = { NULL, NULL }, *out = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_literal_wrap(&in[0], ctx, hloi_module_parameter_shape(m, 0), x, sizeof x, NULL, NULL),
			      HLOI_OK);
	in[1] = in[0];
	CU_ASSERT_EQUAL_FATAL(hloi_literal_wrap(&out, ctx, rs, res, sizeof res, NULL, NULL), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_module_run_into(m, ctx, in, 2, NULL, out), HLOI_OK);
	for (int i = 0; i < 6; i++)
		CU_ASSERT(res[i] == 2 * x[i]);
	hloi_literal_free(out);
	hloi_literal_free(in[0]);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static void test_load_memory(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	hloi_module *m = load(ctx, add_text);
	/* a binary proto, as bytes, found by its content */
	char path[] = "/tmp/hloi_embed_XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	fclose(fdopen(fd, "w"));
	CU_ASSERT_EQUAL_FATAL(hloi_module_save(m, ctx, path, HLOI_FORMAT_PB), HLOI_OK);
	FILE *f = fopen(path, "rb");
	CU_ASSERT_FATAL(f != NULL);
	char bytes[4096];
	size_t n = fread(bytes, 1, sizeof bytes, f);
	fclose(f);
	remove(path);
	CU_ASSERT(n > 0 && n < sizeof bytes);
	hloi_module *p = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_module_load_memory(&p, ctx, NULL, bytes, n, HLOI_FORMAT_AUTO), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_module_check(p, ctx, NULL), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_module_parameter_count(p), 2);
	CU_ASSERT_STRING_EQUAL(hloi_shape_element_type(hloi_module_parameter_shape(p, 0)), "f32");
	hloi_module_free(p);
	/* errors are located in the text, under the given name */
	static const char bad[] = "HloModule m\nENTRY e {\n  x = f32[2] parmeter(0)\n}\n";
	CU_ASSERT_EQUAL(hloi_module_load_memory(&p, ctx, "bad.hlo", bad, strlen(bad), HLOI_FORMAT_AUTO), HLOI_EPARSE);
	CU_ASSERT_PTR_NULL(p);
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	CU_ASSERT_FATAL(mem != NULL);
	hloi_context_print_diagnostics(ctx, mem, 0);
	fclose(mem);
	CU_ASSERT(text && strstr(text, "bad.hlo:3:"));
	free(text);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static void test_element_type_names(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	static const char *const names[] = { "pred", "s4", "u8", "bf16", "f8e4m3fn", "c128" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char text[32];
		snprintf(text, sizeof text, "%s[2]", names[i]);
		hloi_shape *s = NULL;
		CU_ASSERT_EQUAL_FATAL(hloi_shape_parse(&s, ctx, "s", text), HLOI_OK);
		CU_ASSERT_STRING_EQUAL(hloi_shape_element_type(s), names[i]);
		hloi_shape_free(s);
	}
	hloi_shape *t = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_shape_parse(&t, ctx, "t", "(f32[], s32[])"), HLOI_OK);
	CU_ASSERT_STRING_EQUAL(hloi_shape_element_type(t), "tuple");
	hloi_shape_free(t);
	hloi_context_free(ctx);
}

/* Several threads run one module at once, each with its own context and
 * inputs; every result is right. */
enum { NTHREADS = 4, NRUNS = 50 };

typedef struct worker {
	hloi_module *m;
	int id;
	int bad;
} worker;

static const char loop_text[] =
	"HloModule loop\n"
	"cond {\n"
	"  p = (s32[], f32[64,64]) parameter(0)\n"
	"  i = s32[] get-tuple-element(p), index=0\n"
	"  n = s32[] constant(4)\n"
	"  ROOT lt = pred[] compare(i, n), direction=LT\n"
	"}\n"
	"body {\n"
	"  p = (s32[], f32[64,64]) parameter(0)\n"
	"  i = s32[] get-tuple-element(p), index=0\n"
	"  one = s32[] constant(1)\n"
	"  j = s32[] add(i, one)\n"
	"  v = f32[64,64] get-tuple-element(p), index=1\n"
	"  w = f32[64,64] add(v, v)\n"
	"  ROOT t = (s32[], f32[64,64]) tuple(j, w)\n"
	"}\n"
	"ENTRY main {\n"
	"  x = f32[64,64] parameter(0)\n"
	"  z = s32[] constant(0)\n"
	"  t = (s32[], f32[64,64]) tuple(z, x)\n"
	"  w = (s32[], f32[64,64]) while(t), condition=cond, body=body\n"
	"  ROOT r = f32[64,64] get-tuple-element(w), index=1\n"
	"}\n";

static void *work(void *arg)
{
	worker *w = arg;
	hloi_context *ctx = NULL;
	if (hloi_context_new(&ctx) != HLOI_OK) {
		w->bad = 1;
		return NULL;
	}
	static float x[NTHREADS][64 * 64];
	for (int i = 0; i < 64 * 64; i++)
		x[w->id][i] = (float)(w->id + 1) + (float)i;
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.engine = w->id % 2 ? HLOI_ENGINE_REFERENCE : HLOI_ENGINE_FAST;
	o.threads = 2;
	for (int k = 0; k < NRUNS && !w->bad; k++) {
		hloi_literal *in = NULL, *out = NULL;
		if (hloi_literal_wrap(&in, ctx, hloi_module_parameter_shape(w->m, 0), x[w->id], sizeof x[w->id], NULL,
				      NULL) != HLOI_OK ||
		    hloi_module_run(w->m, ctx, &in, 1, &o, &out) != HLOI_OK) {
			w->bad = 1;
		} else {
			const float *r = hloi_literal_data(out);
			for (int i = 0; i < 64 * 64; i++)
				w->bad |= r[i] != 16 * x[w->id][i];
		}
		hloi_literal_free(out);
		hloi_literal_free(in);
	}
	hloi_context_free(ctx);
	return NULL;
}

static void test_concurrent_runs(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	hloi_module *m = load(ctx, loop_text);
	pthread_t th[NTHREADS];
	worker w[NTHREADS];
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (worker){ m, i, 0 };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		CU_ASSERT_EQUAL(w[i].bad, 0);
	}
	hloi_module_free(m);
	hloi_context_free(ctx);
}

/* A `<=N` result: hloi_literal_dim gives its size at run time. */
static void test_literal_dim(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	hloi_module *m = load(ctx, "HloModule d\n"
				   "ENTRY main {\n"
				   "  x = f32[<=4,2] parameter(0)\n"
				   "  ROOT r = f32[<=4,2] negate(x)\n"
				   "}\n");
	hloi_shape *s = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_shape_parse(&s, ctx, "s", "f32[3,2]"), HLOI_OK);
	float x[6] = { 1, 2, 3, 4, 5, 6 };
	hloi_literal *in = NULL, *out = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_literal_wrap(&in, ctx, s, x, sizeof x, NULL, NULL), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_module_run(m, ctx, &in, 1, NULL, &out), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_shape_dim(hloi_literal_shape(out), 0), 4); /* the bound */
	CU_ASSERT_EQUAL(hloi_literal_dim(out, 0), 3);
	CU_ASSERT_EQUAL(hloi_literal_dim(out, 1), 2);
	CU_ASSERT_EQUAL(hloi_literal_dim(out, 2), -1);
	CU_ASSERT_EQUAL(hloi_literal_dim(in, 0), 3);
	const float *r = hloi_literal_data(out);
	for (int i = 0; i < 6; i++)
		CU_ASSERT(r[i] == -x[i]);
	hloi_literal_free(out);
	hloi_literal_free(in);
	hloi_shape_free(s);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static const unit_test embed_tests[] = {
	{ "the size of a <=N dimension", test_literal_dim },
	{ "wrapped inputs: no copy, released once", test_wrap_input_and_release },
	{ "wrap refuses a wrong size, a tuple, no data", test_wrap_refused },
	{ "an aliased wrapped input is not written", test_wrap_aliased_input_is_not_written },
	{ "run_into a wrapped result", test_wrap_result_of_run_into },
	{ "load from memory: text and binary proto", test_load_memory },
	{ "element type names", test_element_type_names },
	{ "one module run on several threads at once", test_concurrent_runs },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "embedding", embed_tests },
	{ NULL, NULL },
};
