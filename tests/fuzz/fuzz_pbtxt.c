/* Fuzz target: protobuf text format HloModuleProto / HloProto / HloSnapshot -> module ->
 * check -> canonical printing. */
#include "fuzz_common.h"
#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	module *m = NULL;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = proto_load_text(&m, ctx, "fuzz.pbtxt", (const char *)data, size);
	fuzz_check_status(ctx, st, m);
	if (st == HLOI_OK) {
		st = hloi_module_check(m, ctx, NULL);
		fuzz_check_status(ctx, st, NULL);
		fuzz_print_module(m);
	}
	fuzz_flush(ctx);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return 0;
}
