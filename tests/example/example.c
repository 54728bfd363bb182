/* Embedding hloi: parse a program from a string, feed it inputs, run it and
 * read the result — through the public header only. Exits 0 when the result
 * is [[8,10,12],[11,13,15]] (SOURCES.md A's matrix plus vector). */
#include <hloi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char program[] =
	"HloModule example\n"
	"ENTRY main {\n"
	"  x = s32[2,3] parameter(0)\n"
	"  y = s32[3] parameter(1)\n"
	"  ROOT r = s32[2,3] add(x, y), broadcast_dimensions={1}\n"
	"}\n";

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
	static const int32_t want[] = { 8, 10, 12, 11, 13, 15 };
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;
	hloi_literal *inputs[2] = { NULL, NULL }, *result = NULL;
	int rc = 1;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 1;
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
	hloi_context_free(ctx);
	return rc;
}
