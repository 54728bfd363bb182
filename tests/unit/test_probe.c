/* Unit tests for probes through the public API (hloi_run_options version
 * 7): what the callback is given (instruction, computation, entry, the
 * evaluation number in a loop), in
 * evaluation order, with the values of instructions the fast engine would
 * fuse; per-element applications not probed; names selecting some
 * instructions (hloi_module_probe_matches), an unknown one refused before
 * the run; a failing callback ending the run; results unchanged by probes;
 * options of version 6 (no probes). Both engines. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hloi.h"
#include "unit.h"

/* A fused chain (a, b) whose seed a reduce reads, a loop doubling a
 * vector three times; `i` and `p` are names of both cond and body. */
static const char program[] =
	"HloModule probe\n"
	"sum {\n"
	"  sa = f32[] parameter(0)\n"
	"  sb = f32[] parameter(1)\n"
	"  ROOT sc = f32[] add(sa, sb)\n"
	"}\n"
	"body {\n"
	"  p = (s32[], f32[4]) parameter(0)\n"
	"  i = s32[] get-tuple-element(p), index=0\n"
	"  v = f32[4] get-tuple-element(p), index=1\n"
	"  one = s32[] constant(1)\n"
	"  i2 = s32[] add(i, one)\n"
	"  two = f32[] constant(2)\n"
	"  t = f32[4] broadcast(two), dimensions={}\n"
	"  v2 = f32[4] multiply(v, t)\n"
	"  ROOT r = (s32[], f32[4]) tuple(i2, v2)\n"
	"}\n"
	"cond {\n"
	"  p = (s32[], f32[4]) parameter(0)\n"
	"  i = s32[] get-tuple-element(p), index=0\n"
	"  n = s32[] constant(3)\n"
	"  ROOT lt = pred[] compare(i, n), direction=LT\n"
	"}\n"
	"ENTRY main {\n"
	"  x = f32[4,8] parameter(0)\n"
	"  y = f32[4,8] parameter(1)\n"
	"  a = f32[4,8] add(x, y)\n"
	"  b = f32[4,8] multiply(a, a)\n"
	"  zero = f32[] constant(0)\n"
	"  s = f32[4] reduce(b, zero), dimensions={1}, to_apply=sum\n"
	"  z = s32[] constant(0)\n"
	"  init = (s32[], f32[4]) tuple(z, s)\n"
	"  w = (s32[], f32[4]) while(init), condition=cond, body=body\n"
	"  wv = f32[4] get-tuple-element(w), index=1\n"
	"  ROOT out = f32[4] add(wv, s)\n"
	"}\n";

static hloi_module *load(hloi_context *ctx)
{
	hloi_module *m = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_module_parse(&m, ctx, "t.hlo", program, strlen(program)), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_module_check(m, ctx, NULL), HLOI_OK);
	return m;
}

/* x[i][j] = i + j / 8, y = 1 */
static void make_inputs(hloi_context *ctx, hloi_literal **in)
{
	hloi_shape *s = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_shape_parse(&s, ctx, "s", "f32[4,8]"), HLOI_OK);
	for (int k = 0; k < 2; k++) {
		CU_ASSERT_EQUAL_FATAL(hloi_literal_new(&in[k], ctx, s), HLOI_OK);
		float *d = hloi_literal_data(in[k]);
		for (int i = 0; i < 32; i++)
			d[i] = k ? 1.0f : (float)(i / 8) + (float)(i % 8) / 8.0f;
	}
	hloi_shape_free(s);
}

#define MAX_SEEN 64

/* What the callback saw, in order. */
typedef struct seen {
	int n;
	char name[MAX_SEEN][16], comp[MAX_SEEN][16];
	int entry[MAX_SEEN];
	uint64_t index[MAX_SEEN];
	float first[MAX_SEEN], b[32];  /* a float value's element 0; b's elements */
	int fail_at;                   /* fail when called this many times (0: never) */
} seen;

