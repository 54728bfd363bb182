/* Fuzz target: HLO text -> parse -> check, then the canonical printer on a
 * parsed module. Diagnostics are printed (to /dev/null) so the caret code
 * sees every location. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = hloi_module_parse(&m, ctx, "fuzz.hlo", (const char *)data, size);
	fuzz_check_status(ctx, st, m);
	if (st == HLOI_OK) {
		fuzz_print_module(m);
		st = hloi_module_check(m, ctx, NULL);
		fuzz_check_status(ctx, st, NULL);
		if (st == HLOI_OK)
			fuzz_print_module(m);
	}
	fuzz_flush(ctx);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return 0;
}
