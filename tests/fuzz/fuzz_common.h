/* Shared helpers of the fuzz targets: a sink for printed output and the
 * invariants every entry point must keep on any input (a failure is a status
 * with a recorded error; nothing is returned with it). */
#ifndef HLOI_FUZZ_COMMON_H
#define HLOI_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/literal.h"
#include "hloi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where diagnostics and results are printed (exercises the printers). */
static inline FILE *fuzz_sink(void)
{
	static FILE *sink;

	if (!sink)
		sink = fopen("/dev/null", "w");
	return sink;
}

/* Aborts (a finding) when a status breaks the API contract. */
static inline void fuzz_check_status(hloi_context *ctx, hloi_status st, const void *out)
{
	if (st > HLOI_OK || st < HLOI_ESTOPPED) {
		fprintf(stderr, "fuzz: invalid status %d\n", (int)st);
		abort();
	}
	if (st != HLOI_OK && out) {
		fprintf(stderr, "fuzz: status %d with a result\n", (int)st);
		abort();
	}
	if (st != HLOI_OK && st != HLOI_ENOMEM && hloi_context_error_count(ctx) == 0) {
		fprintf(stderr, "fuzz: status %d without a recorded error\n", (int)st);
		abort();
	}
}

/* Prints a literal to the sink. Printing may only fail by refusing a value
 * whose text would hold more than HLOI_PRINT_MAX_EMPTY_SUBARRAYS empty
 * sub-arrays (f32[100000000,0]); anything else aborts (a finding). */
static inline void fuzz_print(const hloi_literal *lit)
{
	FILE *f = fuzz_sink();

	if (!f)
		return;
	hloi_status st = hloi_literal_print(lit, f);
	int refused = hloi_literal_empty_subarrays(lit) > HLOI_PRINT_MAX_EMPTY_SUBARRAYS;
	if (refused ? st != HLOI_ENOMEM : st != HLOI_OK) {
		fprintf(stderr, "fuzz: printing returned status %d (%s expected)\n", (int)st,
			refused ? "HLOI_ENOMEM" : "HLOI_OK");
		abort();
	}
}

/* Prints a module as HLO text to the sink. Printing may only fail by
 * refusing a module whose constants (loaded from a proto) would print more
 * than HLOI_PRINT_MAX_EMPTY_SUBARRAYS empty sub-arrays in all
 * (f32[1099511627776,0]); anything else aborts (a finding). */
static inline void fuzz_print_module(const hloi_module *m)
{
	FILE *f = fuzz_sink();
	const char *comp, *name;
	const hloi_literal *value;

	if (!f)
		return;
	hloi_status st = hloi_module_print(m, f);
	uint64_t n = hloi_module_empty_subarrays(m, &comp, &name, &value);
	int refused = n > HLOI_PRINT_MAX_EMPTY_SUBARRAYS;
	if (refused ? st != HLOI_ENOMEM : st != HLOI_OK) {
		fprintf(stderr, "fuzz: printing the module returned status %d (%s expected)\n", (int)st,
			refused ? "HLOI_ENOMEM" : "HLOI_OK");
		abort();
	}
	if (n > 0 && (!comp || !name || !value || hloi_literal_empty_subarrays(value) == 0)) {
		fprintf(stderr, "fuzz: %llu empty sub-arrays without the constant that holds them\n",
			(unsigned long long)n);
		abort();
	}
}

/* Prints and forgets the context's diagnostics. */
static inline void fuzz_flush(hloi_context *ctx)
{
	FILE *f = fuzz_sink();

	if (f)
		hloi_context_print_diagnostics(ctx, f, HLOI_DIAG_BASENAME);
	else
		hloi_context_clear(ctx);
}

#endif
