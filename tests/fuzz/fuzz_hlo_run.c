/* Fuzz target: HLO text -> parse -> check -> random inputs -> run on both
 * engines and compare them (fuzz_run.h) -> print the result. */
#include "fuzz_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = hloi_module_parse(&m, ctx, "fuzz.hlo", (const char *)data, size);
	fuzz_check_status(ctx, st, m);
	if (st == HLOI_OK)
		fuzz_run_module(m, ctx);
	fuzz_flush(ctx);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return 0;
}
