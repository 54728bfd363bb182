/* Fuzz target: binary HloModuleProto / HloProto / HloSnapshot -> module ->
 * check -> canonical printing; and .pb -> .pb: what the writer writes loads
 * and is written again byte for byte (fields the IR does not model and
 * unknown ones included). */
#include <string.h>

#include "fuzz_common.h"
#include "proto/proto.h"
#include "util/alloc.h"

/* Writes `m`, reads that, writes it again: the same bytes. */
static void fuzz_rewrite(const module *m, hloi_context *ctx)
{
	unsigned char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	module *m2 = NULL;
	hloi_status st = proto_save_binary(&a, &na, m, ctx);
	fuzz_check_status(ctx, st, NULL);
	if (st != HLOI_OK)
		return;
	st = proto_load_binary(&m2, ctx, "rewritten.pb", a, na);
	if (st == HLOI_OK)
		st = proto_save_binary(&b, &nb, m2, ctx);
	if (st != HLOI_OK && st != HLOI_ENOMEM) {
		fprintf(stderr, "fuzz: what the writer wrote does not load or write again (status %d)\n",
			(int)st);
		abort();
	}
	if (st == HLOI_OK && (na != nb || memcmp(a, b, na) != 0)) {
		fprintf(stderr, "fuzz: written twice, the bytes differ (%zu and %zu bytes)\n", na, nb);
		abort();
	}
	hloi_free(a);
	hloi_free(b);
	hloi_module_free(m2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	module *m = NULL;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = proto_load_binary(&m, ctx, "fuzz.pb", data, size);
	fuzz_check_status(ctx, st, m);
	if (st == HLOI_OK) {
		fuzz_rewrite(m, ctx);
		st = hloi_module_check(m, ctx, NULL);
		fuzz_check_status(ctx, st, NULL);
		fuzz_print_module(m);
	}
	fuzz_flush(ctx);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return 0;
}
