/* Embedding hloi: register a custom-call target of the program's own, parse
 * a program from a string, feed it inputs, run it and read the result —
 * through the public header only. Exits 0 when the result is twice
 * [[8,10,12],[11,13,15]] (doc/sources.md A's matrix plus vector, then the
 * `times_two` target). */
#include <hloi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char program[] =
	"HloModule example\n"
	"ENTRY main {\n"
	"  x = s32[2,3] parameter(0)\n"
	"  y = s32[3] parameter(1)\n"
	"  s = s32[2,3] add(x, y), broadcast_dimensions={1}\n"
	"  ROOT r = s32[2,3] custom-call(s), custom_call_target=\"times_two\"\n"
	"}\n";

/* The custom-call target `times_two`: its one s32 operand doubled (the
 * checker has compared the shapes with times_two_check's rule). */
static hloi_status times_two(void *user_data, hloi_context *ctx, hloi_literal *const *operands,
			     size_t noperands, hloi_literal *result, const char *backend_config)
{
	(void)user_data;
	(void)ctx;
	(void)noperands;
	(void)backend_config;
	const int32_t *x = hloi_literal_data(operands[0]);
	int32_t *r = hloi_literal_data(result);
	for (int64_t i = 0; i < hloi_shape_element_count(hloi_literal_shape(result)); i++)
		r[i] = 2 * x[i];
	return HLOI_OK;
}

/* Its shape rule: one s32 operand, a result of its shape. */
static int times_two_check(void *user_data, const hloi_shape *const *operands, size_t noperands,
			   const hloi_shape *result, const char *backend_config, char *message, size_t size)
{
	(void)user_data;
	(void)backend_config;
	char a[256] = "", b[256] = "";
	if (noperands == 1) {
		hloi_shape_to_string(operands[0], 0, a, sizeof a);
		hloi_shape_to_string(result, 0, b, sizeof b);
	}
	if (noperands == 1 && strncmp(a, "s32[", 4) == 0 && strcmp(a, b) == 0)
		return 0;
	snprintf(message, size, "takes one s32 array and gives its shape");
	return 1;
}

/* Makes a literal of the given shape text holding `values` (row-major; the
 * default layout is row-major, so the buffer is in the same order). */
static hloi_literal *make_input(hloi_context *ctx, const char *shape_text, const int32_t *values)
{
	hloi_shape *shape = NULL;
	hloi_literal *lit = NULL;
	if (hloi_shape_parse(&shape, ctx, "input", shape_text) != HLOI_OK)
		return NULL;
	if (hloi_literal_new(&lit, ctx, shape) == HLOI_OK)
		memcpy(hloi_literal_data(lit), values,
		       (size_t)hloi_shape_element_count(shape) * sizeof(int32_t));
	hloi_shape_free(shape);
	return lit;
}

int main(void)
{
	static const int32_t x[] = { 1, 2, 3, 4, 5, 6 };
	static const int32_t y[] = { 7, 8, 9 };
	static const int32_t want[] = { 16, 20, 24, 22, 26, 30 };
	static const hloi_custom_call target = { HLOI_CUSTOM_CALL_VERSION, "times_two", times_two_check,
						 times_two, NULL };
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;
	hloi_literal *inputs[2] = { NULL, NULL }, *result = NULL;
	int rc = 1;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 1;
	if (hloi_custom_call_register(ctx, &target) != HLOI_OK)
		goto cleanup;
	if (hloi_module_parse(&m, ctx, "example.hlo", program, strlen(program)) != HLOI_OK ||
	    hloi_module_check(m, ctx, NULL) != HLOI_OK)
		goto cleanup;
	inputs[0] = make_input(ctx, "s32[2,3]", x);
	inputs[1] = make_input(ctx, "s32[3]", y);
	if (!inputs[0] || !inputs[1])
		goto cleanup;
	if (hloi_module_run(m, ctx, inputs, 2, NULL, &result) != HLOI_OK)
		goto cleanup;
	hloi_literal_print(result, stdout);
	/* a second run writes into the first run's result: no allocation */
	memset(hloi_literal_data(result), 0, hloi_literal_size_bytes(result));
	if (hloi_module_run_into(m, ctx, inputs, 2, NULL, result) != HLOI_OK)
		goto cleanup;
	if (hloi_literal_size_bytes(result) == sizeof want &&
	    memcmp(hloi_literal_data(result), want, sizeof want) == 0)
		rc = 0;
	else
		fputs("example: unexpected result\n", stderr);
cleanup:
	hloi_context_print_diagnostics(ctx, stderr, 0);
	hloi_literal_free(result);
	hloi_literal_free(inputs[0]);
	hloi_literal_free(inputs[1]);
	hloi_module_free(m);
	hloi_custom_call_unregister(NULL, "times_two");
	hloi_context_free(ctx);
	return rc;
}
