/* Fuzz target: HLO text -> parse -> check -> `hloi lower` -> print; the
 * lowered text must parse and check again (it has no implicit broadcast
 * left, and no broadcast_mode), and print as the same text (the printer's
 * fixed point). */
#define _GNU_SOURCE /* open_memstream */
#include <string.h>

#include "fuzz_common.h"

/* The module as HLO text (malloc'd, *len bytes), or NULL when the printer
 * refuses it (HLOI_ENOMEM: constants too large to print) or memory runs
 * out; any other failure aborts. */
static char *print_text(const hloi_module *m, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	hloi_status st = hloi_module_print(m, f);
	if (fclose(f) != 0 || st != HLOI_OK) {
		if (st != HLOI_OK && st != HLOI_ENOMEM) {
			fprintf(stderr, "fuzz: printing the lowered module returned status %d\n", (int)st);
			abort();
		}
		free(buf);
		return NULL;
	}
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	hloi_module *m = NULL, *m2 = NULL;
	char *text = NULL, *text2 = NULL;
	size_t len = 0, len2 = 0;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = hloi_module_parse(&m, ctx, "fuzz.hlo", (const char *)data, size);
	fuzz_check_status(ctx, st, m);
	if (st != HLOI_OK)
		goto cleanup;
	st = hloi_module_check(m, ctx, NULL);
	fuzz_check_status(ctx, st, NULL);
	if (st != HLOI_OK)
		goto cleanup;
	st = hloi_module_lower(m, ctx);
	fuzz_check_status(ctx, st, NULL);
	if (st != HLOI_OK || !(text = print_text(m, &len)))
		goto cleanup;
	fuzz_flush(ctx);
	st = hloi_module_parse(&m2, ctx, "lowered.hlo", text, len);
	fuzz_check_status(ctx, st, m2);
	if (st == HLOI_OK)
		st = hloi_module_check(m2, ctx, NULL);
	if (st != HLOI_OK && st != HLOI_ENOMEM) {
		fprintf(stderr, "fuzz: the lowered text does not check (status %d):\n%.*s\n", (int)st, (int)len,
			text);
		hloi_context_print_diagnostics(ctx, stderr, HLOI_DIAG_BASENAME);
		abort();
	}
	if (st == HLOI_OK && (text2 = print_text(m2, &len2)) != NULL &&
	    (len != len2 || memcmp(text, text2, len) != 0)) {
		fprintf(stderr, "fuzz: the lowered text prints differently once parsed:\n%.*s\n--- then:\n%.*s\n",
			(int)len, text, (int)len2, text2);
		abort();
	}
cleanup:
	fuzz_flush(ctx);
	free(text);
	free(text2);
	hloi_module_free(m2);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return 0;
}
