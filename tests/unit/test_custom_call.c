/* Unit tests for an embedder's custom-call targets through the public API
 * (hloi_custom_call_register): the checker asks the target's check and
 * reports its reason at the instruction, both engines evaluate the call
 * through the target's evaluate with its user data and backend_config, a
 * failing evaluate ends the run with its status and message, tuple results
 * are filled element by element, registrations are refused with reasons,
 * and an unregistered target is refused again naming it. */
#include <stdio.h>
#include <string.h>

#include "hloi.h"
#include "unit.h"

/* axpy(x, y, alpha) = alpha * x + y over f32 vectors of one length. */
static const char axpy_program[] =
	"HloModule axpy\n"
	"ENTRY main {\n"
	"  x = f32[4] constant({1, 2, 3, 4})\n"
	"  y = f32[4] constant({10, 20, 30, 40})\n"
	"  a = f32[] constant(0.5)\n"
	"  s = f32[4] custom-call(x, y, a), custom_call_target=\"my_axpy\", backend_config=\"scale=2\"\n"
	"  ROOT n = f32[4] negate(s)\n"
	"}\n";

typedef struct calls {
	int checks, evaluations;
	char config[32];
} calls;

static int axpy_check(void *user_data, const hloi_shape *const *ops, size_t n, const hloi_shape *result,
		      const char *backend_config, char *message, size_t size)
{
	(void)backend_config;
	((calls *)user_data)->checks++;
	if (n != 3 || hloi_shape_rank(ops[0]) != 1 || hloi_shape_rank(ops[2]) != 0 ||
	    hloi_shape_rank(ops[1]) != 1 || hloi_shape_dim(ops[0], 0) != hloi_shape_dim(ops[1], 0)) {
		snprintf(message, size, "takes x, y of one length and a scalar alpha; got %zu operands", n);
		return 1;
	}
	if (hloi_shape_rank(result) != 1 || hloi_shape_dim(result, 0) != hloi_shape_dim(ops[0], 0)) {
		snprintf(message, size, "gives a vector of the operands' length");
		return 1;
	}
	return 0;
}

static hloi_status axpy_eval(void *user_data, hloi_context *ctx, hloi_literal *const *ops, size_t n,
			     hloi_literal *result, const char *backend_config)
{
	calls *c = user_data;
	c->evaluations++;
	snprintf(c->config, sizeof c->config, "%s", backend_config ? backend_config : "(none)");
	(void)ctx;
	(void)n;
	const float *x = hloi_literal_data(ops[0]), *y = hloi_literal_data(ops[1]), *a = hloi_literal_data(ops[2]);
	float *r = hloi_literal_data(result);
	int64_t len = hloi_shape_dim(hloi_literal_shape(result), 0);
	for (int64_t i = 0; i < len; i++)
		r[i] = *a * x[i] + y[i];
	return HLOI_OK;
}

static hloi_custom_call axpy(calls *c)
{
	hloi_custom_call cc = { HLOI_CUSTOM_CALL_VERSION, "my_axpy", axpy_check, axpy_eval, c };
	return cc;
}

static hloi_status parse_check(hloi_module **m, hloi_context *ctx, const char *text)
{
	*m = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_module_parse(m, ctx, "t.hlo", text, strlen(text)), HLOI_OK);
	return hloi_module_check(*m, ctx, NULL);
}

static void test_evaluate_both_engines(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	calls c = { 0, 0, "" };
	hloi_custom_call cc = axpy(&c);
	CU_ASSERT_EQUAL(hloi_custom_call_known("my_axpy"), 0);
	CU_ASSERT_EQUAL_FATAL(hloi_custom_call_register(ctx, &cc), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_custom_call_known("my_axpy"), 2);
	CU_ASSERT_EQUAL(hloi_custom_call_known("TopK"), 1);
	hloi_module *m;
	CU_ASSERT_EQUAL_FATAL(parse_check(&m, ctx, axpy_program), HLOI_OK);
	CU_ASSERT_EQUAL(c.checks, 1);
	for (int engine = HLOI_ENGINE_REFERENCE; engine <= HLOI_ENGINE_FAST; engine++) {
		hloi_run_options o = HLOI_RUN_OPTIONS_INIT;
		o.engine = (hloi_engine)engine;
		hloi_literal *r = NULL;
		CU_ASSERT_EQUAL_FATAL(hloi_module_run(m, ctx, NULL, 0, &o, &r), HLOI_OK);
		const float *v = hloi_literal_data(r);
		CU_ASSERT(v[0] == -10.5f && v[1] == -21.0f && v[2] == -31.5f && v[3] == -42.0f);
		hloi_literal_free(r);
	}
	CU_ASSERT_EQUAL(c.evaluations, 2);
	CU_ASSERT_STRING_EQUAL(c.config, "\"scale=2\"");
	hloi_module_free(m);
	CU_ASSERT_EQUAL(hloi_custom_call_unregister(ctx, "my_axpy"), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_custom_call_known("my_axpy"), 0);
	/* unregistered: refused naming it */
	CU_ASSERT_EQUAL(parse_check(&m, ctx, axpy_program), HLOI_EUNSUPPORTED);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hloi_context_last_error(ctx));
	CU_ASSERT_PTR_NOT_NULL(strstr(hloi_context_last_error(ctx), "unsupported custom-call target 'my_axpy'"));
	hloi_module_free(m);
	hloi_context_free(ctx);
}

