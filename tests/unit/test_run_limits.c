/* Unit tests for the limits of a run (hloi_run_options.stop and .max_steps)
 * through the public API: the step count is exact (calls included), a stop
 * flag set before or during a run stops it with HLOI_ESTOPPED and a message
 * naming where, nothing leaks, and options of version 1 still work. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hloi.h"
#include "unit.h"

/* 13 instructions are evaluated: main's a, b, c, d (4); square_plus's x, y,
 * sq, r (4); mul's p, q, m (3); first's p, r (2; q is never read). */
static const char calls[] =
	"HloModule calls\n"
	"square_plus (x: f32[3], y: f32[]) -> f32[3] {\n"
	"  x = f32[3] parameter(0)\n"
	"  y = f32[] parameter(1)\n"
	"  sq = f32[3] call(x, x), to_apply=mul\n"
	"  ROOT r = f32[3] add(sq, y)\n"
	"}\n"
	"mul {\n"
	"  p = f32[3] parameter(0)\n"
	"  q = f32[3] parameter(1)\n"
	"  ROOT m = f32[3] multiply(p, q)\n"
	"}\n"
	"first {\n"
	"  p = f32[3] parameter(0)\n"
	"  q = f32[] parameter(1)\n"
	"  ROOT r = f32[3] copy(p)\n"
	"}\n"
	"ENTRY main {\n"
	"  a = f32[3] constant({1, 2, 3})\n"
	"  b = f32[] constant(0.5)\n"
	"  c = f32[3] call(a, b), to_apply=square_plus\n"
	"  ROOT d = f32[3] call(c, b), to_apply=first\n"
	"}\n";

static hloi_module *load(hloi_context *ctx, const char *text)
{
	hloi_module *m = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_module_parse(&m, ctx, "t.hlo", text, strlen(text)), HLOI_OK);
	CU_ASSERT_EQUAL_FATAL(hloi_module_check(m, ctx, NULL), HLOI_OK);
	return m;
}

static hloi_status run(hloi_module *m, hloi_context *ctx, const hloi_run_options *o)
{
	hloi_literal *r = NULL;
	hloi_status st = hloi_module_run(m, ctx, NULL, 0, o, &r);
	CU_ASSERT((st == HLOI_OK) == (r != NULL));
	if (r) {
		const float *v = hloi_literal_data(r);
		CU_ASSERT(v[0] == 1.5f && v[1] == 4.5f && v[2] == 9.5f);
	}
	hloi_literal_free(r);
	return st;
}

static void test_step_count_exact(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx, calls);
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	for (int engine = HLOI_ENGINE_REFERENCE; engine <= HLOI_ENGINE_FAST; engine++) {
		o.engine = (hloi_engine)engine;
		o.max_steps = 13;
		/* the progress counter ends at the steps taken; an options struct
		 * of version 2 has no such field and is not written through */
		volatile uint64_t progress = 0;
		o.progress = &progress;
		o.version = 2;
		CU_ASSERT_EQUAL(run(m, ctx, &o), HLOI_OK);
		CU_ASSERT_EQUAL(progress, 0);
		o.version = HLOI_RUN_OPTIONS_VERSION;
		CU_ASSERT_EQUAL(run(m, ctx, &o), HLOI_OK);
		CU_ASSERT_EQUAL(progress, 13);
		o.progress = NULL;
		o.max_steps = 12;
		hloi_context_clear(ctx);
		CU_ASSERT_EQUAL(run(m, ctx, &o), HLOI_ESTOPPED);
		const char *msg = hloi_context_last_error(ctx);
		CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
		/* the 13th is first's root */
		CU_ASSERT_PTR_NOT_NULL(strstr(msg, "limit of 12 evaluated instructions at instruction 'r' in computation 'first'"));
		o.max_steps = 1;
		hloi_context_clear(ctx);
		CU_ASSERT_EQUAL(run(m, ctx, &o), HLOI_ESTOPPED);
		msg = hloi_context_last_error(ctx);
		CU_ASSERT(msg && strstr(msg, "limit of 1 evaluated instruction at instruction 'b' in computation 'main'"));
		hloi_context_clear(ctx);
	}
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static void test_stop_flag_before(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx, calls);
	volatile int stop = 0;
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	o.stop = &stop;
	CU_ASSERT_EQUAL(run(m, ctx, &o), HLOI_OK);
	stop = 1;
	CU_ASSERT_EQUAL(run(m, ctx, &o), HLOI_ESTOPPED);
	const char *msg = hloi_context_last_error(ctx);
	CU_ASSERT(msg && strstr(msg, "stopped before instruction 'a' in computation 'main'"));
	CU_ASSERT_STRING_EQUAL(hloi_status_name(HLOI_ESTOPPED), "stopped");
	hloi_module_free(m);
	hloi_context_free(ctx);
}

