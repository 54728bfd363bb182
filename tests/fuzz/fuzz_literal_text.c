/* Fuzz target: literal text (what --inputs files hold) -> typed literals ->
 * Literal::ToString printing. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	hloi_literal **lits = NULL;
	size_t n = 0;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = hloi_literal_parse_list(&lits, &n, ctx, "fuzz.inputs", (const char *)data, size);
	fuzz_check_status(ctx, st, lits);
	for (size_t i = 0; st == HLOI_OK && i < n; i++)
		fuzz_print(lits[i]);
	fuzz_flush(ctx);
	hloi_literal_array_free(lits, n);
	hloi_context_free(ctx);
	return 0;
}