static void test_check_reason_located(void)
{
	static const char wrong[] =
		"HloModule wrong\n"
		"ENTRY main {\n"
		"  x = f32[4] parameter(0)\n"
		"  ROOT s = f32[4] custom-call(x, x), custom_call_target=\"my_axpy\"\n"
		"}\n";
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	calls c = { 0, 0, "" };
	hloi_custom_call cc = axpy(&c);
	CU_ASSERT_EQUAL_FATAL(hloi_custom_call_register(ctx, &cc), HLOI_OK);
	hloi_module *m;
	CU_ASSERT_EQUAL(parse_check(&m, ctx, wrong), HLOI_ETYPE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hloi_context_last_error(ctx));
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx),
			       "custom-call target 'my_axpy': takes x, y of one length and a scalar alpha; got 2 operands");
	char buf[4096] = "";
	FILE *f = fmemopen(buf, sizeof buf - 1, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	hloi_context_print_diagnostics(ctx, f, 0);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "t.hlo:4:19: error: custom-call target 'my_axpy'"));
	hloi_module_free(m);
	CU_ASSERT_EQUAL(hloi_custom_call_unregister(ctx, "my_axpy"), HLOI_OK);
	hloi_context_free(ctx);
}

/* A tuple result (s32 count, f32[2] pair) and an evaluate that fails. */
static hloi_status pair_eval(void *user_data, hloi_context *ctx, hloi_literal *const *ops, size_t n,
			     hloi_literal *result, const char *backend_config)
{
	(void)user_data;
	(void)backend_config;
	const float *x = hloi_literal_data(ops[0]);
	if (x[0] < 0) {
		hloi_context_error(ctx, NULL, "my_pair: a negative first element");
		return HLOI_EINVAL;
	}
	CU_ASSERT_EQUAL(hloi_literal_tuple_size(result), 2);
	int32_t *count = hloi_literal_data(hloi_literal_tuple_element(result, 0));
	float *pair = hloi_literal_data(hloi_literal_tuple_element(result, 1));
	*count = (int32_t)n;
	pair[0] = x[1];
	pair[1] = x[0];
	return HLOI_OK;
}

static void test_tuple_result_and_failure(void)
{
	static const char program[] =
		"HloModule pair\n"
		"ENTRY main {\n"
		"  x = f32[2] parameter(0)\n"
		"  ROOT p = (s32[], f32[2]) custom-call(x), custom_call_target=\"my_pair\"\n"
		"}\n";
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	hloi_custom_call cc = { HLOI_CUSTOM_CALL_VERSION, "my_pair", NULL, pair_eval, NULL };
	CU_ASSERT_EQUAL_FATAL(hloi_custom_call_register(ctx, &cc), HLOI_OK);
	hloi_module *m;
	CU_ASSERT_EQUAL_FATAL(parse_check(&m, ctx, program), HLOI_OK);
	hloi_shape *s = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_shape_parse(&s, ctx, "s", "f32[2]"), HLOI_OK);
	hloi_literal *in = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_literal_new(&in, ctx, s), HLOI_OK);
	float *x = hloi_literal_data(in);
	x[0] = 3;
	x[1] = 7;
	hloi_literal *r = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_module_run(m, ctx, &in, 1, NULL, &r), HLOI_OK);
	CU_ASSERT_EQUAL(*(int32_t *)hloi_literal_data(hloi_literal_tuple_element(r, 0)), 1);
	const float *p = hloi_literal_data(hloi_literal_tuple_element(r, 1));
	CU_ASSERT(p[0] == 7 && p[1] == 3);
	hloi_literal_free(r);
	r = NULL;
	x[0] = -1;
	CU_ASSERT_EQUAL(hloi_module_run(m, ctx, &in, 1, NULL, &r), HLOI_EINVAL);
	CU_ASSERT_PTR_NULL(r);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hloi_context_last_error(ctx));
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "my_pair: a negative first element");
	hloi_literal_free(in);
	hloi_shape_free(s);
	hloi_module_free(m);
	CU_ASSERT_EQUAL(hloi_custom_call_unregister(ctx, "my_pair"), HLOI_OK);
	hloi_context_free(ctx);
}

