/* The proto writers' round trip, shared by the pb and pbtxt targets: what
 * a writer writes loads, and is written again byte for byte. */
#ifndef HLOI_FUZZ_PROTO_H
#define HLOI_FUZZ_PROTO_H

#include <string.h>

#include "fuzz_common.h"
#include "proto/proto.h"
#include "util/alloc.h"

/* Writes `m` as binary (text = 0) or text format, reads that, writes it
 * again: the same bytes, else abort. (Text format has no form for fields
 * unknown to hloi's schema: the first write drops them, so the second
 * write is compared with the first, never with the input.) */
static inline void fuzz_proto_rewrite(const module *m, hloi_context *ctx, int text)
{
	unsigned char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	module *m2 = NULL;
	hloi_status st = text ? proto_save_text((char **)&a, &na, m, ctx) : proto_save_binary(&a, &na, m, ctx);
	fuzz_check_status(ctx, st, NULL);
	if (st != HLOI_OK)
		return;
	st = text ? proto_load_text(&m2, ctx, "rewritten.pbtxt", (const char *)a, na)
		  : proto_load_binary(&m2, ctx, "rewritten.pb", a, na);
	if (st == HLOI_OK)
		st = text ? proto_save_text((char **)&b, &nb, m2, ctx) : proto_save_binary(&b, &nb, m2, ctx);
	if (st != HLOI_OK && st != HLOI_ENOMEM) {
		fprintf(stderr, "fuzz: what the %s writer wrote does not load or write again (status %d)\n",
			text ? "text" : "binary", (int)st);
		hloi_context_print_diagnostics(ctx, stderr, HLOI_DIAG_BASENAME);
		abort();
	}
	if (st == HLOI_OK && (na != nb || memcmp(a, b, na) != 0)) {
		fprintf(stderr, "fuzz: written twice as %s, the bytes differ (%zu and %zu bytes)\n",
			text ? "text" : "binary", na, nb);
		abort();
	}
	hloi_free(a);
	hloi_free(b);
	hloi_module_free(m2);
}

#endif
