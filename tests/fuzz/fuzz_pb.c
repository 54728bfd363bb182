/* Fuzz target: binary HloModuleProto / HloProto / HloSnapshot -> module ->
 * check -> canonical printing; and .pb -> .pb: what the writer writes loads
 * and is written again byte for byte (fields the IR does not model and
 * unknown ones included). */
#include "fuzz_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	module *m = NULL;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = proto_load_binary(&m, ctx, "fuzz.pb", data, size);
	fuzz_check_status(ctx, st, m);
	if (st == HLOI_OK) {
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
