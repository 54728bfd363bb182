/* Fuzz target: protobuf text format HloModuleProto / HloProto / HloSnapshot
 * -> module -> check -> canonical printing; and both proto writers' round
 * trips: .pbtxt -> .pbtxt and .pb -> .pb, each written, loaded and written
 * again byte for byte. */
#include "fuzz_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	module *m = NULL;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = proto_load_text(&m, ctx, "fuzz.pbtxt", (const char *)data, size);
	fuzz_check_status(ctx, st, m);
	if (st == HLOI_OK) {
		fuzz_proto_rewrite(m, ctx, 1);
		fuzz_proto_rewrite(m, ctx, 0);
		st = hloi_module_check(m, ctx, NULL);
		fuzz_check_status(ctx, st, NULL);
		fuzz_print_module(m);
	}
	fuzz_flush(ctx);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return 0;
}