static void test_registration_refused(void)
{
	hloi_context *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(hloi_context_new(&ctx), HLOI_OK);
	calls c = { 0, 0, "" };
	hloi_custom_call cc = axpy(&c);
	cc.target = "TopK";
	CU_ASSERT_EQUAL(hloi_custom_call_register(ctx, &cc), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "custom-call target 'TopK' is one hloi evaluates itself");
	cc.target = "";
	CU_ASSERT_EQUAL(hloi_custom_call_register(ctx, &cc), HLOI_EINVAL);
	CU_ASSERT_EQUAL(hloi_custom_call_register(ctx, NULL), HLOI_EINVAL);
	char long_name[HLOI_CUSTOM_CALL_NAME_MAX + 2];
	memset(long_name, 'a', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = 0;
	cc.target = long_name;
	CU_ASSERT_EQUAL(hloi_custom_call_register(ctx, &cc), HLOI_EINVAL);
	cc = axpy(&c);
	cc.version = HLOI_CUSTOM_CALL_VERSION + 1;
	CU_ASSERT_EQUAL(hloi_custom_call_register(ctx, &cc), HLOI_EINVAL);
	cc.version = 0;
	CU_ASSERT_EQUAL(hloi_custom_call_register(ctx, &cc), HLOI_EINVAL);
	cc = axpy(&c);
	cc.evaluate = NULL;
	CU_ASSERT_EQUAL(hloi_custom_call_register(ctx, &cc), HLOI_EINVAL);
	CU_ASSERT_EQUAL(hloi_custom_call_unregister(ctx, "my_axpy"), HLOI_EINVAL);
	CU_ASSERT_EQUAL(hloi_custom_call_unregister(NULL, NULL), HLOI_EINVAL);
	/* the target's name is copied; a second registration is refused */
	char name[16];
	strcpy(name, "my_axpy");
	cc = axpy(&c);
	cc.target = name;
	CU_ASSERT_EQUAL_FATAL(hloi_custom_call_register(ctx, &cc), HLOI_OK);
	strcpy(name, "other");
	CU_ASSERT_EQUAL(hloi_custom_call_known("my_axpy"), 2);
	cc.target = "my_axpy";
	CU_ASSERT_EQUAL(hloi_custom_call_register(ctx, &cc), HLOI_EINVAL);
	CU_ASSERT_STRING_EQUAL(hloi_context_last_error(ctx), "custom-call target 'my_axpy' is already registered");
	/* the table holds HLOI_CUSTOM_CALL_MAX targets */
	char names[HLOI_CUSTOM_CALL_MAX][16];
	for (int i = 1; i < HLOI_CUSTOM_CALL_MAX; i++) {
		snprintf(names[i], sizeof names[i], "t%d", i);
		cc.target = names[i];
		CU_ASSERT_EQUAL(hloi_custom_call_register(ctx, &cc), HLOI_OK);
	}
	cc.target = "one_too_many";
	CU_ASSERT_EQUAL(hloi_custom_call_register(ctx, &cc), HLOI_ENOMEM);
	for (int i = 1; i < HLOI_CUSTOM_CALL_MAX; i++)
		CU_ASSERT_EQUAL(hloi_custom_call_unregister(ctx, names[i]), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_custom_call_known("my_axpy"), 2);
	CU_ASSERT_EQUAL(hloi_custom_call_unregister(ctx, "my_axpy"), HLOI_OK);
	CU_ASSERT_EQUAL(hloi_custom_call_known("t5"), 0);
	hloi_context_free(ctx);
}

static const unit_test custom_call_tests[] = {
	{ "evaluate_both_engines", test_evaluate_both_engines },
	{ "check_reason_located", test_check_reason_located },
	{ "tuple_result_and_failure", test_tuple_result_and_failure },
	{ "registration_refused", test_registration_refused },
	{ NULL, NULL },
};

const unit_suite unit_suites[] = {
	{ "custom_call", custom_call_tests },
	{ NULL, NULL },
};