static hloi_status on_probe(void *data, hloi_context *ctx, const hloi_probe *pb, const hloi_literal *v)
{
	seen *s = data;
	if (s->fail_at && s->n + 1 == s->fail_at) {
		hloi_context_error(ctx, "probe", "the callback gives up");
		return HLOI_EIO;
	}
	CU_ASSERT_FATAL(s->n < MAX_SEEN);
	int k = s->n++;
	snprintf(s->name[k], sizeof s->name[k], "%s", pb->instruction);
	snprintf(s->comp[k], sizeof s->comp[k], "%s", pb->computation);
	s->entry[k] = pb->entry;
	s->index[k] = pb->index;
	char text[32];
	hloi_shape_to_string(hloi_literal_shape(v), 0, text, sizeof text);
	if (!strncmp(text, "f32[", 4) && hloi_shape_element_count(hloi_literal_shape(v)) > 0) {
		const float *d = hloi_literal_data((hloi_literal *)v);
		s->first[k] = d[0];
		if (!strcmp(pb->instruction, "b"))
			for (int i = 0; i < 32; i++)  /* b's layout is the default one: row-major */
				s->b[i] = d[i];
	}
	return HLOI_OK;
}

/* The position of the n-th (from 0) value of instruction comp/name, or -1. */
static int find(const seen *s, const char *comp, const char *name, uint64_t n)
{
	for (int k = 0; k < s->n; k++)
		if (!strcmp(s->name[k], name) && !strcmp(s->comp[k], comp) && s->index[k] == n)
			return k;
	return -1;
}

