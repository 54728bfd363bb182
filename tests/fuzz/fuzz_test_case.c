/* Fuzz target: a golden case of `hloi test` (src/cli/test_case.c), saved
 * as case.hlo in a scratch directory and run in process as `hloi test`
 * runs it: its directives (`// hloi-command:`, `// hloi-flags:`) checked
 * against the whitelist and made into a command line, then the command
 * (run, check, fmt, lower or dot) with those flags, `--output` files
 * written in the case's scratch directory. A case either runs, giving what
 * it printed, or cannot be run as written, giving the reason: exactly one
 * of the two. The process's memory budget is 256 MiB; cases that give
 * --max-memory are skipped, as it would raise that budget for the whole
 * process. */
#define _GNU_SOURCE /* memmem */
#include <string.h>

#include "cli/test_case.h"
#include "fuzz_cli.h"

#define FUZZ_CASE_BUDGET ((uint64_t)256 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int budget_set;
	const char *path = fuzz_scratch_path(0, "case.hlo");
	char *problem = NULL;

	if (!budget_set) {
		cli_set_budget(FUZZ_CASE_BUDGET);
		budget_set = 1;
	}
	if (memmem(data, size, "max-memory", 10))
		return 0;
	if (!path || fuzz_save(path, data, size) != 0)
		return 0;
	char *out = test_case_run(path, &problem);
	if (!out == !problem) {
		fprintf(stderr, "fuzz: test_case_run gave %s\n", out ? "both an output and a problem"
								     : "neither an output nor a problem");
		abort();
	}
	free(out);
	free(problem);
	return 0;
}
