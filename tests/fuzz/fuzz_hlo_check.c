/* Fuzz target: HLO text -> parse -> check, then the canonical printer and
 * the Graphviz writer (`hloi dot`: the module as written, as checked, and
 * with the fused regions of its evaluation plan) on a parsed module, and
 * the proto writers on a checked one (`hloi convert`: what they write loads
 * and is written again byte for byte). Diagnostics are printed (to
 * /dev/null) so the caret code sees every location. */
#include "fuzz_proto.h"

/* Writes the module as DOT (with its plan when `plan`); only the memory
 * budget may refuse it (the sink does not fail), anything else aborts. */
static void fuzz_print_dot(const hloi_module *m, int plan)
{
	FILE *f = fuzz_sink();
	hloi_run_options opts = HLOI_RUN_OPTIONS_INIT;

	if (!f)
		return;
	opts.threads = 2;
	hloi_status st = plan ? hloi_module_print_dot_plan(m, &opts, f) : hloi_module_print_dot(m, f);
	if (st != HLOI_OK && st != HLOI_ENOMEM) {
		fprintf(stderr, "fuzz: writing the module as DOT%s returned status %d\n", plan ? " with its plan" : "",
			(int)st);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hloi_context *ctx = NULL;
	hloi_module *m = NULL;

	if (hloi_context_new(&ctx) != HLOI_OK)
		return 0;
	hloi_status st = hloi_module_parse(&m, ctx, "fuzz.hlo", (const char *)data, size);
	fuzz_check_status(ctx, st, m);
	if (st == HLOI_OK) {
		fuzz_print_module(m);
		fuzz_print_dot(m, 0);
		st = hloi_module_check(m, ctx, NULL);
		fuzz_check_status(ctx, st, NULL);
		if (st == HLOI_OK) {
			fuzz_print_module(m);
			fuzz_print_dot(m, 0);
			fuzz_print_dot(m, 1);
			fuzz_proto_rewrite(m, ctx, 0);
			fuzz_proto_rewrite(m, ctx, 1);
		}
	}
	fuzz_flush(ctx);
	hloi_module_free(m);
	hloi_context_free(ctx);
	return 0;
}
