/* Fuzz target: a proto module, binary (.pb) or, when it does not load as
 * one, text format (.pbtxt), loaded then run as the hlo_run target runs
 * HLO text: check, random inputs, both engines compared (fuzz_run.h). */
#include "fuzz_run.h"
#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	module *m = NULL;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = proto_load_binary(&m, ctx, "fuzz.pb", data, size);
	fuzz_check_status(ctx, st, m);
	if (st == HLOI_EPARSE) {
		fuzz_flush(ctx);
		st = proto_load_text(&m, ctx, "fuzz.pbtxt", (const char *)data, size);
		fuzz_check_status(ctx, st, m);
	}
	if (st == HLOI_OK)
		fuzz_run_module(m, ctx);
	fuzz_flush(ctx);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return 0;
}