/* Options built against the first header: no stop flag, no max_steps. */
static void test_version_1_options(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx, calls);
	struct {
		unsigned version;
		hloi_engine engine;
		int threads;
		uint64_t max_memory;
	} v1 = { 1, HLOI_ENGINE_DEFAULT, 1, 0 };
	CU_ASSERT_EQUAL(run(m, ctx, (const hloi_run_options *)(const void *)&v1), HLOI_OK);
	hloi_module_free(m);
	hloi_context_free(ctx);
}

/* A program that fans out: each computation calls the next twice, 40 deep
 * (2^40 calls): it would run for ever. */
static char *fanout(int depth)
{
	static char buf[16384];
	size_t n = 0;
	n += (size_t)snprintf(buf + n, sizeof buf - n, "HloModule fan\nc0 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] add(p, p)\n}\n");
	for (int k = 1; k <= depth; k++)
		n += (size_t)snprintf(buf + n, sizeof buf - n,
				      "c%d {\n  p = f32[] parameter(0)\n  a = f32[] call(p), to_apply=c%d\n"
				      "  b = f32[] call(a), to_apply=c%d\n  ROOT r = f32[] add(a, b)\n}\n",
				      k, k - 1, k - 1);
	snprintf(buf + n, sizeof buf - n, "ENTRY main {\n  x = f32[] constant(1)\n  ROOT y = f32[] call(x), to_apply=c%d\n}\n",
		 depth);
	return buf;
}

static volatile int stop_later;

static void *set_stop(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	__atomic_store_n(&stop_later, 1, __ATOMIC_RELAXED);
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_fanout(void)
{
	hloi_context *ctx = NULL;
	hloi_context_new(&ctx);
	hloi_module *m = load(ctx, fanout(40));
	hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
	hloi_literal *r = NULL;
	/* bounded by the step limit */
	o.max_steps = 100000;
	CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_ESTOPPED);
	CU_ASSERT_PTR_NULL(r);
	const char *msg = hloi_context_last_error(ctx);
	CU_ASSERT(msg && strstr(msg, "limit of 100000 evaluated instructions"));
	hloi_context_clear(ctx);
	/* stopped from another thread while it runs without a limit */
	o.max_steps = UINT64_MAX;
	o.stop = &stop_later;
	pthread_t t;
	double t0 = now();
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, set_stop, NULL), 0);
	CU_ASSERT_EQUAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_ESTOPPED);
	pthread_join(t, NULL);
	CU_ASSERT(now() - t0 < 30.0);
	CU_ASSERT_PTR_NULL(r);
	msg = hloi_context_last_error(ctx);
	CU_ASSERT(msg && strstr(msg, "the run was stopped before instruction"));
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static const unit_test limits_tests[] = {
	{ "step count is exact", test_step_count_exact },
	{ "stop flag set before the run", test_stop_flag_before },
	{ "version 1 options", test_version_1_options },
	{ "fan-out program: step limit and stop flag", test_fanout },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "run limits", limits_tests },
	{ NULL, NULL },
};
