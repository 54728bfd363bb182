/* Fuzz target: .npy bytes -> literal -> printing and serialising back. */
#include "fuzz_common.h"
#include "io/npy.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	hloi_literal *lit = NULL;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = npy_parse(&lit, ctx, "fuzz.npy", data, size, NULL);
	fuzz_check_status(ctx, st, lit);
	if (st == HLOI_OK) {
		fuzz_print(lit);
		unsigned char *bytes = NULL;
		size_t len = 0;
		st = npy_serialize(&bytes, &len, ctx, lit);
		fuzz_check_status(ctx, st, bytes);
		hloi_free(bytes);
	}
	fuzz_flush(ctx);
	hloi_literal_free(lit);
	hloi_context_free(ctx);
	return 0;
}