static void test_matches(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx);
	CU_ASSERT_EQUAL(hloi_module_probe_matches(m, "i"), 2);
	CU_ASSERT_EQUAL(hloi_module_probe_matches(m, "body/i"), 1);
	CU_ASSERT_EQUAL(hloi_module_probe_matches(m, "cond/i"), 1);
	CU_ASSERT_EQUAL(hloi_module_probe_matches(m, "main/i"), 0);
	CU_ASSERT_EQUAL(hloi_module_probe_matches(m, "b"), 1);
	CU_ASSERT_EQUAL(hloi_module_probe_matches(m, "nosuch"), 0);
	CU_ASSERT_EQUAL(hloi_module_probe_matches(m, "body/"), 0);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static void test_every_instruction(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx);
	hloi_literal *in[2];
	make_inputs(ctx, in);
	for (int engine = HLOI_ENGINE_REFERENCE; engine <= HLOI_ENGINE_FAST; engine++) {
		seen *s = calloc(1, sizeof *s);
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		o.engine = (hloi_engine)engine;
		hloi_literal *plain = NULL, *r = NULL;
		CU_ASSERT_EQUAL_FATAL(hloi_module_run(m, ctx, in, 2, &o, &plain), HLOI_OK);
		o.probe = on_probe;
		o.probe_data = s;
		CU_ASSERT_EQUAL_FATAL(hloi_module_run(m, ctx, in, 2, &o, &r), HLOI_OK);
		/* probes change nothing in the result */
		CU_ASSERT_EQUAL(memcmp(hloi_literal_data(r), hloi_literal_data(plain), 16), 0);
		/* in evaluation order: x, y, a, b (fused by the fast engine), then s */
		int ka = find(s, "main", "a", 0), kb = find(s, "main", "b", 0), ks = find(s, "main", "s", 0);
		CU_ASSERT(find(s, "main", "x", 0) >= 0 && find(s, "main", "x", 0) < ka);
		CU_ASSERT(ka >= 0 && ka < kb && kb < ks);
		CU_ASSERT_EQUAL(find(s, "main", "a", 1), -1);
		CU_ASSERT(s->entry[ka]);
		for (int i = 0; i < 32; i++) {
			float a = (float)(i / 8) + (float)(i % 8) / 8.0f + 1.0f;
			CU_ASSERT_EQUAL(s->b[i], a * a);
		}
		/* the loop: the body 3 times, the condition 4 */
		for (uint64_t n = 0; n < 3; n++) {
			int k = find(s, "body", "v2", n);
			CU_ASSERT_FATAL(k >= 0);
			CU_ASSERT(!s->entry[k]);
			CU_ASSERT_EQUAL(s->first[k], s->first[ks] * (float)(2 << n));
			CU_ASSERT(find(s, "body", "i", n) >= 0);
		}
		CU_ASSERT_EQUAL(find(s, "body", "v2", 3), -1);
		CU_ASSERT(find(s, "cond", "lt", 3) >= 0);
		CU_ASSERT_EQUAL(find(s, "cond", "lt", 4), -1);
		/* the reducer is applied element by element: not probed */
		CU_ASSERT_EQUAL(find(s, "sum", "sc", 0), -1);
		/* the root last */
		CU_ASSERT_STRING_EQUAL(s->name[s->n - 1], "out");
		hloi_literal_free(r);
		hloi_literal_free(plain);
		free(s);
	}
	hloi_literal_free(in[0]);
	hloi_literal_free(in[1]);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static void test_names_and_failures(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx);
	hloi_literal *in[2];
	make_inputs(ctx, in);
	for (int engine = HLOI_ENGINE_REFERENCE; engine <= HLOI_ENGINE_FAST; engine++) {
		seen *s = calloc(1, sizeof *s);
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		o.engine = (hloi_engine)engine;
		o.probe = on_probe;
		o.probe_data = s;
		const char *names[] = { "b", "body/i" };
		o.probe_names = names;
		o.nprobe_names = 2;
		hloi_literal *r = NULL;
		CU_ASSERT_EQUAL_FATAL(hloi_module_run(m, ctx, in, 2, &o, &r), HLOI_OK);
		hloi_literal_free(r);
		CU_ASSERT_EQUAL(s->n, 4);  /* b, then body's i three times (not cond's) */
		CU_ASSERT_STRING_EQUAL(s->name[0], "b");
		for (int k = 1; k < s->n; k++) {
			CU_ASSERT_STRING_EQUAL(s->comp[k], "body");
			CU_ASSERT_EQUAL(s->index[k], (uint64_t)(k - 1));
		}

		/* an unknown name: refused before anything runs */
		memset(s, 0, sizeof *s);
		const char *unknown[] = { "b", "nosuch" };
		o.probe_names = unknown;
		r = NULL;
		CU_ASSERT_EQUAL(hloi_module_run(m, ctx, in, 2, &o, &r), HLOI_EINVAL);
		CU_ASSERT_PTR_NULL(r);
		CU_ASSERT_EQUAL(s->n, 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(hloi_context_last_error(ctx), "probe 'nosuch'"));
		hloi_context_clear(ctx);

		/* a failing callback ends the run with its status */
		o.probe_names = NULL;
		s->fail_at = 5;
		CU_ASSERT_EQUAL(hloi_module_run(m, ctx, in, 2, &o, &r), HLOI_EIO);
		CU_ASSERT_PTR_NULL(r);
		CU_ASSERT_EQUAL(s->n, 4);
		CU_ASSERT_PTR_NOT_NULL(strstr(hloi_context_last_error(ctx), "the callback gives up"));
		hloi_context_clear(ctx);
		free(s);
	}
	hloi_literal_free(in[0]);
	hloi_literal_free(in[1]);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static void test_version_6_options(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx);
	hloi_literal *in[2];
	make_inputs(ctx, in);
	/* a version 6 struct ends at `profile`: no probes are read */
	struct {
		unsigned version;
		hloi_engine engine;
		int threads;
		uint64_t max_memory;
		const volatile int *stop;
		uint64_t max_steps;
		volatile uint64_t *progress;
		hloi_literal *const *infeed;
		size_t ninfeed;
		hloi_infeed_fn infeed_fn;
		hloi_outfeed_fn outfeed;
		void *feed_data;
		hloi_host_recv_fn host_recv;
		hloi_host_send_fn host_send;
		void *host_data;
		hloi_profile *profile;
	} v6 = { 6, HLOI_ENGINE_DEFAULT, 1, 0, NULL, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	hloi_literal *r = NULL;
	CU_ASSERT_EQUAL(hloi_module_run(m, ctx, in, 2, (const hloi_run_options *)(const void *)&v6, &r), HLOI_OK);
	CU_ASSERT_PTR_NOT_NULL(r);
	hloi_literal_free(r);
	hloi_literal_free(in[0]);
	hloi_literal_free(in[1]);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static const unit_test probe_tests[] = {
	{ "probe names", test_matches },
	{ "every instruction, both engines", test_every_instruction },
	{ "names, unknown names, a failing callback", test_names_and_failures },
	{ "version 6 options", test_version_6_options },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "probe", probe_tests },
	{ NULL, NULL },
};
