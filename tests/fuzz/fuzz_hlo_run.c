/* Fuzz target: HLO text -> parse -> check -> random inputs -> run under a
 * 64 MiB budget -> print the result. Programs whose inputs would be large
 * are only checked, so that each run stays fast. */
#include "fuzz_common.h"

#define FUZZ_MAX_INPUT_BYTES (1u << 20)
#define FUZZ_MAX_MEMORY (64u << 20)
/* Loops that never end stop soon (HLOI_ESTOPPED). */
#define FUZZ_MAX_STEPS 100000u

/* Whether the entry parameters together fit in FUZZ_MAX_INPUT_BYTES. */
static int inputs_are_small(const hloi_module *m)
{
	uint64_t total = 0;
	size_t n = hloi_module_parameter_count(m);

	for (size_t i = 0; i < n; i++) {
		const hloi_shape *s = hloi_module_parameter_shape(m, i);
		if (!s || hloi_shape_rank(s) < 0)
			return 0;
		int64_t elems = hloi_shape_buffer_elements(s);
		int64_t bytes = hloi_shape_element_bytes(s);
		if (elems < 0 || bytes <= 0 || elems > (int64_t)FUZZ_MAX_INPUT_BYTES / bytes)
			return 0;
		total += (uint64_t)(elems * bytes);
		if (total > FUZZ_MAX_INPUT_BYTES)
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;
	hloi_literal **in = NULL;
	size_t nin = 0;
	hloi_literal *out = NULL;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = hloi_module_parse(&m, ctx, "fuzz.hlo", (const char *)data, size);
	fuzz_check_status(ctx, st, m);
	if (st != HLOI_OK)
		goto cleanup;
	st = hloi_module_check(m, ctx, NULL);
	fuzz_check_status(ctx, st, NULL);
	if (st != HLOI_OK || !inputs_are_small(m))
		goto cleanup;
	st = hloi_module_random_inputs(&in, &nin, m, ctx, 42);
	fuzz_check_status(ctx, st, in);
	if (st != HLOI_OK)
		goto cleanup;
	if (nin != hloi_module_parameter_count(m)) {
		fprintf(stderr, "fuzz: %zu random inputs for %zu parameters\n", nin,
			hloi_module_parameter_count(m));
		abort();
	}
	hloi_run_options opts = HLOI_RUN_OPTIONS_INIT;
	opts.engine = HLOI_ENGINE_REFERENCE;
	opts.threads = 1;
	opts.max_memory = FUZZ_MAX_MEMORY;
	opts.max_steps = FUZZ_MAX_STEPS;
	st = hloi_module_run(m, ctx, in, nin, &opts, &out);
	fuzz_check_status(ctx, st, out);
	if (st == HLOI_OK)
		fuzz_print(out);
cleanup:
	fuzz_flush(ctx);
	hloi_literal_free(out);
	hloi_literal_array_free(in, nin);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return 0;
}
